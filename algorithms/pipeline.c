/* pipeline.c - pipelined chains: broadcast and reduce cut into k chunks that
 * flow down (or up) a chain of ranks, so every link is busy at once.
 *
 * Idea: the root starts sending chunk 1 to the next rank; while that rank
 * forwards chunk 1, the root sends chunk 2; after p-2 more chunk-steps the
 * pipeline is full and one chunk leaves the chain's end per step. This is
 * NCCL's ring broadcast and reduce (a ring with the root's link cut).
 *
 * Step diagram, broadcast, p = 4 (virtual ranks), k = 3 chunks x y z:
 *
 *   step 1   0 -x-> 1
 *   step 2   0 -y-> 1 -x-> 2
 *   step 3   0 -z-> 1 -y-> 2 -x-> 3
 *   step 4          1 -z-> 2 -y-> 3
 *   step 5                 2 -z-> 3
 *
 * Reduce runs the chain the other way: the last rank sends, each rank adds
 * its own and passes on, the root adds last.
 *
 * Channels: with C channels (NCCL's) the buffer is cut into C parts and
 * channel c runs its own chain on part c, along channel c's ring cut at
 * the root (algo_ring_at: the machine's ring c, or rank order rotated
 * inside each node, so the channels' chains leave and enter the nodes by
 * different GPUs and NICs, as NCCL's ring broadcast does). Each part is
 * cut into k chunks.
 *
 * Cost (single-port or star, one channel; exact when k divides n):
 *   broadcast  (p + k - 2)(a + (n/k) b)
 *   reduce     (p + k - 2)(a + (n/k)(b + g))
 * best k about sqrt((p-2) n b / a). Default k: one chunk per MiB of a
 * channel's part (at least 1, at most 4096); --pipeline K sets it. With C
 * channels a step is max(m b, a + (m/C)(b_path [+ g])) for m the step's C
 * chunks, as a ring's step (ring.c): b is the busiest link's share of every
 * channel's message, b_path one chunk's route alone.
 * Requires: any p >= 1, any n, root; --channels C. */
#include "algo.h"

/* Channel c's chain: the rank v places after the root (v in 0..p-1). */
static int chain_at(const sched_t *s, int c, int v) {
    return algo_ring_at(s, c, (int64_t)algo_ring_pos(s, c, s->root) + v);
}

/* Rank r's place on channel c's chain: 0 the root, p - 1 the far end. */
static int chain_place(const sched_t *s, int c, int r) {
    return (int)algo_mod((int64_t)algo_ring_pos(s, c, r) - algo_ring_pos(s, c, s->root), s->nranks);
}

static int chain_prog(const sched_t *s, int r, int c, uint32_t pc, sched_op_t *op) {
    int p = s->nranks, v = chain_place(s, c, r);
    if (p < 2 || pc >= s->per_block) return 0;
    int bcast = s->coll == COLL_BROADCAST;
    int head = bcast ? 0 : p - 1, tail = bcast ? p - 1 : 0, step = bcast ? 1 : -1;
    recv_kind_t k = bcast ? RECV_COPY : RECV_REDUCE;
    int prev = v == head ? -1 : chain_at(s, c, v - step), next = v == tail ? -1 : chain_at(s, c, v + step);
    uint32_t chunk = (uint32_t)c * s->per_block + pc;
    if (v == head) *op = op_send(next, chunk, 1);
    else if (v == tail) *op = op_recv(prev, chunk, 1, k);
    else *op = op_fwd(prev, next, chunk, 1, k);
    return 1;
}

/* Where rank r sends on channel c: the next rank down the chain (broadcast)
 * or up it (reduce), where it is inside r's group (across = 0) or in
 * another group (across = 1); -1 otherwise and at the end that only
 * receives. The closed form sees the two kinds of hop apart (algo.h
 * peer, peer_across). */
static int chain_send(const sched_t *s, int c, int r, int across) {
    int p = s->nranks, g = (int)s->param[0], v = chain_place(s, c, r), bcast = s->coll == COLL_BROADCAST;
    if (p < 2 || v == (bcast ? p - 1 : 0)) return -1;
    int to = chain_at(s, c, bcast ? v + 1 : v - 1);
    return (to / g != r / g) == across ? to : -1;
}
static int chain_peer(const sched_t *s, int c, int r) { return chain_send(s, c, r, 0); }
static int chain_peer_across(const sched_t *s, int c, int r) { return chain_send(s, c, r, 1); }

/* A channel's part of n bytes (the largest, where C does not divide n). */
static uint64_t chain_part(uint64_t n, int C) { return n / (uint64_t)C + (n % (uint64_t)C != 0); }

static int chain_build(sched_t *s, const algo_opts_t *o, baton_err_t *e) {
    int C = o && o->channels > 0 ? o->channels : 1;
    uint64_t k = algo_pipeline_chunks(chain_part(s->bytes, C), o);
    if (k > 1u << 20) return err_set(e, BATON_EUNSUP, "--pipeline %llu: at most 1048576 chunks", (unsigned long long)k);
    algo_ring_orders(s, o, C);
    s->period = 0;                                        /* the root is one rank: no symmetry */
    sched_layout(s, (uint32_t)C, (uint32_t)k);
    s->prog = chain_prog;
    return 0;
}

/* One chunk's hop alone: its latency and its bytes over one route (with
 * one channel the busiest link's, as cost_step charges it). */
static double chain_hop(const cost_model_t *m, double chunk, double g) {
    return cost_alpha(m, chunk) + chunk * ((m->channels > 1 ? m->beta_path : m->beta) + g);
}

/* The first chunk down the chain, hop by hop (X of its p - 1 hops between
 * groups, on the across view), then k - 1 steady steps of every channel's
 * chunk, each the slower view's step (cost_step: the busiest link's share,
 * or one channel's hop while the others keep the links busy). One view and
 * one channel: (p + k - 2)(a + chunk (b + g)). Chunks differ by a byte: the
 * first, the largest, is charged. */
static double chain(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o, double g) {
    int C = m->channels > 1 ? m->channels : 1, G = o && o->group > 0 && p % o->group == 0 ? p / o->group : 1;
    uint64_t part = chain_part(n, C), k = algo_pipeline_chunks(part, o);
    double chunk = (double)(part / k + (part % k != 0));
    if (p < 2) return 0;
    cost_model_t x = cost_across(m);
    int X = m->has_across && G > 1 ? (C > 1 ? G : G - 1) : 0;      /* a rotated chain starts inside its node */
    double in = cost_step(m, chunk * C, g), across = X ? cost_step(&x, chunk * C, g) : 0;
    double fill = (double)(p - 1 - X) * chain_hop(m, chunk, g) + (double)X * chain_hop(&x, chunk, g);
    return fill + (double)(k - 1) * (in > across ? in : across);
}

static double bcast_cost(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o) { return chain(m, p, n, o, 0); }
static double reduce_cost(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o) {
    return chain(m, p, n, o, m->gamma);
}

#define CHAIN_PORTS "single-port or multi-port star (same), one channel; exact when k divides n"

const algo_t algo_broadcast_chain = {
    .coll = COLL_BROADCAST, .name = "chain", .build = chain_build, .cost = bcast_cost,
    .cost_text = "(p + k - 2)(a + (n/k) b), k = ceil(n / 1 MiB) by default; C channels: a step is max(m b, a + (m/C) b_path)",
    .requires = "any p >= 1, any n, any root; --pipeline K, --channels C", .port_model = CHAIN_PORTS,
    .idea = "pipeline k chunks down a chain: NCCL's ring broadcast",
    .nccl = "ring", .peer = chain_peer, .peer_across = chain_peer_across,
};

const algo_t algo_reduce_chain = {
    .coll = COLL_REDUCE, .name = "chain", .build = chain_build, .cost = reduce_cost,
    .cost_text = "(p + k - 2)(a + (n/k)(b + g)), k = ceil(n / 1 MiB) by default; C channels: a step is max(m b, a + (m/C)(b_path + g))",
    .requires = "any p >= 1, any n, any root; --pipeline K, --channels C", .port_model = CHAIN_PORTS,
    .idea = "pipeline k chunks up a chain, adding at every rank: NCCL's ring reduce",
    .nccl = "ring", .peer = chain_peer, .peer_across = chain_peer_across,
};
