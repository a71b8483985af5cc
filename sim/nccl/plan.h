/* plan.h - NCCL's own cost model answering a call (`--model nccl`): its
 * time for the algorithm and protocol asked (or its own pick), from what it
 * sees on the machine (view.h) and its tables (tuning.h), after the rules
 * that take a call out of its tuner's hands (ncclrule.h: PAT, symmetric
 * kernels, copy engines). */
#ifndef BATON_PLAN_H
#define BATON_PLAN_H

#include "view.h"

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
/* The same for a communicator of nranks ranks on nnodes of the machine's
 * nodes (a tensor-parallel group; 0: the whole machine): NCCL's view of the
 * machine with those counts (its channels and rates a node the machine's). */
int plan_pick_ranks(topo_t *t, const run_req_t *q, int nranks, int nnodes, const char **row, unsigned *protos,
                    baton_err_t *e);

#endif
