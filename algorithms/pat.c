/* pat.c - PAT, NCCL's "parallel aggregated trees" (NCCL 2.23+, src/include/
 * collectives.h PatAGAlgorithm / PatRSAlgorithm; run by src/device/
 * all_gather.h and reduce_scatter.h at NCCL_PROTO_SIMPLE), for all-gather and
 * reduce-scatter at one GPU per node.
 *
 * Idea: a binomial tree per block, all p trees at once, with Bruck's
 * distances 2^d but the order reversed. In the all-gather block b travels
 * from rank b to rank b + delta by the set bits of delta, the highest first:
 * in step d (d = D-1 .. 0, D = ceil(lg p)) rank r sends to r + 2^d every
 * block it holds whose remaining distance has bit d set. The farthest peer
 * gets one block first and the nearest peer p/2 blocks last, so the big
 * steps run between near ranks, and each block is its own message (NCCL
 * sends block by block, up to 16 in flight, aggregating only blocks small
 * beside its step buffer). The reduce-scatter is the all-gather run
 * backwards: the lowest bit first, partial sums added on the way.
 *
 * Step diagram, all-gather, p = 5, rank r (blocks by their distance back
 * to their owner: "r-2" is block r-2):
 *
 *   d=2: send {r}        to r+4,  take {r-4}        from r-4
 *   d=1: send {r}        to r+2,  take {r-2}        from r-2
 *   d=0: send {r, r-2}   to r+1,  take {r-1, r-3}   from r-1
 *
 * (n_d = the blocks of step d: the j >= 0 with j 2^(d+1) + 2^d < p; they sum
 * to p - 1.)
 *
 * Costs (single-port or star, m = ceil(n/p)): every block is a message of
 * its own and a receive is posted when the one before it completed (the
 * schedule's rule), so a step of n_d blocks takes n_d (a + mb), adds after
 * each arrival:
 *   AG  (p-1)(a + m b)          RS  (p-1)(a + m (b + g))
 * the ring's and pairwise's cost: in this model PAT's gain is none; NCCL's
 * own model gives it a log latency across nodes but still 2.8 us a rank
 * ("still a linear part", tuning.cc), and a bandwidth 0.75 of the tree's.
 * Exact when p divides n. Requires: any p >= 1, one
 * rank per node (o->group <= 1): NCCL runs PAT only there (tuning.cc,
 * ncclPatEnable: nNodes == nRanks), and refuses it for more. */
#include "algo.h"

#include "../models/proto.h"

/* Blocks of step d on p ranks. */
static uint32_t pat_count(int p, int d) {
    int64_t h = (int64_t)1 << d;
    return h >= p ? 0 : (uint32_t)((p - 1 - h) / (2 * h) + 1);
}

/* Op pc of rank r's program: its step d (in the order the collective runs
 * them), the block index j and whether it is a send (a step sends block j,
 * then takes block j, in turn: all sends first would deadlock a ring of
 * ranks each with more than max_inflight sends queued). 0 past the end. */
static int pat_locate(const sched_t *s, uint32_t pc, int *d, uint32_t *j, int *send) {
    int p = s->nranks, D = cost_ceil_log2(p), ag = s->coll == COLL_ALLGATHER;
    for (int i = 0; i < D; i++) {
        int step = ag ? D - 1 - i : i;
        uint32_t n = pat_count(p, step);
        if (pc < 2 * n) { *d = step, *send = pc % 2 == 0, *j = pc / 2; return 1; }
        pc -= 2 * n;
    }
    return 0;
}

static int pat_prog(const sched_t *s, int r, int c, uint32_t pc, sched_op_t *op) {
    (void)c;
    int p = s->nranks, d, send;
    uint32_t j;
    if (!pat_locate(s, pc, &d, &j, &send)) return 0;
    int64_t h = (int64_t)1 << d, far = (int64_t)j * 2 * h;
    if (s->coll == COLL_ALLGATHER)          /* own-held blocks r - j 2^(d+1); take those 2^d further back */
        *op = send ? op_send((int)algo_mod(r + h, p), algo_mod(r - far, p), 1)
                   : op_recv((int)algo_mod(r - h, p), algo_mod(r - h - far, p), 1, RECV_COPY);
    else                                    /* partial sums of blocks r + 2^d + j 2^(d+1) move on */
        *op = send ? op_send((int)algo_mod(r + h, p), algo_mod(r + h + far, p), 1)
                   : op_recv((int)algo_mod(r - h, p), algo_mod(r + far, p), 1, RECV_REDUCE);
    return 1;
}

static int pat_build(sched_t *s, const algo_opts_t *o, baton_err_t *e) {
    if (o->group > 1 && s->nranks > 1)
        return err_set(e, BATON_EUNSUP, "pat runs at one rank per node (NCCL's ncclPatEnable, src/graph/tuning.cc, "
                       "2.23+: nNodes == nRanks); these ranks are %d per node", o->group);
    sched_layout(s, (uint32_t)s->nranks, 1);
    s->prog = pat_prog;
    s->period = 1;                 /* every rank's program is rank 0's moved r ranks on */
    return 0;
}

static double pat_ag_cost(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o) {
    (void)o;
    return (p - 1) * (cost_alpha(m, cost_block(p, n)) + cost_block(p, n) * m->beta);
}

static double pat_rs_cost(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o) {
    (void)o;
    return (p - 1) * (cost_alpha(m, cost_block(p, n)) + cost_block(p, n) * (m->beta + m->gamma));
}

#define PAT_PORTS "single-port or multi-port star (same, one peer a step); exact when p divides n"

const algo_t algo_allgather_pat = {
    .coll = COLL_ALLGATHER, .name = "pat", .build = pat_build, .cost = pat_ag_cost,
    .cost_text = "(p-1)(a + ceil(n/p) b)",
    .requires = "any p >= 1, one rank per node (NCCL: nNodes == nRanks)", .port_model = PAT_PORTS,
    .idea = "NCCL's PAT: a binomial tree per block, farthest peer first, block by block",
    .nccl = "pat", .nccl_protos = 1u << PROTO_SIMPLE,
};

const algo_t algo_reducescatter_pat = {
    .coll = COLL_REDUCE_SCATTER, .name = "pat", .build = pat_build, .cost = pat_rs_cost,
    .cost_text = "(p-1)(a + ceil(n/p)(b + g))",
    .requires = "any p >= 1, one rank per node (NCCL: nNodes == nRanks)", .port_model = PAT_PORTS,
    .idea = "NCCL's PAT backwards: partial sums down binomial trees, nearest peer first",
    .nccl = "pat", .nccl_protos = 1u << PROTO_SIMPLE,
};
