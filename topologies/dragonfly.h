/* dragonfly.h - a dragonfly fabric (Kim, Dally, Scott, Abts, ISCA 2008; HPE
 * Slingshot builds one from 64-port Rosetta switches).
 *
 *   group 0                        group 1
 *   r0 --- r1 --- r2   (local:     r3 --- r4 --- r5
 *    \_____|_____/     all-to-all)  \_____|_____/
 *    |      \___________ global ____________/  |
 *    hosts (p per router)                    hosts
 *
 * Hosts hang `hosts_per_router` to a router, in order (host i on router
 * i / p); routers form groups of `routers_per_group` (router r in group
 * r / a; the last group may be smaller), joined all-to-all inside a group.
 * Every router has `globals` global ports; group i's ports are numbered
 * router-major (port q on router q / globals), and port o + k (g - 1) of
 * group i, o = (j - i - 1) mod g, goes to group j (copy k of the pair's
 * `links`, which default to as many as the smallest group's ports allow):
 * the "consecutive" arrangement. A dragonfly with more groups than a group
 * has global ports is impossible, and an error.
 *
 * Routing: shortest paths (minimal: local, global, local; destination-mod-k
 * among equal ones), or `adaptive`: the links are pooled as adaptive routing
 * uses them (a group's local links as one hub, a group pair's global links
 * as one cable: dragonfly.c, add_pool), and every pair of endpoints in
 * different groups takes, in equal shares by a hash of the pair, the
 * minimal path or a Valiant path through one of the other groups
 * (Slingshot's adaptive routing spreads a group pair's traffic over the
 * non-minimal paths; one route a pair is baton's, so that spread is over
 * pairs). */
#ifndef BATON_DRAGONFLY_H
#define BATON_DRAGONFLY_H

#include "topo.h"

typedef struct gen_dragonfly {
    const char *prefix;      /* router names: prefix.r0, prefix.r1, ... */
    int per_router;          /* hosts per router */
    int per_group;           /* routers per group */
    int globals;             /* global ports per router */
    int links;               /* global links between two groups; 0: as many as the ports allow */
    int adaptive;            /* 1: spread over Valiant paths (topo_dragonfly_t) */
    double bw, lat;          /* host and local links */
    double global_bw, global_lat;   /* global links (optical cables) */
} gen_dragonfly_t;

/* The shape of a dragonfly over nh hosts: counts, checked. */
typedef struct dfly_shape {
    int routers, groups, links;   /* links: per pair of groups */
} dfly_shape_t;

int dfly_shape(const gen_dragonfly_t *f, int nh, dfly_shape_t *s, baton_err_t *e);
/* Routers in group g. */
int dfly_group_size(const gen_dragonfly_t *f, const dfly_shape_t *s, int g);
/* The router of group i holding copy k of the global link to group j. */
int dfly_global_router(const gen_dragonfly_t *f, int groups, int i, int j, int k);

int gen_dragonfly(topo_t *t, const int *hosts, int nh, const gen_dragonfly_t *f, baton_err_t *e);

/* The global links a route from router ra to router rb (node ids) takes,
 * as node pairs hop[2i] -> hop[2i + 1]: none (one group), one (minimal:
 * one of the pair's `links` global links, by a hash) or, adaptive and picked
 * by the hash, two (Valiant: through another group, whose routers the route
 * joins by a local link). Adaptive, the pairs are hubs: the pooled cables.
 * Their count. topologies/topo_route.c joins the pieces with shortest
 * routes. */
/* The choices hash what a group rotation keeps (the routers' places in
 * their groups, the groups' distance, the host ports sport at ra and dport
 * at rb), so ranks a group apart are routed alike (sim --symmetric).
 * *pick: which of parallel links between two routers. */
int dfly_cross(const topo_t *t, int ra, int rb, int sport, int dport, int hop[4], int *pick);
/* Is node v one of the dragonfly's routers? */
int dfly_is_router(const topo_t *t, int v);

#endif
