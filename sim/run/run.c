/* run.c - simulate or predict one collective and derive algbw/busbw. */
#include "run.h"

#include "../../algorithms/msccl.h"

#include "../../topologies/graph.h"
#include "../../topologies/linkload.h"
#include "../../topologies/topo.h"
#include "../../util/progress.h"
#include "peers.h"
#include "../nccl/ncclrule.h"
#include "../nccl/plan.h"
#include "../engine/symmetry.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double run_busbw_factor(coll_t c, int p) {
    if (p <= 1) return c == COLL_ALLREDUCE ? 0 : 1;
    switch (c) {
    case COLL_ALLREDUCE: return 2.0 * (p - 1) / p;
    case COLL_REDUCE_SCATTER:
    case COLL_ALLGATHER:
    case COLL_ALLTOALL: return (double)(p - 1) / p;
    default: return 1.0;
    }
}

static void bandwidths(run_out_t *o, coll_t c) {
    o->algbw_GBps = o->time_s > 0 ? (double)o->bytes / o->time_s / 1e9 : 0;
    o->busbw_GBps = o->algbw_GBps * run_busbw_factor(c, o->ranks);
}

typedef struct { int (*peer)(const sched_t *, int, int); sched_t s; } peer_ctx_t;

typedef struct { const algo_t *a; const sched_t *s; } step_ctx_t;

static int load_step(const void *ctx, int k, int r, double *bytes) {
    const step_ctx_t *x = ctx;
    sched_op_t op;
    if (!x->a->step_send(x->s, k, r, &op)) return -1;
    *bytes = (double)sched_range_bytes(x->s, op.chunk, op.nchunk);
    return op.send_peer;
}

/* Does any link join two nodes routes pass through (switches, NICs, CPUs,
 * forwarding GPUs)? Only such a link can carry several ranks' messages to
 * several others: a link from a rank carries only that rank's. */
static int has_fabric(const topo_t *t) {
    for (int l = 0; l < topo_nlinks(t); l++) {
        const topo_dlink_t *d = topo_dlink(t, l);
        if (topo_node(t, d->src)->transit && topo_node(t, d->dst)->transit) return 1;
    }
    return 0;
}

static int load_peer(const void *ctx, int c, int r) {
    const peer_ctx_t *x = ctx;
    return x->peer(&x->s, c, r);
}

/* The link loads of the patterns already costed on a machine: calibration
 * asks for the same pattern at every size and every trial of its parameters
 * (a 2 x 8 cluster's trees were 85 % of a fit's time). A pattern is its
 * algorithm, its shape (ranks, channels, private parameters, ring orders)
 * and the model it refines; the machine's own changes drop the memo
 * (topo_set_memo, with the rings), and the scales are in the key. */
typedef struct {
    const algo_t *a;
    int nranks, nchannels, root, helpers, period;
    int64_t param[4];
    const sched_orders_t *orders;
    cost_model_t in;
    double bw_scale, lat_scale;
} memo_key_t;

#define MEMO_SIZE 64
typedef struct { memo_key_t key[MEMO_SIZE]; cost_model_t out[MEMO_SIZE]; int n, next; } memo_t;

static void memo_key(memo_key_t *k, const topo_t *t, const algo_t *a, const sched_t *s, const cost_model_t *m) {
    memset(k, 0, sizeof *k);                  /* padding too: keys compare with memcmp */
    k->a = a;
    k->nranks = s->nranks, k->nchannels = s->nchannels, k->root = s->root, k->helpers = s->helpers, k->period = s->period;
    memcpy(k->param, s->param, sizeof k->param);
    k->orders = s->orders;
    k->in = *m;
    k->bw_scale = topo_params_c(t)->bw_scale, k->lat_scale = topo_params_c(t)->lat_scale;
}

static const cost_model_t *memo_find(const topo_t *t, const memo_key_t *k) {
    const memo_t *mm = topo_memo(t);
    for (int i = 0; mm && i < mm->n; i++)
        if (memcmp(&mm->key[i], k, sizeof *k) == 0) return &mm->out[i];
    return NULL;
}

static void memo_put(topo_t *t, const memo_key_t *k, const cost_model_t *out) {
    memo_t *mm = topo_memo(t);
    if (mm == NULL && (mm = calloc(1, sizeof *mm)) != NULL) topo_set_memo(t, mm, free);
    if (mm == NULL) return;                   /* out of memory: no memo, same answers */
    int i = mm->n < MEMO_SIZE ? mm->n++ : mm->next++ % MEMO_SIZE;
    mm->key[i] = *k;
    mm->out[i] = *out;
}

static int algo_model(topo_t *t, const algo_t *a, const sched_t *s, const cost_model_t *m, cost_model_t *out,
                      baton_err_t *e);

/* Row a's view on folded t needs every rank's link loads. */
static int needs_every_rank(const topo_t *t, const algo_t *a, baton_err_t *e) {
    return err_set(e, BATON_EWHOLE, "%s on %s: its links' loads need every rank", a->name, topo_name(t));
}

int run_algo_model(topo_t *t, const algo_t *a, const sched_t *s, const cost_model_t *m, cost_model_t *out,
                   baton_err_t *e) {
    memo_key_t k;
    const cost_model_t *hit;
    if (t == NULL) return algo_model(t, a, s, m, out, e);
    memo_key(&k, t, a, s, m);
    if ((hit = memo_find(t, &k)) != NULL) { *out = *hit; return 0; }
    int rc = algo_model(t, a, s, m, out, e);
    if (rc == 0) memo_put(t, &k, out);
    return rc;
}

typedef int (*pattern_fn)(topo_t *, linkload_peer_fn, const void *, int, int, cost_model_t *, baton_err_t *);

/* x's pattern costed by `pattern`; on the whole machine from its cached
 * destinations (peers.h) where it has them. */
static int one_pattern(topo_t *t, const algo_t *a, const peer_ctx_t *x, int slots, int C, pattern_fn pattern,
                       cost_model_t *out, baton_err_t *e) {
    peers_table_t y = {pattern == linkload_pattern_cost ? peers_table(t, a, x->peer, &x->s, slots) : NULL, topo_nranks(t)};
    return y.dst ? pattern(t, peers_at, &y, slots, C, out, e) : pattern(t, load_peer, x, slots, C, out, e);
}

/* Row a's view from its pattern of peers (and its pattern across groups)
 * as `pattern` costs one (linkload.h): the whole machine's busiest link,
 * counted on the whole or on a folded cluster's witnesses. */
static int peer_view(topo_t *t, const algo_t *a, const sched_t *s, const cost_model_t *m, pattern_fn pattern,
                     cost_model_t *out, baton_err_t *e) {
    peer_ctx_t x = {.peer = a->peer, .s = *s};
    int C = x.s.nchannels, slots = a->peer_slots ? a->peer_slots(&x.s, &C) : C;
    int rc = a->peer ? one_pattern(t, a, &x, slots, C, pattern, out, e) : 0;
    if (rc > 0 && a->peer_slots) out->stepwise = 1;
    if (rc == 0 && a->peer) out->blind = has_fabric(t);          /* too large to look at */
    if (rc >= 0 && a->peer_across) {
        cost_model_t across = *m;
        x.peer = a->peer_across;
        rc = one_pattern(t, a, &x, slots, C, pattern, &across, e);
        if (rc > 0) {                                  /* nothing crosses groups: no such view */
            out->across = (cost_view_t){across.alpha, across.beta, across.beta_path, across.channels};
            out->has_across = 1;
        }
    }
    return rc < 0 ? rc : 0;
}

/* A folded cluster routes a pattern of peers as the whole machine would
 * (linkload_folded_cost), where the whole machine would (not too many
 * messages: linkload.h); else the row is blind to shared links on both.
 * Step patterns need every rank (BATON_EWHOLE), as does a pattern whose
 * fabric loads the witnesses cannot tell. */
static int folded_model(topo_t *t, const algo_t *a, const sched_t *s, const cost_model_t *m, cost_model_t *out,
                        baton_err_t *e) {
    double p = s->nranks;
    int C = s->nchannels, slots = a->peer_slots ? a->peer_slots(s, &C) : C, steps = a->step_send && s->nchannels <= 1;
    int whole = steps ? p * a->nsteps(s) <= LOAD_MAX_STEP_MESSAGES
              : (a->peer || a->peer_across) && C >= 1 && slots >= 1 && p * slots <= LOAD_MAX_MESSAGES;
    if (!whole) {
        if (steps || a->peer || !a->peer_across) out->blind = has_fabric(t);   /* as algo_model */
        return 0;
    }
    baton_err_t why = {0};
    if (!steps && peer_view(t, a, s, m, linkload_folded_cost, out, &why) == 0) return 0;
    *out = *m;
    return why.code && why.code != BATON_EWHOLE ? err_set(e, why.code, "%s", why.msg) : needs_every_rank(t, a, e);
}

static int algo_model(topo_t *t, const algo_t *a, const sched_t *s, const cost_model_t *m, cost_model_t *out,
                      baton_err_t *e) {
    *out = *m;
    if (t == NULL || s->nranks < 2) return 0;
    if (topo_fold_ranks(t)) return folded_model(t, a, s, m, out, e);
    if (a->step_send && s->nchannels <= 1) {
        step_ctx_t y = {a, s};
        int rc = linkload_steps_cost(t, load_step, &y, a->nsteps(s), out, e);
        out->blind = rc == 0 && has_fabric(t);
        return rc < 0 ? rc : 0;
    }
    if (!a->peer && !a->peer_across) { out->blind = has_fabric(t); return 0; }
    return peer_view(t, a, s, m, linkload_pattern_cost, out, e);
}

/* The reducing switches t stands for: a folded cluster's whole count
 * (topo_yaml_load_folded; its ranks: topo_whole_ranks), which the closed
 * forms answer for from its witness nodes' routes. */
static int reducers_of(const topo_t *t) { return topo_fold_ranks(t) ? topo_fold_reducers(t) : topo_nreducers(t); }

/* Can schedule s's helpers (reducing switches) be had on t? As many as it
 * asks for, and a single switch for every rank (nvls) only if the last rank
 * reaches it: a cluster's per-node switches serve their own node (nvlstree).
 * A row that reduces in the nodes' switches never takes a fabric's (SHARP:
 * the reducers from topo_sharp_t.first on), which only CollNet's rows use. */
static int helpers_fit(topo_t *t, const algo_t *a, const sched_t *s, baton_err_t *e) {
    topo_route_t r;
    int p = topo_nranks(t);                  /* a folded cluster's last witness rank and switch stand for its last */
    if (!a->fabric && topo_params_c(t)->sharp.rails && s->helpers > topo_nvls_reducers(t))
        return err_set(e, BATON_EUNSUP, "%s reduces in the nodes' switches; %s has %d (its other reducing switches are "
                       "the fabric's: -a collnet)", s->algo, topo_name(t), topo_nvls_reducers(t));
    if (s->helpers > reducers_of(t))
        return err_set(e, BATON_EUNSUP, "%s needs %d switch%s that reduce%s in the network (`reduce: true`), %s has %d",
                       s->algo, s->helpers, s->helpers > 1 ? "es" : "", s->helpers > 1 ? "" : "s", topo_name(t),
                       reducers_of(t));
    if (s->helpers == 1 && reducers_of(t) > 1 && topo_route(t, p - 1, p, &r, NULL) < 0)
        return err_set(e, BATON_EUNSUP, "%s needs one reducing switch every rank reaches; %s has one per node "
                       "(nvlstree uses those)", s->algo, topo_name(t));
    return 0;
}

/* What a schedule that reduces in switches pays once per call on t (their
 * synchronisation, topo_params_t.nvls_lat): the closed forms add it here, the
 * engine at the end of its run. */
static double switch_latency(const topo_t *t, const sched_t *s) {
    return t && s->helpers && s->nranks > 1 ? topo_params_c(t)->nvls_lat : 0;
}

/* The -g of the calibration's fitted sizes that cover coll on p ranks at n
 * bytes (g's own where one ran it), 0 if none does. A record without
 * `seen:` (older files) is taken to cover everything, at g. */
static int calibration_covers(const topo_calib_t *k, coll_t coll, int p, uint64_t n, int g) {
    int found = 0;
    g = g > 1 ? g : 1;
    for (int i = 0; i < k->nseen; i++)
        if (k->seen[i].coll == (int)coll && k->seen[i].ranks == p && n >= k->seen[i].min && n <= k->seen[i].max &&
            (found == 0 || k->seen[i].gpus_per_thread == g))
            found = k->seen[i].gpus_per_thread;
    return k->nseen == 0 ? g : found;
}

/* The fewest doublings between p and a rank count the calibration ran coll
 * at over n bytes (-1: none), for a band carried to another scale. */
static double doublings_to_seen(const topo_calib_t *k, coll_t coll, int p, uint64_t n) {
    double d = -1;
    for (int i = 0; i < k->nseen; i++) {
        if (k->seen[i].coll != (int)coll || n < k->seen[i].min || n > k->seen[i].max || k->seen[i].ranks < 1) continue;
        double x = fabs(log2((double)p / k->seen[i].ranks));
        if (d < 0 || x < d) d = x;
    }
    return d;
}

void run_error_bars(const topo_t *t, const run_req_t *q, int other_rule, run_out_t *o) {
    const topo_calib_t *k = &topo_params_c(t)->calib;
    int g = q->gpus_per_thread > 1 ? q->gpus_per_thread : 1, seen_g;
    o->time_lo_s = o->time_hi_s = 0;
    o->band_outside = 0;
    o->band_widen = 1;
    if (!k->present || !(k->band_lo_pct < k->band_hi_pct) || k->band_lo_pct <= -100) return;
    if (other_rule) {                              /* its errors were another rule's */
        o->band_outside = RUN_BAND_OTHER_RULE;
        return;
    }
    double d = k->what_if[0] || (seen_g = calibration_covers(k, q->coll, o->ranks, o->bytes, g)) ? 0
             : doublings_to_seen(k, q->coll, o->ranks, o->bytes);
    if (k->what_if[0] || d < 0) {                  /* it says nothing there */
        o->band_outside = 1;
        return;
    }
    if (d > 0) seen_g = g, o->band_widen = 1 + RUN_BAND_PER_DOUBLING * d;   /* the same call at another scale */
    /* The errors were measured with the logs' launches in the time; they are
     * known, so the band keeps its width in seconds with another -g. */
    double shift = (seen_g - g) * topo_params_c(t)->launch, was = o->time_s + shift;
    double lo = fmax(k->band_lo_pct * o->band_widen, -99), hi = k->band_hi_pct * o->band_widen;   /* at most 100x */
    o->time_lo_s = fmax(was / (1 + hi / 100) - shift, 0);
    o->time_hi_s = was / (1 + lo / 100) - shift;
}

#define RUN_MAX_ROWS 128       /* rows of one collective in the registry, with room */

int run_is_auto(const char *algo) { return strcmp(algo, "auto") == 0 || strcmp(algo, "nccl") == 0; }

/* The first of the k lowest times, -1 if none (k <= 0). */
static int lowest(const double *times, int k) {
    int best = -1;
    for (int i = 0; i < k; i++) if (best < 0 || times[i] < times[best]) best = i;
    return best;
}

/* The closed form of every row that may run coll here (NCCL's only if
 * nccl_only) into rows[]/times[] (at most max); their count, or
 * BATON_EWHOLE where a folded cluster cannot answer for a row. */
static int closed_forms(topo_t *t, coll_t coll, const cost_model_t *m, const proto_cost_t *pc, proto_t pr, int p,
                        uint64_t n, const algo_opts_t *o, int nccl_only, const char *family, unsigned allowed,
                        const algo_t **out, double *times, int max) {
    const algo_t *const *rows = algo_all();
    const char *forced = nccl_only ? ncclrule_forced(t, coll, p, n) : NULL;
    int k = 0;
    for (int i = 0; rows[i] && k < max; i++) {
        sched_t s;
        cost_model_t am;
        if (rows[i]->coll != coll || rows[i]->helpers > m->reducers) continue;
        if (nccl_only && (rows[i]->nccl == NULL || (pr != PROTO_NONE && !ncclrule_runs_at(t, rows[i], pr, p, n)))) continue;
        if (nccl_only && forced && strcmp(rows[i]->nccl, forced)) continue;   /* NCCL runs that family, no tuner */
        if (family && (rows[i]->nccl == NULL || strcmp(rows[i]->nccl, family))) continue;
        int ni = nccl_only && allowed ? algo_nccl_index(rows[i]->nccl) : -1;
        if (ni >= 0 && !(allowed >> ni & 1)) continue;  /* NCCL_ALGO leaves it out */
        if (algo_build(rows[i], p, n, o, &s, NULL) < 0 || (t && helpers_fit(t, rows[i], &s, NULL) < 0)) continue;
        baton_err_t why = {0};
        if (run_algo_model(t, rows[i], &s, m, &am, &why) < 0) {
            if (why.code == BATON_EWHOLE) return BATON_EWHOLE;
            continue;
        }
        if (pc) am = proto_apply(&am, pc);
        out[k] = rows[i];
        times[k++] = rows[i]->cost(&am, p, n, o) + switch_latency(t, &s);
    }
    return k;
}

const algo_t *run_pick(topo_t *t, coll_t coll, const cost_model_t *m, const proto_cost_t *pc, proto_t pr, int p,
                       uint64_t n, const algo_opts_t *o, int nccl_only) {
    const algo_t *rows[RUN_MAX_ROWS];
    double times[RUN_MAX_ROWS];
    int best = lowest(times, closed_forms(t, coll, m, pc, pr, p, n, o, nccl_only, NULL, 0, rows, times, RUN_MAX_ROWS));
    return best < 0 ? NULL : rows[best];
}

void run_opts_from_topo(topo_t *t, algo_opts_t *o) {
    if (o->group == 0) o->group = topo_params_c(t)->group_size;
    if (o->rings == NULL && !o->rank_order) o->rings = graph_rings(t, NULL);   /* NULL: flat, rank order */
    if (o->channels == 0 && topo_params_c(t)->plain) o->channels = topo_params_c(t)->channels;   /* 1 or the file's */
    if (o->channels == 0) o->channels = o->rings ? o->rings->count : topo_params_c(t)->channels;
    if (o->stride == 0 && o->rings == NULL) o->stride = graph_ring_stride(t);
    const topo_sharp_t *sh = &topo_params_c(t)->sharp;
    if (o->sharp.rails == 0 && sh->rails) {
        o->sharp.rails = sh->rails, o->sharp.per_leaf = sh->per_leaf;
        o->sharp.leaves = sh->leaves, o->sharp.first = sh->first;
    }
}

/* Say which option could not be honoured. */
static int symmetric_failed(baton_err_t *e, int rc) {
    err_prefix(e, "--symmetric: ");
    return rc;
}

/* Representatives for the engine, in y (period 0: every rank): asked for
 * (an error where not exact), or unasked where proven on a run large enough
 * to gain and whose observers do not need every rank. */
static int find_symmetry(const run_req_t *q, const engine_opts_t *eo, const sched_t *s, topo_t *t, int p, sym_t *y,
                         baton_err_t *e) {
    if (q->symmetric > 0) {
        int rc = sym_find(s, t, y, e);
        return rc < 0 ? symmetric_failed(e, rc) : 0;
    }
    if (q->symmetric < 0 || p < RUN_AUTO_SYMMETRY || eo->verify || eo->on_msg || eo->record || eo->link_stats ||
        eo->contention == CONTENTION_FAIR)
        return 0;
    baton_err_t why = {0};                 /* not proven: simulate every rank, no error */
    int rc = sym_find(s, t, y, &why);
    if (rc == BATON_ENOMEM) return err_set(e, rc, "%s", why.msg);
    if (rc < 0) *y = (sym_t){0};
    return 0;
}

/* One run (closed form or engine) of an already chosen algorithm under protocol pr. */
static int run_one(topo_t *t, const run_req_t *q, const sched_t *s, proto_t pr, run_out_t *o, baton_err_t *e) {
    const proto_cost_t *pc = &topo_params_c(t)->proto[pr];
    o->proto = pr;
    if (q->predict) {
        cost_model_t m = proto_apply(&o->model, pc);   /* o->model: the row's own view (run_algo_model) */
        o->once_s = o->ranks > 1 ? pc->base_latency : 0;
        o->sync_s = switch_latency(t, s);
        ncclrule_host_side(t, q, pc, pr, o->algo->cost(&m, o->ranks, q->bytes, &q->opts) + o->once_s + o->sync_s, o);
        bandwidths(o, q->coll);
        return 0;
    }
    engine_opts_t eo = q->engine ? *q->engine : (engine_opts_t){0};
    eo.verify = VERIFY_NONE;
    eo.contention = q->contention;
    eo.store_forward = q->store_forward;
    eo.proto = pr == PROTO_NONE ? NULL : pc;
    if (q->verify)
        eo.verify = (uint64_t)o->ranks * q->bytes <= RUN_DATA_VERIFY_MAX ? VERIFY_DATA : VERIFY_SIGNATURE;
    o->verify_mode = eo.verify;
    sym_t y = {0};
    int rc = find_symmetry(q, &eo, s, t, o->ranks, &y, e);
    if (rc < 0) return rc;
    eo.sym = y.period ? &y : NULL;
    rc = engine_run(s, t, &eo, &o->eng, e);
    sym_free(&y);
    if (rc < 0) return rc;
    o->simulated = 1;
    o->contention = q->contention;
    o->once_s = pr != PROTO_NONE && o->eng.messages ? pc->base_latency : 0;      /* as engine_run adds them */
    o->sync_s = s->helpers && o->eng.messages ? topo_params_c(t)->nvls_lat : 0;
    ncclrule_host_side(t, q, pr == PROTO_NONE ? &(proto_cost_t){0} : pc, pr, o->eng.time_s, o);
    bandwidths(o, q->coll);
    return 0;
}

/* The rows to simulate under protocol pr into out[]: the named one; with
 * -a auto the lowest closed form on the machine as that protocol sees it;
 * with -a nccl every row NCCL has whose closed form is within
 * RUN_NCCL_SLACK of the lowest (what an nccl-tests log measured is NCCL's
 * fastest, and a closed form can misjudge a tree across nodes: the
 * simulator decides between the close ones). Their count. */
static int choose(topo_t *t, const run_req_t *q, const run_out_t *o, proto_t pr, const algo_t **out, double *closed) {
    closed[0] = 0;                                 /* a named row: no closed form looked at */
    if (!run_is_auto(q->algo)) return (out[0] = algo_find(q->coll, q->algo)) != NULL;
    const proto_cost_t *pc = &topo_params_c(t)->proto[pr];
    int nccl = strcmp(q->algo, "nccl") == 0;
    double times[RUN_MAX_ROWS];
    int k = closed_forms(t, q->coll, &o->model, pc, pr, o->ranks, q->bytes, &q->opts, nccl, nccl ? q->nccl_algo : NULL,
                         q->nccl_algos, out, times, RUN_MAX_ROWS);
    if (k > 0 && nccl && q->nccl_row) {             /* nccl_tuner: NCCL's model named the row */
        int j = 0;
        for (int i = 0; i < k; i++) if (strcmp(out[i]->name, q->nccl_row) == 0) out[j] = out[i], times[j++] = times[i];
        k = j;
    }
    int best = lowest(times, k), m = 0;
    if (k < 0 || best < 0) return k < 0 ? k : 0;    /* BATON_EWHOLE, or nothing */
    if (!nccl) return closed[0] = times[best], out[0] = out[best], 1;       /* auto: the lowest; nccl: every row near it */
    for (int i = 0; i < k; i++) if (times[i] <= times[best] * RUN_NCCL_SLACK) closed[m] = times[i], out[m++] = out[i];
    return m;
}

/* Build and time row a under protocol pr (cut into nccl_steps as NCCL
 * does, 0: its own); keep it in *best if faster. */
static int try_row(topo_t *t, const run_req_t *q, const run_out_t *o, const algo_t *a, proto_t pr, int nccl_steps,
                   run_out_t *best, baton_err_t *e) {
    run_out_t cand = *o;
    sched_t s;
    int rc;
    cand.algo = a;
    cand.channels = q->opts.channels > 0 ? q->opts.channels : 1;
    cand.auto_picked = !run_is_auto(q->algo) ? 0 : strcmp(q->algo, "nccl") == 0 ? 2 : 1;
    cand.nccl_steps = nccl_steps;
    cand.opts = q->opts;                                  /* what run_parts reads */
    if (a->helpers > reducers_of(t) && !a->fabric)               /* CollNet's build says what it needs */
        return err_set(e, BATON_EUNSUP, "%s needs a switch that reduces in the network (`reduce: true` in %s)",
                       a->name, topo_name(t));
    if ((rc = algo_build(a, o->ranks, q->bytes, &q->opts, &s, e)) < 0) return rc;
    if (a->nccl == NULL) cand.channels = s.nchannels;     /* direct: a stream per peer */
    if ((rc = helpers_fit(t, a, &s, e)) < 0 ||
        (rc = run_algo_model(t, a, &s, &o->model, &cand.model, e)) < 0 || (rc = run_one(t, q, &s, pr, &cand, e)) < 0)
        return rc;
    if (best->algo == NULL || cand.time_s < best->time_s) { engine_result_free(&best->eng); *best = cand; }
    else engine_result_free(&cand.eng);
    return 0;
}

/* -a auto found no row: say why, from the first row of the collective
 * (alltoall's need the size to be a multiple of the rank count). */
static int none_applies(const run_req_t *q, int p, baton_err_t *e) {
    const algo_t *const *rows = algo_all();
    baton_err_t why = {0};
    for (int i = 0; rows[i]; i++) {
        sched_t s;
        if (rows[i]->coll == q->coll && algo_build(rows[i], p, q->bytes, &q->opts, &s, &why) < 0) break;
    }
    return err_set(e, BATON_EINVAL, "-a auto: no %s algorithm runs %llu bytes on %d ranks%s%s", coll_name(q->coll),
                   (unsigned long long)q->bytes, p, why.msg[0] ? ": " : "", why.msg);
}

/* The progress line's note: which row and protocol the engine runs, the
 * k-th of n protocols tried. */
static void running(const algo_t *a, proto_t pr, int k, int n) {
    char label[48];
    if (!progress_on()) return;
    snprintf(label, sizeof label, "%s %s", a->name, proto_name(pr));
    progress_run(label, k, n);
}

/* -a msccl:FILE: load it (FILE:LINE errors); it has no closed form, so it is
 * simulated, and with --proto auto on the protocol its file names. */
static int msccl_request(run_req_t *q, baton_err_t *e) {
    const algo_t *a = msccl_load(q->algo, e);
    if (a == NULL) return e && e->code ? e->code : BATON_EINVAL;
    if (a->coll != q->coll)
        return err_set(e, BATON_EINVAL, "%s is an MSCCL %s, not %s", q->algo + 6, coll_name(a->coll), coll_name(q->coll));
    q->predict = 0;
    if (q->proto == RUN_PROTO_AUTO) q->proto = msccl_proto(a);
    return 0;
}

/* Time row a under protocol pr as -a nccl sizes it (NCCL's channels and
 * steps for the call), keeping it in *best if faster. */
static int try_candidate(topo_t *t, const run_req_t *q, const run_req_t *q_in, const run_out_t *o, const algo_t *a,
                         proto_t pr, const topo_lib_rule_t *rule, int kth, int of, run_out_t *best, baton_err_t *e) {
    run_req_t qc = *q;
    int sized = q->nccl_sizing || strcmp(q->algo, "nccl") == 0;
    if (q_in->opts.channels == 0 && sized)
        qc.opts.channels = ncclrule_channels(a, pr, o->ranks, q->bytes, q->opts.channels, rule ? rule->channels : 0);
    int steps = q_in->opts.pipeline == 0 && sized
              ? ncclrule_pipeline(t, a, pr, o->ranks, q->opts.group, graph_node_nics(t), qc.opts.channels, q->bytes) : 0;
    if (steps) qc.opts.pipeline = steps;
    if (sized) qc.opts.fill = ncclrule_fill(a, pr);
    if (!q->predict) running(a, pr, kth, of);
    return try_row(t, &qc, o, a, pr, steps, best, e);
}

/* -a nccl: simulate first the candidate with the lowest closed form under
 * any protocol (into *first; nothing if none): the others then need not run
 * where half their formula is above its time, as no row simulates below half
 * its formula (test_catalogue.c's band for approximate rows: [0.5, 1.75]),
 * used only where the first itself keeps to it (a machine where it runs below
 * half its formula skips nothing).
 * The answer is the one every candidate's run gives; on 16 GB200 racks LL's
 * and LL128's trees took 13 of 14.6 s to lose by 20x and 8x. */
static int simulate_lowest(topo_t *t, const run_req_t *q, const run_req_t *q_in, const run_out_t *o,
                           const topo_lib_rule_t *rule, int first_pr, int last, const int *k_by,
                           const algo_t *const (*rows_by)[RUN_MAX_ROWS], const double (*closed_by)[RUN_MAX_ROWS],
                           run_out_t *first, int *first_proto, double *first_closed, baton_err_t *e) {
    const algo_t *pick = NULL;
    int pick_pr = 0;
    double low = 0;
    for (int pr = first_pr; pr <= last; pr++)
        for (int i = 0; i < k_by[pr]; i++) {
            if (q->nccl_rules && pr != PROTO_NONE && !ncclrule_runs_at(t, rows_by[pr][i], (proto_t)pr, o->ranks, q->bytes)) continue;
            if (pick == NULL || closed_by[pr][i] < low) pick = rows_by[pr][i], pick_pr = pr, low = closed_by[pr][i];
        }
    if (pick == NULL || low <= 0) return 0;
    *first_proto = pick_pr;
    *first_closed = low;
    return try_candidate(t, q, q_in, o, pick, (proto_t)pick_pr, rule, 1, 1, first, e);
}

int run_collective(topo_t *t, const run_req_t *q_in, run_out_t *o, baton_err_t *e) {
    run_req_t qq = *q_in, *q = &qq;
    int rc0 = msccl_is(q->algo) ? msccl_request(q, e) : 0;
    if (rc0 < 0) return rc0;
    ncclrule_env(t, q);
    if (topo_fold_ranks(t) && !q->predict)
        return err_set(e, BATON_EWHOLE, "%s is folded: the simulator needs every rank", topo_name(t));
    const topo_lib_rule_t *rule = ncclrule_library(t, q);
    int tuned = ncclrule_tuner(t, q, rule, e);
    if (tuned < 0) return tuned;
    run_opts_from_topo(t, &q->opts);
    memset(o, 0, sizeof *o);
    o->tuner = tuned;
    o->ranks = topo_whole_ranks(t);
    o->bytes = q->bytes;
    int rc = topo_cost_model(t, &o->model, e);
    if (rc < 0) return rc;
    o->model.reducers = reducers_of(t);
    int proto = q->proto == RUN_PROTO_AUTO && topo_params_c(t)->no_protocols ? PROTO_NONE : q->proto;
    int first_pr = proto == RUN_PROTO_AUTO ? PROTO_LL : proto;
    int last = proto == RUN_PROTO_AUTO ? PROTO_SIMPLE : proto;
    run_out_t best = {0}, first = {0};
    double first_s = 0;
    int first_proto = -1, k_by[PROTO_COUNT] = {0};
    double first_closed = 0;
    const algo_t *rows_by[PROTO_COUNT][RUN_MAX_ROWS];
    double closed_by[PROTO_COUNT][RUN_MAX_ROWS];
    for (int pr = first_pr; pr <= last; pr++) {      /* each protocol's candidates, once */
        if (proto == RUN_PROTO_AUTO && !rule && q->protos && !(q->protos >> pr & 1)) continue;   /* NCCL_PROTO */
        k_by[pr] = choose(t, q, o, (proto_t)pr, rows_by[pr], closed_by[pr]);
    }
    if (strcmp(q->algo, "nccl") == 0 && !q->predict &&
        (rc = simulate_lowest(t, q, q_in, o, rule, first_pr, last, k_by, (const algo_t *const (*)[RUN_MAX_ROWS])rows_by,
                              (const double (*)[RUN_MAX_ROWS])closed_by, &first, &first_proto, &first_closed, e)) < 0)
        return rc;
    if (first.algo && first.time_s >= 0.5 * first_closed) first_s = first.time_s;   /* the band holds here: skip by it */
    for (int pr = first_pr; pr <= last; pr++) {      /* each protocol asked for, each candidate; keep the fastest */
        const algo_t **rows = rows_by[pr];
        const double *closed = closed_by[pr];
        if (proto == RUN_PROTO_AUTO && !rule && q->protos && !(q->protos >> pr & 1)) continue;   /* NCCL_PROTO */
        int k = k_by[pr];
        if (k < 0) return err_set(e, k, "%s is folded: %s's closed forms need every rank", topo_name(t), q->algo);
        if (k == 0 && strcmp(q->algo, "nccl") == 0) continue;    /* NCCL runs nothing with this protocol here */
        if (k == 0 && run_is_auto(q->algo)) return none_applies(q, o->ranks, e);
        if (k == 0)
            return err_set(e, BATON_EINVAL, "no algorithm '%s' for %s%s (see `baton algos -c %s`)",
                           q->algo, coll_name(q->coll), algo_hint(q->coll, q->algo), coll_name(q->coll));
        for (int i = 0; i < k; i++) {
            if (q->nccl_rules && pr != PROTO_NONE && !ncclrule_runs_at(t, rows[i], (proto_t)pr, o->ranks, q->bytes)) continue;
            if (first.algo && rows[i] == first.algo && pr == first_proto) {     /* simulated already */
                if (best.algo == NULL || first.time_s < best.time_s) { engine_result_free(&best.eng); best = first; }
                else engine_result_free(&first.eng);
                first = (run_out_t){0};
                continue;
            }
            if (first_s > 0 && 0.5 * closed[i] > first_s) continue;   /* cannot beat the lowest formula's simulation */
            if ((rc = try_candidate(t, q, q_in, o, rows[i], (proto_t)pr, rule, pr - first_pr + 1, last - first_pr + 1, &best, e)) < 0) {
                engine_result_free(&best.eng);
                engine_result_free(&first.eng);
                return rc;
            }
        }
    }
    if (first.algo) engine_result_free(&first.eng);
    if (best.algo == NULL && q->nccl_rules && !run_is_auto(q->algo))     /* select's NCCL-only cells: not here */
        return err_set(e, BATON_EUNSUP, "NCCL does not run %s %s on %s (its version, buffers or nodes; see `baton plan`)",
                       coll_name(q->coll), q->algo, topo_name(t));
    if (best.algo == NULL)
        return err_set(e, BATON_EINVAL, "-a nccl: none of NCCL's algorithms (ring, tree, chain, nvls, p2p) does %s%s%s "
                       "on %d ranks (see `baton algos -c %s`)", coll_name(q->coll), proto == RUN_PROTO_AUTO ? "" : " with ",
                       proto == RUN_PROTO_AUTO ? "" : proto_name((proto_t)proto), o->ranks, coll_name(q->coll));
    *o = best;
    o->proto_auto = proto == RUN_PROTO_AUTO || rule;
    o->rule = rule;
    if (rule) o->auto_picked = 2;
    return 0;
}

/* The closed form's alpha, beta and gamma terms of o, each alone, and what
 * the formula's total has beyond their sum. */
static void formula_parts(topo_t *t, const run_out_t *o, run_parts_t *x) {
    cost_model_t m = proto_apply(&o->model, &topo_params_c(t)->proto[o->proto]), y;
    double *term[3] = {&x->alpha, &x->beta, &x->gamma};
    for (int i = 0; i < 3; i++) {
        y = m;
        if (i != 0) y.alpha = y.across.alpha = 0;
        if (i != 1) y.beta = y.beta_path = y.across.beta = y.across.beta_path = y.helper_beta = 0;
        if (i != 2) y.gamma = 0;
        *term[i] = o->algo->cost(&y, o->ranks, o->bytes, &o->opts);
    }
    x->overlap = o->algo->cost(&m, o->ranks, o->bytes, &o->opts) - x->alpha - x->beta - x->gamma;
}

/* The engine's links time along its critical path; without records, all of
 * it idle (nothing says where it went). */
static void path_parts(const run_out_t *o, run_parts_t *x) {
    engine_path_t cp;
    if (engine_critical_path(&o->eng, &cp) == 0)
        x->transfer = cp.transfer_s, x->wait = cp.wait_s, x->reduce = cp.reduce_s;
    x->idle = o->links_s - o->once_s - o->sync_s - x->transfer - x->wait - x->reduce;   /* gaps, before and after */
}

void run_parts(topo_t *t, const run_out_t *o, run_parts_t *x) {
    memset(x, 0, sizeof *x);
    if (o->simulated) path_parts(o, x);
    else formula_parts(t, o, x);
    x->once = o->once_s;
    x->sync = o->sync_s;
    x->proxy = o->proxy_s;
    x->launches = o->launch_s;
    x->ceiling = o->time_s - o->launch_s - o->proxy_s - o->links_s;   /* gpu_and_host's ceilings */
    x->total = o->time_s;
    if (!o->simulated)                         /* the last bits of rounding: the parts sum to links_s */
        x->overlap += o->links_s - o->once_s - o->sync_s - (x->alpha + x->beta + x->gamma + x->overlap);
}

int run_formula_approx(const run_out_t *o) {
    return o->algo->approx || !o->model.uniform || o->model.blind;
}

int run_check_cheap(const run_out_t *o) {
    double p = o->ranks, k = o->nccl_steps > 0 ? (double)o->nccl_steps : (double)algo_pipeline_chunks(o->bytes, &o->opts);
    return p * (k > p ? k : p) * 8 <= RUN_CHECK_WORK;
}

void run_same_row(const run_req_t *q, const run_out_t *o, int predict, run_req_t *out) {
    *out = *q;
    out->proto = o->proto;
    out->predict = predict;
    if (o->rule && !o->rule->nccl) return;        /* the library's rule names the row: -a nccl runs that one */
    out->algo = o->algo->name;
    if (o->auto_picked == 2) out->nccl_sizing = 1, out->nccl_rules = 1;   /* sized as -a nccl sized it */
    if (o->rule) out->lib_busbw = o->rule->max_busbw;                     /* a log's TUNING line's rule */
    if (o->rule && o->rule->channels) out->opts.channels = o->channels;
}

int run_check(topo_t *t, const run_req_t *q, const run_out_t *o, run_check_t *c) {
    run_req_t sq;
    run_out_t so;
    baton_err_t e = {0};
    memset(c, 0, sizeof *c);
    if (!run_formula_approx(o)) return 0;
    if (!run_check_cheap(o) || topo_fold_ranks(t)) { c->state = RUN_CHECK_LARGE; return 0; }
    run_same_row(q, o, 0, &sq);
    sq.verify = 0, sq.engine = NULL;
    int rc = run_collective(t, &sq, &so, &e);
    if (rc == BATON_ENOMEM) return rc;
    if (rc < 0) {
        c->state = RUN_CHECK_FAILED;
        snprintf(c->why, sizeof c->why, "%s", e.msg);
        return 0;
    }
    c->state = RUN_CHECK_DONE;
    c->sim_s = so.time_s;
    c->beyond = fabs(so.time_s - o->time_s) > RUN_FORMULA_BAND * so.time_s;
    engine_result_free(&so.eng);
    return 0;
}
