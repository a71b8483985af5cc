/* flow.h - maximum flow between two sets of ranks (Dinic's algorithm over
 * the directed links' bandwidths). Bisection bandwidth is the flow from the
 * first half of the ranks to the second: what the fabric can carry across
 * that cut, per direction. */
#ifndef BATON_FLOW_H
#define BATON_FLOW_H

#include "topo.h"

/* Bytes/s from ranks [0, split) to ranks [split, p); negative on error. */
double flow_between_halves(const topo_t *t, int split);

#endif
