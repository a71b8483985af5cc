/* nccl.h - the plan for a call: what NCCL would run for one collective on
 * one machine, decided in NCCL's order.
 *
 * The one interface the answer (sim/answer/run.c: run_collective) asks
 * before it builds and times anything:
 *  1. the call as NCCL is told it (nccl_call): the machine's NCCL_ALGO and
 *     NCCL_PROTO, a rule of its library (RCCL's MSCCL files, a log's TUNING
 *     lines), NCCL's own model's pick where the machine says NCCL follows it
 *     (nccl_tuner);
 *  2. the rows NCCL could run under a protocol (nccl_rows): NCCL's rows only,
 *     with the protocols and from the versions it runs them, the family it
 *     runs without its tuner (PAT, symmetric kernels, copy engines), within
 *     the call's masks, every one whose closed form is near the lowest;
 *  3. how NCCL cuts a row it runs (nccl_size): channels, steps, fill;
 *  4. what the GPU and host add to the links' time (ncclrule_host_side; for a
 *     call in a run of several, ncclrule_host_terms).
 * The rules themselves, each with its source, are ncclrule.h; NCCL's own
 * cost model, plan.h; what that model sees on the machine, view.h; its
 * tables, tuning.h. This header is the room's door: code outside sim/nccl/
 * includes it, never those parts (scripts/layers.sh checks). */
#ifndef BATON_NCCL_H
#define BATON_NCCL_H

#include "ncclrule.h"
#include "plan.h"

/* -a nccl in the simulator times every row NCCL has whose closed form is
 * within this factor of the lowest, and keeps the fastest. */
#define NCCL_SLACK 1.5

typedef struct nccl_plan {
    const topo_lib_rule_t *rule;   /* the machine's library rule the call follows; NULL: none */
    int tuned;                     /* 1: NCCL's own model picked the row (q->nccl_row, q->protos) */
} nccl_plan_t;

/* Step 1: q as NCCL is told it, for -a nccl (and a named row sized as NCCL
 * runs it: its library's ceiling); q is changed in place (its masks, row,
 * protocol, ceiling). 0, or < 0 on error (NCCL's model could not read t). */
int nccl_call(topo_t *t, run_req_t *q, nccl_plan_t *x, baton_err_t *e);

/* On a machine whose NCCL follows its own cost model (nccl_tuner), that
 * model's pick for a communicator of ranks[0 .. n) (a group of a step):
 * the row into *row and its protocols (a mask) into *protos, 1; 0 where
 * the machine has no such rule or the model does not decide; < 0 on error. */
int nccl_group_pick(topo_t *t, const run_req_t *q, const int32_t *ranks, int n, const char **row, unsigned *protos,
                    baton_err_t *e);

/* -a auto's listing under protocol pr, n bytes on p ranks: each row at
 * the lower closed form of its own cut and NCCL's (nccl_size's channels for
 * the size unless --channels was given, its steps and fill; form_lower_cut,
 * which run.c's size_row asks again to run the same): NVLSTree on two GB200
 * racks at 4 GiB runs NCCL's 64 steps (9.40 ms against its own 9.79), on
 * four H100 nodes at 64 MiB its own 64 (407 us against NCCL's 8's 575); a
 * chain broadcast of 128 KiB on a DGX-1 NCCL's 4 channels (24.4 us against
 * the machine's 6's 27.7). */
typedef struct {
    form_filter_t f;
    topo_t *t;
    proto_t pr;
    int p;
    uint64_t n;
    int channels_asked;
} nccl_cut_t;
nccl_cut_t nccl_cut_listing(topo_t *t, proto_t pr, int p, uint64_t n, int channels_asked);
/* Step 2: under protocol pr, the rows -a nccl may run for q on t's model m
 * (p ranks) into rows[], their closed forms into closed[] (at most
 * FORM_MAX_ROWS): those within NCCL_SLACK of the lowest (NCCL's pick alone
 * where the machine follows NCCL's model); their count, 0 if none, or
 * BATON_EWHOLE where a folded cluster cannot answer for a row. */
int nccl_rows(topo_t *t, const run_req_t *q, const run_req_t *q_in, const nccl_plan_t *x, const cost_model_t *m,
              proto_t pr, int p, const algo_t **rows, double *closed);

/* The cut policy of q (call.h): its own where set, else the algorithm
 * word's (-a nccl RUN_CUT_SIZED, -a auto RUN_CUT_LOWER, a named row
 * RUN_CUT_OWN). */
run_cut_t nccl_cut_of(const run_req_t *q);

/* Step 3: row a under protocol pr for q (q_in: what was asked, before the
 * machine filled it) as q's cut policy cuts it, into *qc (a copy of q):
 * RUN_CUT_OWN leaves it; the others take NCCL's channels for the size where
 * none were asked, then (but RUN_CUT_LOWER under a pinned --pipeline K) its
 * steps where no pipeline was asked and its fill (RUN_CUT_LOWER's caller
 * prices that against the row's own: run.c size_row).
 * The steps (0: the row's own). */
int nccl_size(topo_t *t, const run_req_t *q, const run_req_t *q_in, const nccl_plan_t *x, const algo_t *a, proto_t pr,
              int p, run_req_t *qc);

#endif
