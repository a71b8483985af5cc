/* par.h - a map over independent items, in worker processes.
 *
 * The simulator's rows (one nccl-tests size each) take 0.1-2 s apiece and
 * share nothing but the machine they read, so a fit or a validation that
 * simulates every size spends its time in a loop whose turns could run at
 * once. par_map runs them in forked workers: a worker is a copy of the
 * caller at the moment of the fork (the machine with every value the fit
 * has set, its caches), computes its share of the items, and writes the
 * results back through a pipe. Nothing is shared but the counter below, so
 * nothing needs a lock, and an item's result is the one the serial loop
 * would give: the output is the same whatever the number of workers
 * (tests/test_par.c).
 *
 * Workers take the items from a counter they share, the last item first:
 * put the costly ones last (a log's sizes grow along it), and the cheap
 * ones fill in behind them.
 */
#ifndef BATON_PAR_H
#define BATON_PAR_H

#include <stddef.h>

#include "err.h"

/* Compute item i into out (out_size bytes, plain data: no pointers to
 * memory the worker allocated); 0, or a negative code with e filled. */
typedef int (*par_fn_t)(void *ctx, int i, void *out, baton_err_t *e);

/* Items 0..n-1 into out[i] (each out_size bytes), over at most `jobs`
 * workers (jobs <= 1, or n < 2: in this process, in order). On failure the
 * lowest failing item's error, as the serial loop would report it. */
int par_map(int n, size_t out_size, void *out, par_fn_t fn, void *ctx, int jobs, baton_err_t *e);

/* Workers to use: BATON_JOBS if set (1: none), else the processors online,
 * at most 32. */
int par_jobs(void);

/* A minimum the workers of one par_map share, made before it: each offers
 * a value once it has one, and any reads the least offered so far (the
 * fastest finished rival's time, which the others' runs may stop at). In
 * memory shared across fork; values must be >= 0. */
typedef struct par_min par_min_t;
par_min_t *par_min_new(void);                    /* NULL: no memory to share */
void par_min_offer(par_min_t *m, double v);
double par_min_get(const par_min_t *m);           /* INFINITY before any offer */
void par_min_free(par_min_t *m);

#endif
