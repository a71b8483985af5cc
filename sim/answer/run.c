/* run.c - simulate or predict one collective and derive algbw/busbw. */
#include "run.h"

#include "../../algorithms/msccl.h"

#include "../../topologies/topo.h"
#include "../../util/par.h"
#include "../../util/progress.h"
#include "../engine/footprint.h"
#include "../engine/symmetry.h"
#include "../nccl/nccl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void bandwidths(run_out_t *o, coll_t c) {
    o->algbw_GBps = o->time_s > 0 ? (double)o->bytes / o->time_s / 1e9 : 0;
    o->busbw_GBps = o->algbw_GBps * run_busbw_factor(c, o->ranks);
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
    o->band_large = 0;
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
    /* a large call takes the large sizes' own band where the record has one:
     * mid sizes' misses (a protocol switch, a rendezvous) no longer set it */
    o->band_large = o->bytes >= (64ull << 20) && k->large_lo_pct < k->large_hi_pct;
    double blo = o->band_large ? k->large_lo_pct : k->band_lo_pct, bhi = o->band_large ? k->large_hi_pct : k->band_hi_pct;
    double lo = fmax(blo * o->band_widen, -99), hi = bhi * o->band_widen;   /* at most 100x */
    o->time_lo_s = fmax(was / (1 + hi / 100) - shift, 0);
    o->time_hi_s = was / (1 + lo / 100) - shift;
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
        cost_model_t m = proto_apply(&o->model, pc);   /* o->model: the row's own view (form_model) */
        o->once_s = o->ranks > 1 ? pc->base_latency : 0;
        o->sync_s = form_switch_latency(t, s);
        ncclrule_host_side(t, q, s, pc, pr, o->algo->cost(&m, o->ranks, q->bytes, &q->opts) + o->once_s + o->sync_s, o);
        bandwidths(o, q->coll);
        return 0;
    }
    engine_opts_t eo = q->engine ? *q->engine : (engine_opts_t){0};
    eo.verify = VERIFY_NONE;
    eo.contention = q->contention;
    eo.store_forward = q->store_forward;
    eo.proto = pr == PROTO_NONE ? NULL : pc;
    eo.give_up_after = q->give_up_s;
    eo.give_up_shared = q->give_up_shared;
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
    o->once_s = pr != PROTO_NONE && o->eng.messages && o->ranks > 1 ? pc->base_latency : 0;      /* as engine_run adds them */
    o->sync_s = s->helpers && o->eng.messages && o->ranks > 1 ? topo_params_c(t)->nvls_lat : 0;
    ncclrule_host_side(t, q, s, pr == PROTO_NONE ? &(proto_cost_t){0} : pc, pr, o->eng.time_s, o);
    bandwidths(o, q->coll);
    return 0;
}

/* The rows to simulate under protocol pr into out[]: the named one; with
 * -a auto the rows whose closed form on the machine, as that protocol sees
 * it, is within NCCL_SLACK of the lowest (predict then prices each with what
 * the GPU and host add, the ceilings of ncclrule_host_side, and keeps the
 * lowest: on two MI300X nodes a 4 MiB all-gather on LL, ring's links 79.7
 * us and direct's 87.9, but 130.8 and 99.9 us whole); with
 * -a nccl what NCCL's plan offers (nccl_rows: every row NCCL has within
 * NCCL_SLACK of the lowest; what an nccl-tests log measured is NCCL's
 * fastest). A closed form can misjudge a tree across nodes or a rack's
 * multicast: the simulator decides between the close ones. Their count. */
static int size_row(topo_t *t, const run_req_t *q, const run_req_t *q_in, const nccl_plan_t *x, const run_out_t *o,
                    const algo_t *a, proto_t pr, run_req_t *qc, int *steps, run_req_t *other, int *other_steps);
static int try_row(topo_t *t, const run_req_t *q_row, const run_out_t *o, const algo_t *a, proto_t pr, int nccl_steps,
                   run_out_t *best, baton_err_t *e);

/* "Simple", "LL and Simple": the protocols of a mask (bits 1 << proto_t). */
static const char *protos_text(unsigned mask) {
    static char b[48];
    int n = 0, k = 0;
    for (int pr = PROTO_LL; pr <= PROTO_SIMPLE; pr++) n += mask >> pr & 1;
    b[0] = 0;
    for (int pr = PROTO_LL; pr <= PROTO_SIMPLE; pr++)
        if (mask >> pr & 1)
            snprintf(b + strlen(b), sizeof b - strlen(b), "%s%s", k++ ? (k == n ? " and " : ", ") : "", proto_name((proto_t)pr));
    return b;
}

/* Row a under protocol pr as predict prices it whole (its closed form and
 * what its GPUs and hosts add), or 0 where it cannot be had. */
static double whole_time(topo_t *t, const run_req_t *q, const run_req_t *q_in, const nccl_plan_t *x, const run_out_t *o,
                         const algo_t *a, proto_t pr) {
    run_req_t qc, other;
    int steps, other_steps;
    size_row(t, q, q_in, x, o, a, pr, &qc, &steps, &other, &other_steps);
    qc.predict = 1;
    run_out_t cand = {0};
    baton_err_t why = {0};
    double w = try_row(t, &qc, o, a, pr, steps, &cand, &why) == 0 && cand.algo ? cand.time_s : 0;
    engine_result_free(&cand.eng);
    return w;
}

static int choose(topo_t *t, const run_req_t *q, const run_req_t *q_in, const nccl_plan_t *x, const run_out_t *o,
                  proto_t pr, const algo_t **out, double *closed) {
    closed[0] = 0;                                 /* a named row: no closed form looked at */
    if (!run_is_auto(q->algo)) return (out[0] = algo_find(q->coll, q->algo)) != NULL && algo_runs_proto(out[0], pr);
    if (strcmp(q->algo, "nccl") == 0) return nccl_rows(t, q, q_in, x, &o->model, pr, o->ranks, out, closed);
    double times[FORM_MAX_ROWS];
    nccl_cut_t c = nccl_cut_listing(t, pr, o->ranks, q->bytes, q_in->opts.channels != 0);   /* each row as it will run */
    int k = form_list(t, q->coll, &o->model, &topo_params_c(t)->proto[pr], o->ranks, q->bytes, &q->opts, &c.f, out,
                      times, FORM_MAX_ROWS);
    int listed = k;
    k = 0;
    for (int i = 0; i < listed; i++)               /* NVLS, NVLSTree, CollNet: Simple only, as NCCL runs them */
        if (algo_runs_proto(out[i], pr)) out[k] = out[i], times[k++] = times[i];
    int best = form_lowest(times, k), kept = 0;
    if (listed < 0 || best < 0) return listed < 0 ? listed : 0;
    /* The lowest formula's row priced whole: what the GPUs and hosts add can
     * put it behind a row whose formula was higher (polaris, 8 nodes, 8 B:
     * oneshot's formula is lowest, but its 56 proxy operations make it 160.6
     * us, rd 23.1). Whole >= formula, so no row whose formula is above that
     * can beat it: every row up to it stays. */
    double upto = fmax(times[best] * NCCL_SLACK, whole_time(t, q, q_in, x, o, out[best], pr));
    for (int i = 0; i < k; i++) if (times[i] <= upto) closed[kept] = times[i], out[kept++] = out[i];
    return kept;
}

/* Build and time row a under protocol pr (cut into nccl_steps as NCCL
 * does, 0: its own); keep it in *best if faster. */
static int try_row(topo_t *t, const run_req_t *q_row, const run_out_t *o, const algo_t *a, proto_t pr, int nccl_steps,
                   run_out_t *best, baton_err_t *e) {
    run_req_t qr = *q_row, *q = &qr;
    algo_opts_t tmp;
    qr.opts = *algo_row_opts(a, &q_row->opts, &tmp);        /* a ring per NIC across flat domains */
    run_out_t cand = *o;
    sched_t s;
    int rc;
    cand.algo = a;
    cand.auto_picked = !run_is_auto(q->algo) ? 0 : strcmp(q->algo, "nccl") == 0 ? 2 : 1;
    cand.nccl_steps = nccl_steps;
    cand.cut = q->cut;
    cand.opts = q->opts;                                  /* what run_parts reads */
    if (a->helpers > form_reducers(t) && !a->fabric)               /* CollNet's build says what it needs */
        return err_set(e, BATON_EUNSUP, "%s needs a switch that reduces in the network (`reduce: true` in %s)",
                       a->name, topo_name(t));
    if ((rc = algo_build(a, o->ranks, q->bytes, &q->opts, &s, e)) < 0) return rc;
    cand.channels = algo_run_channels(a, &s, q->opts.channels);
    if ((rc = form_helpers_fit(t, a, &s, e)) < 0 ||
        (rc = form_model(t, a, &s, &o->model, &cand.model, e)) < 0 || (rc = run_one(t, q, &s, pr, &cand, e)) < 0)
        return rc;
    if (cand.eng.gave_up) { engine_result_free(&cand.eng); return 0; }   /* later than a rival: not the fastest */
    if (best->algo == NULL || cand.time_s < best->time_s) { engine_result_free(&best->eng); *best = cand; }
    else engine_result_free(&cand.eng);
    return 0;
}

/* No row runs: why, where no row of the collective (of NCCL's rows when
 * nccl) builds it: the first one's refusal (an alltoall's rows need the
 * size to be a multiple of the rank count). Where one builds, something
 * else left it out (a protocol, NCCL's rules) and why->msg stays "". */
static void why_none(const run_req_t *q, int p, int nccl, baton_err_t *why) {
    const algo_t *const *rows = algo_all();
    baton_err_t first = {0};
    for (int i = 0; rows[i]; i++) {
        sched_t s;
        baton_err_t e = {0};
        if (rows[i]->coll != q->coll || (nccl && rows[i]->nccl == NULL)) continue;
        if (algo_build(rows[i], p, q->bytes, &q->opts, &s, &e) == 0) return;   /* one builds: not the size */
        if (first.msg[0] == '\0') first = e;
    }
    *why = first;
}

/* -a auto found no row: say why. */
static int none_applies(const run_req_t *q, int p, baton_err_t *e) {
    baton_err_t why = {0};
    why_none(q, p, 0, &why);
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

/* Row a under protocol pr for q as it runs (nccl_size) into *qc, its steps
 * into *steps. Under RUN_CUT_LOWER (-a auto, select's cells) a row has two
 * cuts, its own and NCCL's: *qc is the one whose closed form is lower
 * (ties: its own), *other the other, and 1; each labelled RUN_CUT_OWN or
 * RUN_CUT_NCCL, so a rerun takes the same (run_same_row). Where NCCL's cut
 * is the row's own, *qc is that, labelled own, and 0; under other policies
 * *qc is nccl_size's, and 0. */
static int size_row(topo_t *t, const run_req_t *q, const run_req_t *q_in, const nccl_plan_t *x, const run_out_t *o,
                    const algo_t *a, proto_t pr, run_req_t *qc, int *steps, run_req_t *other, int *other_steps) {
    algo_opts_t own_tmp, cut_tmp;
    *steps = nccl_size(t, q, q_in, x, a, pr, o->ranks, qc);
    if (nccl_cut_of(q) != RUN_CUT_LOWER) return 0;
    const algo_opts_t *own = algo_row_opts(a, &q->opts, &own_tmp), *cut = algo_row_opts(a, &qc->opts, &cut_tmp);
    if (!*steps && cut->fill == own->fill && cut->channels == own->channels) {
        *qc = *q, qc->cut = RUN_CUT_OWN;                          /* NCCL's cut is the row's own */
        return 0;
    }
    qc->cut = RUN_CUT_NCCL;
    *other = *q, other->cut = RUN_CUT_OWN, *other_steps = 0;
    double time;                                 /* the lower closed form, as choose's listing took it */
    int took = 1;
    form_lower_cut(t, a, &o->model, &topo_params_c(t)->proto[pr], o->ranks, q->bytes, own, cut, &time, &took);
    if (!took) {
        run_req_t swap = *qc;
        *other = swap, *other_steps = *steps;
        *qc = *q, qc->cut = RUN_CUT_OWN, *steps = 0;
    }
    return 1;
}

/* Time row a under protocol pr as it runs (size_row: NCCL's plan sizes
 * it, its channels and steps for the call), keeping it in *best if faster;
 * where it has two cuts, the simulator runs both (the lower formula first:
 * ties keep it), predict the lower formula's. */
static int try_candidate(topo_t *t, const run_req_t *q, const run_req_t *q_in, const run_out_t *o, const algo_t *a,
                         proto_t pr, const nccl_plan_t *x, int kth, int of, run_out_t *best, baton_err_t *e) {
    run_req_t qc, other;
    int steps, other_steps;
    int two = size_row(t, q, q_in, x, o, a, pr, &qc, &steps, &other, &other_steps);
    if (!q->predict) running(a, pr, kth, of);
    int rc = try_row(t, &qc, o, a, pr, steps, best, e);
    if (rc < 0 || !two || q->predict) return rc;
    return try_row(t, &other, o, a, pr, other_steps, best, e);
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
                           const nccl_plan_t *x, int first_pr, int last, const int *k_by,
                           const algo_t *const (*rows_by)[FORM_MAX_ROWS], const double (*closed_by)[FORM_MAX_ROWS],
                           run_out_t *first, int *first_proto, double *first_closed, baton_err_t *e) {
    const algo_t *pick = NULL;
    int pick_pr = 0;
    double low = 0;
    for (int pr = first_pr; pr <= last; pr++)
        for (int i = 0; i < k_by[pr]; i++) {
            if (q->nccl_rules && pr != PROTO_NONE && !ncclrule_runs_at(t, rows_by[pr][i], (proto_t)pr, o->ranks, q->bytes, q->protos)) continue;
            if (pick == NULL || closed_by[pr][i] < low) pick = rows_by[pr][i], pick_pr = pr, low = closed_by[pr][i];
        }
    if (pick == NULL || low <= 0) return 0;
    *first_proto = pick_pr;
    *first_closed = low;
    return try_candidate(t, q, q_in, o, pick, (proto_t)pick_pr, x, 1, 1, first, e);
}

/* A named row under --proto auto: each protocol's closed form, as predict
 * gives it for the run the simulator would make (the same sizing), into
 * closed_by[pr][0], so the lowest is simulated first (simulate_lowest) and
 * the others give up once their clock passes its time (below); 0 where a
 * protocol's formula cannot be had. */
static void named_closed(topo_t *t, const run_req_t *q, const run_req_t *q_in, const run_out_t *o, const nccl_plan_t *x,
                         int first_pr, int last, const int *k_by, const algo_t *const (*rows_by)[FORM_MAX_ROWS],
                         double (*closed_by)[FORM_MAX_ROWS]) {
    for (int pr = first_pr; pr <= last; pr++) {
        if (k_by[pr] != 1) continue;
        run_req_t qc, other;
        int steps, other_steps;
        size_row(t, q, q_in, x, o, rows_by[pr][0], (proto_t)pr, &qc, &steps, &other, &other_steps);
        qc.predict = 1;
        run_out_t cand = {0};
        baton_err_t why = {0};
        if (try_row(t, &qc, o, rows_by[pr][0], (proto_t)pr, steps, &cand, &why) == 0 && cand.algo) closed_by[pr][0] = cand.time_s;
        engine_result_free(&cand.eng);
    }
}

/* Protocol pr among those --proto auto tries: all, or the log's NCCL_PROTO
 * (q->protos) where no library rule runs the call. */
static int proto_tried(const run_req_t *q, int proto, const topo_lib_rule_t *rule, int pr) {
    return !(proto == RUN_PROTO_AUTO && !rule && q->protos && !(q->protos >> pr & 1));
}

/* --- A named row's protocols side by side ------------------------------
 *
 * Under --proto auto a named row runs once per protocol, the lowest formula
 * first and each other one giving up once it cannot beat the fastest so far
 * (give_up_at, below). Where each run is large (an 8,192-GPU ring: about a
 * minute each), they run at once in worker processes (util/par.h), each
 * giving up once its clock passes the time of a rival already finished
 * (par_min, read at the engine's ticks). The answer is the one the runs one
 * after the other give: a run that gives up ends strictly later than a
 * finished one, so it would not have been kept; the finished ones are kept
 * in the serial loop's order, a later one only if strictly faster. */
#define RUN_RIVALS_WORK 1e8       /* ranks x max(ranks, chunks) x 8, select.c's measure: 4,096 ranks and up */

typedef struct rivals {
    topo_t *t;
    const run_req_t *q, *q_in;
    const run_out_t *o;
    const nccl_plan_t *x;
    const algo_t *row;
    proto_t pr[PROTO_COUNT];
    int n;
    par_min_t *best;
} rivals_t;

/* Rival i into out (a run_out_t; algo NULL: it gave up); its time offered
 * to the others. A result that holds memory of its own (a group's member
 * ends) cannot come back through a pipe: -2 in its time asks the caller to
 * run them here instead. */
static int rival_one(void *ctx, int i, void *out, baton_err_t *e) {
    const rivals_t *r = ctx;
    run_req_t qg = *r->q;
    run_out_t *cand = out;
    qg.give_up_s = 0;
    qg.give_up_shared = r->best;
    int rc = try_candidate(r->t, &qg, r->q_in, r->o, r->row, r->pr[i], r->x, i + 1, r->n, cand, e);
    if (rc < 0 || cand->algo == NULL) return rc;
    par_min_offer(r->best, cand->time_s);
    if (cand->eng.link_bytes || cand->eng.link_busy || cand->eng.member_end || cand->eng.recs) {
        engine_result_free(&cand->eng);
        *cand = (run_out_t){.time_s = -2};
    }
    return 0;
}

/* Room for k of row a's runs at once: each worker's engine checks its own
 * need (sim/engine/footprint.h) against what is free when it starts, so side
 * by side they must fit together, or a run that fits alone would be killed. */
static int rivals_fit(topo_t *t, const algo_t *a, const run_req_t *q, int ranks, int k) {
    sched_t s;
    algo_opts_t tmp;
    if (algo_build(a, ranks, q->bytes, algo_row_opts(a, &q->opts, &tmp), &s, NULL) < 0) return 0;
    engine_opts_t eo = {0};
    footprint_need_t need = {.state = engine_state_estimate(&s, t, ranks, &eo)};
    footprint_t f;
    footprint_of(&s, t, ranks, &need, &f);
    uint64_t avail = footprint_available();
    return avail == 0 || f.bytes * k <= 0.9 * (double)avail;
}

/* The protocols a named row runs under --proto auto, in the order the
 * serial loop tries them, into r->pr; 0 where they should run one after
 * the other here (fewer than two, a small run, no workers). */
static int rivals_plan(rivals_t *r, const run_req_t *q, int first_pr, int last, const int *k_by) {
    r->n = 0;
    if (q->jobs <= 1 || q->proto != RUN_PROTO_AUTO || !(r->row = algo_find(q->coll, q->algo))) return 0;
    for (int pr = first_pr; pr <= last; pr++) {
        if (!proto_tried(q, q->proto, NULL, pr)) continue;                    /* NCCL_PROTO */
        if (k_by[pr] < 0) return 0;                                           /* the loop says why */
        if (k_by[pr] == 0) continue;
        if (q->nccl_rules && pr != PROTO_NONE && !ncclrule_runs_at(r->t, r->row, (proto_t)pr, r->o->ranks, q->bytes, q->protos))
            continue;
        r->pr[r->n++] = (proto_t)pr;
    }
    double p = r->o->ranks, k = (double)algo_pipeline_chunks(q->bytes, &q->opts);
    return r->n >= 2 && p * (k > p ? k : p) * 8 >= (q->rivals_work > 0 ? q->rivals_work : RUN_RIVALS_WORK) &&
           rivals_fit(r->t, r->row, q, r->o->ranks, q->jobs < r->n ? q->jobs : r->n);
}

/* 1 with *best the fastest run, 0 where they run here instead, or < 0. */
static int rivals_run(topo_t *t, const run_req_t *q, const run_req_t *q_in, const run_out_t *o, const nccl_plan_t *x,
                      int first_pr, int last, const int *k_by, run_out_t *best, baton_err_t *e) {
    rivals_t r = {.t = t, .q = q, .q_in = q_in, .o = o, .x = x};
    if (!rivals_plan(&r, q, first_pr, last, k_by) || (r.best = par_min_new()) == NULL) return 0;
    run_out_t out[PROTO_COUNT] = {0};
    int rc = par_map(r.n, sizeof out[0], out, rival_one, &r, q->jobs < r.n ? q->jobs : r.n, e);
    par_min_free(r.best);
    if (rc < 0) return rc;
    for (int i = 0; i < r.n; i++)
        if (out[i].time_s == -2) return 0;                    /* a result that stays in its worker */
    *best = (run_out_t){0};
    for (int i = 0; i < r.n; i++)                             /* the serial loop's keep rule */
        if (out[i].algo && (best->algo == NULL || out[i].time_s < best->time_s)) *best = out[i];
    return 1;
}

/* The time a further candidate must beat (the fastest run so far, the
 * lowest formula's included): it gives up once its clock passes it, since
 * every run's time is at least its clock's last event (the protocol's base
 * latency, the switches' synchronisation, host-side floors and launches
 * only add), so it would end strictly later and not be kept. 0: run whole
 * (verification, observers and traces see every run). */
static double give_up_at(const run_req_t *q, const run_out_t *first, const run_out_t *best) {
    if (q->predict || q->verify || q->engine) return 0;
    double t = first->algo ? first->time_s : 0;
    if (best->algo && (t == 0 || best->time_s < t)) t = best->time_s;
    return t > 0 && isfinite(t) ? t : 0;
}

/* The fastest run is the answer. */
static int run_finish(const run_req_t *q, run_out_t *o, const run_out_t *best, int proto, const topo_lib_rule_t *rule) {
    *o = *best;
    o->proto_auto = proto == RUN_PROTO_AUTO || rule;
    o->rule = rule;
    o->kernel = q->nccl_kernel;
    if (rule) o->auto_picked = 2;
    return 0;
}

int run_collective(topo_t *t, const run_req_t *q_in, run_out_t *o, baton_err_t *e) {
    run_req_t qq = *q_in, *q = &qq;
    int rc0 = msccl_is(q->algo) ? msccl_request(q, e) : 0;
    if (rc0 < 0) return rc0;
    if (topo_fold_ranks(t) && !q->predict)
        return err_set(e, BATON_EWHOLE, "%s is folded: the simulator needs every rank", topo_name(t));
    nccl_plan_t plan;
    int rc = nccl_call(t, q, &plan, e);             /* what NCCL is told: masks, its library's rule, its own pick */
    if (rc < 0) return rc;
    const topo_lib_rule_t *rule = plan.rule;
    form_opts(t, &q->opts);
    memset(o, 0, sizeof *o);
    o->tuner = plan.tuned;
    o->ranks = topo_whole_ranks(t);
    o->bytes = q->bytes;
    rc = topo_cost_model(t, &o->model, e);
    if (rc < 0) return rc;
    o->model.reducers = form_reducers(t);
    int proto = q->proto == RUN_PROTO_AUTO && topo_params_c(t)->no_protocols ? PROTO_NONE : q->proto;
    int first_pr = proto == RUN_PROTO_AUTO ? PROTO_LL : proto;
    int last = proto == RUN_PROTO_AUTO ? PROTO_SIMPLE : proto;
    run_out_t best = {0}, first = {0};
    double first_s = 0;
    int first_proto = -1, k_by[PROTO_COUNT] = {0};
    double first_closed = 0;
    const algo_t *rows_by[PROTO_COUNT][FORM_MAX_ROWS];
    double closed_by[PROTO_COUNT][FORM_MAX_ROWS];
    for (int pr = first_pr; pr <= last; pr++) {      /* each protocol's candidates, once */
        if (!proto_tried(q, proto, rule, pr)) continue;   /* NCCL_PROTO */
        k_by[pr] = choose(t, q, q_in, &plan, o, (proto_t)pr, rows_by[pr], closed_by[pr]);
    }
    int nccl = strcmp(q->algo, "nccl") == 0, named = !run_is_auto(q->algo);
    int lowest = (named || strcmp(q->algo, "auto") == 0) && proto == RUN_PROTO_AUTO && !rule &&
                 !q->predict && !q->verify && !q->engine;  /* the lowest formula first: the others may give up on its time */
    if (lowest && named) {
        rc = rivals_run(t, q, q_in, o, &plan, first_pr, last, k_by, &best, e);
        if (rc < 0) return rc;
        if (rc > 0) return run_finish(q, o, &best, proto, rule);
        named_closed(t, q, q_in, o, &plan, first_pr, last, k_by, (const algo_t *const (*)[FORM_MAX_ROWS])rows_by, closed_by);
    }
    if ((lowest || nccl) && !q->predict &&
        (rc = simulate_lowest(t, q, q_in, o, &plan, first_pr, last, k_by, (const algo_t *const (*)[FORM_MAX_ROWS])rows_by,
                              (const double (*)[FORM_MAX_ROWS])closed_by, &first, &first_proto, &first_closed, e)) < 0)
        return rc;
    if ((nccl || (lowest && !named)) && first.algo && first.time_s >= 0.5 * first_closed)
        first_s = first.time_s;                    /* the band holds here: skip by it */
    for (int pr = first_pr; pr <= last; pr++) {      /* each protocol asked for, each candidate; keep the fastest */
        const algo_t **rows = rows_by[pr];
        const double *closed = closed_by[pr];
        if (!proto_tried(q, proto, rule, pr)) continue;   /* NCCL_PROTO */
        int k = k_by[pr];
        if (k < 0) return err_set(e, k, "%s is folded: %s's closed forms need every rank", topo_name(t), q->algo);
        if (k == 0 && strcmp(q->algo, "nccl") == 0) continue;    /* NCCL runs nothing with this protocol here */
        const algo_t *row = named ? algo_find(q->coll, q->algo) : NULL;
        if (k == 0 && row && proto == RUN_PROTO_AUTO) continue;   /* the row does not run with this protocol */
        if (k == 0 && row)
            return err_set(e, BATON_EUNSUP, "%s runs with %s only, as NCCL runs it (not %s)", row->name,
                           protos_text(row->nccl_protos), proto_name((proto_t)pr));
        if (k == 0 && run_is_auto(q->algo)) return none_applies(q, o->ranks, e);
        if (k == 0)
            return err_set(e, BATON_EINVAL, "no algorithm '%s' for %s%s (see `baton algos -c %s`)",
                           q->algo, coll_name(q->coll), algo_hint(q->coll, q->algo), coll_name(q->coll));
        for (int i = 0; i < k; i++) {
            if (q->nccl_rules && pr != PROTO_NONE && !ncclrule_runs_at(t, rows[i], (proto_t)pr, o->ranks, q->bytes, q->protos)) continue;
            if (first.algo && rows[i] == first.algo && pr == first_proto) {     /* simulated already */
                if (best.algo == NULL || first.time_s < best.time_s) { engine_result_free(&best.eng); best = first; }
                else engine_result_free(&first.eng);
                first = (run_out_t){0};
                continue;
            }
            if (first_s > 0 && 0.5 * closed[i] > first_s) continue;   /* cannot beat the lowest formula's simulation */
            run_req_t qg = *q;
            qg.give_up_s = give_up_at(q, &first, &best);
            if ((rc = try_candidate(t, &qg, q_in, o, rows[i], (proto_t)pr, &plan, pr - first_pr + 1, last - first_pr + 1, &best, e)) < 0) {
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
    if (best.algo == NULL) {
        baton_err_t why = {0};
        why_none(q, o->ranks, 1, &why);
        return err_set(e, BATON_EINVAL, "-a nccl: none of NCCL's algorithms (ring, tree, chain, nvls, p2p) does %s%s%s "
                       "on %d ranks%s%s (see `baton algos -c %s`)", coll_name(q->coll), proto == RUN_PROTO_AUTO ? "" : " with ",
                       proto == RUN_PROTO_AUTO ? "" : proto_name((proto_t)proto), o->ranks, why.msg[0] ? ": " : "",
                       why.msg, coll_name(q->coll));
    }
    return run_finish(q, o, &best, proto, rule);
}

/* The closed form's alpha, beta and gamma terms of o, each alone, and what
 * the formula's total has beyond their sum. */
static void formula_parts(topo_t *t, const run_out_t *o, run_parts_t *x) {
    cost_model_t m = proto_apply(&o->model, &topo_params_c(t)->proto[o->proto]), y;
    double *term[3] = {&x->alpha, &x->beta, &x->gamma};
    for (int i = 0; i < 3; i++) {
        y = m;
        if (i != 0) y.alpha = y.across.alpha = y.rdzv = y.across.rdzv = y.match = y.across.match = 0;   /* latencies */
        if (i != 1) y.beta = y.beta_path = y.across.beta = y.across.beta_path = y.helper_beta = 0;
        if (i != 2) y.gamma = 0;
        *term[i] = o->algo->cost(&y, o->ranks, o->bytes, &o->opts);
    }
    double whole = o->algo->cost(&m, o->ranks, o->bytes, &o->opts);
    x->overlap = whole - x->alpha - x->beta - x->gamma;
    y = m;                                     /* the savings, not half of a term the others may hide */
    y.alpha /= 2, y.across.alpha /= 2, y.helper_alpha /= 2, y.rdzv /= 2, y.across.rdzv /= 2, y.match /= 2, y.across.match /= 2;
    x->half_alpha = whole - o->algo->cost(&y, o->ranks, o->bytes, &o->opts);
    y = m;
    y.beta /= 2, y.beta_path /= 2, y.across.beta /= 2, y.across.beta_path /= 2, y.helper_beta /= 2;
    x->half_beta = whole - o->algo->cost(&y, o->ranks, o->bytes, &o->opts);
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
    x->socket = o->socket_s;
    x->socket_tcp = topo_params_c(t)->socket;
    x->matching = topo_match_lat(t) > 0;
    x->operations = topo_op_lat(t) > 0;
    x->launches = o->launch_s;
    x->ceiling = o->time_s - o->launch_s - o->proxy_s - o->socket_s - o->links_s;   /* gpu_and_host's ceilings */
    x->total = o->time_s;
    if (!o->simulated)                         /* the last bits of rounding: the parts sum to links_s */
        x->overlap += o->links_s - o->once_s - o->sync_s - (x->alpha + x->beta + x->gamma + x->overlap);
}

int run_formula_approx(const run_out_t *o) {
    return algo_inexact(o->algo, o->ranks, o->bytes, &o->opts) || !o->model.uniform || o->model.blind;
}

/* The work of simulating o: about p x max(k, p) messages x 8, and g times
 * that where each GPU sends its node's g blocks to a reducing switch every
 * step (nvlstree on a 72-GPU rack: 13.5 s at 4 racks before). */
static double check_work(const run_out_t *o) {
    double p = o->ranks, k = o->nccl_steps > 0 ? (double)o->nccl_steps : (double)algo_pipeline_chunks(o->bytes, &o->opts);
    double g = o->algo->helpers && o->opts.group > 8 ? o->opts.group / 8.0 : 1;
    return p * (k > p ? k : p) * 8 * g;
}

int run_check_cheap(const run_out_t *o) { return check_work(o) <= RUN_CHECK_WORK; }
int run_check_table_cheap(const run_out_t *o) { return check_work(o) <= RUN_TABLE_CHECK_WORK; }

void run_same_row(const run_req_t *q, const run_out_t *o, int predict, run_req_t *out) {
    *out = *q;
    out->proto = o->proto;
    out->predict = predict;
    if (o->rule && !o->rule->nccl) return;        /* the library's rule names the row: -a nccl runs that one */
    if (o->kernel) return;                        /* NCCL's symmetric kernel: -a nccl at its protocol picks it again */
    out->algo = o->algo->name;
    if (o->auto_picked == 2) out->cut = RUN_CUT_SIZED, out->nccl_rules = 1;   /* sized as -a nccl sized it */
    if (o->auto_picked == 1) out->cut = o->cut;                             /* as -a auto cut it */
    if (o->rule) out->lib_busbw = o->rule->max_busbw;                     /* a log's TUNING line's rule */
    if (o->rule && o->rule->channels) out->opts.channels = o->channels;
}

/* The same row, protocol and sizing simulated (run_same_row) into c. */
static int check_row(topo_t *t, const run_req_t *q, const run_out_t *o, run_check_t *c) {
    run_req_t sq;
    run_out_t so;
    baton_err_t e = {0};
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

/* What `sim` answers to q, where it is another row, protocol or cut than
 * o: the simulator decides among the rows whose formulas are close, and a
 * formula can misjudge one that is not the pick (two A100 nodes, a 128 KiB
 * broadcast: chain 43.0 us, simulated within 2 %; binomial's formula 54.2
 * us, its run 32.6). */
static int sim_pick(topo_t *t, const run_req_t *q, const run_out_t *o, run_check_t *c) {
    run_req_t aq = *q;
    run_out_t so;
    baton_err_t e = {0};
    aq.predict = 0, aq.verify = 0, aq.engine = NULL;
    int rc = run_collective(t, &aq, &so, &e);
    if (rc == BATON_ENOMEM) return rc;
    if (rc < 0) return 0;
    if (so.algo != o->algo || so.proto != o->proto || so.nccl_steps != o->nccl_steps)
        c->pick = so.algo, c->pick_proto = so.proto, c->pick_s = so.time_s;
    engine_result_free(&so.eng);
    return 0;
}

int run_check_row(topo_t *t, const run_req_t *q, const run_out_t *o, run_check_t *c) {
    memset(c, 0, sizeof *c);
    if (!run_formula_approx(o)) return 0;
    if (!run_check_cheap(o) || topo_fold_ranks(t)) {
        c->state = RUN_CHECK_LARGE;
        return 0;
    }
    return check_row(t, q, o, c);
}

int run_check(topo_t *t, const run_req_t *q, const run_out_t *o, run_check_t *c) {
    int rc = run_check_row(t, q, o, c);
    if (rc < 0) return rc;
    if (!run_is_auto(q->algo) || topo_fold_ranks(t) || c->state == RUN_CHECK_LARGE || c->state == RUN_CHECK_FAILED)
        return 0;
    return c->beyond || check_work(o) <= RUN_PICK_WORK ? sim_pick(t, q, o, c) : 0;
}
