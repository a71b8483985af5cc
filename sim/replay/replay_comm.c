/* replay_comm.c - a trace's collectives and messages timed on the machine
 * (replay_comm.h). */
#include "replay_comm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../answer/choice.h"
#include "../answer/concurrent.h"
#include "../nccl/nccl.h"
#include "../answer/run.h"
#include "chakra.h"

int replay_comm_coll(int64_t comm_type) {
    switch (comm_type) {
    case CHAKRA_ALL_REDUCE: case CHAKRA_BARRIER: return COLL_ALLREDUCE;
    case CHAKRA_REDUCE: return COLL_REDUCE;
    case CHAKRA_ALL_GATHER: return COLL_ALLGATHER;
    case CHAKRA_BROADCAST: return COLL_BROADCAST;
    case CHAKRA_ALL_TO_ALL: return COLL_ALLTOALL;
    case CHAKRA_REDUCE_SCATTER: case CHAKRA_REDUCE_SCATTER_BLOCK: return COLL_REDUCE_SCATTER;
    default: return -1;
    }
}

/* The kind asked (ranks aside): a send/recv pair is a broadcast of no
 * comm_type, a barrier an all-reduce of REPLAY_BARRIER_BYTES. */
static replay_comm_t kind(int p2p, int64_t comm_type, uint64_t bytes, int n) {
    coll_t coll = p2p ? COLL_BROADCAST : (coll_t)replay_comm_coll(comm_type);
    if (!p2p && comm_type == CHAKRA_BARRIER) bytes = REPLAY_BARRIER_BYTES;
    return (replay_comm_t){.p2p = p2p, .coll = coll, .comm_type = p2p ? -1 : comm_type, .bytes = bytes, .nranks = n,
                           .count = 1};
}

static int same(const replay_comm_t *c, const replay_comm_t *k, const int32_t *ranks) {
    return c->p2p == k->p2p && c->coll == k->coll && c->comm_type == k->comm_type && c->bytes == k->bytes &&
           c->nranks == k->nranks && !memcmp(c->ranks, ranks, (size_t)k->nranks * sizeof *ranks);
}

static int whole(const topo_t *t, const int32_t *ranks, int n) {
    if (n != topo_nranks(t)) return 0;
    for (int i = 0; i < n; i++)
        if (ranks[i] != i) return 0;
    return 1;
}

/* The row a group smaller than the machine runs: -a's where it has one. */
static const char *group_row(const replay_req_t *q, coll_t coll) {
    if (q->algo && !run_is_auto(q->algo) && algo_find(coll, q->algo)) return algo_find(coll, q->algo)->name;
    switch (coll) {
    case COLL_BROADCAST: case COLL_REDUCE: return "chain";
    case COLL_ALLTOALL: return "pairwise";
    default: return "ring";
    }
}

static proto_t group_proto(const topo_t *t, const replay_req_t *q, const replay_comm_t *c) {
    if (q->proto != RUN_PROTO_AUTO) return (proto_t)q->proto;
    if (topo_params_c(t)->no_protocols) return PROTO_NONE;
    return c->p2p ? ncclrule_p2p_proto(t, c->bytes, ncclrule_crosses(t, c->ranks, c->nranks)) : PROTO_SIMPLE;
}

/* A group (or a send/recv pair) alone in one engine run. */
static int time_group(topo_t *t, const replay_req_t *q, replay_comm_t *c, baton_err_t *e) {
    conc_coll_t m = {.coll = c->coll, .bytes = c->bytes, .nranks = c->nranks, .ranks = c->ranks, .channels = 1, .after = -1};
    snprintf(m.algo, sizeof m.algo, "%s", c->p2p ? "chain" : group_row(q, c->coll));
    conc_opts_t o = {.proto = group_proto(t, q, c), .contention = q->contention};
    engine_result_t r;
    int rc = conc_run(t, &m, 1, &o, &r, e);
    if (rc == 0) c->each_s = r.time_s;
    engine_result_free(&r);
    snprintf(c->algo, sizeof c->algo, "%s", m.algo);
    c->proto = o.proto;
    c->channels = 1;
    return rc;
}

static int time_whole(topo_t *t, const replay_req_t *q, replay_comm_t *c, baton_err_t *e) {
    run_out_t ro;
    const char *algo = choice_covers(q->algo, c->coll) ? q->algo : CHOICE_DEFAULT;   /* -a ring and an all-to-all */
    int rc = choice_run(t, c->coll, c->bytes, algo, q->proto, q->contention, &ro, e);
    if (rc < 0) return rc;
    snprintf(c->algo, sizeof c->algo, "%s", ro.algo->name);
    c->proto = ro.proto;
    c->channels = ro.channels > 0 ? ro.channels : 1;
    c->each_s = ro.time_s;
    engine_result_free(&ro.eng);
    return 0;
}

int replay_comm_find(const replay_comm_t *v, int nv, int p2p, int64_t comm_type, uint64_t bytes,
                     const int32_t *ranks, int n) {
    replay_comm_t k = kind(p2p, comm_type, bytes, n);
    for (int i = 0; i < nv; i++)
        if (same(&v[i], &k, ranks)) return i;
    return -1;
}

int replay_comm_time(topo_t *t, const replay_req_t *q, int p2p, int64_t comm_type, uint64_t bytes,
                     const int32_t *ranks, int n, replay_comm_t *c, baton_err_t *e) {
    *c = kind(p2p, comm_type, bytes, n);
    bytes = c->bytes;                                          /* a barrier's */
    if ((c->ranks = malloc((size_t)n * sizeof *c->ranks)) == NULL) return err_set(e, BATON_ENOMEM, "out of memory");
    memcpy(c->ranks, ranks, (size_t)n * sizeof *ranks);
    int rc = 0;
    if (n == 1) snprintf(c->algo, sizeof c->algo, "none");     /* a group of one: nothing moves */
    else if (!p2p && bytes == 0)                                /* NCCL discards an empty collective, */
        snprintf(c->algo, sizeof c->algo, "empty");            /* no launch (enqueue.cc taskAppend); sim refuses it */
    else if (!p2p && whole(t, ranks, n)) rc = time_whole(t, q, c, e);
    else rc = time_group(t, q, c, e);
    if (rc < 0) {
        const char *what = p2p ? "send/recv" : chakra_coll_name(comm_type);
        err_prefix(e, "the %s of %llu bytes on %d ranks: ", what, (unsigned long long)bytes, n);
        free(c->ranks);
        return rc;
    }
    return 0;
}
