/* fold.h - a cluster's witness nodes (fold.c): the copies of a node whose
 * routes to node 0 and to node N-1 show every route the closed forms see. */
#ifndef BATON_FOLD_H
#define BATON_FOLD_H

#include "generate.h"

/* The witness nodes of `nodes` copies of a node with hpn fabric hosts each
 * (NICs, node-major: host k hpn + a is node k's NIC a) on the fat-tree f:
 * ascending into w (at most max), their count returned; -1 if the fabric is
 * not a fat-tree baton builds or there are more than max classes. */
int fold_witnesses(const gen_fabric_t *f, int nodes, int hpn, int *w, int max);

/* Which two witnesses stand for two whole nodes (fold_map_pair): a pair the
 * same distances apart, whose routes have the same latencies and
 * bandwidths. NULL if out of memory or the fabric is not one baton builds. */
typedef struct fold_map fold_map_t;
fold_map_t *fold_map_new(const gen_fabric_t *f, int nodes, int hpn, const int *w, int nw);
void fold_map_free(fold_map_t *m);
/* The witness pair (wk x nw + wx, indexes into w) standing for nodes k -> x,
 * or -1 if no pair of witnesses is as far apart as they are. */
int fold_map_pair(fold_map_t *m, int k, int x);

#endif
