/* form.c - a row's closed form on a machine (form.h): the links its
 * messages share, memoised per pattern, and every applicable row's time. */
#include "form.h"

#include <stdlib.h>
#include <string.h>

#include "../../topologies/graph.h"
#include "../../topologies/linkload.h"
#include "../../topologies/topo.h"
#include "peers.h"

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
 * (topo_set_memo, with the rings), and the scales are in the key. A row
 * costed by its steps (algo_t.step_send) sends each step's own bytes, so
 * its view is the size's too (peers.c keys its step loads by it): an 8 B
 * Rabenseifner, most of whose blocks are empty, had been the view of every
 * later size in one process (select's 1 GiB formula 10.45 ms after 8 B,
 * 9.20 ms alone). */
typedef struct {
    const algo_t *a;
    uint64_t bytes;                /* a step row's size, else 0 */
    int nranks, nchannels, root, helpers, period;
    int64_t param[4];
    const sched_orders_t *orders;
    cost_model_t in;
    double bw_scale, lat_scale;
} memo_key_t;

#define MEMO_SIZE 64
typedef struct { memo_key_t key[MEMO_SIZE]; cost_model_t out[MEMO_SIZE]; int n, next; } memo_t;

/* A step row's view is the size's own where a chunk is empty (an 8 B
 * Rabenseifner on 32 ranks); with every chunk full it is one view, taken at
 * FORM_STEP_CHUNK bytes a chunk, whatever size asks first (so the answer does
 * not depend on what ran before; recounting 262,144 routes a size had made
 * doctor on a 512-rank all-to-all log take 100 s, where it takes 2). */
#define FORM_STEP_CHUNK 4096
static int chunk_empty(const sched_t *s) { return s->bytes < s->nchunks; }

/* Is row a's view costed by its steps (algo_model)? */
static int steps_view(const algo_t *a, const sched_t *s) { return a->step_send && s->nchannels <= 1; }

static void memo_key(memo_key_t *k, const topo_t *t, const algo_t *a, const sched_t *s, const cost_model_t *m) {
    memset(k, 0, sizeof *k);                  /* padding too: keys compare with memcmp */
    k->a = a;
    k->bytes = steps_view(a, s) && chunk_empty(s) ? s->bytes : 0;
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

int form_model(topo_t *t, const algo_t *a, const sched_t *s, const cost_model_t *m, cost_model_t *out, baton_err_t *e) {
    memo_key_t k;
    const cost_model_t *hit;
    if (t == NULL) return algo_model(t, a, s, m, out, e);
    memo_key(&k, t, a, s, m);
    if ((hit = memo_find(t, &k)) != NULL) { *out = *hit; return 0; }
    int rc = algo_model(t, a, s, m, out, e);
    if (rc == 0) memo_put(t, &k, out);
    return rc;
}

/* x's pattern's link loads: on a folded cluster by its witnesses
 * (linkload_folded_cost), else on the whole machine, from its cached
 * destinations (peers.h) where it has them. */
static int one_pattern(topo_t *t, const algo_t *a, const peer_ctx_t *x, int slots, int C, int folded, cost_model_t *out,
                       baton_err_t *e) {
    if (folded) return linkload_folded_cost(t, load_peer, x, slots, C, out, e);
    peers_table_t y = {peers_table(t, a, x->peer, &x->s, slots), topo_nranks(t)};
    return y.dst ? peers_loads_cost(t, a, x->peer, &x->s, slots, C, peers_at, &y, out, e)
                 : peers_loads_cost(t, a, x->peer, &x->s, slots, C, load_peer, x, out, e);
}

/* Does a message of x's pattern (slots a rank) pass a NIC? A group is
 * usually a node, but need not be (--group 8 on nodes of 4): the view
 * inside groups then pays the rendezvous too. Asked only where there is
 * one (software matching); a folded cluster's groups are its nodes. */
static int pattern_crosses(topo_t *t, const peer_ctx_t *x, int slots) {
    if (topo_fold_ranks(t)) return 0;
    for (int r = 0; r < x->s.nranks; r++)
        for (int c = 0; c < slots; c++) {
            int q = x->peer(&x->s, c, r);
            topo_route_t rt;
            if (q >= 0 && q != r && topo_route(t, r, q, &rt, NULL) == 0 && topo_route_crosses_nic(t, &rt)) return 1;
        }
    return 0;
}

/* Row a's view from its pattern of peers (and its pattern across groups):
 * the whole machine's busiest link, counted on the whole or (folded) on a
 * folded cluster's witnesses. */
static int peer_view(topo_t *t, const algo_t *a, const sched_t *s, const cost_model_t *m, int folded, cost_model_t *out,
                     baton_err_t *e) {
    peer_ctx_t x = {.peer = a->peer, .s = *s};
    int C = x.s.nchannels, slots = a->peer_slots ? a->peer_slots(&x.s, &C) : C;
    int rc = a->peer ? one_pattern(t, a, &x, slots, C, folded, out, e) : 0;
    if (rc > 0 && a->peer_slots) out->stepwise = 1;
    if (rc == 0 && a->peer) out->blind = has_fabric(t);          /* too large to look at */
    if (rc >= 0 && a->peer_across) {
        cost_model_t across = *m;
        x.peer = a->peer_across;
        rc = one_pattern(t, a, &x, slots, C, folded, &across, e);
        if (rc > 0) {                                  /* a message crosses groups: the across view */
            out->across = (cost_view_t){across.alpha, across.beta, across.beta_path, across.channels, m->rdzv, m->match};
            out->has_across = 1;
            x.peer = a->peer;
            if (!a->peer || ((m->rdzv > 0 || m->match > 0) && !pattern_crosses(t, &x, slots)))
                out->rdzv = out->match = 0;                                                      /* inside nodes */
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
    int C = s->nchannels, slots = a->peer_slots ? a->peer_slots(s, &C) : C, steps = steps_view(a, s);
    int whole = steps ? linkload_steps_charged((int)p, a->nsteps(s)) > 0     /* the whole charges steps (linkload.h) */
              : (a->peer || a->peer_across) && C >= 1 && slots >= 1 && p * slots <= LOAD_MAX_MESSAGES;
    if (!whole) {
        if (steps || a->peer || !a->peer_across) out->blind = has_fabric(t);   /* as algo_model */
        return 0;
    }
    baton_err_t why = {0};
    if (!steps && peer_view(t, a, s, m, 1, out, &why) == 0) return 0;
    *out = *m;
    return why.code && why.code != BATON_EWHOLE ? err_set(e, why.code, "%s", why.msg) : needs_every_rank(t, a, e);
}

static int algo_model(topo_t *t, const algo_t *a, const sched_t *s, const cost_model_t *m, cost_model_t *out,
                      baton_err_t *e) {
    *out = *m;
    if (t == NULL || s->nranks < 2) return 0;
    if (topo_fold_ranks(t)) return folded_model(t, a, s, m, out, e);
    if (steps_view(a, s)) {
        sched_t even = *s;                    /* every chunk full: the view of every such size, bit for bit */
        if (!chunk_empty(&even)) even.bytes = (uint64_t)even.nchunks * FORM_STEP_CHUNK;
        step_ctx_t y = {a, &even};
        int rc = peers_steps_cost(t, a, &even, a->nsteps(&even), load_step, &y, out, e);
        out->blind = rc == 0 && has_fabric(t);
        return rc < 0 ? rc : 0;
    }
    if (!a->peer && !a->peer_across) { out->blind = has_fabric(t); return 0; }
    return peer_view(t, a, s, m, 0, out, e);
}

int form_reducers(const topo_t *t) { return topo_fold_ranks(t) ? topo_fold_reducers(t) : topo_nreducers(t); }

int form_helpers_fit(topo_t *t, const algo_t *a, const sched_t *s, baton_err_t *e) {
    topo_route_t r;
    int p = topo_nranks(t);                  /* a folded cluster's last witness rank and switch stand for its last */
    if (!a->fabric && topo_params_c(t)->sharp.rails && s->helpers > topo_nvls_reducers(t))
        return err_set(e, BATON_EUNSUP, "%s reduces in the nodes' switches; %s has %d (its other reducing switches are "
                       "the fabric's: -a collnet)", s->algo, topo_name(t), topo_nvls_reducers(t));
    if (s->helpers > form_reducers(t))
        return err_set(e, BATON_EUNSUP, "%s needs %d switch%s that reduce%s in the network (`reduce: true`), %s has %d",
                       s->algo, s->helpers, s->helpers > 1 ? "es" : "", s->helpers > 1 ? "" : "s", topo_name(t),
                       form_reducers(t));
    if (s->helpers == 1 && form_reducers(t) > 1 && topo_route(t, p - 1, p, &r, NULL) < 0)
        return err_set(e, BATON_EUNSUP, "%s needs one reducing switch every rank reaches; %s has one per node "
                       "(nvlstree uses those)", s->algo, topo_name(t));
    return 0;
}

double form_switch_latency(const topo_t *t, const sched_t *s) {
    return t && s->helpers && s->nranks > 1 ? topo_params_c(t)->nvls_lat : 0;
}

int form_lowest(const double *times, int k) {
    int best = -1;
    for (int i = 0; i < k; i++) if (best < 0 || times[i] < times[best]) best = i;
    return best;
}

int form_time(topo_t *t, const algo_t *a, const cost_model_t *m, const proto_cost_t *pc, int p, uint64_t n,
              const algo_opts_t *o, double *time) {
    sched_t s;
    cost_model_t am;
    baton_err_t why = {0};
    if (algo_build(a, p, n, o, &s, NULL) < 0 || (t && form_helpers_fit(t, a, &s, NULL) < 0)) return 0;
    if (form_model(t, a, &s, m, &am, &why) < 0) return why.code == BATON_EWHOLE ? BATON_EWHOLE : 0;
    if (pc) am = proto_apply(&am, pc);
    *time = a->cost(&am, p, n, o) + form_switch_latency(t, &s);
    return 1;
}

int form_lower_cut(topo_t *t, const algo_t *a, const cost_model_t *m, const proto_cost_t *pc, int p, uint64_t n,
                   const algo_opts_t *own, const algo_opts_t *cut, double *time, int *took_cut) {
    double tc, to;
    int rc = form_time(t, a, m, pc, p, n, cut, &tc);
    if (took_cut) *took_cut = 0;
    if (rc == BATON_EWHOLE) return rc;
    int own_ok = form_time(t, a, m, pc, p, n, own, &to) == 1, take = !(own_ok && (rc != 1 || to <= tc));
    if (took_cut) *took_cut = take;                /* ties run the row's own cut */
    if (take && rc != 1) return rc;
    *time = take ? tc : to;
    return 1;
}

int form_list(topo_t *t, coll_t coll, const cost_model_t *m, const proto_cost_t *pc, int p, uint64_t n,
              const algo_opts_t *o, const form_filter_t *f, const algo_t **out, double *times, int max) {
    const algo_t *const *rows = algo_all();
    int k = 0;
    for (int i = 0; rows[i] && k < max; i++) {
        if (rows[i]->coll != coll || rows[i]->helpers > m->reducers) continue;
        if (f && f->keep && !f->keep(f, rows[i])) continue;
        algo_opts_t tmp, cut;
        const algo_opts_t *own = algo_row_opts(rows[i], o, &tmp), *ro = f && f->size ? f->size(f, rows[i], own, &cut) : own;
        double time;
        int rc = f && f->or_own && ro != own ? form_lower_cut(t, rows[i], m, pc, p, n, own, ro, &time, NULL)
                                             : form_time(t, rows[i], m, pc, p, n, ro, &time);
        if (rc == BATON_EWHOLE) return rc;
        if (rc != 1) continue;
        out[k] = rows[i];
        times[k++] = time;
    }
    return k;
}

const algo_t *form_pick(topo_t *t, coll_t coll, const cost_model_t *m, const proto_cost_t *pc, int p, uint64_t n,
                        const algo_opts_t *o, const form_filter_t *f) {
    const algo_t *rows[FORM_MAX_ROWS];
    double times[FORM_MAX_ROWS];
    int best = form_lowest(times, form_list(t, coll, m, pc, p, n, o, f, rows, times, FORM_MAX_ROWS));
    return best < 0 ? NULL : rows[best];
}

static void opts_fill(topo_t *t, algo_opts_t *o, int bounded) {
    int asked = o->channels != 0;
    if (o->channels == 0 && o->domain_rings == 0) o->domain_rings = graph_domain_rings(t);
    if (o->group == 0) o->group = topo_params_c(t)->group_size;
    if (o->rings == NULL && !o->rank_order) o->rings = graph_rings(t, NULL);   /* NULL: flat, rank order */
    if (o->channels == 0 && topo_params_c(t)->plain) o->channels = topo_params_c(t)->channels;   /* 1 or the file's */
    if (o->channels == 0) o->channels = o->rings ? o->rings->count : topo_params_c(t)->channels;
    if (!asked) o->channels_machine = 1;
    if (o->stride == 0 && o->rings == NULL) o->stride = graph_ring_stride(t);
    if (bounded && !asked) {           /* the machine's count, as its NCCL is told to bound it (nccl_env) */
        int C = topo_nccl_channels(t, o->channels, 0);
        if (C != o->channels) o->channels = C, o->channels_machine = 0;   /* told: every row takes it */
        if (o->domain_rings > 0) o->domain_rings = topo_nccl_channels(t, o->domain_rings, 0);
    }
    const topo_sharp_t *sh = &topo_params_c(t)->sharp;
    if (o->sharp.rails == 0 && sh->rails) {
        o->sharp.rails = sh->rails, o->sharp.per_leaf = sh->per_leaf;
        o->sharp.leaves = sh->leaves, o->sharp.first = sh->first;
    }
}

void form_opts(topo_t *t, algo_opts_t *o) { opts_fill(t, o, 1); }

void form_opts_searched(topo_t *t, algo_opts_t *o) { opts_fill(t, o, 0); }
