/* fold.h - a cluster's witness nodes (fold.c): the copies of a node whose
 * routes to node 0 and to node N-1 show every route the closed forms see. */
#ifndef BATON_FOLD_H
#define BATON_FOLD_H

#include "generate.h"

/* Fabric hosts a copy may have (a GB200 NVL72 rack: 72 NICs). */
#define FOLD_HPN_MAX 256

/* The witness nodes of `nodes` copies of a node with hpn fabric hosts each
 * (NICs, node-major: host k hpn + a is node k's NIC a) on the fat-tree f:
 * ascending into w (at most max), their count returned; -1 if the fabric is
 * not a fat-tree baton builds or there are more than max classes. */
int fold_witnesses(const gen_fabric_t *f, int nodes, int hpn, int *w, int max);

/* Which two witnesses stand for two whole nodes (fold_map_pair): a pair the
 * same distances apart, whose routes have the same latencies and
 * bandwidths. NULL if out of memory or the fabric is not one baton builds. */
typedef struct fold_map fold_map_t;
/* hosts: the built nodes of the witnesses' fabric hosts (nw x hpn, node-major). */
fold_map_t *fold_map_new(const gen_fabric_t *f, int nodes, int hpn, const int *w, int nw, const int *hosts);
void fold_map_free(fold_map_t *m);
/* The witness pair (wk x nw + wx, indexes into w) standing for nodes k -> x,
 * or -1 if no pair of witnesses is as far apart as they are. */
int fold_map_pair(fold_map_t *m, int k, int x);

/* How a route between two nodes crosses the fabric, read off its stand-in
 * (topo_fold.c, topo_fold_cross): which host of each node it leaves and
 * enters by, and the up ports it takes. The fabric's own links are the
 * leaf's up port j (to a spine, or to the pod's aggregation switch j), then
 * through a core the aggregation switch's up port c to core j x radix/2 + c,
 * and down the same way to the other leaf. Destination-mod-k picks each up
 * port as (key + hops so far) mod ports, the key being the destination
 * host's port on its leaf (keyed) or a port inside the destination node
 * (the same in every copy): keyed, j and c are the picks less the key. */
typedef struct fold_cross {
    int a, b;       /* the source node's host and the destination node's, 0 .. hpn-1 */
    int links;      /* the fabric's own links: 0 (one leaf), 2 (a spine or an aggregation switch), 4 (a core) */
    int j, c;       /* up ports at the leaf and at the aggregation switch */
    int keyed;
} fold_cross_t;

/* The host of a node that fold_map_new was given: its place in its node, or -1. */
int fold_map_host(const fold_map_t *m, int node);
/* A leaf's up ports and an aggregation switch's (radix/2). */
void fold_map_ports(const fold_map_t *m, int *up, int *half);
/* The fabric's own directed links in the whole cluster, numbered 0 .. this - 1. */
long fold_map_fabric_links(const fold_map_t *m);
/* The numbers of the fabric's own links (cr->links of them, in route order)
 * that a route from node k to node x crossing as cr says takes in the whole
 * cluster, into id; -1 if nodes k and x are not as far apart as cr says. */
int fold_map_cross(const fold_map_t *m, int k, int x, const fold_cross_t *cr, long *id);

#endif
