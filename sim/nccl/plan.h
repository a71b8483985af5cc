/* plan.h - NCCL's own cost model on a machine (`--model nccl`).
 *
 * Reads what NCCL's tuner reads off the machine: nodes and ranks per node,
 * the GPUs' generation (the file's `arch`), whether the node's rings run
 * over NVLink or PCI (topologies/graph.h), the rings' bus bandwidth and
 * channels (the ring's closed-form view of the links, sim/run/run.h), and NVLS
 * where a switch reduces. Then sim/nccl/tuning.h times or picks. */
#ifndef BATON_PLAN_H
#define BATON_PLAN_H

#include "tuning.h"
#include "../run/run.h"

/* What NCCL's model sees on t with options o (filled from t as run does). */
int plan_machine(topo_t *t, const algo_opts_t *o, tuning_machine_t *m, baton_err_t *e);

/* NVLS as NCCL sets it up on t's NVLink domains (NCCL's nodes; on a
 * multi-node NVLink rack, its clique), for t's NCCL version:
 *  - heads: src/graph/search.cc gives the NVLS graph min(NCCL_MAX_NVLS_ARITY
 *    = 32, GPUs) channels, one head each, pulled evenly on one domain; across
 *    domains its GPUs with a NIC, at most 32;
 *  - channels (CTAs), src/transport/nvls.cc: 16 (NVLS_NCHANNELS_SM90) before
 *    2.25 and below Blackwell; Blackwell 32 (NVLS_NCHANNELS_SM100) in 2.25
 *    and 2.26; from 2.27 24 on one domain (NVLS_NCHANNELS_SM100_NVL), 32
 *    across; from 2.30.3 across domains ncclNvlsTreeSm100Tuning: 2 domains
 *    with NICs of >= 48 GB/s 32, more domains 24 (NICs >= 96 GB/s: 24 at
 *    <= 8 GPUs a domain, else 32);
 *  - chunk 128 KiB (NCCL_NVLS_CHUNKSIZE); NVLSTree's largest chunk the
 *    chunk, 64 KiB from 4 domains, and 2.30.3's SM100 values.
 * heads 0 where t has no reducing switch a domain. */
typedef struct plan_nvls {
    int domains, per_domain, heads, channels, chunk, tree_chunk;
    int candidates;       /* the GPUs heads are taken from (a domain's; across domains its GPUs with a NIC) */
    double nic_GBps;      /* the slowest NIC, NCCL's minNetBw; 0: none */
    const char *why;      /* where nvls.cc's channel count comes from */
} plan_nvls_t;
void plan_nvls(topo_t *t, const tuning_machine_t *m, plan_nvls_t *x);

/* run_collective's answer from NCCL's model: q->algo "nccl"/"auto" (NCCL's
 * pick) or ring, nccltree, nvls; q->proto a protocol or RUN_PROTO_AUTO.
 * o->simulated is 0; o->model is not filled. */
int plan_run(topo_t *t, const run_req_t *q, run_out_t *o, baton_err_t *e);

/* NCCL's own choice for the call q (tuning_pick within the call's NCCL_ALGO
 * and NCCL_PROTO): our row for its algorithm (plan_run's name) into *row and
 * its protocol as a mask for run_req_t.protos; 1 when set, 0 where NCCL's
 * model does not decide (all-to-all, --proto none, not NCCL, a family NCCL
 * runs without its tuner, nothing runs; *row NULL), < 0 on error. */
int plan_pick(topo_t *t, const run_req_t *q, const char **row, unsigned *protos, baton_err_t *e);

#endif
