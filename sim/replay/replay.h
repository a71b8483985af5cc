/* replay.h - a Chakra execution trace run on a machine (`baton replay`).
 *
 * Each rank's nodes form a graph: a node is ready when its control and data
 * dependencies have ended. Then:
 *   COMP_NODE       takes its duration_micros; a rank runs one GPU kernel
 *                   and one host (is_cpu_op) node at a time, in the order
 *                   they became ready (ASTRA-sim's HardwareResource rule)
 *   COMM_COLL_NODE  the k-th collective of a process group (pg_name) on each
 *                   of its ranks is one collective: it starts when the last
 *                   of them is ready and ends for all after the time the
 *                   machine takes for it (choice.h's answer over the whole
 *                   machine, else the group's ranks simulated alone)
 *   COMM_SEND_NODE  pairs with the next COMM_RECV_NODE of the same (source,
 *   COMM_RECV_NODE  destination, tag), in the order they become ready; both
 *                   start when both are ready and take the machine's time
 *                   for comm_size bytes between the two ranks
 *   others          instant (counted as untimed)
 * Communication does not hold the GPU: a collective runs beside kernels.
 * Each collective and message is first timed alone on the machine; those
 * that then overlap in time run together and share it, round after round
 * until the times settle (replay_share.h; replay_req_t.alone: not at all). */
#ifndef BATON_REPLAY_H
#define BATON_REPLAY_H

#include "../../topologies/topo.h"
#include "chakra.h"
#include "replay_comm.h"   /* replay_req_t, replay_comm_t */

/* A node as replayed (seconds from the step's start). */
typedef struct replay_node {
    double ready_s;            /* its dependencies ended (communication: it arrived) */
    double start_s, end_s;
    int32_t comm;              /* its replay_comm_t, -1 for none */
    int64_t inst;              /* which communication it took part in (its nodes share it); -1 */
} replay_node_t;

/* Where a rank's time went: every instant of [0, end] in one bucket (the
 * first that applies: a kernel running, communication running, waiting for
 * a peer, a host node running, nothing). */
typedef struct replay_rank {
    double end_s;
    double compute_s, transport_s, wait_s, overhead_s, idle_s;   /* wait_s is inside transport_s */
} replay_rank_t;

typedef struct replay_out {
    int nranks;
    double step_s;             /* the last rank's end */
    int critical;              /* that rank (the lowest of a tie) */
    replay_rank_t *rank;
    uint32_t *offset;          /* rank r's nodes are node[offset[r] .. offset[r + 1]) */
    replay_node_t *node;
    replay_comm_t *comm;
    int ncomm, capcomm;
    uint64_t nodes, untimed;   /* untimed: nodes of kinds without a time (memory, metadata) */
    uint64_t insts;            /* communications run (a collective, or a send with its receive) */
    uint64_t overlapped;       /* of them, those that ran while another did (shared with it, unless
                                  the request said alone) */
    int rounds;                /* rounds of sharing (replay_share.h): each a look at the last walk, and a
                                  walk again where it changed a time; 0: alone */
    int settled;               /* 1: the last round changed nothing (else REPLAY_ROUNDS ran out) */
    uint32_t chains;           /* the last round's joint runs */
    uint32_t apart;            /* the last round's overlapping communications timed alone all the same */
    const chakra_et_t *et;     /* the trace replayed (borrowed) */
} replay_out_t;

/* Replay et[0 .. n) (rank r's file named names[r], for errors) on t's
 * ranks 0 .. n-1. Errors name the file and node ("FILE: node 3: ..."). */
int replay_run(topo_t *t, const chakra_et_t *et, const char *const *names, int n, const replay_req_t *q, replay_out_t *o,
               baton_err_t *e);
/* The replay as a Perfetto / Chrome trace (JSON, malloc'd; NULL: out of
 * memory): a process per rank, with tracks for GPU kernels, host nodes and
 * communication (a slice per node, from when it was ready; a nested
 * "waiting for peers" slice until it started). Times in microseconds. */
char *replay_trace_json(const replay_out_t *o);
void replay_free(replay_out_t *o);

#endif
