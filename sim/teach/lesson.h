/* lesson.h - the teaching pages baton writes (sim/teach/page.h), built from runs
 * of the simulator (sim/teach/tape.h):
 *   kids   the candy story: the kids' all-reduce by each method, side by
 *          side on one clock (naive 24 s, tree 16 s, ring 6 s);
 *   ops    the operations on p GPUs x p chunks (4 x 4 on the story's
 *          machine): broadcast, reduce, reduce-scatter, all-gather,
 *          all-reduce and all-to-all, each its contract and then any
 *          algorithm of the catalogue that can perform it there;
 *   run    one run of `baton sim`, small enough to draw.
 * Each gives the page and the states a browser test checks it against
 * (page_states), both malloc'd. */
#ifndef BATON_LESSON_H
#define BATON_LESSON_H

#include "../answer/run.h"

typedef struct lesson_out {
    char *html;
    char *states;
    int runs;                 /* runs on the page */
} lesson_out_t;

int lesson_kids(topo_t *t, const char *const *methods, int n, lesson_out_t *out, baton_err_t *e);
int lesson_ops(topo_t *t, lesson_out_t *out, baton_err_t *e);
int lesson_run(topo_t *t, const run_req_t *q, lesson_out_t *out, baton_err_t *e);
void lesson_free(lesson_out_t *out);

#endif
