/* naive.c - naive all-reduce: everyone tells rank 0, rank 0 tells everyone.
 *
 * Idea: the candy kids' first method. Rank 0 receives the p-1 other buffers
 * one after the other, adding each, then sends the totals back to each rank.
 * All the work lands on one rank while the others wait.
 *
 * Step diagram, p = 4:
 *
 *   rank 0:  recv_reduce 1, recv_reduce 2, recv_reduce 3, send 1, send 2, send 3
 *   rank r:  send 0, recv_copy 0
 *
 * Cost. Receives are in order (each waits for the previous reduction).
 *   single-port:      2(p-1) alpha + 2(p-1) n beta + (p-1) n gamma
 *   multi-port star:  (p-1)(alpha + n beta + n gamma) + alpha + (p-1) n beta
 *                     (the p-1 sends leave together; rank 0's link is the
 *                     bottleneck so their bytes queue behind each other;
 *                     needs max_inflight >= p-1, else the sends go in waves)
 * Both exact. Requires: any p >= 1, any n. */
#include "algo.h"

static int naive_prog(const sched_t *s, int r, int chan, uint32_t pc, sched_op_t *op) {
    (void)chan;
    int p = s->nranks;
    *op = (sched_op_t){.chunk = 0};
    if (r != 0) {
        if (pc == 0) { op->send = 1; op->send_peer = 0; return 1; }
        if (pc == 1) { op->recv = RECV_COPY; op->recv_peer = 0; return 1; }
        return 0;
    }
    if (pc < (uint32_t)(p - 1)) { op->recv = RECV_REDUCE; op->recv_peer = (int)pc + 1; return 1; }
    if (pc < (uint32_t)(2 * p - 2)) { op->send = 1; op->send_peer = (int)pc - (p - 1) + 1; return 1; }
    return 0;
}

static int naive_build(sched_t *s, int p, uint64_t n, baton_err_t *e) {
    (void)p; (void)n; (void)e;
    s->prog = naive_prog;
    return 0;
}

static double naive_cost(const cost_model_t *m, int p, uint64_t n) {
    double b = (double)n, q = p - 1;
    double gather = q * (m->alpha + b * m->beta + b * m->gamma);
    if (p < 2) return 0;
    if (m->ports == 1) return gather + q * (m->alpha + b * m->beta);
    return gather + m->alpha + q * b * m->beta;
}

const algo_t algo_allreduce_naive = {
    .coll = COLL_ALLREDUCE,
    .name = "naive",
    .build = naive_build,
    .cost = naive_cost,
    .cost_text = "single-port: 2(p-1)a + 2(p-1)nb + (p-1)ng; multi-port star: (p-1)(a + nb + ng) + a + (p-1)nb",
    .requires = "any p >= 1, any n",
    .port_model = "single-port and multi-port star, each exact (multi-port: if max_inflight >= p-1)",
    .idea = "everyone sends to rank 0, which reduces and sends the totals back",
};
