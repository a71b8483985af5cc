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

#endif
