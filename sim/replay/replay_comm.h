/* replay_comm.h - what the machine takes for a trace's communication
 * (replay.c's): one answer per kind (collective, size, ranks). replay.c
 * keeps them in replay_out_t.comm, each timed once and counted each time it
 * runs; this file times one and knows nothing of the replay around it. */
#ifndef BATON_REPLAY_COMM_H
#define BATON_REPLAY_COMM_H

#include <stdint.h>

#include "../../algorithms/algo.h"
#include "../../topologies/topo.h"
#include "../../util/err.h"
#include "../engine/engine.h"

/* What the user asked the replay to run (baton replay's -a, --proto and
 * --contention). */
typedef struct replay_req {
    const char *algo;          /* every collective's (choice.h): NULL = nccl */
    int proto;                 /* RUN_PROTO_AUTO or a protocol */
    contention_t contention;
    int alone;                 /* --alone: each communication timed alone, none shared (replay_share.h) */
} replay_req_t;

/* One kind of communication the trace ran, as the machine timed it. */
typedef struct replay_comm {
    int p2p;                   /* 1: a send/recv pair (ranks: source, destination) */
    coll_t coll;
    int64_t comm_type;         /* Chakra's (CHAKRA_BARRIER: an all-reduce of 4 bytes) */
    uint64_t bytes;
    int nranks;
    int32_t *ranks;            /* machine ranks, in the group's order */
    char algo[32];
    int proto;
    int channels;              /* the channels it ran on (choice_run's; 1 for a group) */
    double each_s;             /* alone on the machine */
    int count;                 /* how many times it ran */
    double conc_s;             /* alone in a conc_run as replay_share runs it: 0 not yet asked, -1 it cannot
                                  run there (it is then never shared) */
    double shared_lo_s, shared_hi_s;   /* its shortest and longest time shared with others; 0: never shared */
} replay_comm_t;

/* The collective baton runs for Chakra's CollectiveCommType: a coll_t, or
 * -1 (gather, scatter: baton has none). A barrier is an all-reduce of
 * REPLAY_BARRIER_BYTES (PyTorch's barrier all-reduces a one-element tensor). */
int replay_comm_coll(int64_t comm_type);
#define REPLAY_BARRIER_BYTES 4

/* The index in v[0 .. nv) of a collective (p2p 0: comm_type, bytes, over
 * the machine ranks ranks[0 .. n)) or a send/recv pair (p2p 1: bytes from
 * ranks[0] to ranks[1]) already timed, or -1. */
int replay_comm_find(const replay_comm_t *v, int nv, int p2p, int64_t comm_type, uint64_t bytes,
                     const int32_t *ranks, int n);

/* Time such a collective or pair on t into *c (its ranks copied, malloc'd;
 * count 1):
 *  - over every rank of t: choice_run (choice.h), as `baton tp` and `baton
 *    step` time theirs (-a nccl by default: NCCL's plan; a row that cannot
 *    run this collective, -a ring for an all-to-all, leaves it to nccl);
 *  - over fewer: the group alone in one engine run (conc_run) with -a's row
 *    where it names one for the collective, else ring (all-reduce,
 *    all-gather, reduce-scatter), chain (broadcast, reduce), pairwise
 *    (all-to-all); protocol --proto's, else Simple;
 *  - a send/recv pair: a two-rank chain broadcast under NCCL's send/recv
 *    protocol rule (LL up to 16 KiB, Simple above, Simple at every size
 *    across nodes, unless the machine's nccl_env moves them:
 *    ncclrule_p2p_proto; enqueue.cc), as
 *    `baton step` times a pipeline stage's send;
 *  - on a machine without protocols (`protocols: none`) or --proto none:
 *    plain alpha-beta.
 * 0, or a negative error code (e says why; nothing left to free in *c). */
int replay_comm_time(topo_t *t, const replay_req_t *q, int p2p, int64_t comm_type, uint64_t bytes,
                     const int32_t *ranks, int n, replay_comm_t *c, baton_err_t *e);

#endif
