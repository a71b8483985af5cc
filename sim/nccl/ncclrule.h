/* ncclrule.h - what NCCL would run for a call on a machine, by NCCL's own
 * rules (ncclrule.c): run_collective asks these and builds and times what
 * they say; plan, select, validate and step ask the same. */
#ifndef BATON_NCCLRULE_H
#define BATON_NCCLRULE_H

#include "../../topologies/topo.h"
#include "view.h"

/* Would NCCL run row a with protocol pr on t? Only rows NCCL has, with the
 * protocols it runs them with (NVLS: Simple), and LL128 only where the
 * node's GPUs talk over NVLink (docs/reference/nccl.md 1.1). */
int ncclrule_runs(topo_t *t, const algo_t *a, proto_t pr, unsigned protos);
/* The same for a call of n bytes on p ranks: a point-to-point row (all-to-
 * all's grouped sends) runs the protocol ncclrule_p2p_proto gives a peer's
 * message, n / p, across nodes where the p ranks fill more than one. */
/* The protocol NCCL's send/recv runs a peer's message of n bytes with on t:
 * LL up to NCCL_P2P_LL_THRESHOLD (topo_params_t.p2p_ll_max, default 16 KiB)
 * where the connection has LL buffers, else Simple, never LL128
 * (enqueue.cc). A network connection has none: net.cc gives a p2p
 * connection LL buffers only under NCCL_ALLOC_P2P_NET_LL_BUFFERS=1
 * (p2p_net_ll; default 0, 2.18-2.30), so a message across nodes (`network`)
 * is Simple at every size unless the machine's nccl_env says 1. */
proto_t ncclrule_p2p_proto(const topo_t *t, uint64_t n, int network);
/* Whether a p2p connection has no LL buffers on t: across nodes
 * (`network`) without NCCL_ALLOC_P2P_NET_LL_BUFFERS=1. */
int ncclrule_p2p_no_ll(const topo_t *t, int network);
/* Whether ranks r[0 .. n) of t lie on more than one node (group_size);
 * ncclrule_p2p_network: whether ranks 0 .. p-1 do (a call on the machine). */
int ncclrule_crosses(const topo_t *t, const int32_t *r, int n);
int ncclrule_p2p_network(const topo_t *t, int p);
int ncclrule_runs_at(topo_t *t, const algo_t *a, proto_t pr, int p, uint64_t n, unsigned protos);

/* NCCL's version on t (`library: {nccl: 2.26.6}`, --set nccl_version=):
 * 22606; its tables' TOPO_NCCL_TABLES where the machine does not say. The
 * version rules -a nccl follows (each tested, tests/test_nccl_newer.c):
 *  - PAT for all-gather and reduce-scatter at one GPU per node, from 2.23
 *    (tuning.cc ncclPatEnable; TUNING_PAT_SINCE), where NCCL's tuner picks
 *    it (its latency grows 2.8 us a rank, so small calls on many nodes);
 *  - with registered buffers (`registered: true`) on one NVLink domain of
 *    Hopper or later, the symmetric kernels for all-reduce, all-gather and
 *    reduce-scatter from 2.27 (2.27.3 enqueue.cc: "always use symmetric if
 *    available"; 2.28+ scheduler/symmetric_sched.cc: no fallback when both
 *    buffers are registered), whatever the tuner says;
 *  - and from 2.29 on Blackwell the copy-engine all-gather above
 *    NCCL_SYM_CE_THRESHOLD's 8 Mi elements a rank (2.29.2 enqueue.cc
 *    taskAppend; float, nccl-tests' default: 32 MiB a rank). */
int ncclrule_version(const topo_t *t);
#define RUN_NCCL_SYM_SINCE 22700
#define RUN_NCCL_CE_AG_SINCE 22900
#define RUN_NCCL_CE_AG_COUNT (8u << 20)
/* NCCL_CTA_POLICY=2 (ZERO): from 2.28 NCCL runs all-gather and all-to-all
 * on the copy engines, no kernel, where every rank is in one NVLink domain
 * and the buffers are registered windows (2.28.3 enqueue.cc taskAppend:
 * nNodes == 1, both windows symmetric, CTAPolicy == ZERO; 2.30.7
 * ce_coll.cc ncclCeAvailable: the LSA team holds every rank). */
#define RUN_NCCL_CE_ZERO_SINCE 22800
#define RUN_NCCL_CTA_ZERO 2
/* The family ("pat", "symmetric", "ce") NCCL runs coll on p ranks of n
 * bytes by those rules (PAT: where NCCL's own model, sim/nccl/tuning.c, picks
 * it among the protocols of mask protos, 1 << proto_t, 0: all; PAT runs
 * Simple only; and where the algorithms of mask algos, algo_nccl_index bits,
 * 0: all, have it: a rule or NCCL_ALGO naming another leaves NCCL's tuner
 * unasked), NULL where baton's closed forms choose among NCCL's rows. */
const char *ncclrule_forced(topo_t *t, coll_t coll, int p, uint64_t n, unsigned protos, unsigned algos);

/* The algorithms a call may run as a mask for ncclrule_forced: the family a
 * rule names (its nccl_algo), else its NCCL_ALGO's (allowed; 0: all). */
unsigned ncclrule_algos(const char *family, unsigned allowed);

/* The symmetric kernel NCCL's own model picks for a call ncclrule_forced
 * gives the symmetric kernels (sym_kernels.cc ncclSymkPickKernel, NCCL_PROTO
 * aside: tuning_sym_time, among the protocols of mask protos), and the
 * row and protocol that move its data: an LL kernel is an LL row without
 * barriers (all-reduce AGxLL_R oneshot, all-gather and reduce-scatter LL
 * direct), the LD/ST ones the `symmetric` rows, all-reduce's multimem
 * RSxLDMC_AGxSTMC NVLS's `nvls`. The multimem all-gather and reduce-scatter
 * (STMC, LDMC) and the multimem LL ones run as their plain kernels: a
 * GPU's link carries the same blocks one way, the other way fewer. Where
 * the row does not fit the call (oneshot beyond 65 ranks) the `symmetric`
 * row with the kernel's protocol. 1 and *out filled; 0 where none applies. */
typedef struct {
    const char *kernel, *row;
    proto_t proto;
    int blocks;
    double time_s;          /* the kernel's time by NCCL's own model */
} ncclrule_sym_t;
int ncclrule_sym_kernel(topo_t *t, coll_t coll, int p, uint64_t n, unsigned protos, ncclrule_sym_t *out);

/* The protocols a call may run as a mask for ncclrule_forced: the one asked
 * (pr, where it names one), else its NCCL_PROTO's (protos; 0: all). */
unsigned ncclrule_protos(int pr, unsigned protos);

/* Under -a nccl, the machine's own NCCL_ALGO and NCCL_PROTO (`nccl_env:`)
 * into q's masks where q brings none (a log's say what that run was told). */
void ncclrule_env(const topo_t *t, run_req_t *q);

/* The machine's library rule for call q under -a nccl (or a row sized as
 * NCCL runs it): NULL where none; may set q->lib_busbw and q->nccl_algo. */
const topo_lib_rule_t *ncclrule_library(const topo_t *t, run_req_t *q);

/* How NCCL cuts row a under protocol pr for a call of n bytes on p ranks:
 * its channels (nc the machine's; said > 0: what a log's rule said NCCL ran
 * on), its steps on C channels (g ranks a node, `heads` NICs a node; 0: the
 * row's own pipeline) and what a hop passes on before the next may start
 * (algo_opts_t.fill; 0: whole steps). */
int ncclrule_channels(const algo_t *a, proto_t pr, int p, uint64_t n, int nc, int said);
int ncclrule_pipeline(topo_t *t, const algo_t *a, proto_t pr, int p, int g, int heads, int C, uint64_t n);
uint64_t ncclrule_fill(const algo_t *a, proto_t pr);

/* One call as the GPU and host see it: its collective, size and p ranks,
 * where those run (machine ranks; NULL: the machine's first p), its row and
 * channels, the library kernel's ceiling (0: none) and the GPUs one host
 * thread drives (nccl-tests -g; 0 or 1: one). */
typedef struct ncclrule_call {
    coll_t coll;
    uint64_t bytes;
    int p;
    const int32_t *ranks;
    const algo_t *algo;
    int channels;
    double lib_busbw;
    int gpus_per_thread;
} ncclrule_call_t;

/* o's time from the links' time `links` of schedule s: what the GPU and
 * host add (the protocol's and the library kernel's ceilings, staging
 * through host memory, the proxy thread's floor (the socket transport's
 * messages, RDMA's operations and software matching), NCCL's proxy
 * scanning LL lines, the launches of -g), into o's time_s, links_s, socket_s, proxy_s
 * and launch_s. */
void ncclrule_host_side(const topo_t *t, const run_req_t *q, const sched_t *s, const proto_cost_t *pc, proto_t pr,
                        double links, run_out_t *o);

/* What the GPU and host add to call c of schedule s (ncclrule_host_side's
 * terms, apart): the call takes max(its links' time, floor) + tail from its
 * start (a run of several, concurrent.c, applies them so). */
typedef struct ncclrule_host {
    double ceiling;       /* the least time the ceilings and staging allow (0: none) */
    double proxy_floor;   /* the least time the proxy thread's messages and operations take (0: none) */
    double proxy;         /* the proxy's own work after the links: the LL scan, inline copies */
    double launch;        /* the launches of the further GPUs a host thread drives */
    double floor, tail;   /* max(ceiling, proxy_floor); proxy + launch */
} ncclrule_host_t;

void ncclrule_host_terms(const topo_t *t, const ncclrule_call_t *c, const sched_t *s, const proto_cost_t *pc, proto_t pr,
                         ncclrule_host_t *h);

/* The nodes (the machine's group_size) ranks[0 .. p) span: p / group_size
 * where ranks is NULL (the machine's first p); 1 without nodes. O(p^2) on
 * a list, for the few calls that ask. */
int ncclrule_nodes(const topo_t *t, const int32_t *ranks, int p);

#endif
