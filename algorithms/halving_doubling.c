/* halving_doubling.c - recursive doubling and halving (Thakur, Rabenseifner
 * and Gropp 2005), as in MPICH.
 *
 * Idea: in lg p rounds, rank v works with partner v ^ d for d = 1, 2, 4 ...
 * (doubling) or p/2, p/4, ... 1 (halving). Recursive doubling all-reduce
 * swaps whole buffers; recursive halving reduce-scatter swaps half of what is
 * left each round; recursive-doubling all-gather swaps what it has so far;
 * Rabenseifner's all-reduce is halving reduce-scatter then doubling all-gather.
 *
 * Step diagram, p = 4, Rabenseifner in MPICH's order (nearest partner
 * first, as MPIR_Allreduce_intra_reduce_scatter_allgather; blocks a b c d;
 * v ends the halving with block bitreverse(v): 0 a, 1 c, 2 b, 3 d):
 *
 *   halve d=1   0<->1: 0 sends cd, keeps ab+   2<->3: 2 sends cd, keeps ab+
 *   halve d=2   0<->2: 0 sends b, keeps a+     1<->3: 1 sends d, keeps c+
 *   double d=2  0<->2: swap a, b               1<->3: swap c, d
 *   double d=1  0<->1: swap ab, cd             2<->3: swap ab, cd
 *
 * rabenseifner_far is the farthest-first order (partner p/2 with n/2; v keeps
 * block v): the same on a flat switch, not where near ranks share a cheaper
 * link (MPICH's order moves the most bytes between the nearest ranks).
 *
 * Non-powers of two (all-reduce only, MPICH's pre/post steps): with p' the
 * largest power of two <= p and rem = p - p', even ranks below 2 rem give
 * their data to the odd rank above them and sit out; the p' remaining ranks
 * (new ranks 0..p'-1) run the power-of-two algorithm; the odd ranks then
 * hand the result back. Each exchange is a send then a receive.
 *
 * Rabenseifner's reduce is halving reduce-scatter then a binomial gather of
 * the blocks to the root. For it the fold keeps the root in the core: odd
 * virtual ranks below 2 rem give their data to the even rank below and sit
 * out, and the gather tree of new ranks 0..p'-1 has virtual rank 0 at its top.
 *
 * Costs (single-port or star; L = lg p'; exact when p' divides n):
 *   rd all-reduce        L(a + nb + ng) + [pre/post: 2a + 2nb + ng]
 *   rabenseifner         2La + 2((p'-1)/p')nb + ((p'-1)/p')ng + [2a + 2nb + ng]
 *   halving RS (p = 2^L) La + ((p-1)/p)n(b + g)
 *   rd all-gather (2^L)  La + ((p-1)/p)nb
 *   rabenseifner reduce  2La + 2((p'-1)/p')nb + ((p'-1)/p')ng [+ a + nb + ng if p is not a power of two]
 * Requires: any p for the all-reduces; a power of two for reduce-scatter and
 * all-gather (their blocks belong to ranks; use ring, pairwise or bruck). */
#include "algo.h"

typedef struct { int pof2, rem, nr; } fold_t;   /* nr: new rank, -1 if sitting out */

static fold_t fold(int r, int p) {
    fold_t f = {1, 0, 0};
    while (f.pof2 * 2 <= p) f.pof2 *= 2;
    f.rem = p - f.pof2;
    f.nr = r < 2 * f.rem ? (r % 2 ? r / 2 : -1) : r - f.rem;
    return f;
}

static int real_of(const fold_t *f, int nr) { return nr < f->rem ? 2 * nr + 1 : nr + f->rem; }

/* Ops of the power-of-two core; *len its op count. Blocks are new-rank blocks. */
typedef int (*core_fn)(const sched_t *s, const fold_t *f, uint32_t pc, sched_op_t *op, uint32_t *len);

static int lg(int x) { int k = 0; while ((1 << k) < x) k++; return k; }

/* Exchange number i (0-based): send ours, then receive theirs. */
static int exchange(uint32_t pc, int partner, uint32_t send_lo, uint32_t recv_lo, uint32_t n,
                    recv_kind_t k, sched_op_t *op) {
    *op = pc % 2 == 0 ? op_send(partner, send_lo, n) : op_recv(partner, recv_lo, n, k);
    return 1;
}

static int rd_core(const sched_t *s, const fold_t *f, uint32_t pc, sched_op_t *op, uint32_t *len) {
    *len = 2u * (uint32_t)lg(f->pof2);
    if (pc >= *len) return 0;
    int partner = real_of(f, f->nr ^ (1 << (pc / 2)));
    return exchange(pc, partner, 0, 0, s->nchunks, RECV_REDUCE, op);
}

/* Halving at d = pof2/2, pof2/4, ... 1: keep my half, send the other. */
static int halving_op(const fold_t *f, uint32_t i, uint32_t pc, sched_op_t *op) {
    uint32_t d = (uint32_t)f->pof2 >> (i + 1), nr = (uint32_t)f->nr;
    uint32_t keep = nr & ~(d - 1), give = (nr ^ d) & ~(d - 1);
    return exchange(pc, real_of(f, (int)(nr ^ d)), give, keep, d, RECV_REDUCE, op);
}

/* Doubling at d = 1, 2, ... pof2/2: send what I have, receive the partner's. */
static int doubling_op(const fold_t *f, uint32_t i, uint32_t pc, sched_op_t *op) {
    uint32_t d = 1u << i, nr = (uint32_t)f->nr;
    return exchange(pc, real_of(f, (int)(nr ^ d)), nr & ~(d - 1), (nr ^ d) & ~(d - 1), d, RECV_COPY, op);
}

static int far_core(const sched_t *s, const fold_t *f, uint32_t pc, sched_op_t *op, uint32_t *len) {
    uint32_t L = (uint32_t)lg(f->pof2);
    (void)s;
    *len = 4 * L;
    if (pc < 2 * L) return halving_op(f, pc / 2, pc, op);
    if (pc < 4 * L) return doubling_op(f, (pc - 2 * L) / 2, pc, op);
    return 0;
}

/* x's low L bits reversed. */
static uint32_t bitrev(uint32_t x, uint32_t L) {
    uint32_t y = 0;
    for (uint32_t i = 0; i < L; i++, x >>= 1) y = y << 1 | (x & 1);
    return y;
}

/* The blocks new rank nr holds after halving with bits 0..k of its rank
 * (MPICH's order): those whose top k+1 index bits are those bits reversed. */
static uint32_t near_lo(uint32_t nr, uint32_t k, uint32_t L) { return bitrev(nr & ((2u << k) - 1), L); }

/* MPICH's order: halve with partners 1, 2, 4 ... away (sending the half the
 * partner keeps), then double back with p'/2 ... 1. */
static int near_core(const sched_t *s, const fold_t *f, uint32_t pc, sched_op_t *op, uint32_t *len) {
    uint32_t L = (uint32_t)lg(f->pof2), nr = (uint32_t)f->nr;
    (void)s;
    *len = 4 * L;
    if (pc >= 4 * L) return 0;
    uint32_t k = pc < 2 * L ? pc / 2 : L - 1 - (pc - 2 * L) / 2, peer = nr ^ (1u << k);
    uint32_t mine = near_lo(nr, k, L), theirs = near_lo(peer, k, L), n = (uint32_t)f->pof2 >> (k + 1);
    if (pc < 2 * L) return exchange(pc, real_of(f, (int)peer), theirs, mine, n, RECV_REDUCE, op);
    return exchange(pc, real_of(f, (int)peer), mine, theirs, n, RECV_COPY, op);
}

static int halving_core(const sched_t *s, const fold_t *f, uint32_t pc, sched_op_t *op, uint32_t *len) {
    (void)s;
    *len = 2u * (uint32_t)lg(f->pof2);
    return pc < *len ? halving_op(f, pc / 2, pc, op) : 0;
}

static int doubling_core(const sched_t *s, const fold_t *f, uint32_t pc, sched_op_t *op, uint32_t *len) {
    (void)s;
    *len = 2u * (uint32_t)lg(f->pof2);
    return pc < *len ? doubling_op(f, pc / 2, pc, op) : 0;
}

/* Pre-step, core, post-step for rank r. */
static int folded_prog(const sched_t *s, int r, uint32_t pc, core_fn core, sched_op_t *op) {
    fold_t f = fold(r, s->nranks);
    uint32_t all = s->nchunks, len;
    if (f.nr < 0) {                                   /* even rank below 2 rem */
        if (pc == 0) { *op = op_send(r + 1, 0, all); return 1; }
        if (pc == 1) { *op = op_recv(r + 1, 0, all, RECV_COPY); return 1; }
        return 0;
    }
    int folded = r < 2 * f.rem;
    if (folded && pc == 0) { *op = op_recv(r - 1, 0, all, RECV_REDUCE); return 1; }
    uint32_t k = pc - (uint32_t)folded;
    if (core(s, &f, k, op, &len)) return 1;
    if (folded && k == len) { *op = op_send(r - 1, 0, all); return 1; }
    return 0;
}

/* The steps of a folded all-reduce, as the closed form's link view takes
 * them (algo.h, step_send): the pre-step, the core's exchanges, the
 * post-step. */
static int folded_nsteps(const sched_t *s, core_fn core) {
    fold_t f = fold(0, s->nranks);
    sched_op_t op;
    uint32_t len = 0;
    core(s, &f, UINT32_MAX, &op, &len);              /* sets len only */
    return (int)len / 2 + (f.rem ? 2 : 0);
}

static int folded_send(const sched_t *s, core_fn core, int k, int r, sched_op_t *op) {
    fold_t f = fold(r, s->nranks);
    uint32_t len = 0, all = s->nchunks;
    int last = folded_nsteps(s, core) - 1, folded = r < 2 * f.rem;
    if (f.rem && k == 0) { *op = op_send(r + 1, 0, all); return f.nr < 0; }
    if (f.rem && k == last) { *op = op_send(r - 1, 0, all); return folded && f.nr >= 0; }
    if (f.nr < 0) return 0;
    return core(s, &f, 2u * (uint32_t)(k - (f.rem ? 1 : 0)), op, &len) && op->send;
}

/* Reduce: new rank of virtual rank v (odd v below 2 rem fold onto v - 1). */
static int reduce_nr(int v, const fold_t *f) {
    return v < 2 * f->rem ? (v % 2 ? -1 : v / 2) : v - f->rem;
}

static int reduce_real(const sched_t *s, const fold_t *f, int nr) {
    return sched_real(s, nr < f->rem ? 2 * nr : nr + f->rem);
}

/* Binomial gather of new rank nr's blocks to new rank 0: take each child's
 * run of blocks (smallest first), then send the run [nr, nr + lowbit) up. */
static int gather_op(const sched_t *s, const fold_t *f, int nr, uint32_t pc, sched_op_t *op) {
    int p2 = f->pof2, span = nr ? algo_lowbit(nr) : p2;
    uint32_t k = 0;
    for (int d = 1; d < span; d <<= 1, k++)
        if (pc == k) { *op = op_recv(reduce_real(s, f, nr + d), (uint32_t)(nr + d), (uint32_t)d, RECV_COPY); return 1; }
    if (nr && pc == k) { *op = op_send(reduce_real(s, f, nr - algo_lowbit(nr)), (uint32_t)nr, (uint32_t)span); return 1; }
    return 0;
}

static int rab_reduce_prog(const sched_t *s, int r, int c, uint32_t pc, sched_op_t *op) {
    (void)c;
    int v = sched_vrank(s, r);
    fold_t f = fold(0, s->nranks);
    int nr = reduce_nr(v, &f), all = (int)s->nchunks;
    if (nr < 0) { if (pc == 0) { *op = op_send(sched_real(s, v - 1), 0, (uint32_t)all); return 1; } return 0; }
    int folded = v < 2 * f.rem;
    if (folded && pc == 0) { *op = op_recv(sched_real(s, v + 1), 0, (uint32_t)all, RECV_REDUCE); return 1; }
    uint32_t k = pc - (uint32_t)folded, L = 2u * (uint32_t)lg(f.pof2);
    fold_t g = f;
    g.nr = nr;
    if (k < L) {                                         /* halving among new ranks */
        uint32_t d = (uint32_t)f.pof2 >> (k / 2 + 1), n2 = (uint32_t)nr;
        uint32_t keep = n2 & ~(d - 1), give = (n2 ^ d) & ~(d - 1);
        return exchange(k, reduce_real(s, &f, (int)(n2 ^ d)), give, keep, d, RECV_REDUCE, op);
    }
    return gather_op(s, &g, nr, k - L, op);
}

static int rd_prog(const sched_t *s, int r, int c, uint32_t pc, sched_op_t *op) {
    (void)c;
    return folded_prog(s, r, pc, rd_core, op);
}
static int rab_prog(const sched_t *s, int r, int c, uint32_t pc, sched_op_t *op) {
    (void)c;
    return folded_prog(s, r, pc, near_core, op);
}
static int rab_far_prog(const sched_t *s, int r, int c, uint32_t pc, sched_op_t *op) {
    (void)c;
    return folded_prog(s, r, pc, far_core, op);
}
static int halving_prog(const sched_t *s, int r, int c, uint32_t pc, sched_op_t *op) {
    (void)c;
    return folded_prog(s, r, pc, halving_core, op);
}
static int doubling_prog(const sched_t *s, int r, int c, uint32_t pc, sched_op_t *op) {
    (void)c;
    return folded_prog(s, r, pc, doubling_core, op);
}

static int rd_nsteps(const sched_t *s) { return folded_nsteps(s, rd_core); }
static int rd_send(const sched_t *s, int k, int r, sched_op_t *op) { return folded_send(s, rd_core, k, r, op); }
static int rab_nsteps(const sched_t *s) { return folded_nsteps(s, near_core); }
static int rab_send(const sched_t *s, int k, int r, sched_op_t *op) { return folded_send(s, near_core, k, r, op); }
static int far_nsteps(const sched_t *s) { return folded_nsteps(s, far_core); }
static int far_send(const sched_t *s, int k, int r, sched_op_t *op) { return folded_send(s, far_core, k, r, op); }

static int rd_build(sched_t *s, const algo_opts_t *o, baton_err_t *e) {
    (void)o; (void)e;
    s->prog = rd_prog;
    return 0;
}

/* Rabenseifner works on p' blocks, one per new rank. */
static int rab_build(sched_t *s, const algo_opts_t *o, baton_err_t *e) {
    (void)o; (void)e;
    sched_layout(s, (uint32_t)fold(0, s->nranks).pof2, 1);
    s->prog = rab_prog;
    return 0;
}

static int rab_far_build(sched_t *s, const algo_opts_t *o, baton_err_t *e) {
    rab_build(s, o, e);
    s->prog = rab_far_prog;
    return 0;
}

static int rab_reduce_build(sched_t *s, const algo_opts_t *o, baton_err_t *e) {
    (void)o; (void)e;
    sched_layout(s, (uint32_t)fold(0, s->nranks).pof2, 1);
    s->prog = rab_reduce_prog;
    return 0;
}

/* Reduce-scatter and all-gather: blocks belong to ranks, so no folding. */
static int blocks_build(sched_t *s, const algo_opts_t *o, baton_err_t *e) {
    (void)o;
    if (!algo_pof2(s->nranks))
        return err_set(e, BATON_EUNSUP, "%s %s needs a power-of-two rank count, not %d (try ring, pairwise%s)",
                       coll_name(s->coll), s->algo, s->nranks, s->coll == COLL_ALLGATHER ? " or bruck" : "");
    sched_layout(s, (uint32_t)s->nranks, 1);
    s->prog = s->coll == COLL_REDUCE_SCATTER ? halving_prog : doubling_prog;
    return 0;
}

/* Pre/post steps of a non-power-of-two all-reduce. */
static double folds(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o) {
    (void)o;
    fold_t f = fold(0, p);
    double b = (double)n;
    return f.rem ? 2 * cost_alpha(m, b) + 2 * b * m->beta + b * m->gamma : 0;
}

static double rd_cost(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o) {
    (void)o;
    fold_t f = fold(0, p);
    return lg(f.pof2) * (cost_alpha(m, (double)n) + (double)n * (m->beta + m->gamma)) + folds(m, p, n, o);
}

/* Bytes moved by halving (or doubling) over q = pof2 blocks: blocks are
 * ceil(n/q) when exact, so (q-1) blocks in all. */
static double moved(int q, uint64_t n) { return (double)(q - 1) * cost_block(q, n); }

static double rab_cost(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o) {
    (void)o;
    fold_t f = fold(0, p);
    double x = moved(f.pof2, n), r = 2 * cost_host_doubling(m, cost_block(f.pof2, n), lg(f.pof2));
    return 2 * lg(f.pof2) * m->alpha + r + 2 * x * m->beta + x * m->gamma + folds(m, p, n, o);
}

static double rab_reduce_cost(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o) {
    (void)o;
    fold_t f = fold(0, p);
    double x = moved(f.pof2, n), b = (double)n;
    double pre = f.rem ? cost_alpha(m, b) + b * (m->beta + m->gamma) : 0;
    double r = 2 * cost_host_doubling(m, cost_block(f.pof2, n), lg(f.pof2));
    return 2 * lg(f.pof2) * m->alpha + r + 2 * x * m->beta + x * m->gamma + pre;
}

static double halving_cost(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o) {
    (void)o;
    double x = moved(p, n);
    return lg(p) * m->alpha + cost_host_doubling(m, cost_block(p, n), lg(p)) + x * (m->beta + m->gamma);
}

static double doubling_cost(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o) {
    (void)o;
    return lg(p) * m->alpha + cost_host_doubling(m, cost_block(p, n), lg(p)) + moved(p, n) * m->beta;
}

#define RAB_TEXT "2 lg p' a + 2((p'-1)/p')nb + ((p'-1)/p')ng [+ 2a + 2nb + ng if p is not a power of two]"
#define HD_PORTS "single-port or multi-port star (same); exact when p' divides n"

const algo_t algo_allreduce_rd = {
    .coll = COLL_ALLREDUCE, .name = "rd", .build = rd_build, .cost = rd_cost,
    .cost_text = "lg p'(a + nb + ng) [+ 2a + 2nb + ng if p is not a power of two; p' = 2^floor(lg p)]",
    .requires = "any p >= 1, any n", .port_model = HD_PORTS,
    .idea = "recursive doubling: swap whole buffers with partners 1, 2, 4 ... away, adding",
    .nsteps = rd_nsteps, .step_send = rd_send,
};

const algo_t algo_allreduce_rabenseifner = {
    .coll = COLL_ALLREDUCE, .name = "rabenseifner", .build = rab_build, .cost = rab_cost,
    .cost_text = RAB_TEXT, .requires = "any p >= 1, any n", .port_model = HD_PORTS,
    .idea = "reduce-scatter by recursive halving, then all-gather by recursive doubling "
            "(MPICH's order: nearest partner first)",
    .nsteps = rab_nsteps, .step_send = rab_send,
};

const algo_t algo_allreduce_rabenseifner_far = {
    .coll = COLL_ALLREDUCE, .name = "rabenseifner_far", .build = rab_far_build, .cost = rab_cost,
    .cost_text = RAB_TEXT, .requires = "any p >= 1, any n", .port_model = HD_PORTS,
    .idea = "rabenseifner with the farthest partner first (p'/2 away, half the buffer)",
    .nsteps = far_nsteps, .step_send = far_send,
};

const algo_t algo_reducescatter_halving = {
    .coll = COLL_REDUCE_SCATTER, .name = "halving", .build = blocks_build, .cost = halving_cost,
    .cost_text = "lg p a + ((p-1)/p)n(b + g)",
    .requires = "p a power of two, any n", .port_model = HD_PORTS,
    .idea = "recursive halving: swap half of what is left with partners p/2, p/4 ... away",
    ALGO_LOCKSTEP,
};

const algo_t algo_allgather_rd = {
    .coll = COLL_ALLGATHER, .name = "rd", .build = blocks_build, .cost = doubling_cost,
    .cost_text = "lg p a + ((p-1)/p)nb",
    .requires = "p a power of two, any n", .port_model = HD_PORTS,
    .idea = "recursive doubling: swap everything gathered so far with partners 1, 2, 4 ... away",
    ALGO_LOCKSTEP,
};

const algo_t algo_reduce_rabenseifner = {
    .coll = COLL_REDUCE, .name = "rabenseifner", .build = rab_reduce_build, .cost = rab_reduce_cost,
    .cost_text = "2 lg p' a + 2((p'-1)/p')nb + ((p'-1)/p')ng [+ a + nb + ng if p is not a power of two]",
    .requires = "any p >= 1, any n, any root", .port_model = HD_PORTS,
    .idea = "reduce-scatter by recursive halving, then a binomial gather of the blocks to the root",
};
