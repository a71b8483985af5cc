/* replay_comm.h - what the machine takes for a trace's communication
 * (replay.c's): one answer per kind (collective, size, ranks), kept in
 * replay_out_t.comm and counted each time it runs. */
#ifndef BATON_REPLAY_COMM_H
#define BATON_REPLAY_COMM_H

#include "replay.h"

/* The collective baton runs for Chakra's CollectiveCommType: a coll_t, or
 * -1 (gather, scatter: baton has none). A barrier is an all-reduce of
 * REPLAY_BARRIER_BYTES (PyTorch's barrier all-reduces a one-element tensor). */
int replay_comm_coll(int64_t comm_type);
#define REPLAY_BARRIER_BYTES 4

/* The index in o->comm of a collective (p2p 0: comm_type, bytes, over the
 * machine ranks ranks[0 .. n)) or a send/recv pair (p2p 1: bytes from
 * ranks[0] to ranks[1]), timed on t the first time it is asked:
 *  - over every rank of t: choice_run (choice.h), as `baton tp` and `baton
 *    step` time theirs (-a nccl by default: NCCL's plan; a row that cannot
 *    run this collective, -a ring for an all-to-all, leaves it to nccl);
 *  - over fewer: the group alone in one engine run (conc_run) with -a's row
 *    where it names one for the collective, else ring (all-reduce,
 *    all-gather, reduce-scatter), chain (broadcast, reduce), pairwise
 *    (all-to-all); protocol --proto's, else Simple;
 *  - a send/recv pair: a two-rank chain broadcast under NCCL's send/recv
 *    protocol rule (LL up to 16 KiB, Simple above; enqueue.cc), as
 *    `baton step` times a pipeline stage's send;
 *  - on a machine without protocols (`protocols: none`) or --proto none:
 *    plain alpha-beta.
 * A negative error code (e says why) otherwise. */
int replay_comm_time(topo_t *t, const replay_req_t *q, replay_out_t *o, int p2p, int64_t comm_type, uint64_t bytes,
                     const int32_t *ranks, int n, baton_err_t *e);

#endif
