/* tree.c - binomial trees: reduce, broadcast, and all-reduce = reduce then
 * broadcast (the candy kids' "pair up, then pair up again").
 *
 * Idea: each round halves the number of ranks still holding partial sums, so
 * ceil(lg p) rounds reach the root; the broadcast retraces them. Every
 * message is the whole buffer: the tree divides the participants, not the data.
 *
 * Step diagram, p = 8, root 0 (children of v are v + 2^k for 2^k < algo_lowbit(v)):
 *
 *   reduce   round 0: 1->0  3->2  5->4  7->6        (each receiver adds)
 *            round 1: 2->0  6->4
 *            round 2: 4->0
 *   bcast    round 0: 0->4
 *            round 1: 0->2  4->6
 *            round 2: 0->1  2->3  4->5  6->7
 *
 * A rank takes its children smallest subtree first when reducing (it is
 * ready first) and serves them largest first when broadcasting (it has the
 * longest way to go). Ranks are virtual (relative to the root).
 *
 * Costs, exact for every p (L = ceil(lg p)):
 *   reduce     L(alpha + n beta + n gamma), both port models: a parent takes
 *              its children one at a time, in order.
 *   broadcast  single-port: L(alpha + n beta).
 *              multi-port star: the j-th child served hears alpha + j n beta
 *              after its parent (the sends leave together; the bytes queue
 *              on the parent's link). A complete subtree of height k takes
 *              k(alpha + n beta) either way; only the subtrees cut short by
 *              p differ (one per level), so star_bcast walks O(lg^2 p).
 *   all-reduce the two added.
 * Requires: any p >= 1, any n, any root. */
#include "algo.h"

/* Op pc of the binomial reduce of the whole buffer; *len gets its op count. */
static int reduce_op(const sched_t *s, int v, uint32_t pc, sched_op_t *op, uint32_t *len) {
    int nc = algo_binom_children(v, s->nranks);
    *len = (uint32_t)nc + (v != 0);
    if (pc < (uint32_t)nc) { *op = op_recv(sched_real(s, v + (1 << pc)), 0, 1, RECV_REDUCE); return 1; }
    if (pc < *len) { *op = op_send(sched_real(s, v - algo_lowbit(v)), 0, 1); return 1; }
    return 0;
}

static int bcast_op(const sched_t *s, int v, uint32_t pc, sched_op_t *op) {
    int nc = algo_binom_children(v, s->nranks), up = v != 0;
    if (up && pc == 0) { *op = op_recv(sched_real(s, v - algo_lowbit(v)), 0, 1, RECV_COPY); return 1; }
    uint32_t j = pc - (uint32_t)up;
    if (j >= (uint32_t)nc) return 0;
    *op = op_send(sched_real(s, v + (1 << (nc - 1 - (int)j))), 0, 1);
    return 1;
}

static int reduce_prog(const sched_t *s, int r, int c, uint32_t pc, sched_op_t *op) {
    (void)c;
    uint32_t len;
    return reduce_op(s, sched_vrank(s, r), pc, op, &len);
}

static int bcast_prog(const sched_t *s, int r, int c, uint32_t pc, sched_op_t *op) {
    (void)c;
    return bcast_op(s, sched_vrank(s, r), pc, op);
}

static int allreduce_prog(const sched_t *s, int r, int c, uint32_t pc, sched_op_t *op) {
    (void)c;
    uint32_t len;
    if (reduce_op(s, r, pc, op, &len)) return 1;
    return bcast_op(s, r, pc - len, op);
}

static int tree_build(sched_t *s, const algo_opts_t *o, baton_err_t *e) {
    (void)o; (void)e;
    s->prog = s->coll == COLL_REDUCE ? reduce_prog : s->coll == COLL_BROADCAST ? bcast_prog : allreduce_prog;
    return 0;
}

/* Reduce's rounds as the closed form's link view takes them (algo.h,
 * step_send): in round k, v with lowest bit 2^k sends its whole buffer up to
 * v - 2^k, and a parent takes its children in that order, so the rounds are
 * lockstep and a round costs its busiest link's share of the messages that
 * cross it (an uplink four senders cross, the spine's), not one route's time:
 * equal to max-min sharing on the 4 x 4 trees, block and cyclic, uplinks at
 * a GPU's rate and a quarter of it, 4 KiB-64 MiB (tests/test_closed.c).
 * Broadcast has no such view: a parent's sends leave together, and they
 * queue on its link under FIFO (child j after j nb) but share it under
 * max-min (every child after c nb), so no round split is right for both;
 * it and the all-reduce built on it stay blind (cost_model_t.blind), and
 * predict quotes the simulator beside them (docs/decisions/one-answer.md). */
static int reduce_nsteps(const sched_t *s) { return cost_ceil_log2(s->nranks); }

static int reduce_send(const sched_t *s, int k, int r, sched_op_t *op) {
    int v = sched_vrank(s, r);
    if (v == 0 || algo_lowbit(v) != 1 << k) return 0;
    *op = op_send(sched_real(s, v - (1 << k)), 0, 1);
    return 1;
}

/* Latest arrival in v's subtree, after v's own, on a multi-port star. */
static double star_bcast(int v, int p, double a, double nb) {
    int nc = algo_binom_children(v, p);
    double worst = 0;
    for (int j = 0; j < nc; j++) {
        int k = nc - 1 - j, c = v + (1 << k);
        double below = (int64_t)c + (1 << k) <= p ? k * (a + nb) : star_bcast(c, p, a, nb);
        double t = a + (j + 1) * nb + below;
        if (t > worst) worst = t;
    }
    return worst;
}

static double reduce_cost(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o) {
    (void)o;
    return cost_ceil_log2(p) * (cost_alpha(m, (double)n) + (double)n * (m->beta + m->gamma));
}

static double bcast_cost(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o) {
    (void)o;
    double nb = (double)n * m->beta;
    if (m->ports == 1) return cost_ceil_log2(p) * (cost_alpha(m, (double)n) + nb);
    return star_bcast(0, p, cost_alpha(m, (double)n), nb);
}

static double allreduce_cost(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o) {
    (void)o;
    return reduce_cost(m, p, n, o) + bcast_cost(m, p, n, o);
}

#define TREE_PORTS "single-port and multi-port star, each exact"

const algo_t algo_allreduce_binomial = {
    .coll = COLL_ALLREDUCE, .name = "binomial", .build = tree_build, .cost = allreduce_cost,
    .cost_text = "ceil(lg p)(2a + 2nb + ng) single-port; multi-port star: broadcast part by subtree recursion (<= that)",
    .requires = "any p >= 1, any n", .port_model = TREE_PORTS,
    .idea = "binomial reduce to rank 0, then binomial broadcast; whole buffer per message (-a tree: the candy kids' tree)",
};

const algo_t algo_reduce_binomial = {
    .coll = COLL_REDUCE, .name = "binomial", .build = tree_build, .cost = reduce_cost,
    .cost_text = "ceil(lg p)(a + nb + ng)",
    .requires = "any p >= 1, any n, any root", .port_model = TREE_PORTS,
    .idea = "pair up, then pair up again, adding; the root ends with the sum",
    .nsteps = reduce_nsteps, .step_send = reduce_send,
};

const algo_t algo_broadcast_binomial = {
    .coll = COLL_BROADCAST, .name = "binomial", .build = tree_build, .cost = bcast_cost,
    .cost_text = "ceil(lg p)(a + nb) single-port; multi-port star: by subtree recursion (<= that)",
    .requires = "any p >= 1, any n, any root", .port_model = TREE_PORTS,
    .idea = "everyone who has the data passes it to one new rank per round",
};
