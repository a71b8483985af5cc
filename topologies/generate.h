/* generate.h - regular fabrics built from a few numbers.
 *
 * fat-tree (2 levels, folded Clos): hosts hang off leaf switches, every leaf
 *   connects once to every spine. A switch has `radix` ports; a leaf serves
 *   radix/2 hosts and has radix/2 / o uplinks for oversubscription o:1 (o = 1:
 *   full bisection; o = 2 halves what can leave a leaf). When there are more
 *   leaves than a spine has ports, a third level is built: pods of radix/2
 *   leaves with their own aggregation switches, and a core layer (up to
 *   radix^3/4 hosts). Rail-optimized (rails = R > 1): host i is
 *   on rail i % R (GPU i of every node), and each rail has its own leaves, so
 *   same-rail traffic stays one hop from the leaf.
 * torus: nodes in a d-dimensional grid (row-major), each joined to its
 *   neighbours with wrap-around; a ring is a 1-D torus. Its nodes forward
 *   traffic (transit), since a torus is routed through them. */
#ifndef BATON_GENERATE_H
#define BATON_GENERATE_H

#include "topo.h"

typedef struct gen_fabric {
    const char *prefix;     /* switch names: prefix.leaf0, prefix.spine0 */
    int radix;
    int oversub;            /* 1 = full bisection, 2 = 2:1, ... */
    int rails;              /* 1 = plain fat-tree */
    double bw, lat;         /* every link of the fabric */
    int sharp;              /* 1: the switches reduce (SHARP): every leaf, and spine r
                               for rail r when a rail has several leaves; recorded in
                               topo_params_t.sharp. Two levels only. */
} gen_fabric_t;

int gen_fat_tree(topo_t *t, const int *hosts, int nh, const gen_fabric_t *f, baton_err_t *e);
int gen_torus(topo_t *t, const int *nodes, int n, const int *dims, int ndims, double bw, double lat,
              baton_err_t *e);

#endif
