/* hierarchical.c - two-level all-reduce over rank groups (nodes): work
 * inside each group over its fast links, and only a fraction across groups.
 *
 * Ranks are grouped g at a time (rank r = group G_r * g + local l_r; the
 * groups come from the topology's group_size or --group). Two classics:
 *
 * hier (2D ring; Horovod's hierarchical all-reduce, NCCL's intra/inter split):
 *   1. ring reduce-scatter inside the group: local l ends with block l
 *      (1/g of the buffer) summed over the group;
 *   2. ring all-reduce of block l across the G = p/g groups, between the
 *      ranks with the same local index;
 *   3. ring all-gather inside the group.
 *   Each rank sends only 2(G-1)/p of the buffer across groups.
 *
 * hier_leader (leader-based): binomial reduce to local 0 inside each group,
 *   ring all-reduce of the whole buffer among the G leaders, binomial
 *   broadcast inside each group. Simple, but the leaders carry everything.
 *
 * Step diagram, hier, p = 4, g = 2 (groups {0,1} {2,3}; blocks A B):
 *
 *   1  0 <-> 1: 0 keeps A(0+1), 1 keeps B(0+1);   2 <-> 3 likewise
 *   2  0 <-> 2 all-reduce A;  1 <-> 3 all-reduce B
 *   3  0 <-> 1 swap A, B;     2 <-> 3 swap A, B
 *
 * Costs (single-port; inside groups a and b, across groups a' and b', each
 * from the links its steps use (algo.h, peer and peer_across), one alpha and
 * beta on the tests' uniform machine; written with a and b below):
 *   hier         (g-1)(a + (n/g)(b + g_)) + 2(G-1)(a + (n/p) b) + (G-1)(n/p) g_
 *                + (g-1)(a + (n/g) b)                  exact when p divides n
 *   hier_leader  ceil(lg g)(2a + 2nb + n g_) + 2(G-1)(a + (n/G) b) + (G-1)(n/G) g_
 *                                                      exact when G divides n
 *   (g_ is the reduction cost per byte.)
 * Requires: the group size divides p. */
#include "algo.h"

typedef struct {
    int g, G, l, grp;      /* group size, groups, my local index, my group */
} hier_t;

static hier_t where(const sched_t *s, int r) {
    int g = (int)s->param[0];
    return (hier_t){g, s->nranks / g, r % g, r / g};
}

static int member(const hier_t *h, int grp, int l) { return grp * h->g + l; }
static int mod(int a, int n) { return (int)algo_mod(a, n); }

/* Ring step pc over n members where I am i; block(b) gives the chunk range of
 * block b; reduce-scatter ends with block i, all-gather starts owning it.
 * Returns 0 past the phase's n-1 (+1) ops; *len gets the op count. */
static int ring_phase(int n, int i, int left, int right, uint32_t pc, int reduce, uint32_t base,
                      uint32_t per, uint32_t *len, sched_op_t *op) {
    *len = n > 1 ? (uint32_t)n : 0;
    if (pc >= *len) return 0;
    int shift = reduce ? -1 : 0;
    uint32_t b = (uint32_t)mod(i + shift - (int)pc, n);
    recv_kind_t k = reduce ? RECV_REDUCE : RECV_COPY;
    if (pc == 0) *op = op_send(right, base + mod(i + shift, n) * per, per);
    else if (pc < (uint32_t)n - 1) *op = op_fwd(left, right, base + b * per, per, k);
    else *op = op_recv(left, base + b * per, per, k);
    return 1;
}

/* Ring all-reduce over n members on chunks base .. base + n - 1. */
static int ring_allreduce(int n, int i, int left, int right, uint32_t pc, uint32_t base,
                          uint32_t *len, sched_op_t *op) {
    uint32_t rs;
    *len = n > 1 ? 2u * (uint32_t)n - 1 : 0;
    if (pc >= *len) return 0;
    if (pc < (uint32_t)n - 1) return ring_phase(n, i, left, right, pc, 1, base, 1, &rs, op);
    if (pc == (uint32_t)n - 1) {                     /* last add, then forward */
        *op = op_fwd(left, right, base + (uint32_t)i, 1, RECV_REDUCE);
        return 1;
    }
    /* all-gather with my finished block i: as ring_phase, shifted one on */
    uint32_t j = pc - (uint32_t)n + 1;
    uint32_t b = (uint32_t)mod(i - (int)j, n);
    *op = j < (uint32_t)n - 1 ? op_fwd(left, right, base + b, 1, RECV_COPY) : op_recv(left, base + b, 1, RECV_COPY);
    return 1;
}

static int hier_prog(const sched_t *s, int r, int c, uint32_t pc, sched_op_t *op) {
    (void)c;
    hier_t h = where(s, r);
    uint32_t len, G = (uint32_t)h.G;
    int il = member(&h, h.grp, mod(h.l - 1, h.g)), ir = member(&h, h.grp, mod(h.l + 1, h.g));
    int xl = member(&h, mod(h.grp - 1, h.G), h.l), xr = member(&h, mod(h.grp + 1, h.G), h.l);
    if (ring_phase(h.g, h.l, il, ir, pc, 1, 0, G, &len, op)) return 1;
    pc -= len;
    if (ring_allreduce(h.G, h.grp, xl, xr, pc, (uint32_t)h.l * G, &len, op)) return 1;
    pc -= len;
    return ring_phase(h.g, h.l, il, ir, pc, 0, 0, G, &len, op);
}

/* Binomial reduce (up) or broadcast (down) of the whole buffer inside my group. */
static int group_tree(const hier_t *h, uint32_t pc, int up, uint32_t all, uint32_t *len, sched_op_t *op) {
    int v = h->l, nc = algo_binom_children(v, h->g), has_parent = v != 0;
    int parent = member(h, h->grp, v - algo_lowbit(v));
    *len = (uint32_t)(nc + has_parent);
    if (pc >= *len) return 0;
    if (up) {
        if (pc < (uint32_t)nc) *op = op_recv(member(h, h->grp, v + (1 << pc)), 0, all, RECV_REDUCE);
        else *op = op_send(parent, 0, all);
    } else {
        if (has_parent && pc == 0) *op = op_recv(parent, 0, all, RECV_COPY);
        else *op = op_send(member(h, h->grp, v + (1 << (nc - 1 - (int)(pc - has_parent)))), 0, all);
    }
    return 1;
}

static int leader_prog(const sched_t *s, int r, int c, uint32_t pc, sched_op_t *op) {
    (void)c;
    hier_t h = where(s, r);
    uint32_t len;
    if (group_tree(&h, pc, 1, s->nchunks, &len, op)) return 1;
    pc -= len;
    if (h.l == 0) {
        int xl = member(&h, mod(h.grp - 1, h.G), 0), xr = member(&h, mod(h.grp + 1, h.G), 0);
        if (ring_allreduce(h.G, h.grp, xl, xr, pc, 0, &len, op)) return 1;
        pc -= len;
    }
    return group_tree(&h, pc, 0, s->nchunks, &len, op);
}

static int group_of(sched_t *s, const algo_opts_t *o, baton_err_t *e) {
    int g = o->group > 0 ? o->group : s->nranks;
    if (g > s->nranks || s->nranks % g)
        return err_set(e, BATON_EUNSUP, "%s needs groups of equal size: %d ranks in groups of %d",
                       s->algo, s->nranks, g);
    s->param[0] = g;
    return 0;
}

static int hier_build(sched_t *s, const algo_opts_t *o, baton_err_t *e) {
    int rc = group_of(s, o, e);
    if (rc < 0) return rc;
    int g = (int)s->param[0];
    sched_layout(s, (uint32_t)g, (uint32_t)(s->nranks / g));   /* block per local index, chunk per group */
    s->prog = hier_prog;
    s->period = g;                 /* group i + 1 does what group i does */
    return 0;
}

static int leader_build(sched_t *s, const algo_opts_t *o, baton_err_t *e) {
    int rc = group_of(s, o, e);
    if (rc < 0) return rc;
    sched_layout(s, (uint32_t)(s->nranks / (int)s->param[0]), 1);   /* a chunk per group */
    s->prog = leader_prog;
    return 0;
}

/* Who r sends to in a step inside its group (hier's rings; hier_leader's
 * binomial trees: their first step, odd to even, stands for every level's),
 * and across groups (the rings of equal local index; hier_leader's
 * leaders): the closed forms' view of each (algo.h). */
static int hier_peer(const sched_t *s, int c, int r) {
    (void)c;
    hier_t h = where(s, r);
    return h.g > 1 ? member(&h, h.grp, mod(h.l + 1, h.g)) : -1;
}

static int hier_peer_across(const sched_t *s, int c, int r) {
    (void)c;
    hier_t h = where(s, r);
    return h.G > 1 ? member(&h, mod(h.grp + 1, h.G), h.l) : -1;
}

static int leader_peer(const sched_t *s, int c, int r) {
    (void)c;
    hier_t h = where(s, r);
    return h.l % 2 ? member(&h, h.grp, h.l - 1) : -1;
}

static int leader_peer_across(const sched_t *s, int c, int r) {
    hier_t h = where(s, r);
    return h.l == 0 ? hier_peer_across(s, c, r) : -1;
}

static int group_size(int p, const algo_opts_t *o) { return o && o->group > 0 && p % o->group == 0 ? o->group : p; }

static double hier_cost(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o) {
    int g = group_size(p, o), G = p / g;
    double blk = (double)n / g, sub = (double)n / p;
    cost_model_t x = cost_across(m);
    return (g - 1) * (m->alpha + blk * (m->beta + m->gamma)) + 2.0 * (G - 1) * (cost_alpha(&x, sub) + sub * x.beta) +
           (G - 1) * sub * m->gamma + (g - 1) * (m->alpha + blk * m->beta);
}

static double leader_cost(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o) {
    int g = group_size(p, o), G = p / g;
    double b = (double)n, part = b / G;
    cost_model_t x = cost_across(m);
    return cost_ceil_log2(g) * (2 * m->alpha + 2 * b * m->beta + b * m->gamma) +
           2.0 * (G - 1) * (cost_alpha(&x, part) + part * x.beta) + (G - 1) * part * m->gamma;
}

const algo_t algo_allreduce_hier = {
    .coll = COLL_ALLREDUCE, .name = "hier", .build = hier_build, .cost = hier_cost,
    .cost_text = "(g-1)(a + (n/g)(b + g_)) + 2(G-1)(a + (n/p)b) + (G-1)(n/p)g_ + (g-1)(a + (n/g)b); g = group size, G = p/g",
    .requires = "group size dividing p (topology group_size or --group)",
    .port_model = "single-port, one alpha/beta; exact when p divides n",
    .idea = "ring reduce-scatter in each group, ring all-reduce of each shard across groups, ring all-gather",
    .peer = hier_peer, .peer_across = hier_peer_across,
};

const algo_t algo_allreduce_hier_leader = {
    .coll = COLL_ALLREDUCE, .name = "hier_leader", .build = leader_build, .cost = leader_cost,
    .cost_text = "ceil(lg g)(2a + 2nb + ng_) + 2(G-1)(a + (n/G)b) + (G-1)(n/G)g_",
    .requires = "group size dividing p (topology group_size or --group)",
    .port_model = "single-port, one alpha/beta; exact when G divides n",
    .idea = "binomial reduce to each group's leader, ring all-reduce among leaders, binomial broadcast",
    .peer = leader_peer, .peer_across = leader_peer_across,
};
