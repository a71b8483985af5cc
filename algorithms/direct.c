/* direct.c - direct algorithms: every rank talks to every other rank.
 *
 * Pairwise exchange (reduce-scatter, all-gather): in step k = 1..p-1 rank r
 * sends to r+k and receives from r-k, so every step is a permutation and no
 * rank is ever a hot spot. Two-shot all-reduce is pairwise reduce-scatter
 * then pairwise all-gather. One-shot all-reduce sends the whole buffer to
 * every peer at once and adds what arrives (NVSwitch-style, small messages):
 * one channel per peer so the p-1 transfers can overlap where ports allow;
 * the rank's reductions share its one reduce engine.
 *
 * Step diagram, pairwise reduce-scatter, p = 4 (b_j = block j):
 *
 *   k=1   r sends b_{r+1} to r+1, adds b_r from r-1
 *   k=2   r sends b_{r+2} to r+2, adds b_r from r-2
 *   k=3   r sends b_{r+3} to r+3, adds b_r from r-3
 *
 * Costs (single-port, m = ceil(n/p), exact when p divides n):
 *   pairwise RS   (p-1)(a + m b + m g)
 *   pairwise AG   (p-1)(a + m b)
 *   two-shot AR   2(p-1) a + 2(p-1) m b + (p-1) m g
 *   one-shot AR   single-port: (p-1)(a + nb) + ng is the least it can take
 *                 (every byte in through one port, then the last add); the
 *                 engine's first-come port order may take longer, so this
 *                 is a lower bound. Multi-port star: a + (p-1) nb + ng,
 *                 exact when adding is faster than receiving (ng <= nb).
 * Requires: any p >= 1, any n (one-shot: p - 1 channels, so p <= 65). */
#include "algo.h"

/* Step k = pc/2 + 1: send block `out` to r+k, then receive block `in` from r-k. */
static int pairwise_op(const sched_t *s, int r, uint32_t pc, int reduce, sched_op_t *op) {
    int p = s->nranks, k = (int)(pc / 2) + 1, to = (r + k) % p, from = (r - k + p) % p;
    if (reduce) *op = pc % 2 == 0 ? op_send(to, algo_mod(to, p), 1) : op_recv(from, algo_mod(r, p), 1, RECV_REDUCE);
    else *op = pc % 2 == 0 ? op_send(to, algo_mod(r, p), 1) : op_recv(from, algo_mod(from, p), 1, RECV_COPY);
    return 1;
}

static int pairwise_prog(const sched_t *s, int r, int c, uint32_t pc, sched_op_t *op) {
    (void)c;
    uint32_t len = 2u * (uint32_t)(s->nranks - 1);
    if (s->coll == COLL_ALLREDUCE) {                       /* two-shot */
        if (pc < len) return pairwise_op(s, r, pc, 1, op);
        pc -= len;
        return pc < len ? pairwise_op(s, r, pc, 0, op) : 0;
    }
    return pc < len ? pairwise_op(s, r, pc, s->coll == COLL_REDUCE_SCATTER, op) : 0;
}

/* Channel c talks to peer r + c + 1: send first (the payload is r's own
 * buffer, posted before anything arrives), then add the peer's. */
static int oneshot_prog(const sched_t *s, int r, int c, uint32_t pc, sched_op_t *op) {
    int p = s->nranks, k = c + 1;
    if (p < 2) return 0;
    if (pc == 0) { *op = op_send((r + k) % p, 0, 1); return 1; }
    if (pc == 1) { *op = op_recv((r - k + p) % p, 0, 1, RECV_REDUCE); return 1; }
    return 0;
}

static int pairwise_build(sched_t *s, const algo_opts_t *o, baton_err_t *e) {
    (void)o; (void)e;
    sched_layout(s, (uint32_t)s->nranks, 1);
    s->prog = pairwise_prog;
    s->period = 1;                 /* step k: every rank talks to r + k and r - k */
    return 0;
}

static int oneshot_build(sched_t *s, const algo_opts_t *o, baton_err_t *e) {
    (void)o;
    if (s->nranks > 65)
        return err_set(e, BATON_EUNSUP, "oneshot uses one channel per peer; %d ranks is more than 65", s->nranks);
    s->nchannels = s->nranks > 1 ? s->nranks - 1 : 1;
    s->prog = oneshot_prog;
    s->period = 1;
    return 0;
}

static double rs_cost(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o) {
    (void)o;
    return (p - 1) * (m->alpha + cost_block(p, n) * (m->beta + m->gamma));
}

static double ag_cost(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o) {
    (void)o;
    return (p - 1) * (m->alpha + cost_block(p, n) * m->beta);
}

static double twoshot_cost(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o) {
    return rs_cost(m, p, n, o) + ag_cost(m, p, n, o);
}

static double oneshot_cost(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o) {
    (void)o;
    double nb = (double)n * m->beta, ng = (double)n * m->gamma;
    if (p < 2) return 0;
    return m->ports == 1 ? (p - 1) * (m->alpha + nb) + ng : m->alpha + (p - 1) * nb + ng;
}

#define DIRECT_PORTS "single-port or multi-port star (same, one message per step); exact when p divides n"

const algo_t algo_reducescatter_pairwise = {
    .coll = COLL_REDUCE_SCATTER, .name = "pairwise", .build = pairwise_build, .cost = rs_cost,
    .cost_text = "(p-1)(a + ceil(n/p)(b + g))", .requires = "any p >= 1, any n",
    .port_model = DIRECT_PORTS, .idea = "step k: send block r+k to rank r+k, add block r from rank r-k",
    ALGO_LOCKSTEP,
};

const algo_t algo_allgather_pairwise = {
    .coll = COLL_ALLGATHER, .name = "pairwise", .build = pairwise_build, .cost = ag_cost,
    .cost_text = "(p-1)(a + ceil(n/p) b)", .requires = "any p >= 1, any n",
    .port_model = DIRECT_PORTS, .idea = "step k: send my block to rank r+k, take rank r-k's",
    ALGO_LOCKSTEP,
};

const algo_t algo_allreduce_twoshot = {
    .coll = COLL_ALLREDUCE, .name = "twoshot", .build = pairwise_build, .cost = twoshot_cost,
    .cost_text = "2(p-1)a + 2(p-1) ceil(n/p) b + (p-1) ceil(n/p) g", .requires = "any p >= 1, any n",
    .port_model = DIRECT_PORTS, .idea = "pairwise reduce-scatter, then pairwise all-gather",
    ALGO_LOCKSTEP,
};

const algo_t algo_allreduce_oneshot = {
    .coll = COLL_ALLREDUCE, .name = "oneshot", .build = oneshot_build, .cost = oneshot_cost,
    .cost_text = "single-port: >= (p-1)(a + nb) + ng; multi-port star: a + (p-1)nb + ng (ng <= nb)",
    .requires = "1 <= p <= 65, any n",
    .port_model = "single-port: lower bound; multi-port star: exact when ng <= nb",
    .idea = "send the whole buffer to every peer at once, add what arrives",
    .approx = 1,
};
