/* topo_twin.c - machines that route alike share one route cache.
 *
 * baton doctor scores one machine per suspected cause (validate/doctor.c),
 * each loaded afresh: a network at x 0.6 of its rate, a slow node, one
 * NCCL variable. On a 512-rank dragonfly each would route its 262,144
 * pairs again, a quarter of a second apiece, though most causes move no
 * route: they scale rates. A route follows the rates only where
 * topo_route.c compares them:
 *   - widest: among a node's equally short next hops, the widest. Next hops
 *     are links into transit nodes, or the links into the destination
 *     itself (topo_route.c, next_hop); so only the order of a node's rates
 *     within those groups counts, ties included;
 *   - nvlink_to: a GPU link of PXN_NVLINK_BW or more is NVLink (PXN on).
 * Everything else a route reads is the machine's shape: its nodes' kinds,
 * which relay, the links and their order, the latencies (a route's sum,
 * kept with it), the ranks' nodes, and the routing knobs. Two machines
 * equal in all of that route every pair over the same links at the same
 * latency; only the narrowest link's rate is each one's own (topo_route
 * takes it from the sharing machine's links). The same test keeps one
 * machine's routes when its own rates change in that order
 * (topo_rates_route_alike, for topo_routes_settle). */
#include "topo_internal.h"

#include <stdlib.h>
#include <string.h>

static int same_ints(const int *a, const int *b, size_t n) {
    return (a == NULL) == (b == NULL) && (a == NULL || memcmp(a, b, n * sizeof *a) == 0);
}

/* The nodes, ranks, helper ranks, links (ends and latencies), adjacency
 * and transit sets: one shape. */
static int same_shape(const topo_t *a, const topo_t *b) {
    if (a->nnodes != b->nnodes || a->ndl != b->ndl || a->nranks != b->nranks || a->nreducers != b->nreducers)
        return 0;
    for (int v = 0; v < a->nnodes; v++) {
        const topo_node_t *x = &a->nodes[v], *y = &b->nodes[v];
        if (x->kind != y->kind || x->transit != y->transit || x->hidden != y->hidden) return 0;
    }
    for (int l = 0; l < a->ndl; l++) {
        const topo_dlink_t *x = &a->dl[l], *y = &b->dl[l];
        if (x->src != y->src || x->dst != y->dst || memcmp(&x->lat, &y->lat, sizeof x->lat) != 0) return 0;
    }
    return same_ints(a->rank_node, b->rank_node, (size_t)a->nranks) &&
           same_ints(a->reducer, b->reducer, (size_t)a->nreducers) &&
           same_ints(a->adj_off, b->adj_off, (size_t)a->nnodes + 1) &&
           same_ints(a->adj, b->adj, (size_t)a->ndl) && same_ints(a->adj_pos, b->adj_pos, (size_t)a->ndl) &&
           same_ints(a->comp, b->comp, (size_t)a->nnodes);
}

/* The knobs routes read (topo_route.c, route_compute). */
static int same_knobs(const topo_t *a, const topo_t *b) {
    const topo_params_t *x = &a->params, *y = &b->params;
    return x->p2p == y->p2p && x->gdr == y->gdr && x->pxn == y->pxn && a->no_shortcut == b->no_shortcut &&
           memcmp(&x->dragonfly, &y->dragonfly, sizeof x->dragonfly) == 0;
}

typedef struct { int group; double bw; int link; } ranked_t;

/* Links into transit nodes one group, links into one endpoint another;
 * within a group the widest first. */
static int by_group_rate(const void *p, const void *q) {
    const ranked_t *x = p, *y = q;
    if (x->group != y->group) return x->group < y->group ? -1 : 1;
    if (x->bw != y->bw) return x->bw > y->bw ? -1 : 1;
    return x->link < y->link ? -1 : 1;
}

/* Do node u's links rank alike at rates x and at b's rates, within their
 * groups (b's rates fall and tie where x's do)? buf: room for u's degree. */
static int same_order_at(const topo_t *b, const double *x, int u, ranked_t *buf) {
    int n = 0;
    for (int k = b->adj_off[u]; k < b->adj_off[u + 1]; k++) {
        int l = b->adj[k], v = b->dl[l].dst;
        buf[n++] = (ranked_t){b->nodes[v].transit ? -1 : v, x[l], l};
    }
    qsort(buf, (size_t)n, sizeof *buf, by_group_rate);
    for (int i = 0; i + 1 < n; i++) {
        if (buf[i].group != buf[i + 1].group) continue;
        double x0 = buf[i].bw, x1 = buf[i + 1].bw, y0 = b->dl[buf[i].link].bw, y1 = b->dl[buf[i + 1].link].bw;
        if ((x0 > x1) != (y0 > y1) || (x0 == x1) != (y0 == y1)) return 0;
    }
    return 1;
}

int topo_rates_route_alike(const topo_t *t, const double *x) {
    int most = 0;
    for (int u = 0; u < t->nnodes; u++)
        if (t->adj_off[u + 1] - t->adj_off[u] > most) most = t->adj_off[u + 1] - t->adj_off[u];
    ranked_t *buf = malloc(((size_t)most + 1) * sizeof *buf);
    if (buf == NULL) return 0;                       /* no memory: not shown alike, routed afresh */
    int alike = 1;
    for (int u = 0; alike && u < t->nnodes; u++) alike = same_order_at(t, x, u, buf);
    free(buf);
    for (int l = 0; alike && t->params.pxn && l < t->ndl; l++)
        alike = (x[l] >= PXN_NVLINK_BW) == (t->dl[l].bw >= PXN_NVLINK_BW);
    return alike;
}

/* The rates' order where widest and nvlink_to read it: a's rates against
 * b's (one shape). */
static int same_orders(const topo_t *a, const topo_t *b) {
    double *x = malloc(((size_t)a->ndl + 1) * sizeof *x);
    if (x == NULL) return 0;
    for (int l = 0; l < a->ndl; l++) x[l] = a->dl[l].bw;
    int alike = topo_rates_route_alike(b, x);
    free(x);
    return alike;
}

int topo_routes_alike(const topo_t *a, const topo_t *b) {
    if (a == b) return 1;
    if (a->fold.nodes || b->fold.nodes) return 0;  /* a folded machine's witnesses route by its map too */
    return same_shape(a, b) && same_knobs(a, b) && same_orders(a, b);
}

int topo_share_routes(topo_t *t, topo_t *twin) {
    topo_t *o = topo_route_owner(twin);
    if (o == t || topo_route_owner(t) != t || !topo_routes_alike(t, o)) return 0;
    if (t->rc.rates == NULL && topo_routes_record(t) < 0) return 0;   /* t's own rates moving in order keep the share */
    t->rc.root = o;
    t->rc.root_epoch = o->rc.epoch;
    return 1;
}
