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
    const int *pos;         /* NULL, or host i's place among `total` hosts: a folded
                               machine (topologies/fold.c) builds some of a fabric's
                               hosts where the whole fabric would put them */
    int total;
} gen_fabric_t;

/* A fat-tree's shape over `total` hosts, from gen_fat_tree's arithmetic:
 * the host at place p is on rail p % rails, leaf first[rail] + p / rails /
 * down; leaves form pods of radix/2 when there are more than radix. */
typedef struct gen_shape {
    int rails, down, up, half, nleaves, levels;
    int *first;             /* rail r's leaves start at first[r]; first[rails] = nleaves */
} gen_shape_t;

int gen_shape_init(gen_shape_t *s, const gen_fabric_t *f, int total, baton_err_t *e);
void gen_shape_free(gen_shape_t *s);
/* The leaf of the host at place pos. */
int gen_shape_leaf(const gen_shape_t *s, int pos);
/* Its port on that leaf: hosts hang in place order (hang_hosts). */
int gen_shape_port(const gen_shape_t *s, int pos);
/* Links between the hosts at places a and b: 0 (the same), 2 (one leaf), 4
 * (a spine, or one pod's aggregation switch) or 6 (a core). */
int gen_shape_hops(const gen_shape_t *s, int a, int b);
/* The same between two different hosts on leaves la and lb. */
int gen_shape_leaf_hops(const gen_shape_t *s, int la, int lb);

int gen_fat_tree(topo_t *t, const int *hosts, int nh, const gen_fabric_t *f, baton_err_t *e);
int gen_torus(topo_t *t, const int *nodes, int n, const int *dims, int ndims, double bw, double lat,
              baton_err_t *e);

#endif
