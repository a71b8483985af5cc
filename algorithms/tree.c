/* tree.c - binomial-tree all-reduce: binomial reduce to rank 0, then
 * binomial broadcast back.
 *
 * Idea: pair up, then pair up again. Each round halves the number of ranks
 * still holding partial sums, so ceil(lg p) rounds reach the root; the
 * broadcast retraces them. Every message is the whole buffer.
 *
 * Step diagram, p = 8 (children of r are r + 2^k for 2^k < lowbit(r)):
 *
 *   reduce   round 0: 1->0  3->2  5->4  7->6        (each receiver adds)
 *            round 1: 2->0  6->4
 *            round 2: 4->0
 *   bcast    round 0: 0->4
 *            round 1: 0->2  4->6
 *            round 2: 0->1  2->3  4->5  6->7
 *
 * Program of rank r with c children: c x recv_reduce (smallest subtree
 * first, it finishes first), send to parent r - lowbit(r), recv_copy from the
 * parent, then c sends (largest subtree first, it has the longest way to go).
 * Rank 0 has no parent.
 *
 * Cost (single-port, and also a multi-port star: the first child of every
 * rank is served first either way, so the critical path is the same):
 *   ceil(lg p) (2 alpha + 2 n beta + n gamma), exact for every p.
 * Requires: any p >= 1, any n. */
#include "algo.h"

static int lowbit(int r) { return r & -r; }

/* Children r + 2^k, k ascending, that exist. */
static int tree_nchildren(int r, int p) {
    int c = 0;
    for (int64_t d = 1; (r == 0 || d < lowbit(r)) && r + d < p; d <<= 1) c++;
    return c;
}

static int tree_prog(const sched_t *s, int r, int chan, uint32_t pc, sched_op_t *op) {
    (void)chan;
    int p = s->nranks, nc = tree_nchildren(r, p), up = r != 0;
    int parent = r - lowbit(r);
    uint32_t k = pc;
    *op = (sched_op_t){.chunk = 0};
    if (k < (uint32_t)nc) {                       /* reduce: children in */
        op->recv = RECV_REDUCE;
        op->recv_peer = r + (1 << k);
        return 1;
    }
    k -= nc;
    if (up && k == 0) { op->send = 1; op->send_peer = parent; return 1; }
    if (up && k == 1) { op->recv = RECV_COPY; op->recv_peer = parent; return 1; }
    k -= up ? 2 : 0;
    if (k < (uint32_t)nc) {                       /* broadcast: children out */
        op->send = 1;
        op->send_peer = r + (1 << (nc - 1 - k));
        return 1;
    }
    return 0;
}

static int tree_build(sched_t *s, int p, uint64_t n, baton_err_t *e) {
    (void)p; (void)n; (void)e;
    s->prog = tree_prog;
    return 0;
}

static double tree_cost(const cost_model_t *m, int p, uint64_t n) {
    double b = (double)n;
    return cost_ceil_log2(p) * (2 * m->alpha + 2 * b * m->beta + b * m->gamma);
}

const algo_t algo_allreduce_tree = {
    .coll = COLL_ALLREDUCE,
    .name = "tree",
    .build = tree_build,
    .cost = tree_cost,
    .cost_text = "ceil(lg p)(2a + 2nb + ng)",
    .requires = "any p >= 1, any n",
    .port_model = "single-port or multi-port star (same); exact",
    .idea = "binomial reduce to rank 0, then binomial broadcast; whole buffer per message",
};
