/* scatter_allgather.c - broadcast as binomial scatter + ring all-gather
 * (van de Geijn; Barnett et al. 1994), for long messages.
 *
 * Idea: a binomial broadcast sends the whole buffer lg p times from the
 * root. Instead scatter it (each rank gets one block, the root's link carries
 * each byte once) and let a ring all-gather spread the blocks (every link
 * busy, each byte once per link): about 2nb instead of lg p nb.
 *
 * Step diagram, p = 4 (virtual ranks; blocks a b c d; v ends scatter with block v):
 *
 *   scatter  0 -cd-> 2          then   0 -b-> 1,  2 -d-> 3
 *   gather   ring all-gather of a b c d over 0 -> 1 -> 2 -> 3 -> 0
 *
 * A rank's subtree in the scatter is [v, v + algo_lowbit(v)) (the root's is all of
 * it), so a child c = v + 2^k receives blocks [c, min(c + 2^k, p)).
 *
 * Cost (single-port; exact for p a power of two when p divides n):
 *   lg p a + ((p-1)/p) nb  +  (p-1)(a + (n/p) b)  =  (lg p + p - 1) a + 2((p-1)/p) nb
 * For other p the scatter's halves are uneven and the sum is an upper bound.
 * Requires: any p >= 1, any n, any root. */
#include "algo.h"

/* Blocks of the subtree rooted at child c = v + 2^k. */
static uint32_t subtree(int c, int k, int p) { return (uint32_t)((c + (1 << k) < p ? c + (1 << k) : p) - c); }

static int scatter_op(const sched_t *s, int v, uint32_t pc, sched_op_t *op, uint32_t *len) {
    int p = s->nranks, nc = algo_binom_children(v, p), up = v != 0;
    *len = (uint32_t)(up + nc);
    if (up && pc == 0) {
        int k = 0;
        while ((1 << (k + 1)) <= algo_lowbit(v)) k++;
        *op = op_recv(sched_real(s, v - algo_lowbit(v)), (uint32_t)v, subtree(v, k, p), RECV_COPY);
        return 1;
    }
    uint32_t j = pc - (uint32_t)up;
    if (j >= (uint32_t)nc) return 0;
    int k = nc - 1 - (int)j, c = v + (1 << k);
    *op = op_send(sched_real(s, c), (uint32_t)c, subtree(c, k, p));
    return 1;
}

/* Ring all-gather over virtual ranks: v owns block v. */
static int gather_op(const sched_t *s, int v, uint32_t j, sched_op_t *op) {
    int p = s->nranks, left = sched_real(s, (v + p - 1) % p), right = sched_real(s, (v + 1) % p);
    if (j >= (uint32_t)p) return 0;
    if (j == 0) { *op = op_send(right, (uint32_t)v, 1); return 1; }
    uint32_t b = (uint32_t)(((int64_t)v - j + p) % p);
    *op = j < (uint32_t)p - 1 ? op_fwd(left, right, b, 1, RECV_COPY) : op_recv(left, b, 1, RECV_COPY);
    return 1;
}

static int sag_prog(const sched_t *s, int r, int c, uint32_t pc, sched_op_t *op) {
    (void)c;
    int v = sched_vrank(s, r);
    uint32_t len;
    if (s->nranks < 2) return 0;
    if (scatter_op(s, v, pc, op, &len)) return 1;
    return gather_op(s, v, pc - len, op);
}

static int sag_build(sched_t *s, const algo_opts_t *o, baton_err_t *e) {
    (void)o; (void)e;
    sched_layout(s, (uint32_t)s->nranks, 1);   /* block v belongs to virtual rank v */
    s->prog = sag_prog;
    return 0;
}

static double sag_cost(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o) {
    (void)o;
    double blk = cost_block(p, n), r = cost_host_doubling(m, blk, cost_ceil_log2(p)) + (p - 1) * cost_host(m, blk);
    return (cost_ceil_log2(p) + p - 1) * m->alpha + r + 2.0 * (p - 1) * blk * m->beta;
}

const algo_t algo_broadcast_scatter_allgather = {
    .coll = COLL_BROADCAST, .name = "scatter_allgather", .build = sag_build, .cost = sag_cost,
    .cost_text = "(lg p + p - 1) a + 2((p-1)/p) nb",
    .requires = "any p >= 1, any n, any root",
    .port_model = "single-port; exact for p a power of two dividing n, else an upper bound",
    .idea = "binomial scatter of blocks, then ring all-gather (van de Geijn)",
};
