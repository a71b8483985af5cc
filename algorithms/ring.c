/* ring.c - ring all-reduce: reduce-scatter around the ring, then all-gather.
 *
 * Idea: cut the buffer into p chunks; p batons travel right at once, one
 * starting at each rank. Each baton collects every rank's contribution in
 * p-1 passes (reduce-scatter), then carries the finished total p-1 more passes
 * (all-gather). Nobody ever sends more than one chunk at a time.
 *
 * Step diagram, p = 4, chunks a b c d (rank r starts the baton of chunk r):
 *
 *            rank0    rank1    rank2    rank3
 *   pc 0     send a   send b   send c   send d          -> right neighbour
 *   pc 1     +d >     +a >     +b >     +c >            recv_reduce_send
 *   pc 2     +c >     +d >     +a >     +b >            recv_reduce_send
 *   pc 3     +b >     +c >     +d >     +a >            chunk complete, forward
 *   pc 4     =a >     =b >     =c >     =d >            recv_copy_send
 *   pc 5     =d       =a       =b       =c              recv_copy
 *
 * Program of rank r (chunks mod p): pc 0 sends chunk r; pc s in 1..p-1
 * receives chunk r-s from the left, reduces it and forwards it; pc p-1+j,
 * j in 1..p-1, receives the finished chunk r-j+1 and forwards it unless j=p-1.
 *
 * Cost (single-port or star, no contention; MPICH ring RS + AG):
 *   2(p-1)(alpha + ceil(n/p) beta) + (p-1) ceil(n/p) gamma
 * exact when p divides n, an upper bound otherwise (chunks differ by a byte).
 * Requires: any p >= 1 and any n (empty chunks still cost alpha, as in MPICH). */
#include "algo.h"

static int mod(int64_t a, int p) { return (int)(((a % p) + p) % p); }

static int ring_prog(const sched_t *s, int r, int chan, uint32_t pc, sched_op_t *op) {
    (void)chan;
    int p = s->nranks;
    if (p < 2 || pc > (uint32_t)(2 * p - 2)) return 0;
    int left = mod(r - 1, p), right = mod(r + 1, p);
    *op = (sched_op_t){.recv_peer = left, .send_peer = right, .send = 1};
    if (pc == 0) {
        op->chunk = (uint32_t)r;
    } else if (pc <= (uint32_t)(p - 1)) {
        op->recv = RECV_REDUCE;
        op->chunk = (uint32_t)mod((int64_t)r - pc, p);
    } else {
        int64_t j = (int64_t)pc - (p - 1);
        op->recv = RECV_COPY;
        op->chunk = (uint32_t)mod(r - j + 1, p);
        op->send = j < p - 1;
    }
    return 1;
}

static int ring_build(sched_t *s, int p, uint64_t n, baton_err_t *e) {
    (void)n; (void)e;
    s->nchunks = (uint32_t)p;
    s->prog = ring_prog;
    return 0;
}

static double ring_cost(const cost_model_t *m, int p, uint64_t n) {
    double c = (double)(n / p + (n % p != 0));
    return 2.0 * (p - 1) * (m->alpha + c * m->beta) + (p - 1) * c * m->gamma;
}

const algo_t algo_allreduce_ring = {
    .coll = COLL_ALLREDUCE,
    .name = "ring",
    .build = ring_build,
    .cost = ring_cost,
    .cost_text = "2(p-1)(a + ceil(n/p) b) + (p-1) ceil(n/p) g",
    .requires = "any p >= 1, any n",
    .port_model = "single-port or multi-port star (same); exact when p divides n, else an upper bound",
    .idea = "reduce-scatter then all-gather around a ring, p chunks in flight",
};
