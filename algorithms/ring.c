/* ring.c - the ring family: reduce-scatter, all-gather and all-reduce.
 *
 * Idea: cut the buffer into p blocks; p batons travel right at once, one
 * starting at each rank. In reduce-scatter each baton collects every rank's
 * contribution in p-1 passes; in all-gather each carries a finished block
 * p-1 passes; all-reduce is the one then the other. Nobody ever sends more
 * than one block at a time, and every link carries the same load.
 *
 * Step diagram, all-reduce, p = 4, blocks a b c d:
 *
 *            rank0    rank1    rank2    rank3
 *   pc 0     send a   send b   send c   send d          -> right neighbour
 *   pc 1     +d >     +a >     +b >     +c >            recv_reduce_send
 *   pc 2     +c >     +d >     +a >     +b >            recv_reduce_send
 *   pc 3     +b >     +c >     +d >     +a >            block complete, forward
 *   pc 4     =a >     =b >     =c >     =d >            recv_copy_send
 *   pc 5     =d       =a       =b       =c              recv_copy
 *
 * Channels: with C channels each block is cut into C chunks and channel c runs
 * a ring on chunk c of every block (NCCL's channels); they share the ranks'
 * ports and links. Channel c's ring visits each rank group (node; --group or
 * the topology's group_size) in order but starts inside it at local rank c,
 * so it leaves a node through local rank c-1 and enters the next at local
 * rank c: with as many channels as ranks per node, every node's every NIC
 * carries one ring in and one out, as NCCL's rings do. Channel 0 is the
 * plain rank order. Where s GPUs in a row share a NIC (the machine's
 * graph_ring_stride) channel c starts at local rank c s + 1 instead and
 * leaves by c s: in and out by NIC c (algo_rotation). Where the machine's
 * GPUs are not all alike, the machine's own rings (topologies/graph.h,
 * NCCL's search) replace this rotation: channel c runs ring c mod their
 * count (--rank-order keeps the rotation).
 *
 * Costs (single-port or star, one channel, no contention; m = ceil(n/p)):
 *   reduce-scatter  (p-1)(alpha + m beta + m gamma)
 *   all-gather      (p-1)(alpha + m beta)
 *   all-reduce      2(p-1)(alpha + m beta) + (p-1) m gamma
 * exact when p divides n, upper bounds otherwise (blocks differ by a byte).
 * With C channels a step costs max(m beta, alpha + (m/C)(beta_path [+ gamma])):
 * beta is the busiest link's share of every channel (topologies/linkload.c),
 * beta_path one channel's route alone; while one channel waits out its
 * latency or adds, the others keep the links busy.
 * Requires: any p >= 1, any n (empty blocks still cost alpha, as in MPICH). */
#include "algo.h"

/* Chunk of the block of the rank at ring position i, on channel c. */
static uint32_t ring_chunk(const sched_t *s, int64_t i, int c) {
    return (uint32_t)algo_ring_at(s, c, i) * s->per_block + (uint32_t)c;
}

/* Reduce-scatter at ring position i: it ends with the block of position i + 1 + shift. */
static int ring_rs_op(const sched_t *s, int i, int c, uint32_t pc, int shift, int fwd_last,
                      sched_op_t *op) {
    int p = s->nranks, left = algo_ring_at(s, c, i - 1), right = algo_ring_at(s, c, i + 1);
    if (pc == 0) { *op = op_send(right, ring_chunk(s, i + shift, c), 1); return 1; }
    uint32_t ch = ring_chunk(s, (int64_t)i + shift - pc, c);
    *op = (pc < (uint32_t)p - 1 || fwd_last) ? op_fwd(left, right, ch, 1, RECV_REDUCE)
                                            : op_recv(left, ch, 1, RECV_REDUCE);
    return 1;
}

/* All-gather step j >= 1 at ring position i, owning the block of position own. */
static int ring_ag_op(const sched_t *s, int i, int c, uint32_t j, int64_t own, sched_op_t *op) {
    int p = s->nranks, left = algo_ring_at(s, c, i - 1), right = algo_ring_at(s, c, i + 1);
    uint32_t ch = ring_chunk(s, own - j, c);
    *op = j < (uint32_t)p - 1 ? op_fwd(left, right, ch, 1, RECV_COPY) : op_recv(left, ch, 1, RECV_COPY);
    return 1;
}

static int allreduce_prog(const sched_t *s, int r, int c, uint32_t pc, sched_op_t *op) {
    int p = s->nranks, i = algo_ring_pos(s, c, r);
    if (p < 2 || pc > (uint32_t)(2 * p - 2)) return 0;
    if (pc < (uint32_t)p) return ring_rs_op(s, i, c, pc, 0, 1, op);
    return ring_ag_op(s, i, c, pc - (p - 1), i + 1, op);
}

static int rs_prog(const sched_t *s, int r, int c, uint32_t pc, sched_op_t *op) {
    int p = s->nranks, i = algo_ring_pos(s, c, r);
    if (p < 2 || pc >= (uint32_t)p) return 0;
    return ring_rs_op(s, i, c, pc, -1, 0, op);
}

static int ag_prog(const sched_t *s, int r, int c, uint32_t pc, sched_op_t *op) {
    int p = s->nranks, i = algo_ring_pos(s, c, r);
    if (p < 2 || pc >= (uint32_t)p) return 0;
    if (pc == 0) { *op = op_send(algo_ring_at(s, c, i + 1), ring_chunk(s, i, c), 1); return 1; }
    return ring_ag_op(s, i, c, pc, i, op);
}

/* Rank r's right neighbour on channel c: where every one of its sends goes. */
static int ring_peer(const sched_t *s, int c, int r) {
    return s->nranks < 2 ? -1 : algo_ring_at(s, c, (int64_t)algo_ring_pos(s, c, r) + 1);
}

static int ring_build(sched_t *s, const algo_opts_t *o, baton_err_t *e) {
    (void)e;
    int ch = o->channels > 0 ? o->channels : 1;
    s->period = algo_ring_orders(s, o, ch);
    sched_layout(s, (uint32_t)s->nranks, (uint32_t)ch);
    s->prog = s->coll == COLL_ALLREDUCE ? allreduce_prog : s->coll == COLL_REDUCE_SCATTER ? rs_prog : ag_prog;
    return 0;
}

/* Steps of one block each (cost_step: with channels, one channel's latency
 * and adds hide behind the others' transfers). */
static double allreduce_cost(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o) {
    (void)o;
    double b = cost_block(p, n);
    return (p - 1) * (cost_step(m, b, m->gamma) + cost_step(m, b, 0));
}

static double rs_cost(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o) {
    (void)o;
    return (p - 1) * cost_step(m, cost_block(p, n), m->gamma);
}

static double ag_cost(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o) {
    (void)o;
    return (p - 1) * cost_step(m, cost_block(p, n), 0);
}

#define RING_PORTS "single-port or multi-port star (same), one channel; exact when p divides n, else an upper bound"

const algo_t algo_allreduce_ring = {
    .coll = COLL_ALLREDUCE, .name = "ring", .build = ring_build, .cost = allreduce_cost,
    .cost_text = "2(p-1)(a + ceil(n/p) b) + (p-1) ceil(n/p) g; C channels: a step is max(m b, a + (m/C)(b_path [+ g]))",
    .requires = "any p >= 1, any n; --channels C", .port_model = RING_PORTS,
    .idea = "reduce-scatter then all-gather around a ring, p blocks in flight",
    .nccl = "ring", .peer = ring_peer,
};

const algo_t algo_reducescatter_ring = {
    .coll = COLL_REDUCE_SCATTER, .name = "ring", .build = ring_build, .cost = rs_cost,
    .cost_text = "(p-1)(a + ceil(n/p)(b + g))",
    .requires = "any p >= 1, any n; --channels C", .port_model = RING_PORTS,
    .idea = "p batons collect every rank's share of one block each; rank r ends with block r",
    .nccl = "ring", .peer = ring_peer,
};

const algo_t algo_allgather_ring = {
    .coll = COLL_ALLGATHER, .name = "ring", .build = ring_build, .cost = ag_cost,
    .cost_text = "(p-1)(a + ceil(n/p) b)",
    .requires = "any p >= 1, any n; --channels C", .port_model = RING_PORTS,
    .idea = "every block travels p-1 hops around the ring",
    .nccl = "ring", .peer = ring_peer,
};
