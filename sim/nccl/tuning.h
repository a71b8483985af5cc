/* tuning.h - NCCL's own cost model (src/graph/tuning.cc, NCCL 2.30.7).
 *
 * NCCL times every (algorithm, protocol) of a call as
 *     time = latency + bytes / algorithm bandwidth
 * from per-architecture tables and the bandwidth its graph search found,
 * and runs the fastest. This file is that model, table for table
 * (docs/reference/nccl.md section 1), so baton can say what NCCL will pick
 * and how long NCCL itself thinks it takes: `--model nccl`, a third model
 * beside the closed forms and the simulator. It has no launch overhead and
 * no contention, as NCCL's has none.
 *
 * The tables and formulas follow the machine's NCCL version (`version`,
 * 2.18.1-2.30.7) where NCCL's tuning.cc changed them: the TUNING_*_SINCE
 * rules below (PAT none before 2.23, Tree/Simple's latency, Ring/LL's share,
 * ring all-reduce's network steps, the per-channel caps, NVLS's model, the
 * Blackwell rows; docs/decisions/nccl-versions.md). Not modelled:
 * CollNetChain, numPipeOps > 1 (one call at a time, as nccl-tests runs
 * them). */
#ifndef BATON_TUNING_H
#define BATON_TUNING_H

#include <stdint.h>

#include "../../algorithms/sched.h"
#include "../../models/arch.h"
#include "../../models/proto.h"

/* In NCCL's loop order (its ties go to the first): Tree, Ring, CollNetDirect,
 * NVLS, NVLSTree, PAT (CollNetChain, which NCCL has too, is not modelled). */
typedef enum { TUNING_TREE = 0, TUNING_RING, TUNING_COLLNET_DIRECT, TUNING_NVLS, TUNING_NVLS_TREE, TUNING_PAT,
               TUNING_ALGO_COUNT } tuning_algo_t;

/* What NCCL's model reads from the communicator and its graphs. */
typedef struct tuning_machine {
    int nranks, nnodes;        /* ranks per node = nranks / nnodes */
    arch_t arch;        /* the compute capability's row */
    int nvlink;                /* 1: the intra-node graph's type is NVLink, else PCI */
    int cpu_amd;               /* the host CPU (net overhead, multi-node LL caps) */
    int ll128;                 /* 1: LL128 enabled (NVLink inside nodes, sm >= 70) */
    int nchannels;             /* ring and tree channels */
    double bw;                 /* GB/s per ring/tree channel (graph bwIntra = bwInter) */
    int nvls_channels;         /* 0: no NVLS (no reducing switch per node); NVLS and NVLSTree's */
    double nvls_bw;            /* GB/s per NVLS channel (a GPU's link to its switch) */
    int collnet;               /* 1: a CollNet plugin (the fabric reduces: SHARP, several nodes):
                                  CollNetDirect, and NVLS across nodes; 0: NVLS on one node only */
    double nvls_inter;         /* GB/s per NVLS channel through the network (bwInter) */
    int version;               /* the NCCL, 2.26.6 as 22606; 0: the tables' 2.30.7 */
} tuning_machine_t;

/* The first NCCL of each rule this model follows by version: the release
 * whose src/graph/tuning.cc first has it (NCCL's git tags v2.18.1-1 ..
 * v2.30.7-1; tuning.c says what came before), counted from the minor
 * release (2.21.0) where the change came with its first tag. */
#define TUNING_PAT_SINCE 22300         /* PAT: 2.23.4's tuning.cc (ncclPatEnable) */
#define TUNING_PAT_075_SINCE 22400     /* PAT's busBw *= .75 (2.23: .85) */
#define TUNING_TREE_LAT_2_18_3 21803   /* 2.18.3: Tree/Simple hwLat 4/6/14 (2.18.1: 28), per-node-count
                                          LL128 caps (perChMaxRing/TreeLL128Bws), Hopper tree 36.0, NVLS 5/6 */
#define TUNING_TREE_LAT_2_19 21900     /* 2.19.1: Tree/Simple hwLat back to 28 (the 2.19 branch) */
#define TUNING_NVLS_2_19_SINCE 21900   /* 2.19.1: NVLS/NVLSTree latency and bandwidth rewritten, NVLS
                                          all-gather/reduce-scatter, CollNetDirect 3.7/31 us */
#define TUNING_RING_LL_HALF_SINCE 22100 /* 2.21.5: Ring/LL busBw x .5 (before x 1/4 across nodes) */
#define TUNING_NVLS_LAT25_SINCE 22100  /* 2.21.5: NVLS/NVLSTree NVLink hwLat 25 (23) */
#define TUNING_HOPPER_LL_SINCE 22100   /* 2.21.5: llMaxBws Hopper 141/45/35 (87.7/22.5/19) */
#define TUNING_TREE_LAT_SINCE 22300    /* 2.23.4: Tree/Simple baseLat 8.4, hwLat 4/4/14 */
#define TUNING_INTER_STEPS_SINCE 22300 /* 2.23.4: ring all-reduce's nInterSteps 2(nNodes-1) (2 nNodes) */
#define TUNING_PPN1_NET_SINCE 22300    /* 2.23.4: ppn 1: the tree's network latency for all; Ring/LL128
                                          x .92 (before x .7 at ppn < 2) */
#define TUNING_BLACKWELL_SINCE 22500   /* 2.25.1: Blackwell's own rows (before Hopper's) */
#define TUNING_NVLS_AGRS_SINCE 22700   /* 2.27.3: NVLS AG/RS min(bwIntra (ppn-1)/ppn, .9 bwInter) */
#define TUNING_NVLS_EFF_SINCE 22800    /* 2.28.3: nvlsEfficiency, NVLS ratio nRanks/nsteps, NVLSTree caps */
#define TUNING_BLACKWELL_2_28_SINCE 22800 /* 2.28.3: Blackwell tree 70/42.8/24, tree LL128 55.6/31.67/20 */
#define TUNING_NVLS_TREE_NET_SINCE 22900  /* 2.29.2: NVLSTree network hwLat 20.9 (14) */
#define TUNING_BLACKWELL_2_29_SINCE 22900 /* 2.29.2: Blackwell ring LL128 34.5, NVLSTree 4+ nodes 43.8 */
#define TUNING_BLACKWELL_2_30_SINCE 23000 /* 2.30.3: Blackwell ring LL128 40, NVLSTree 4+ nodes 80 */

/* NCCL's time in seconds for one call of coll over n bytes (nccl-tests'
 * size: the whole buffer) with algorithm a and protocol p; < 0 when NCCL
 * would not run that combination (bandwidth 0). */
double tuning_time(const tuning_machine_t *m, coll_t coll, tuning_algo_t a, proto_t p, uint64_t n);

/* NCCL's choice: the (algorithm, protocol) with the lowest time (ties: the
 * first in NCCL's loop order, algorithms then protocols), among the
 * protocols of mask protos only (1 << proto_t; 0: all), as NCCL_PROTO leaves
 * its cost table (a protocol it turns off is IGNORE there); -1 if none runs. */
int tuning_pick(const tuning_machine_t *m, coll_t coll, uint64_t n, unsigned protos, tuning_algo_t *a, proto_t *p,
                double *time_s);

/* NCCL's latency in microseconds (section 1.5), for tests and --explain. */
double tuning_latency_us(const tuning_machine_t *m, coll_t coll, tuning_algo_t a, proto_t p);

/* NCCL's symmetric kernels' own model (src/sym_kernels.cc, 2.30.7:
 * queryModel_lsa and ncclSymkPickKernel), for a call on one NVLink domain of
 * nranks GPUs with registered buffers: coll's kernels (AllReduce AGxLL_R,
 * AGxLLMC_R, RSxLD_AGxST, RSxLDMC_AGxSTMC; AllGather LL, LLMC, ST, STMC;
 * ReduceScatter LL, LD, LDMC; the multimem "MC" ones where multimem is 1:
 * NVLS and more than 2 ranks; LL below 2 GiB of bus bytes; no TMA, NCCL's
 * default), each time = base + softplus(busBytes / bw - 1) with bw a soft
 * minimum of blocks x per-SM rate and the kernel's peak, on the fewest blocks
 * within 2.5 % of its best, then the lowest time x (1 + 0.025 blocks).
 * bytes: nccl-tests' size (all-reduce's buffer, all-gather's output,
 * reduce-scatter's input), float32. Seconds, the kernel's name into *kernel
 * and its blocks into *blocks; < 0 where none applies. Only the kernels of
 * the protocols of mask protos (1 << proto_t; 0: all): an LL kernel is LL's,
 * the others Simple's. */
double tuning_sym_time(arch_t arch, int nranks, coll_t c, uint64_t bytes, int multimem, unsigned protos,
                       const char **kernel, int *blocks);

const char *tuning_algo_name(tuning_algo_t a);

#endif
