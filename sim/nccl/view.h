/* view.h - the machine as NCCL's model sees it.
 *
 * Reads what NCCL's tuner reads off the machine: nodes and ranks per node,
 * the GPUs' generation (the file's `arch`), whether the node's rings run
 * over NVLink or PCI (topologies/graph.h), the rings' bus bandwidth and
 * channels (the ring's closed-form view of the links at NCCL's own link
 * rates, sim/form/form.h), and NVLS where a switch reduces. NCCL's rules
 * (ncclrule.h) and its model's answers (plan.h) both start from it. */
#ifndef BATON_VIEW_H
#define BATON_VIEW_H

#include "../form/form.h"
#include "tuning.h"

/* What NCCL's model sees on t with options o (filled from t as run does). */
int view_machine(topo_t *t, const algo_opts_t *o, tuning_machine_t *m, baton_err_t *e);

/* Is LL128 on for a call of collective c? protos: the call's NCCL_PROTO
 * (a log's, --cause proto=; 1 << proto_t bits, 0: none given). NCCL's
 * default (src/graph/tuning.cc ncclTopoTuneModel, the same test from 2.18.1
 * to 2.30.7): only where the node's GPUs reach each other over NVLink
 * (typeIntra <= PATH_NVB) and, across nodes, a GPU reaches its NIC without
 * the host bridge (typeInter <= PATH_PXB; from sm90 also PATH_PXN).
 * graph_t.inter is the best GPU's way, an approximation of typeInter: NCCL's
 * ring needs its first and last GPU near one NIC, and where only a PXN way
 * serves both, an sm80 ring has LL128 off where baton has it on; PATH_P2C,
 * Grace's C2C, baton's links do not tell from PCIe. An NCCL_PROTO entry that
 * applies to c (the call's, else the file's nccl_env) sets every protocol
 * to on or off, skipping the test, as NCCL's parseList does; else the
 * library's `ll128:` where it says. */
int view_ll128(topo_t *t, coll_t c, unsigned protos);
/* What the call's NCCL_PROTO, the file's entry for c or its library say of
 * LL128 (0 off, 1 on), -1 where nothing does and the path decides. */
int view_ll128_said(const topo_t *t, coll_t c, unsigned protos);
/* view_machine for a call of collective c under NCCL_PROTO protos: with the
 * call's LL128 (view_machine alone takes an all-reduce's, no NCCL_PROTO). */
int view_call(topo_t *t, const algo_opts_t *o, coll_t c, unsigned protos, tuning_machine_t *m, baton_err_t *e);


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
typedef struct view_nvls {
    int domains, per_domain, heads, channels, chunk, tree_chunk;
    int candidates;       /* the GPUs heads are taken from (a domain's; across domains its GPUs with a NIC) */
    double nic_GBps;      /* the slowest NIC, NCCL's minNetBw; 0: none */
    const char *why;      /* where nvls.cc's channel count comes from */
} view_nvls_t;
void view_nvls(topo_t *t, const tuning_machine_t *m, view_nvls_t *x);

#endif
