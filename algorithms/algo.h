/* algo.h - the registry: one row per (collective, algorithm).
 *
 * A row binds a schedule builder to its closed-form cost and states what the
 * algorithm requires and which port model its formula assumes, so every
 * consumer (sim, predict, selection, docs) reads the same facts. */
#ifndef BATON_ALGO_H
#define BATON_ALGO_H

#include "../models/cost.h"
#include "sched.h"

/* What a user may choose beyond (p, n): all have defaults (0 = default). */
typedef struct algo_opts {
    int root;        /* broadcast / reduce root, default 0 */
    int channels;    /* rings (or trees) side by side over slices, default 1 */
    int pipeline;    /* chunks a pipelined algorithm cuts the buffer into; 0 = its choice */
    int group;       /* ranks per group (node) for hierarchical algorithms; 0 = all */
    const sched_orders_t *rings;   /* channel orders for ring-shaped rows (the machine's
                                      graph, topologies/graph.h); NULL: their own */
    int rank_order;  /* 1: do not take the machine's rings (form_opts) */
    int stride;      /* without the machine's rings: GPUs in a row that share a NIC,
                        so channel c's ring (and nccltree's chains) go in and out
                        by NIC c (algo_rotation; graph_ring_stride); 0 = 1 */
    struct {         /* a fabric whose switches reduce (topo_sharp_t): rails 0 = none */
        int rails, per_leaf, leaves, first;
    } sharp;
    uint64_t fill;   /* bytes a hop inside a node passes on before the next hop may start
                        (nccltree's closed form); 0: a channel's whole chunk */
    int domain_rings;   /* channels of NCCL's ring and tree rows across flat NVLink domains
                           (graph_domain_rings, set by form_opts where none were asked);
                           0: channels. algo_row_opts applies it */
    int channels_machine; /* 1: channels is the machine's count, filled in by form_opts
                             (its rings, or its file's channels), not one a user, the
                             machine's nccl_env bounds, a log's rule or NCCL's count for
                             the size chose: nvlstree then runs at least two channel
                             groups, both trees (algorithms/nvlstree.c groups) */
} algo_opts_t;

typedef struct algo {
    coll_t coll;
    const char *name;
    /* Fill s (ranks, bytes, root, channels already set); BATON_EUNSUP with
     * a reason if the algorithm cannot do this case. */
    int (*build)(sched_t *s, const algo_opts_t *o, baton_err_t *e);
    /* Closed-form time in seconds on the uniform machine m (o may be NULL). */
    double (*cost)(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o);
    const char *cost_text;   /* the formula, in the notation of cost-formulas.md */
    const char *requires;    /* what p and n it handles */
    const char *port_model;  /* which port model(s) the formula is exact for */
    const char *idea;        /* one line for `baton algos` */
    int approx;              /* the formula is an approximation or a bound, not exact */
    int (*exact_at)(int p, uint64_t n, const algo_opts_t *o);   /* where set (approx 0): exact only
                                where it returns 1, a bound elsewhere (algo_inexact) */
    int helpers;             /* reducing switches it needs (NVLS) */
    int fabric;              /* 1: they include the fabric's (SHARP, topo_sharp_t); 0: the
                                nodes' own switches only, never a fabric's */
    const char *nccl;        /* NCCL's name for it ("ring", "tree"), NULL if none */
    unsigned nccl_protos;    /* the protocols NCCL runs it with, bits 1 << proto_t; 0: all
                                (NVLS: Simple only) */
    /* Optional, for rows whose every step has each rank send one share of a
     * block to the same peer on each channel (rings): that peer (-1: none).
     * The closed form then sees the links the channels share
     * (topologies/linkload.h), not the slowest rank pair for every message.
     * peer_across: the same for the steps between groups of a hierarchical
     * row (cost_model_t.across); peer then gives the steps inside groups. */
    int (*peer)(const sched_t *s, int c, int r);
    int (*peer_across)(const sched_t *s, int c, int r);
    /* Optional: for a row whose step has several messages per rank and
     * channel (a pipelined tree: up and to each child), the slots peer takes
     * (c < slots) and the channels they are shares of; NULL: one slot per
     * channel, s->nchannels of them. The view's beta is then the busiest
     * link's time for a whole step (cost_model_t.stepwise). */
    int (*peer_slots)(const sched_t *s, int *nchannels);
    /* Optional, for rows that move in steps of different patterns (recursive
     * doubling and halving, pairwise shifts, Bruck): how many steps, and rank
     * r's send in step k (1 and *op, or 0 if r sends nothing then). The
     * closed form then charges every step its own busiest link
     * (topologies/linkload.h, linkload_steps_record): right where the steps do
     * not overlap, as these rows' formulas assume. algo_lockstep_* serve rows
     * whose op 2k is step k's send and op 2k+1 its receive. */
    int (*nsteps)(const sched_t *s);
    int (*step_send)(const sched_t *s, int k, int r, sched_op_t *op);
} algo_t;

/* Whether a is in NCCL's ring or tree family (a->nccl "ring", "tree"): the
 * rows whose channels NCCL counts per size and per NIC. */
int algo_nccl_ring_or_tree(const algo_t *a);

/* The options row a runs with: o, or *tmp = o with channels =
 * o->domain_rings for NCCL's ring and tree rows (a->nccl "ring", "tree")
 * where that is set. */
const algo_opts_t *algo_row_opts(const algo_t *a, const algo_opts_t *o, algo_opts_t *tmp);

/* The channels row a ran on as its schedule s was built, `asked` the
 * channels it was asked for (0: one): the schedule's own groups where it has
 * them (nvlstree's two trees), a stream per peer for a row NCCL does not
 * have (direct), else those asked. */
int algo_run_channels(const algo_t *a, const sched_t *s, int asked);

int algo_lockstep_nsteps(const sched_t *s);
int algo_lockstep_send(const sched_t *s, int k, int r, sched_op_t *op);
#define ALGO_LOCKSTEP .nsteps = algo_lockstep_nsteps, .step_send = algo_lockstep_send

/* Does row a run under protocol pr? A row that reduces in a switch (NVLS,
 * NVLSTree, CollNet: helpers) only with the protocols NCCL runs it with
 * (Simple: multimem and SHARP have no LL form); every other row with any,
 * baton's what-if (NCCL's own choice keeps to nccl_protos: ncclrule.c); and
 * every row without protocols (PROTO_NONE). */
static inline int algo_runs_proto(const algo_t *a, int pr) {
    return pr == 0 || a->helpers == 0 || a->nccl_protos == 0 || (a->nccl_protos >> pr & 1);
}

/* Rows of the registry, NULL-terminated, in a fixed order. */
const algo_t *const *algo_all(void);

/* Find a row; NULL if there is none. */
const algo_t *algo_find(coll_t coll, const char *name);   /* "tree" = "binomial" */
/* Is a's formula only an approximation or a bound for p ranks and n bytes
 * (approx, or outside its exact_at)? The machine's part is cost_model_t's. */
int algo_inexact(const algo_t *a, int p, uint64_t n, const algo_opts_t *o);
/* Rows made at run time (msccl.c's "msccl:FILE") live with their maker,
 * which hands algo_find its own lookup when it makes the first: asked
 * before the table (NULL: not one of its rows). The registry names no
 * maker, so they build on it and not it on them. */
typedef const algo_t *(*algo_find_fn)(coll_t coll, const char *name);
void algo_find_made(algo_find_fn find);
/* NCCL's algorithms in its own order (ncclAlgoStr: Tree, Ring, CollNetDirect,
 * CollNetChain, NVLS, NVLSTree, PAT), by algo_t.nccl's names ("tree",
 * "collnet_direct"): the index, or -1 (p2p: not one of NCCL's collective
 * algorithms). */
#define ALGO_NCCL_COUNT 7
int algo_nccl_index(const char *nccl);
/* The same by NCCL's own spelling, any case ("NVLSTree", "RING", "nvls_tree"). */
int algo_nccl_index_of_name(const char *name);
/* NCCL's name for a collective (ncclFuncStr: "AllReduce", any case), or -1. */
int algo_nccl_coll(const char *name);
/* An NCCL_ALGO (algos 1) or NCCL_PROTO (0) list as NCCL reads it (tuning.cc
 * parseList: "Ring,Tree", "^LL128", "allreduce:tree;allgather:ring") into a
 * mask for coll: bits algo_nccl_index or proto_t; 0 where the list leaves
 * coll alone. -1 where a name is not one baton knows. */
int algo_nccl_env_mask(const char *list, coll_t coll, int algos, unsigned *mask);
/* "; did you mean 'ring'?" for a misspelt algorithm of coll, or "". */
const char *algo_hint(coll_t coll, const char *name);

/* Build the schedule of row a for p ranks and n bytes (o may be NULL): checks
 * p >= 1 and the root, then calls its builder. */
int algo_build(const algo_t *a, int p, uint64_t n, const algo_opts_t *o, sched_t *s,
               baton_err_t *e);

/* Chunks a pipelined algorithm cuts n bytes into: o->pipeline, else one per
 * MiB (at least 1, at most 4096). */
uint64_t algo_pipeline_chunks(uint64_t n, const algo_opts_t *o);

/* The split trees' (bintree, dbtree, chain) shape as the closed forms take
 * it in O(1), against a walk of every rank: the first p <= pmax where they
 * differ, or 0. For tests. */
int algo_split_shape_check(int pmax);
/* NCCL's double binary tree over p vertices (bintree.c; its ncclGetDtree):
 * vertex r's parent and children in tree 0 or 1, -1 where none (down[0] is
 * set whenever r has a child), and the taller tree's height in edges. */
void algo_dtree(int p, int r, int tree, int *up, int down[2]);
int algo_dtree_height(int p);

/* Every rank sending a block of mb bytes to every other rank at once (a
 * channel per peer: direct.c's all-gather, alltoall.c's direct): the first
 * block's arrival, then the spread to the last (direct.c's costs). */
double algo_direct_spread_time(const cost_model_t *m, int p, double mb);

/* An all-to-all sends each peer a whole part: 0, or BATON_EUNSUP saying
 * so and which size nccl-tests would run instead (alltoall.c). */
int algo_a2a_whole(const sched_t *s, baton_err_t *e);

/* direct.c's program (every peer at once, channel c to the peer c + 1 on;
 * all-reduce: the reduce-scatter, a token round, the all-gather), which the
 * symmetric kernels' rows run between their barriers (symmetric.c). */
int algo_direct_prog(const sched_t *s, int r, int c, uint32_t pc, sched_op_t *op);
uint32_t algo_direct_len(const sched_t *s, int c);   /* its ops on channel c */

/* a mod p in [0, p) for any sign of a. */
static inline uint32_t algo_mod(int64_t a, int p) {
    int64_t r = a % p;                         /* one division; a branch here mispredicts */
    return (uint32_t)(r + (p & -(int64_t)(r < 0)));
}

/* Binomial trees over virtual ranks 0..n-1 rooted at 0: the lowest set bit
 * of v is the size of v's subtree, its children are v + 2^k for 2^k below
 * that (all k for the root) that exist, smallest first. */
static inline int algo_lowbit(int v) { return v & -v; }
static inline int algo_binom_children(int v, int n) {
    int c = 0;
    for (int64_t d = 1; (v == 0 || d < algo_lowbit(v)) && v + d < n; d <<= 1) c++;
    return c;
}

/* Is p a power of two? */
static inline int algo_pof2(int p) { return p > 0 && (p & (p - 1)) == 0; }
/* Where channel c's rank-order ring (or chain) starts inside a node: local
 * rank c, so it leaves by local rank c - 1 and the channels use every GPU's
 * NIC; where s > 1 GPUs in a row share a NIC (algo_opts_t.stride), local
 * rank c s + 1, so it leaves by c s: in and out by NIC c, on one rail, as
 * NCCL's search closes a ring on the NIC it started from. */
static inline int algo_rotation(int c, int s) { return s > 1 ? c * s + 1 : c; }
/* The stride a schedule of groups of g rotates by: o's, where it is one
 * inside a group (1 < stride < g), else 1. */
static inline int algo_stride(const algo_opts_t *o, int64_t g) { return o && o->stride > 1 && o->stride < g ? o->stride : 1; }

/* Channel c's ring order, for rows that run one per channel (ring.c's
 * rings, pipeline.c's chains): the rank at position i, and rank r's
 * position. The machine's ring c mod their count where s->orders has them,
 * else rank order rotated inside each group of s->param[0] ranks by
 * algo_rotation(c, s->param[1]); channel 0 is rank order. */
static inline int algo_ring_at(const sched_t *s, int c, int64_t i) {
    int p = s->nranks, g = (int)s->param[0];
    int pos = (int)algo_mod(i, p);
    if (s->orders) return s->orders->rank[(size_t)(c % s->orders->count) * p + pos];
    int rot = algo_rotation(c, (int)s->param[1]);
    if (rot == 0) return pos;                          /* channel 0: rank order */
    if (algo_pof2(g)) return (pos & ~(g - 1)) | ((pos + rot) & (g - 1));   /* no division: the hot path */
    return pos / g * g + (pos % g + rot) % g;
}
static inline int algo_ring_pos(const sched_t *s, int c, int r) {
    if (s->orders) return s->orders->pos[(size_t)(c % s->orders->count) * s->nranks + r];
    int g = (int)s->param[0], rot = algo_rotation(c, (int)s->param[1]);
    if (rot == 0) return r;
    if (algo_pof2(g)) return (r & ~(g - 1)) | ((r - rot) & (g - 1));
    return r / g * g + (int)algo_mod(r % g - rot, g);
}
/* Set what algo_ring_at reads: groups of o's group (if it divides the
 * ranks, else one group), its stride, the machine's rings if o has them
 * for these ranks (then no rotation symmetry: 0 is returned, else the
 * group as the schedule's period where channels rotate). */
int algo_ring_orders(sched_t *s, const algo_opts_t *o, int channels);

/* The rows, defined next to their algorithms. */
#define ALGO_ROWS(X)                                                          \
    X(allreduce_ring) X(allreduce_binomial) X(allreduce_naive) X(allreduce_rd)     \
    X(allreduce_rabenseifner) X(allreduce_rabenseifner_far) X(allreduce_oneshot) X(allreduce_twoshot) X(allreduce_direct)        \
    X(reducescatter_ring) X(reducescatter_naive) X(reducescatter_halving)     \
    X(reducescatter_pairwise) X(reducescatter_direct)                           \
    X(allgather_ring) X(allgather_naive) X(allgather_rd) X(allgather_bruck)     \
    X(allgather_pairwise) X(allgather_direct)                                   \
    X(broadcast_naive) X(broadcast_binomial) X(broadcast_chain)                \
    X(broadcast_scatter_allgather)                                            \
    X(reduce_naive) X(reduce_binomial) X(reduce_chain) X(reduce_rabenseifner)  \
    X(alltoall_naive) X(alltoall_pairwise) X(alltoall_direct)                 \
    X(broadcast_bintree) X(reduce_bintree) X(allreduce_bintree) X(allreduce_dbtree) \
    X(allreduce_hier) X(allreduce_hier_leader) X(allreduce_chain) X(allreduce_nvls)   \
    X(allreduce_nccltree) X(allreduce_nvlstree) X(allreduce_collnet) X(allreduce_collnet_ring)  \
    X(allgather_pat) X(reducescatter_pat) X(allreduce_symmetric) X(allgather_symmetric)       \
    X(reducescatter_symmetric) X(allgather_ce) X(alltoall_ce)
#define ALGO_DECLARE(name) extern const algo_t algo_##name;
ALGO_ROWS(ALGO_DECLARE)
#undef ALGO_DECLARE

#endif
