/* sched.h - schedules as per-rank programs.
 *
 * A schedule is not an array of messages: ring all-reduce on 65,536 ranks
 * sends 8.6e9 of them. It is a pure function
 *
 *     op = prog(schedule, rank, channel, pc)
 *
 * that returns the pc-th primitive of one rank's program on one channel, the
 * way NCCL's device code is a loop of primitives. Whoever runs a schedule (the
 * engine, the verifier, the dumper, a hardware backend) keeps only a program
 * counter per (rank, channel), so its state is O(ranks x channels).
 *
 * Primitives (NCCL's names): send, recv-copy, recv-reduce and the fused forms
 * recv-copy-send and recv-reduce-send, which receive a chunk, fold it into the
 * local buffer and forward the result. Every primitive names one chunk of the
 * schedule's chunk layout; chunk sizes are exact (see sched_chunk).
 *
 * Semantics shared by every consumer:
 *  - ops of one (rank, channel) stream run in program order;
 *  - a send is posted and the stream moves on (non-blocking, up to a bounded
 *    number in flight); its payload is the chunk as it is when posted;
 *  - a receive blocks its stream until the matching message has arrived (and
 *    been reduced); messages between two ranks on one channel match in order;
 *  - a fused op posts its send only after its receive completed;
 *  - a message goes from a stream to the peer's stream on the same channel
 *    unless the op names another (send_chan / recv_chan). */
#ifndef BATON_SCHED_H
#define BATON_SCHED_H

#include <stdint.h>
#include <stdio.h>

#include "../util/err.h"

typedef enum {
    COLL_ALLREDUCE = 0,
    COLL_REDUCE_SCATTER,
    COLL_ALLGATHER,
    COLL_BROADCAST,
    COLL_REDUCE,
    COLL_ALLTOALL,
    COLL_COUNT
} coll_t;

typedef enum { RECV_NONE = 0, RECV_COPY, RECV_REDUCE } recv_kind_t;

typedef struct sched_op {
    uint8_t recv;        /* recv_kind_t */
    uint8_t send;        /* 1: send the chunk (after the receive, if any) */
    int32_t recv_peer;   /* rank to receive from (when recv != RECV_NONE) */
    int32_t send_peer;   /* rank to send to (when send) */
    uint32_t chunk;      /* first chunk of the range */
    uint32_t nchunk;     /* chunks in the range, wrapping modulo nchunks; 0: a
                            synchronisation message that carries no data */
    uint32_t to_chunk;   /* a send's range lands here at the receiver: equal to
                            chunk except in all-to-all (block j of rank r
                            becomes block r of rank j) */
    int16_t send_chan;   /* the receiver's channel, -1: the same as mine */
    int16_t recv_chan;   /* the sender's channel, -1: the same as mine */
} sched_op_t;

typedef struct sched sched_t;
struct sched_group;

/* Channel orders found on a machine (topologies/graph.h): channel c's ring
 * visits rank[c' * nranks + i] at position i, c' = c mod count; pos is the
 * inverse (pos[c' * nranks + r] is rank r's position). Owned by whoever found
 * them; a schedule only points at them. */
typedef struct sched_orders {
    int nranks, count;
    const int32_t *rank, *pos;
} sched_orders_t;

/* Writes the pc-th op of (rank, chan) into *op and returns 1, or returns 0
 * when the program has ended. Must be a pure function of its arguments. */
typedef int (*sched_prog_fn)(const sched_t *s, int rank, int chan, uint32_t pc,
                             sched_op_t *op);

/* A schedule made of parts (group.h) answers for its layout by the part
 * that owns chunk c: returns it, with the part's first chunk and byte in
 * this schedule's numbering. Set by whoever builds the whole, so this file
 * needs to know no kind of part. */
typedef const sched_t *(*sched_part_fn)(const sched_t *s, uint32_t c, uint32_t *chunk0,
                                        uint64_t *byte0);

struct sched {
    coll_t coll;
    const char *algo;      /* registry name, static storage */
    int nranks;
    int nchannels;
    int root;              /* for rooted collectives (broadcast, reduce); else 0 */
    int helpers;           /* extra participants after the ranks: reducing switches
                              (rank ids nranks .. nranks + helpers - 1), which start
                              from zero and are not part of the result */
    uint64_t bytes;        /* the whole buffer: all-reduce input, all-gather output,
                              reduce-scatter input (nccl-tests' total size) */
    uint32_t nblocks;      /* see Layout above */
    uint32_t per_block;
    uint32_t nchunks;      /* nblocks * per_block */
    sched_prog_fn prog;
    int64_t param[4];      /* algorithm-private parameters */
    int groups;            /* 0, or the channels (NCCL's sense) the row runs where it chose
                              them itself, none being asked (nvlstree's two, one a tree) */
    const sched_orders_t *orders;   /* rings' channel orders, NULL: the algorithm's own */
    const struct sched_group *group; /* several collectives at once (group.h); NULL: one */
    sched_part_fn part;    /* whose layout a chunk is (the group's members); NULL:
                              nblocks x per_block */
    int period;            /* 0, or k: rank r + k's program is rank r's with every
                              peer moved k ranks on (mod nranks), so ranks k apart are
                              interchangeable (sim/engine/symmetry.h); tested for every row
                              that sets it */
    uint32_t reps;         /* 0, or k: each (rank, channel)'s program is k repetitions of
                              one stretch of ops, the same peers, kinds and channels in
                              each (only the chunks move on), so what is counted per op
                              (a rank's network messages: sim/nccl/sockmsgs.c) is one
                              stretch's x k; tested for every row that sets it */
};

/* Exact chunk layout: n bytes cut into k parts, the first n % k of them one
 * byte longer (n = 10, k = 4 gives 3,3,2,2). Never drops a remainder. */
void sched_chunk(uint64_t n, uint32_t k, uint32_t i, uint64_t *off, uint64_t *len);

/* Byte offset and length of chunk c of schedule s (two-level layout). */
void sched_chunk_at(const sched_t *s, uint32_t c, uint64_t *off, uint64_t *len);

/* Bytes in the chunk range [first, first + count), wrapping modulo nchunks. */
uint64_t sched_range_bytes(const sched_t *s, uint32_t first, uint32_t count);

/* Set the layout: nblocks x per_block chunks. */
void sched_layout(sched_t *s, uint32_t nblocks, uint32_t per_block);

/* Fetch op pc of (rank, chan); 1 if there is one, 0 at the end. */
static inline int sched_op(const sched_t *s, int rank, int chan, uint32_t pc,
                           sched_op_t *op) {
    return s->prog(s, rank, chan, pc, op);
}

/* Op constructors, so programs read like their step diagrams. */
static inline sched_op_t op_send(int to, uint32_t chunk, uint32_t n) {
    return (sched_op_t){.send = 1, .send_peer = to, .recv_peer = -1, .chunk = chunk, .nchunk = n,
                        .to_chunk = chunk, .send_chan = -1, .recv_chan = -1};
}
/* A send whose data lands in another place at the receiver (all-to-all). */
static inline sched_op_t op_send_into(int to, uint32_t chunk, uint32_t n, uint32_t to_chunk) {
    sched_op_t op = op_send(to, chunk, n);
    op.to_chunk = to_chunk;
    return op;
}
static inline sched_op_t op_recv(int from, uint32_t chunk, uint32_t n, recv_kind_t k) {
    return (sched_op_t){.recv = (uint8_t)k, .recv_peer = from, .send_peer = -1, .chunk = chunk, .nchunk = n,
                        .to_chunk = chunk, .send_chan = -1, .recv_chan = -1};
}
/* Receive, fold in (copy or add), then forward the result to `to`. */
static inline sched_op_t op_fwd(int from, int to, uint32_t chunk, uint32_t n, recv_kind_t k) {
    return (sched_op_t){.recv = (uint8_t)k, .send = 1, .recv_peer = from, .send_peer = to,
                        .chunk = chunk, .nchunk = n, .to_chunk = chunk, .send_chan = -1, .recv_chan = -1};
}

/* The same op, talking to the peers' streams on other channels (a stream
 * that bridges two pipelines, like the root of NCCL's split tree). */
static inline sched_op_t op_chan(sched_op_t op, int recv_chan, int send_chan) {
    op.recv_chan = (int16_t)recv_chan;
    op.send_chan = (int16_t)send_chan;
    return op;
}

/* Rooted collectives are written for root 0: virtual rank <-> real rank. */
static inline int sched_vrank(const sched_t *s, int r) { return (r - s->root + s->nranks) % s->nranks; }
static inline int sched_real(const sched_t *s, int v) { return (v + s->root) % s->nranks; }

/* Name of a collective ("allreduce") and back; -1 if unknown. */
const char *coll_name(coll_t c);
int coll_parse(const char *name);
/* "; did you mean 'allreduce'?" for a misspelt collective, or "". */
const char *coll_hint(const char *name);
/* The whole a size runs as where each rank has its own part, as nccl-tests
 * runs it: its all-to-all sends each peer count / p of a rank's floats
 * (alltoall.cu, AlltoAllGetCollByteCount), its all-gather and
 * reduce-scatter give each rank count / p elements rounded down to 16 bytes
 * (all_gather.cu, reduce_scatter.cu: (count/nranks) & -(16/eltSize)), and the
 * size it prints is the whole. So bytes rounded down to a multiple of *unit
 * = 4p (all-to-all) or 16p: 0 below it (nccl-tests runs nothing). Other
 * collectives: bytes, unit 1. */
uint64_t coll_whole_bytes(coll_t c, int p, uint64_t bytes, uint64_t *unit);

/* NCCL-style primitive name of an op ("recv_reduce_send"). */
const char *sched_op_name(const sched_op_t *op);

/* Write the schedule as text, one block per rank, in LogGOPSim's GOAL syntax
 * (send/recv/calc with `requires` for program order). Fused ops appear as
 * their parts. Intended for small schedules, golden tests and interop. */
int sched_dump_goal(const sched_t *s, FILE *out);

#endif
