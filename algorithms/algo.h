/* algo.h - the registry: one row per (collective, algorithm).
 *
 * A row binds a schedule builder to its closed-form cost and states what the
 * algorithm requires and which port model its formula assumes, so every
 * consumer (sim, predict, selection, docs) reads the same facts. */
#ifndef BATON_ALGO_H
#define BATON_ALGO_H

#include "../models/cost.h"
#include "sched.h"

typedef struct algo {
    coll_t coll;
    const char *name;
    /* Fill s for p ranks and n bytes; BATON_EUNSUP (with a reason) if the
     * algorithm cannot do this case. */
    int (*build)(sched_t *s, int p, uint64_t n, baton_err_t *e);
    /* Closed-form time in seconds on the uniform machine m. */
    double (*cost)(const cost_model_t *m, int p, uint64_t n);
    const char *cost_text;   /* the formula, in the notation of cost-formulas.md */
    const char *requires;    /* what p and n it handles */
    const char *port_model;  /* which port model(s) the formula is exact for */
    const char *idea;        /* one line for `baton algos` */
} algo_t;

/* Rows of the registry, NULL-terminated, in a fixed order. */
const algo_t *const *algo_all(void);

/* Find a row; NULL if there is none. */
const algo_t *algo_find(coll_t coll, const char *name);

/* Build the schedule of row a: checks p >= 1 and calls its builder. */
int algo_build(const algo_t *a, int p, uint64_t n, sched_t *s, baton_err_t *e);

/* The rows, defined next to their algorithms. */
extern const algo_t algo_allreduce_ring;
extern const algo_t algo_allreduce_tree;
extern const algo_t algo_allreduce_naive;

#endif
