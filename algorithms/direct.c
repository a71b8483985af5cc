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
    return (p - 1) * (cost_alpha(m, cost_block(p, n)) + cost_block(p, n) * (m->beta + m->gamma));
}

static double ag_cost(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o) {
    (void)o;
    return (p - 1) * (cost_alpha(m, cost_block(p, n)) + cost_block(p, n) * m->beta);
}

static double twoshot_cost(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o) {
    return rs_cost(m, p, n, o) + ag_cost(m, p, n, o);
}

static double oneshot_cost(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o) {
    (void)o;
    double nb = (double)n * m->beta, ng = (double)n * m->gamma;
    if (p < 2) return 0;
    double a = cost_alpha(m, (double)n);
    return m->ports == 1 ? (p - 1) * (a + nb) + ng : a + (p - 1) * nb + ng;
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

/* ---- direct: every peer at once, phase by phase ----------------------
 *
 * Reduce-scatter: channel c talks to the peer k = c + 1 away, so rank r's
 * p - 1 sends (block r+k to rank r+k) leave together and its p - 1 receives
 * (block r from r-k, added) arrive together; the adds share r's one reduce
 * engine. All-gather: the same with block r out and block r-k in. All-reduce:
 * the reduce-scatter, then every channel waits until block r is whole (its
 * channels hand channel 0 a token, channel 0 hands each one back), then the
 * all-gather. On a full mesh this is the fastest way; through one port or
 * one link into a switch the sends queue (NCCL's and MSCCL's "all pairs").
 *
 * Step diagram, all-reduce, p = 3, rank 0 (b_j = block j):
 *
 *   chan 0 (k=1)  send b1->1   recv+ b0<-2   token in from chan 1, out to chan 1   send b0->1   recv b2<-2
 *   chan 1 (k=2)  send b2->2   recv+ b0<-1   token to chan 0, in from chan 0       send b0->2   recv b1<-1
 *
 * Costs (m = ceil(n/p); the first block arrives after a + mb, the last one
 * d later: single-port d = (p-2)(a + mb), multi-port star d = (p-2) mb, a
 * machine's view d = m(step's busiest link - one route), 0 on a full mesh):
 *   RS  a + mb + max((p-1) mg, d + mg)      AG  a + mb + d      AR  RS + AG
 * exact when p divides n. Requires: any p >= 1 up to 512 (p - 1 channels). */
static int direct_chan_op(const sched_t *s, int r, int c, uint32_t pc, int reduce, sched_op_t *op) {
    int p = s->nranks, k = c + 1, to = (r + k) % p, from = (r - k + p) % p;
    if (pc == 0) { *op = op_send(to, reduce ? (uint32_t)to : (uint32_t)r, 1); return 1; }
    if (pc == 1) { *op = reduce ? op_recv(from, (uint32_t)r, 1, RECV_REDUCE) : op_recv(from, (uint32_t)from, 1, RECV_COPY); return 1; }
    return 0;
}

/* All-reduce: after the reduce-scatter, channel 0 takes a token from each
 * other channel (block r is then whole), and a token goes from channel to
 * channel, 0 to 1 to 2 ..., each starting its all-gather as it passes: the
 * ranks' channels then start in the same channel-by-channel order as the
 * reduce-scatter did (engine.c, loop), not rank by rank. */
static uint32_t direct_sync_len(const sched_t *s, int c) {
    int chans = s->nranks - 1;
    return c == 0 ? (uint32_t)(chans - 1) + (chans > 1) : 2u + (c + 1 < chans);
}

static int direct_sync_op(const sched_t *s, int r, int c, uint32_t pc, sched_op_t *op) {
    uint32_t others = (uint32_t)s->nranks - 2, b = (uint32_t)r;
    if (c == 0 && pc < others) { *op = op_chan(op_recv(r, b, 0, RECV_COPY), (int)pc + 1, -1); return 1; }
    if (c > 0 && pc == 0) { *op = op_chan(op_send(r, b, 0), -1, 0); return 1; }
    if (c > 0 && pc == 1) { *op = op_chan(op_recv(r, b, 0, RECV_COPY), c - 1, -1); return 1; }
    *op = op_chan(op_send(r, b, 0), -1, c + 1);             /* pass it on */
    return 1;
}

uint32_t algo_direct_len(const sched_t *s, int c) {
    if (s->nranks < 2) return 0;
    return s->coll == COLL_ALLREDUCE ? 4 + direct_sync_len(s, c) : 2;
}

int algo_direct_prog(const sched_t *s, int r, int c, uint32_t pc, sched_op_t *op) {
    if (s->nranks < 2) return 0;
    if (s->coll != COLL_ALLREDUCE) return direct_chan_op(s, r, c, pc, s->coll == COLL_REDUCE_SCATTER, op);
    if (pc < 2) return direct_chan_op(s, r, c, pc, 1, op);
    uint32_t sync = direct_sync_len(s, c);
    if (pc < 2 + sync) return direct_sync_op(s, r, c, pc - 2, op);
    return direct_chan_op(s, r, c, pc - 2 - sync, 0, op);
}

static int direct_peer(const sched_t *s, int c, int r) { return (r + c + 1) % s->nranks; }

/* One step: p - 1 messages a rank, each a whole block (algo.h, peer_slots). */
static int direct_slots(const sched_t *s, int *nchannels) {
    *nchannels = 1;
    return s->nranks - 1;
}

static int direct_build(sched_t *s, const algo_opts_t *o, baton_err_t *e) {
    (void)o;
    if (s->nranks > 512)
        return err_set(e, BATON_EUNSUP, "direct uses one channel per peer; %d ranks is more than 512", s->nranks);
    sched_layout(s, (uint32_t)s->nranks, 1);
    s->nchannels = s->nranks > 1 ? s->nranks - 1 : 1;
    s->prog = algo_direct_prog;
    return 0;
}

/* A machine's view (stepwise) charges beta as every message of the step on
 * its links at once; a single port sends them one after another, each alone
 * on its route: beta_path. */
static double one_beta(const cost_model_t *m) { return m->stepwise ? m->beta_path : m->beta; }

/* From the first arrival to the last (see the costs above). */
static double direct_spread(const cost_model_t *m, int p, double mb) {
    if (m->ports == 1) return (p - 2) * (cost_alpha(m, mb) + mb * one_beta(m));
    if (m->stepwise) return mb * (m->beta - m->beta_path);
    return (p - 2) * mb * m->beta;
}

static double direct_first(const cost_model_t *m, double mb) {
    return cost_alpha(m, mb) + mb * one_beta(m);
}

static double direct_rs_cost(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o) {
    (void)o;
    if (p < 2) return 0;
    double mb = cost_block(p, n), d = direct_spread(m, p, mb), adds = (p - 1) * mb * m->gamma;
    return direct_first(m, mb) + (adds > d + mb * m->gamma ? adds : d + mb * m->gamma);
}

double algo_direct_spread_time(const cost_model_t *m, int p, double mb) {
    return p < 2 ? 0 : direct_first(m, mb) + direct_spread(m, p, mb);
}

static double direct_ag_cost(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o) {
    (void)o;
    return algo_direct_spread_time(m, p, cost_block(p, n));
}

static double direct_ar_cost(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o) {
    return direct_rs_cost(m, p, n, o) + direct_ag_cost(m, p, n, o);
}

#define DIRECT_ALL_PORTS "single-port, multi-port star and a machine's view (full mesh: every block at once); exact when p divides n"
#define DIRECT_ROW(c, cname, fn, text, what)                                                    \
    const algo_t algo_##cname##_direct = {                                                      \
        .coll = c, .name = "direct", .build = direct_build, .cost = fn, .cost_text = text,      \
        .requires = "1 <= p <= 512, any n", .port_model = DIRECT_ALL_PORTS, .idea = what,       \
        .peer = direct_peer, .peer_slots = direct_slots,                                        \
    }

DIRECT_ROW(COLL_REDUCE_SCATTER, reducescatter, direct_rs_cost, "a + mb + max((p-1)mg, d + mg), m = ceil(n/p)",
           "every peer at once: send block j to rank j, add what all others send");
DIRECT_ROW(COLL_ALLGATHER, allgather, direct_ag_cost, "a + mb + d, m = ceil(n/p)",
           "every peer at once: send my block to all, take theirs");
DIRECT_ROW(COLL_ALLREDUCE, allreduce, direct_ar_cost, "direct reduce-scatter + direct all-gather",
           "direct reduce-scatter, then direct all-gather (all peers at once per phase)");
