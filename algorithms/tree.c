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
 * Cost, exact for every p:
 *   reduce     ceil(lg p)(alpha + n beta + n gamma) in both port models (a
 *              parent takes its children one at a time, in order);
 *   broadcast  single-port: ceil(lg p)(alpha + n beta);
 *              multi-port star: the j-th child (j = 1, 2, ...) of a rank
 *              hears it alpha + j n beta after the rank did (sends leave
 *              together, bytes queue on the rank's link). A complete
 *              subtree of height k takes k(alpha + n beta) either way; only
 *              the subtrees cut short by p differ, one per level, so
 *              tree_star_bcast walks O(lg^2 p) of them.
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

/* Latest arrival in r's subtree, after r's own, on a multi-port star. */
static double tree_star_bcast(int r, int p, double a, double nb) {
    int nc = tree_nchildren(r, p);
    double worst = 0;
    for (int j = 0; j < nc; j++) {
        int k = nc - 1 - j, c = r + (1 << k);
        double below = (int64_t)c + (1 << k) <= p ? k * (a + nb) : tree_star_bcast(c, p, a, nb);
        double t = a + (j + 1) * nb + below;
        if (t > worst) worst = t;
    }
    return worst;
}

static double tree_cost(const cost_model_t *m, int p, uint64_t n) {
    double b = (double)n, lg = cost_ceil_log2(p);
    double reduce = lg * (m->alpha + b * m->beta + b * m->gamma);
    if (m->ports == 1) return reduce + lg * (m->alpha + b * m->beta);
    return reduce + tree_star_bcast(0, p, m->alpha, b * m->beta);
}

const algo_t algo_allreduce_tree = {
    .coll = COLL_ALLREDUCE,
    .name = "tree",
    .build = tree_build,
    .cost = tree_cost,
    .cost_text = "ceil(lg p)(2a + 2nb + ng) single-port; multi-port star: bcast part by subtree recursion (<= that)",
    .requires = "any p >= 1, any n",
    .port_model = "single-port and multi-port star, each exact",
    .idea = "binomial reduce to rank 0, then binomial broadcast; whole buffer per message",
};
