/* select.h - selection tables: for every collective and size, every
 * applicable algorithm's time, the winner and the crossovers.
 *
 * Each cell comes from the closed form or the simulator (model SELECT_AUTO:
 * the closed form where it is exact - an exact formula on a uniform machine -
 * and otherwise the simulator, unless that run would be large; then the
 * formula, marked approximate). */
#ifndef BATON_SELECT_H
#define BATON_SELECT_H

#include "run.h"

enum { SELECT_AUTO = 0, SELECT_CLOSED, SELECT_DES };

typedef struct select_req {
    coll_t colls[COLL_COUNT];
    int ncolls;
    const uint64_t *sizes;
    int nsizes;
    const char *const *algos;  /* names to consider (NULL: all) */
    int nalgos;
    int proto;                 /* PROTO_NONE..PROTO_SIMPLE or RUN_PROTO_AUTO (best per algorithm) */
    int model;                 /* SELECT_AUTO, SELECT_CLOSED, SELECT_DES */
    int nccl_only;             /* only algorithms NCCL can run (for tuner files) */
    algo_opts_t opts;
    contention_t contention;   /* for simulated cells */
    int vs_nccl;               /* also time NCCL's own pick (-a nccl) per row */
    int jobs;                  /* rows over this many worker processes (util/par.h); <= 1: here, in order */
} select_req_t;

typedef struct select_cell {
    const algo_t *algo;
    proto_t proto;
    int ok;                    /* 0: the algorithm cannot do this case */
    int simulated;
    int approx;                /* the time is an approximate formula */
    double time_s, algbw_GBps, busbw_GBps;
    double formula_s;          /* a simulated cell: its formula's time, what predict quotes (0: none) */
} select_cell_t;

typedef struct select_row {
    coll_t coll;
    uint64_t bytes;            /* what ran: an all-to-all's size rounded as nccl-tests rounds it */
    uint64_t asked;            /* the size asked (the text table's label) */
    int ncells;
    select_cell_t *cells;
    int winner, runner_up;     /* cell indices, -1 if none */
    char why[512];             /* the first refusal of the row, said where none applies */
    select_cell_t nccl;        /* with vs_nccl: what -a nccl runs (ok 0: NCCL has nothing here) */
} select_row_t;

typedef struct select_table {
    char topo[128];
    int ranks, nnodes_groups;
    int domain_rings;          /* channels NCCL's ring and tree rows ran with (algo_row_opts); 0: the machine's */
    contention_t contention;   /* what the simulated cells ran under */
    int nrows;
    select_row_t *rows;
} select_table_t;

int select_run(topo_t *t, const select_req_t *q, select_table_t *out, baton_err_t *e);
void select_free(select_table_t *tab);

/* Why no command answers for 0 bytes: NCCL discards an empty collective
 * (src/enqueue.cc, taskAppend: "Empty collectives can be discarded"), so
 * there is no time to predict; nccl-tests' 0-byte rows time the host call
 * alone (0.2-0.4 us in validate/logs). */
#define SELECT_ZERO_WHY "0 bytes move nothing: NCCL discards an empty collective without a launch " \
                        "(src/enqueue.cc, taskAppend); give a size of at least 1 byte"

/* Parse "8B:16GiB[:x2]" or "1KiB,1MiB,..." into a malloc'd array. A range
 * is LO, LO*F, LO*F^2, ... while at most HI, as nccl-tests' -b -e -f: HI
 * itself only when it is on that grid (docs/decisions/sizes-range.md). */
int select_parse_sizes(const char *spec, uint64_t **sizes, int *n, const char **why);

/* For a range whose HI is not on its grid ("8B:1GiB:x16" ends at 128 MiB):
 * a note saying so into buf, and 1; else 0 and buf "". sizes, n: what
 * select_parse_sizes made of spec. */
int select_sizes_note(const char *spec, const uint64_t *sizes, int n, char *buf, size_t len);

/* Is row i's winner (algorithm or protocol) different from row i-1's, for
 * the same collective? */
int select_is_crossover(const select_table_t *tab, int i);

#endif
