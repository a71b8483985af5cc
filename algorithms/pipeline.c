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
 * Cost (single-port or star; exact when k divides n):
 *   broadcast  (p + k - 2)(a + (n/k) b)
 *   reduce     (p + k - 2)(a + (n/k)(b + g))
 * best k about sqrt((p-2) n b / a). Default k: one chunk per MiB (at least
 * 1, at most 4096); --pipeline K sets it. Requires: any p >= 1, any n, root. */
#include "algo.h"

static int chain_prog(const sched_t *s, int r, int c, uint32_t pc, sched_op_t *op) {
    (void)c;
    int p = s->nranks, v = sched_vrank(s, r);
    if (p < 2 || pc >= s->nchunks) return 0;
    int bcast = s->coll == COLL_BROADCAST;
    int head = bcast ? 0 : p - 1, tail = bcast ? p - 1 : 0, step = bcast ? 1 : -1;
    recv_kind_t k = bcast ? RECV_COPY : RECV_REDUCE;
    int prev = sched_real(s, v - step), next = sched_real(s, v + step);
    if (v == head) *op = op_send(next, pc, 1);
    else if (v == tail) *op = op_recv(prev, pc, 1, k);
    else *op = op_fwd(prev, next, pc, 1, k);
    return 1;
}

static int chain_build(sched_t *s, const algo_opts_t *o, baton_err_t *e) {
    uint64_t k = algo_pipeline_chunks(s->bytes, o);
    if (k > 1u << 20) return err_set(e, BATON_EUNSUP, "--pipeline %llu: at most 1048576 chunks", (unsigned long long)k);
    sched_layout(s, 1, (uint32_t)k);
    s->prog = chain_prog;
    return 0;
}

/* Pipeline steps x the slowest chunk (the first: chunks differ by a byte). */
static double chain(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o, double per_byte) {
    uint64_t k = algo_pipeline_chunks(n, o);
    double chunk = (double)(n / k + (n % k != 0));
    return p < 2 ? 0 : (double)(p + k - 2) * (m->alpha + chunk * per_byte);
}

static double bcast_cost(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o) {
    return chain(m, p, n, o, m->beta);
}
static double reduce_cost(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o) {
    return chain(m, p, n, o, m->beta + m->gamma);
}

const algo_t algo_broadcast_chain = {
    .coll = COLL_BROADCAST, .name = "chain", .build = chain_build, .cost = bcast_cost,
    .cost_text = "(p + k - 2)(a + (n/k) b), k = ceil(n / 1 MiB) by default",
    .requires = "any p >= 1, any n, any root; --pipeline K",
    .port_model = "single-port or multi-port star (same); exact when k divides n",
    .idea = "pipeline k chunks down a chain: NCCL's ring broadcast",
    .nccl = "ring",
};

const algo_t algo_reduce_chain = {
    .coll = COLL_REDUCE, .name = "chain", .build = chain_build, .cost = reduce_cost,
    .cost_text = "(p + k - 2)(a + (n/k)(b + g)), k = ceil(n / 1 MiB) by default",
    .requires = "any p >= 1, any n, any root; --pipeline K",
    .port_model = "single-port or multi-port star (same); exact when k divides n",
    .idea = "pipeline k chunks up a chain, adding at every rank: NCCL's ring reduce",
    .nccl = "ring",
};
