/* plan.c - NCCL's own cost model answering a call (see plan.h). */
#include "plan.h"

#include <string.h>

#include "../../topologies/topo.h"
#include "ncclrule.h"

/* Our registry row for NCCL's algorithm a (NVLS across nodes: collnet). */
static const char *row_of(tuning_algo_t a, int nnodes) {
    return a == TUNING_TREE ? "nccltree" : a == TUNING_RING ? "ring" : a == TUNING_COLLNET_DIRECT ? "collnet_ring"
         : a == TUNING_NVLS_TREE ? "nvlstree" : a == TUNING_PAT ? "pat" : nnodes > 1 ? "collnet" : "nvls";
}

static int algo_of(const char *name, int nnodes, tuning_algo_t *a) {
    for (int i = 0; i < TUNING_ALGO_COUNT; i++)
        if (strcmp(name, row_of((tuning_algo_t)i, nnodes)) == 0) { *a = (tuning_algo_t)i; return 0; }
    return -1;
}

/* NCCL's fastest protocol for algorithm a (or the one asked for). */
static double time_for(const tuning_machine_t *m, const run_req_t *q, tuning_algo_t a, proto_t *pr) {
    double best = -1;
    for (int p = PROTO_LL; p <= PROTO_SIMPLE; p++) {
        if (q->proto != RUN_PROTO_AUTO && q->proto != p) continue;
        if (q->proto == RUN_PROTO_AUTO && q->protos && !(q->protos >> p & 1)) continue;   /* a log's NCCL_PROTO */
        double x = tuning_time(m, q->coll, a, (proto_t)p, q->bytes);
        if (x >= 0 && (best < 0 || x < best)) best = x, *pr = (proto_t)p;
    }
    return best;
}

/* tuning_pick's loop, within a log's NCCL_ALGO and NCCL_PROTO: NCCL's
 * time for its choice, < 0 if it runs none. */
static double pick(const tuning_machine_t *m, const run_req_t *q, tuning_algo_t *a, proto_t *pr) {
    double time = -1;
    for (int i = 0; i < TUNING_ALGO_COUNT; i++) {
        int k = algo_nccl_index_of_name(tuning_algo_name((tuning_algo_t)i));
        if (q->nccl_algos && k >= 0 && !(q->nccl_algos >> k & 1)) continue;
        proto_t p2 = PROTO_SIMPLE;
        double x = time_for(m, q, (tuning_algo_t)i, &p2);
        if (x >= 0 && (time < 0 || x < time)) time = x, *a = (tuning_algo_t)i, *pr = p2;
    }
    return time;
}

int plan_pick(topo_t *t, const run_req_t *q, const char **row, unsigned *protos, baton_err_t *e) {
    return plan_pick_ranks(t, q, 0, 0, row, protos, e);
}

int plan_pick_ranks(topo_t *t, const run_req_t *q, int nranks, int nnodes, const char **row, unsigned *protos,
                    baton_err_t *e) {
    tuning_machine_t m;
    tuning_algo_t a = TUNING_RING;
    proto_t pr = PROTO_SIMPLE;
    *row = NULL, *protos = 0;
    if (q->proto == PROTO_NONE || q->coll == COLL_ALLTOALL || topo_params_c(t)->lib.name[0]) return 0;   /* not NCCL's */
    if (ncclrule_forced(t, q->coll, nranks > 0 ? nranks : topo_whole_ranks(t), q->bytes,
                        ncclrule_protos(q->proto, q->protos), ncclrule_algos(q->nccl_algo, q->nccl_algos)))
        return 0;                                           /* a rule of its library decides */
    int rc = view_call(t, &q->opts, q->coll, q->protos, &m, e);
    if (rc < 0) return rc;
    if (nranks > 0) m.nranks = nranks, m.nnodes = nnodes > 0 ? nnodes : 1;   /* a communicator of fewer ranks */
    if (pick(&m, q, &a, &pr) < 0) return 0;
    int rooted = q->coll == COLL_BROADCAST || q->coll == COLL_REDUCE;
    *row = rooted ? "chain" : row_of(a, m.nnodes);          /* as plan_run names it */
    *protos = 1u << pr;
    return 1;
}

/* Registered buffers on one domain, NCCL 2.27+: its symmetric kernels, timed
 * by their own model (ncclrule_sym_kernel: tuning_sym_time; multimem where
 * NVLS is and more than two ranks: sym_kernels.cc hasLsaMultimem), named by
 * the row that moves the picked kernel's data, as -a nccl runs it. */
static int sym_run(topo_t *t, const run_req_t *q, const tuning_machine_t *m, run_out_t *o, baton_err_t *e) {
    ncclrule_sym_t k;
    if (!ncclrule_sym_kernel(t, q->coll, m->nranks, q->bytes, ncclrule_protos(q->proto, 0), &k))
        return err_set(e, BATON_EUNSUP, "--model nccl: no symmetric kernel for %s%s%s on %s", coll_name(q->coll),
                       q->proto == RUN_PROTO_AUTO ? "" : " with ", q->proto == RUN_PROTO_AUTO ? "" : proto_name((proto_t)q->proto),
                       topo_name(t));
    double time = k.time_s;
    o->algo = algo_find(q->coll, k.row);
    o->kernel = k.kernel;
    o->auto_picked = 2;
    o->ranks = m->nranks;
    o->bytes = q->bytes;
    o->proto = k.proto;
    o->proto_auto = q->proto == RUN_PROTO_AUTO;
    o->channels = k.blocks;
    o->time_s = time;
    o->algbw_GBps = time > 0 ? (double)q->bytes / time / 1e9 : 0;
    o->busbw_GBps = o->algbw_GBps * run_busbw_factor(q->coll, m->nranks);
    return 0;
}

int plan_run(topo_t *t, const run_req_t *q_in, run_out_t *o, baton_err_t *e) {
    run_req_t qq = *q_in, *q = &qq;
    ncclrule_env(t, q);
    tuning_machine_t m;
    tuning_algo_t a = TUNING_RING;
    proto_t pr = PROTO_SIMPLE;
    double time = -1;
    memset(o, 0, sizeof *o);
    int rc = view_call(t, &q->opts, q->coll, q->protos, &m, e);
    if (rc < 0) return rc;
    if (q->proto == PROTO_NONE) return err_set(e, BATON_EINVAL, "--model nccl: NCCL has no --proto none (LL, LL128, Simple or auto)");
    const char *forced =
        run_is_auto(q->algo) ? ncclrule_forced(t, q->coll, m.nranks, q->bytes, ncclrule_protos(q->proto, q->protos),
                                               ncclrule_algos(q->nccl_algo, q->nccl_algos))
                             : NULL;
    if (forced && strcmp(forced, "symmetric") == 0 && (q->proto == RUN_PROTO_AUTO || q->proto == PROTO_SIMPLE ||
                                                       q->proto == PROTO_LL))
        return sym_run(t, q, &m, o, e);
    if (run_is_auto(q->algo)) {
        time = pick(&m, q, &a, &pr);
    } else if (algo_of(q->algo, m.nnodes, &a) < 0) {
        return err_set(e, BATON_EINVAL, "--model nccl times NCCL's algorithms only (ring, nccltree, nvls; nvlstree, collnet, "
                       "collnet_ring across nodes; pat at one GPU per node), not '%s'", q->algo);
    } else {
        time = time_for(&m, q, a, &pr);
    }
    if (time < 0)
        return err_set(e, BATON_EUNSUP, "--model nccl: NCCL runs no %s%s%s of %s on %s", run_is_auto(q->algo) ? "" : q->algo,
                       run_is_auto(q->algo) ? "algorithm" : "", q->proto == RUN_PROTO_AUTO ? "" : " with that protocol",
                       coll_name(q->coll), topo_name(t));
    int rooted = q->coll == COLL_BROADCAST || q->coll == COLL_REDUCE;
    o->algo = algo_find(q->coll, rooted ? "chain" : row_of(a, m.nnodes));   /* NCCL's rooted "ring" is a chain */
    o->auto_picked = run_is_auto(q->algo) ? 2 : 0;
    o->ranks = m.nranks;
    o->bytes = q->bytes;
    o->proto = pr;
    o->proto_auto = q->proto == RUN_PROTO_AUTO;
    o->time_s = time;
    o->algbw_GBps = time > 0 ? (double)q->bytes / time / 1e9 : 0;
    o->busbw_GBps = o->algbw_GBps * run_busbw_factor(q->coll, m.nranks);
    return 0;
}
