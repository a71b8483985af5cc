/* bruck.c - Bruck's all-gather (Bruck et al. 1997), for any p.
 *
 * Idea: in round k every rank sends everything it has so far to the rank
 * 2^k to its left and receives as much from the rank 2^k to its right, so
 * what a rank holds doubles each round: ceil(lg p) rounds for any p (the last
 * round sends only the p - 2^k blocks still missing).
 *
 * Step diagram, p = 5 (rank v holds blocks v, v+1, ... mod p):
 *
 *   k=0 (d=1): v sends {v}          to v-1, gets {v+1}           from v+1
 *   k=1 (d=2): v sends {v, v+1}     to v-2, gets {v+2, v+3}      from v+2
 *   k=2 (d=4): v sends {v}          to v-4, gets {v+4}           from v+4
 *
 * Blocks keep their global index here, so the final local rotation of the
 * textbook version is not needed. A range of blocks may wrap past p-1.
 *
 * Cost (single-port or star): ceil(lg p) a + ((p-1)/p) n b, exact when p
 * divides n. Requires: any p >= 1, any n. */
#include "algo.h"

static int bruck_prog(const sched_t *s, int r, int c, uint32_t pc, sched_op_t *op) {
    (void)c;
    int p = s->nranks;
    int64_t d = (int64_t)1 << (pc / 2);
    if (d >= p) return 0;
    uint32_t count = (uint32_t)(d < p - d ? d : p - d);
    if (pc % 2 == 0) *op = op_send((int)((r - d + p) % p), (uint32_t)r, count);
    else *op = op_recv((int)((r + d) % p), (uint32_t)((r + d) % p), count, RECV_COPY);
    return 1;
}

static int bruck_build(sched_t *s, const algo_opts_t *o, baton_err_t *e) {
    (void)o; (void)e;
    sched_layout(s, (uint32_t)s->nranks, 1);
    s->prog = bruck_prog;
    s->period = 1;                 /* step k: every rank sends to r - 2^k */
    return 0;
}

static double bruck_cost(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o) {
    (void)o;
    int steps = cost_ceil_log2(p);
    return steps * m->alpha + cost_host_doubling(m, cost_block(p, n), steps) + (p - 1) * cost_block(p, n) * m->beta;
}

const algo_t algo_allgather_bruck = {
    .coll = COLL_ALLGATHER, .name = "bruck", .build = bruck_build, .cost = bruck_cost,
    .cost_text = "ceil(lg p) a + ((p-1)/p) nb",
    .requires = "any p >= 1, any n", .port_model = "single-port or multi-port star (same); exact when p divides n",
    .idea = "double what you hold each round by trading with the rank 2^k away",
    ALGO_LOCKSTEP,
};
