/* alltoall.c - all-to-all: block j of rank r goes to rank j, where it
 * becomes block r (the exchange behind expert parallelism and transposes).
 *
 * pairwise: rank r first copies its own block r (a local copy, free); then in
 *   step k = 1..p-1 it sends its block r+k to rank r+k and receives block
 *   r-k's data from rank r-k: every step is a permutation, so no rank is a
 *   hot spot.
 * direct: NCCL's grouped sends and receives, which its p2p channels run
 *   side by side rather than step by step: W = 16 peers at a time (its 32
 *   p2p channels, 2 a peer). Channel c (1..W) sends block r+k to rank r+k
 *   and takes rank r-k's for k = c, c + W, c + 2W, ... in turn; channel 0
 *   the own block. Up to 17 ranks every peer at once.
 * linear (naive): every rank goes through all ranks in order, 0, 1, 2, ...,
 *   itself included, swapping one block with each: everyone queues at rank 0
 *   first. Pair (i, j) meets in round i + j, so it takes 2p - 3 rounds.
 *
 * Step diagram, pairwise, p = 4 (b_j = block j; rank r ends with b_j = j's b_r):
 *
 *   k=1   0->1  1->2  2->3  3->0       (r sends b_{r+1}, it lands as b_r)
 *   k=2   0->2  1->3  2->0  3->1
 *   k=3   0->3  1->0  2->1  3->2
 *
 * Buffers: unlike the other collectives all-to-all cannot work in place (rank
 * r would overwrite block r-k before sending it), so the layout has 2p blocks
 * of n/p bytes: blocks 0..p-1 are the send buffer, p..2p-1 the receive buffer.
 *
 * Costs (single-port or star; m = n/p; the size is each rank's send buffer):
 *   pairwise  (p-1)(a + m b)
 *   linear    (2p - 3)(a + m b)
 *   direct    p <= W + 1: a + m b + d, the first block, then the spread to
 *             the last (d: single-port (p-2)(a + m b), star (p-2) m b, a
 *             machine's view m (step's busiest link - one route); direct.c's
 *             all-gather's); beyond, R = ceil((p-1)/W) rounds of latency and
 *             the busiest link's share of every block: R a + m b (b of the
 *             whole call's pattern; star (p-1) m b), an approximation
 * Requires: p divides n (every pair swaps the same number of bytes, as in
 * nccl-tests), any p >= 1. */
#include "algo.h"

#include "../models/proto.h"

/* Swap with peer q: send my block q (it lands in q's receive block r), or
 * take q's into my receive block q. */
static int swap(const sched_t *s, int r, int q, uint32_t half, sched_op_t *op) {
    uint32_t p = (uint32_t)s->nranks;
    *op = half == 0 ? op_send_into(q, (uint32_t)q, 1, p + (uint32_t)r) : op_recv(q, p + (uint32_t)q, 1, RECV_COPY);
    return 1;
}

static int pairwise_prog(const sched_t *s, int r, int c, uint32_t pc, sched_op_t *op) {
    (void)c;
    int p = s->nranks, k = (int)(pc / 2);
    if (k >= p) return 0;
    return pc % 2 == 0 ? swap(s, r, (int)algo_mod(r + k, p), 0, op) : swap(s, r, (int)algo_mod(r - k, p), 1, op);
}

#define A2A_WINDOW 16     /* peers in flight: NCCL's 32 p2p channels, 2 a peer */

/* Channel c: swap with ranks r + k (send) and r - k (receive) for k = c,
 * c + W, ... (channel 0: the own block). */
static int direct_prog(const sched_t *s, int r, int c, uint32_t pc, sched_op_t *op) {
    int p = s->nranks;
    int64_t k = c == 0 ? (pc < 2 ? 0 : p) : c + (int64_t)(pc / 2) * A2A_WINDOW;
    if (k >= p) return 0;
    return swap(s, r, (int)algo_mod(pc % 2 == 0 ? r + k : r - k, p), pc % 2, op);
}

static int linear_prog(const sched_t *s, int r, int c, uint32_t pc, sched_op_t *op) {
    (void)c;
    int j = (int)(pc / 2);
    return j < s->nranks ? swap(s, r, j, pc % 2, op) : 0;
}

int algo_a2a_whole(const sched_t *s, baton_err_t *e) {
    if (s->bytes % (uint64_t)s->nranks == 0) return 0;
    uint64_t whole = coll_whole_bytes(COLL_ALLTOALL, s->nranks, s->bytes, NULL);
    char hint[96] = "";
    if (whole) snprintf(hint, sizeof hint, "; nccl-tests runs this size as %llu bytes", (unsigned long long)whole);
    return err_set(e, BATON_EUNSUP, "alltoall %s needs the size to be a multiple of the rank count "
                   "(%llu bytes over %d ranks)%s", s->algo, (unsigned long long)s->bytes, s->nranks, hint);
}

static int a2a_build(sched_t *s, const algo_opts_t *o, baton_err_t *e) {
    (void)o;
    int rc = algo_a2a_whole(s, e);
    if (rc < 0) return rc;
    if (s->bytes > UINT64_MAX / 2) return err_set(e, BATON_EUNSUP, "alltoall: size too large");
    s->bytes *= 2;                                  /* send buffer + receive buffer */
    sched_layout(s, 2u * (uint32_t)s->nranks, 1);
    return 0;
}

static int pairwise_build(sched_t *s, const algo_opts_t *o, baton_err_t *e) {
    s->prog = pairwise_prog;
    s->period = 1;                 /* step j: every rank swaps with r + j and r - j */
    return a2a_build(s, o, e);
}

static int direct_build(sched_t *s, const algo_opts_t *o, baton_err_t *e) {
    s->prog = direct_prog;
    s->period = 1;                 /* channel c: every rank sends to r + k */
    int rc = a2a_build(s, o, e);
    s->nchannels = s->nranks <= A2A_WINDOW ? s->nranks : A2A_WINDOW + 1;
    return rc;
}

/* The call's pattern (algo.h, peer_slots): slot k is rank r's block to
 * r + k, all as one step (in W-wide rounds beyond W + 1 ranks: the
 * busiest link's share of every block still); slot 0 stays home. */
static int direct_peer(const sched_t *s, int c, int r) { return c == 0 ? -1 : (int)algo_mod(r + c, s->nranks); }
static int direct_slots(const sched_t *s, int *nchannels) {
    *nchannels = 1;
    return s->nranks;
}

static int linear_build(sched_t *s, const algo_opts_t *o, baton_err_t *e) {
    s->prog = linear_prog;
    return a2a_build(s, o, e);
}

static double pairwise_cost(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o) {
    (void)o;
    return (p - 1) * (cost_alpha(m, (double)(n / p)) + (double)(n / p) * m->beta);
}

static double direct_cost(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o) {
    (void)o;
    double mb = (double)(n / (uint64_t)(p > 0 ? p : 1)), rounds = (double)((p - 2) / A2A_WINDOW + 1);
    if (p - 1 <= A2A_WINDOW || m->ports == 1) return algo_direct_spread_time(m, p, mb);
    return rounds * cost_alpha(m, mb) + mb * (m->stepwise ? m->beta : (p - 1) * m->beta);
}

static double linear_cost(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o) {
    (void)o;
    return p < 2 ? 0 : (2 * p - 3) * (cost_alpha(m, (double)(n / p)) + (double)(n / p) * m->beta);
}

const algo_t algo_alltoall_pairwise = {
    .coll = COLL_ALLTOALL, .name = "pairwise", .build = pairwise_build, .cost = pairwise_cost,
    .cost_text = "(p-1)(a + (n/p) b)", .requires = "p divides n",
    .port_model = "single-port or multi-port star (same); exact",
    .idea = "step k: send block r+k to rank r+k, take rank r-k's block r",
    /* NCCL has no all-to-all algorithm: nccl-tests' alltoall_perf groups a
       send and a receive per peer, which NCCL's p2p schedule orders this
       way (step k: to rank + k, from rank - k), LL below its
       NCCL_P2P_LL_THRESHOLD, else Simple, and Simple at every size across
       nodes (ncclrule_p2p_proto); its p2p channels run 16 steps
       side by side (direct). -a nccl runs either, by the lower closed
       form. */
    .nccl = "p2p", .nccl_protos = 1u << PROTO_LL | 1u << PROTO_SIMPLE,
    ALGO_LOCKSTEP,
};

const algo_t algo_alltoall_direct = {
    .coll = COLL_ALLTOALL, .name = "direct", .build = direct_build, .cost = direct_cost,
    .cost_text = "a + (n/p) b + d, d the spread from the first block's arrival to the last; "
                 "beyond 17 ranks ceil((p-1)/16) a + the busiest link's share of every block",
    .requires = "p divides n",
    .port_model = "single-port, multi-port star and a machine's view up to 17 ranks (full mesh: every block at once); exact",
    .idea = "16 peers at a time, a channel each: NCCL's grouped sends and receives",
    .nccl = "p2p", .nccl_protos = 1u << PROTO_LL | 1u << PROTO_SIMPLE,
    .peer = direct_peer, .peer_slots = direct_slots,
};

const algo_t algo_alltoall_naive = {
    .coll = COLL_ALLTOALL, .name = "naive", .build = linear_build, .cost = linear_cost,
    .cost_text = "(2p-3)(a + (n/p) b)", .requires = "p divides n",
    .port_model = "single-port or multi-port star (same); exact",
    .idea = "every rank swaps a block with each peer in rank order (linear)",
};
