/* plan.h - NCCL's own cost model on a machine (`--model nccl`).
 *
 * Reads what NCCL's tuner reads off the machine: nodes and ranks per node,
 * the GPUs' generation (the file's `arch`), whether the node's rings run
 * over NVLink or PCI (topologies/graph.h), the rings' bus bandwidth and
 * channels (the ring's closed-form view of the links, sim/run.h), and NVLS
 * where a switch reduces. Then models/tuning.h times or picks. */
#ifndef BATON_PLAN_H
#define BATON_PLAN_H

#include "../models/tuning.h"
#include "run.h"

/* What NCCL's model sees on t with options o (filled from t as run does). */
int plan_machine(topo_t *t, const algo_opts_t *o, tuning_machine_t *m, baton_err_t *e);

/* run_collective's answer from NCCL's model: q->algo "nccl"/"auto" (NCCL's
 * pick) or ring, nccltree, nvls; q->proto a protocol or RUN_PROTO_AUTO.
 * o->simulated is 0; o->model is not filled. */
int plan_run(topo_t *t, const run_req_t *q, run_out_t *o, baton_err_t *e);

#endif
