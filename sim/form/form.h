/* form.h - a row's closed form on a machine: the machine as the formula
 * sees it (the links a row's messages share, memoised per pattern), and
 * every applicable row's time, lowest first.
 *
 * Below NCCL's plan (sim/nccl/), which chooses among the rows NCCL has by
 * these times, and below the answer (sim/answer/run.c), which times what
 * was chosen; it knows nothing of NCCL's rules: a caller's filter says which
 * rows may be looked at. */
#ifndef BATON_FORM_H
#define BATON_FORM_H

#include "call.h"

/* Rows of one collective in the registry, with room. */
#define FORM_MAX_ROWS 128

/* Fill options the user left at 0 from the topology: group size, the
 * machine's rings (unless rank_order), channels (one per ring found, else
 * the topology's), those within the bounds its NCCL is told (nccl_env's
 * NCCL_MIN/MAX_NCHANNELS and _CTAS: topo_nccl_channels). */
void form_opts(topo_t *t, algo_opts_t *o);
/* The same without nccl_env's bounds: the count NCCL's search finds, which
 * NCCL's model then bounds (sim/nccl/view.c). */
void form_opts_searched(topo_t *t, algo_opts_t *o);

/* The machine as row a's closed form sees it for its built schedule s: the
 * uniform model m, or for a row with a `peer` (rings, hierarchical rows,
 * nccltree) the links its messages share on t (topologies/linkload.h). t may be
 * NULL (then m). */
int form_model(topo_t *t, const algo_t *a, const sched_t *s, const cost_model_t *m, cost_model_t *out, baton_err_t *e);

/* Which rows a listing may look at and how each is cut (a caller's rule:
 * NCCL's, sim/nccl/). keep: 1 keep, 0 pass over, asked before a row is
 * built (NULL: every row). size: the options row a is priced with, o or
 * *tmp = o changed (NULL: o), so a row is priced as it will run; or_own:
 * size's cut is only an alternative, the row priced at the lower of it and
 * its own (o). */
typedef struct form_filter {
    int (*keep)(const struct form_filter *f, const algo_t *a);
    const algo_opts_t *(*size)(const struct form_filter *f, const algo_t *a, const algo_opts_t *o, algo_opts_t *tmp);
    int or_own;
} form_filter_t;

/* Row a's closed form for n bytes on p ranks with options o, on its own
 * view of t (NULL: m) under protocol pc (NULL: m as given), into *time: 1,
 * 0 where a cannot run this case, or BATON_EWHOLE where a folded cluster
 * cannot answer for it. */
int form_time(topo_t *t, const algo_t *a, const cost_model_t *m, const proto_cost_t *pc, int p, uint64_t n,
              const algo_opts_t *o, double *time);

/* Row a priced at the lower of two cuts, its own options own and another
 * cut (NCCL's: nccl-sizing.md), into *time, as form_time; *took_cut (if
 * not NULL) 1 where cut's is strictly lower or own cannot run, else 0: ties
 * run the row's own. The one rule -a auto's listing and its runs share. */
int form_lower_cut(topo_t *t, const algo_t *a, const cost_model_t *m, const proto_cost_t *pc, int p, uint64_t n,
                   const algo_opts_t *own, const algo_opts_t *cut, double *time, int *took_cut);

/* The closed form of every row that may run coll here (those f keeps; NULL:
 * all) into rows[]/times[] (at most max), each on its own view of t (t may
 * be NULL: m for all) under protocol pc (NULL: m as given); their count, or
 * BATON_EWHOLE where a folded cluster cannot answer for a row. */
int form_list(topo_t *t, coll_t coll, const cost_model_t *m, const proto_cost_t *pc, int p, uint64_t n,
              const algo_opts_t *o, const form_filter_t *f, const algo_t **rows, double *times, int max);
/* The first of the k lowest times, -1 if none (k <= 0). */
int form_lowest(const double *times, int k);
/* The listing's lowest row; ties: registry order. NULL if none can run this case. */
const algo_t *form_pick(topo_t *t, coll_t coll, const cost_model_t *m, const proto_cost_t *pc, int p, uint64_t n,
                        const algo_opts_t *o, const form_filter_t *f);

/* The reducing switches t stands for: a folded cluster's whole count
 * (topo_yaml_load_folded; its ranks: topo_whole_ranks), which the closed
 * forms answer for from its witness nodes' routes. */
int form_reducers(const topo_t *t);
/* Can schedule s's helpers (reducing switches) be had on t? As many as it
 * asks for, and a single switch for every rank (nvls) only if the last rank
 * reaches it: a cluster's per-node switches serve their own node (nvlstree).
 * A row that reduces in the nodes' switches never takes a fabric's (SHARP:
 * the reducers from topo_sharp_t.first on), which only CollNet's rows use. */
int form_helpers_fit(topo_t *t, const algo_t *a, const sched_t *s, baton_err_t *e);
/* What a schedule that reduces in switches pays once per call on t (their
 * synchronisation, topo_params_t.nvls_lat): the closed forms add it here, the
 * engine at the end of its run. */
double form_switch_latency(const topo_t *t, const sched_t *s);

#endif
