/* naive.c - linear algorithms through one rank (rank 0, or the root):
 * the candy kids' "everyone tells Anna".
 *
 * Idea: the centre receives from every other rank in turn (adding, when the
 * collective reduces), then sends each rank what it needs. All the work lands
 * on one rank while the others wait; adding ranks makes it worse.
 *
 * Step diagram, p = 4, centre 0 (B = whole buffer, b_j = block j):
 *
 *   all-reduce      0: recv+ B<-1, recv+ B<-2, recv+ B<-3, send B->1, ->2, ->3
 *                   j: send B->0, recv B<-0
 *   reduce          0: recv+ B<-1, <-2, <-3            j: send B->0
 *   broadcast       0: send B->1, ->2, ->3             j: recv B<-0
 *   all-gather      0: recv b_1<-1, <-2, <-3, send B->1, ->2, ->3
 *                   j: send b_j->0, recv B<-0
 *   reduce-scatter  0: recv+ B<-1, <-2, <-3, send b_1->1, b_2->2, b_3->3
 *                   j: send B->0, recv b_j<-0
 *
 * Costs. Receives are in order (each waits for the previous one's reduction).
 * With q = p - 1 and m = ceil(n/p):
 *   gather part     reducing: q(alpha + n beta + n gamma); all-gather: q(alpha + m beta)
 *   send part       single-port: q(alpha + x beta); multi-port star:
 *                   alpha + q x beta (sends leave together, bytes queue on
 *                   the centre's link), x = the bytes each rank gets (n, or
 *                   m for reduce-scatter). With S = max_inflight < q sends
 *                   in flight, send j starts at the later of j x beta (the
 *                   link) and send j-S's end: in waves of S when a wave's
 *                   bytes take less than alpha, so with w = floor((q-1)/S)
 *                   the last starts at max((q-1) x beta, w(alpha + x beta)
 *                   + (q-1-wS) x beta) and ends alpha + x beta later
 * exact for all-reduce, reduce, broadcast at any n and for all-gather and
 * reduce-scatter when p divides n. Requires: any p >= 1, any n. */
#include "algo.h"

static uint32_t whole(const sched_t *s) { return s->nchunks; }

/* The centre's (virtual rank 0) program: p-1 receives, then p-1 sends. */
static int centre_op(const sched_t *s, uint32_t pc, sched_op_t *op) {
    int p = s->nranks, reducing = s->coll != COLL_ALLGATHER && s->coll != COLL_BROADCAST;
    uint32_t q = (uint32_t)p - 1, in = s->coll == COLL_BROADCAST ? 0 : q;
    uint32_t out = s->coll == COLL_REDUCE ? 0 : q;
    if (pc < in) {
        int from = (int)pc + 1;
        *op = s->coll == COLL_ALLGATHER ? op_recv(sched_real(s, from), (uint32_t)from, 1, RECV_COPY)
                                        : op_recv(sched_real(s, from), 0, whole(s), reducing ? RECV_REDUCE : RECV_COPY);
        return 1;
    }
    if (pc - in >= out) return 0;
    int to = (int)(pc - in) + 1;
    *op = s->coll == COLL_REDUCE_SCATTER ? op_send(to, (uint32_t)to, 1) : op_send(sched_real(s, to), 0, whole(s));
    return 1;
}

/* Everyone else: send (unless broadcast), then receive (unless reduce). */
static int leaf_op(const sched_t *s, int v, uint32_t pc, sched_op_t *op) {
    int centre = sched_real(s, 0);
    uint32_t sends = s->coll != COLL_BROADCAST, recvs = s->coll != COLL_REDUCE;
    if (pc < sends) {
        *op = s->coll == COLL_ALLGATHER ? op_send(centre, (uint32_t)v, 1) : op_send(centre, 0, whole(s));
        return 1;
    }
    if (pc - sends >= recvs) return 0;
    *op = s->coll == COLL_REDUCE_SCATTER ? op_recv(centre, (uint32_t)v, 1, RECV_COPY)
                                         : op_recv(centre, 0, whole(s), RECV_COPY);
    return 1;
}

static int naive_prog(const sched_t *s, int r, int c, uint32_t pc, sched_op_t *op) {
    (void)c;
    int v = sched_vrank(s, r);
    if (s->nranks < 2) return 0;
    return v == 0 ? centre_op(s, pc, op) : leaf_op(s, v, pc, op);
}

static int naive_build(sched_t *s, const algo_opts_t *o, baton_err_t *e) {
    (void)o; (void)e;
    if (s->coll == COLL_ALLGATHER || s->coll == COLL_REDUCE_SCATTER) sched_layout(s, (uint32_t)s->nranks, 1);
    s->prog = naive_prog;
    return 0;
}

/* q sends of x bytes each from the centre. */
static double fan_out(const cost_model_t *m, int p, double x) {
    int q = p - 1, S = m->inflight;
    double xb = x * m->beta, a = cost_alpha(m, x);
    if (m->ports == 1) return q * (a + xb);
    if (S <= 0 || S >= q) return a + q * xb;
    int w = (q - 1) / S;                              /* full waves before the last send */
    double by_link = (q - 1) * xb, by_slots = w * (a + xb) + (q - 1 - w * S) * xb;
    return (by_link > by_slots ? by_link : by_slots) + a + xb;
}

static double reducing_in(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o) {
    (void)o;
    return (p - 1) * (cost_alpha(m, (double)n) + (double)n * (m->beta + m->gamma));
}

static double allreduce_cost(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o) {
    (void)o;
    return p < 2 ? 0 : reducing_in(m, p, n, o) + fan_out(m, p, (double)n);
}
static double reduce_cost(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o) {
    (void)o;
    return p < 2 ? 0 : reducing_in(m, p, n, o);
}
static double bcast_cost(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o) {
    (void)o;
    return p < 2 ? 0 : fan_out(m, p, (double)n);
}
static double ag_cost(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o) {
    (void)o;
    return p < 2 ? 0 : (p - 1) * (cost_alpha(m, cost_block(p, n)) + cost_block(p, n) * m->beta) + fan_out(m, p, (double)n);
}
static double rs_cost(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o) {
    (void)o;
    return p < 2 ? 0 : reducing_in(m, p, n, o) + fan_out(m, p, cost_block(p, n));
}

#define NAIVE_EXACT "single-port and multi-port star (any max_inflight), each exact"
#define NAIVE_ROW(c, cname, fn, text, exact, what)                                  \
    const algo_t algo_##cname##_naive = {                                           \
        .coll = c, .name = "naive", .build = naive_build, .cost = fn,               \
        .cost_text = text, .requires = "any p >= 1, any n",                         \
        .port_model = exact, .idea = what};

NAIVE_ROW(COLL_ALLREDUCE, allreduce, allreduce_cost,
          "single-port: 2(p-1)a + 2(p-1)nb + (p-1)ng; multi-port star: (p-1)(a + nb + ng) + a + (p-1)nb",
          NAIVE_EXACT, "everyone sends to rank 0, which reduces and sends the totals back")
NAIVE_ROW(COLL_REDUCE, reduce, reduce_cost, "(p-1)(a + nb + ng)", NAIVE_EXACT,
          "everyone sends to the root, which adds them one by one")
NAIVE_ROW(COLL_BROADCAST, broadcast, bcast_cost, "single-port: (p-1)(a + nb); multi-port star: a + (p-1)nb",
          NAIVE_EXACT, "the root sends the buffer to every rank in turn")
NAIVE_ROW(COLL_ALLGATHER, allgather, ag_cost,
          "(p-1)(a + ceil(n/p)b) + [single-port: (p-1)(a + nb); multi-port star: a + (p-1)nb]",
          NAIVE_EXACT " when p divides n", "everyone sends its block to rank 0, which sends the whole buffer back")
NAIVE_ROW(COLL_REDUCE_SCATTER, reducescatter, rs_cost,
          "(p-1)(a + nb + ng) + [single-port: (p-1)(a + ceil(n/p)b); multi-port star: a + (p-1)ceil(n/p)b]",
          NAIVE_EXACT " when p divides n", "everyone sends everything to rank 0, which reduces and sends each rank its block")
