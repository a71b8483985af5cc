/* mfile_fold.h - a cluster's witnesses, planned before it is built
 * (mfile_fold.c). */
#ifndef BATON_MFILE_FOLD_H
#define BATON_MFILE_FOLD_H

#include "mfile.h"

/* A cluster of at least c->fold_min copies of one node: set c->fold_nodes,
 * fold_nw, fold_w and fold_text; anything else leaves them 0 (loads whole). */
void mf_fold_plan(mfile_t *c, ynode_t *root);

#endif
