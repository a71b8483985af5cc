/* symmetric.c - collectives on registered windows inside one NVLink domain:
 * NCCL's symmetric-memory kernels (2.27+) and its copy-engine collectives
 * (2.28+).
 *
 * With buffers registered as symmetric windows (ncclCommWindowRegister) every
 * GPU of the domain (NCCL's LSA team: the clique) can load from and store to
 * every other's buffer at the same offset, so no FIFO, proxy or channel ring
 * sits between them:
 *  - symmetric kernels (src/device/symmetric/, picked in src/sym_kernels.cc):
 *    reduce-scatter ReduceScatter_LD (each rank loads block r from every peer
 *    and adds), all-gather AllGather_ST (each rank stores its block into every
 *    peer), all-reduce AllReduce_RSxLD_AGxST (the two in turn), each between
 *    the LSA barriers its kernel opens and closes with;
 *  - copy engines (src/ce_coll.cc, ncclCeAllGather / ncclCeAlltoAll): the same
 *    stores made by cudaMemcpyBatchAsync, no SM at all, between a "ready"
 *    flag to each peer (its buffer may be written) and a "complete" flag.
 *
 * The data moves as direct.c's rows move it (every peer at once, channel c to
 * the peer k = c + 1 on); what these rows add is the barrier on each side: a
 * zero-byte message to each peer, channel by channel.
 *
 * Step diagram, all-gather, p = 3, rank 0 (b_j = block j; chan c: peer k = c+1):
 *
 *   chan 0   ready->2  ready<-1   b0->1   b2<-2   done->1   done<-2
 *   chan 1   ready->1  ready<-2   b0->2   b1<-1   done->2   done<-1
 *
 * Costs (m = ceil(n/p); direct.c's phases D: AG a + mb + d, RS its own, AR
 * both; a barrier B: single-port (p-1) a, a star a):
 *   2B + D, exact when p divides n; single-port reduce-scatter (and so its
 *   all-reduce's first half) an upper bound: the flags stagger the channels'
 *   starts, so the adds overlap more than direct's formula lets them.
 * Requires: 1 <= p <= 512 (p - 1 channels), every rank in one NVLink domain
 * (o->group 0 or >= p; NCCL: ncclTeamLsa(comm).nRanks == comm->nRanks,
 * isAllDirectNvlink); all-to-all: p divides n. */
#include "algo.h"

#include <string.h>

#include "../models/proto.h"

/* Step diagram's barrier ops (a zero-byte flag): "ready" goes against the
 * data (to r - k, whose stores land here), "done" with it (to r + k). */
static int barrier_op(const sched_t *s, int r, int k, uint32_t pc, int done, sched_op_t *op) {
    int p = s->nranks, to = (int)algo_mod(done ? r + k : r - k, p), from = (int)algo_mod(done ? r - k : r + k, p);
    *op = pc == 0 ? op_send(to, (uint32_t)r, 0) : op_recv(from, (uint32_t)from, 0, RECV_COPY);
    return 1;
}

/* All-to-all on the copy engines: channel c stores block r+k into rank
 * r+k's receive block r and takes rank r-k's (alltoall.c's layout: blocks
 * 0..p-1 send, p..2p-1 receive); the last channel copies the own block. */
static uint32_t a2a_len(const sched_t *s, int c) { (void)s; (void)c; return 2; }
static int a2a_op(const sched_t *s, int r, int c, uint32_t pc, sched_op_t *op) {
    uint32_t p = (uint32_t)s->nranks;
    int k = c + 1, to = (int)algo_mod(r + k, (int)p), from = (int)algo_mod(r - k, (int)p);
    if (pc >= 2) return 0;
    *op = pc == 0 ? op_send_into(to, (uint32_t)to, 1, p + (uint32_t)r) : op_recv(from, p + (uint32_t)from, 1, RECV_COPY);
    return 1;
}

static int sym_prog(const sched_t *s, int r, int c, uint32_t pc, sched_op_t *op) {
    int p = s->nranks, k = c + 1, a2a = s->coll == COLL_ALLTOALL;
    if (a2a && c == p - 1) {                               /* the own block: a local copy */
        if (pc >= 2) return 0;
        *op = pc == 0 ? op_send_into(r, (uint32_t)r, 1, (uint32_t)(p + r)) : op_recv(r, (uint32_t)(p + r), 1, RECV_COPY);
        return 1;
    }
    if (p < 2) return 0;
    uint32_t body = a2a ? a2a_len(s, c) : algo_direct_len(s, c);
    if (pc < 2) return barrier_op(s, r, k, pc, 0, op);
    if (pc < 2 + body) return a2a ? a2a_op(s, r, c, pc - 2, op) : algo_direct_prog(s, r, c, pc - 2, op);
    if (pc < 4 + body) return barrier_op(s, r, k, pc - 2 - body, 1, op);
    return 0;
}

static int sym_build(sched_t *s, const algo_opts_t *o, baton_err_t *e) {
    int p = s->nranks, a2a = s->coll == COLL_ALLTOALL;
    const char *who = strcmp(s->algo, "ce") == 0 ? "the copy engines write" : "symmetric kernels load and store";
    if (o->group > 0 && o->group < p)
        return err_set(e, BATON_EUNSUP, "%s: %s over NVLink inside one NVLink domain (NCCL's LSA team, "
                       "src/symmetric.cc / src/ce_coll.cc); these %d ranks are %d domains of %d", s->algo, who, p,
                       p / o->group, o->group);
    if (p > 512) return err_set(e, BATON_EUNSUP, "%s uses one channel per peer; %d ranks is more than 512", s->algo, p);
    int rc = a2a ? algo_a2a_whole(s, e) : 0;
    if (rc < 0) return rc;
    if (a2a && s->bytes > UINT64_MAX / 2) return err_set(e, BATON_EUNSUP, "alltoall: size too large");
    if (a2a) s->bytes *= 2;                                /* send buffer + receive buffer */
    sched_layout(s, (uint32_t)(a2a ? 2 * p : p), 1);
    s->nchannels = p > 1 ? p - 1 + a2a : 1;
    s->prog = sym_prog;
    return 0;
}

/* A barrier: every rank's p - 1 flags out at once (single-port: one after
 * another). */
static double barrier_cost(const cost_model_t *m, int p) {
    return p < 2 ? 0 : m->ports == 1 ? (p - 1) * m->alpha : m->alpha;
}

static double sym_cost(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o, coll_t c) {
    if (p < 2) return 0;
    return 2 * barrier_cost(m, p) + algo_find(c, "direct")->cost(m, p, n, o);
}

static double ar_cost(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o) {
    return sym_cost(m, p, n, o, COLL_ALLREDUCE);
}
static double ag_cost(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o) {
    return sym_cost(m, p, n, o, COLL_ALLGATHER);
}
static double rs_cost(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o) {
    return sym_cost(m, p, n, o, COLL_REDUCE_SCATTER);
}
static double a2a_cost(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o) {
    (void)o;
    return p < 2 ? 0 : 2 * barrier_cost(m, p) + algo_direct_spread_time(m, p, (double)(n / (uint64_t)p));
}

#define SYM_PORTS "single-port and multi-port star (full mesh: every block at once); exact when p divides n (single-port reduce-scatter: an upper bound)"
#define SYM_NEEDS "1 <= p <= 512 in one NVLink domain (group 0 or >= p)"
#define SYM_ROW(c, cname, nm, fn, text, what, nc)                                                         \
    const algo_t algo_##cname##_##nm = {                                                                  \
        .coll = c, .name = #nm, .build = sym_build, .cost = fn, .cost_text = text, .requires = SYM_NEEDS, \
        .port_model = SYM_PORTS, .idea = what, .nccl = nc, .nccl_protos = 1u << PROTO_SIMPLE,           \
    }

SYM_ROW(COLL_ALLREDUCE, allreduce, symmetric, ar_cost, "2B + direct all-reduce; B = a (star), (p-1) a (single-port)",
        "NCCL's symmetric kernel RSxLD_AGxST: load and add block r from all, store it to all", "symmetric");
SYM_ROW(COLL_ALLGATHER, allgather, symmetric, ag_cost, "2B + a + mb + d (direct all-gather)",
        "NCCL's symmetric kernel AllGather_ST: store my block into every peer's window", "symmetric");
SYM_ROW(COLL_REDUCE_SCATTER, reducescatter, symmetric, rs_cost, "2B + direct reduce-scatter",
        "NCCL's symmetric kernel ReduceScatter_LD: load block r from every peer, add", "symmetric");
SYM_ROW(COLL_ALLGATHER, allgather, ce, ag_cost, "2B + a + mb + d (direct all-gather)",
        "NCCL's copy-engine all-gather: ready flags, batched copies to every peer, complete flags", "ce");
SYM_ROW(COLL_ALLTOALL, alltoall, ce, a2a_cost, "2B + a + (n/p) b + d, p divides n",
        "NCCL's copy-engine all-to-all: ready flags, one copy per peer, complete flags", "ce");
