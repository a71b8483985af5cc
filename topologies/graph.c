/* graph.c - NCCL's ring search on a machine (see graph.h).
 *
 * 1. Paths: route every ordered pair of the first node's GPUs and class it
 *    by what it crosses (a direct link, switches, one CPU, two CPUs, a NIC)
 *    and its bottleneck bandwidth.
 * 2. Rings: for each speed step S (the pairs' bandwidths divided by 1..4,
 *    high to low), find rings one after another, each a cycle through every
 *    GPU whose hops are of the best path type and whose directed links all
 *    still have S to spare; a found ring takes S from each of them. Like
 *    NCCL, a new ring first tries the previous ring again, then its reverse,
 *    then a depth-first search that tries the hop with the most capacity
 *    left first. The speed with the most total bandwidth (rings x S) wins;
 *    ties go to the higher speed (fewer, faster channels).
 *
 *    DGX-1 (NV2 = two links):   0 =NV2= 3 =NV2= 2 =NV2= 1 =NV2= 5 ...
 *    S = 25 GB/s finds the NV2 cycle twice each way and the NV1 cycle once
 *    each way: 6 rings, 150 GB/s, every NVLink of every GPU busy.
 * 3. Across nodes (NICs near the GPUs, more GPUs than a node) a ring is a
 *    path through the node's GPUs that enters at its first GPU's NIC and
 *    leaves by its last's to the next node, as NCCL's search starts each
 *    ring at a NIC and ends it at one: the closing hop takes S from both
 *    NICs (net_room), speeds stop at the fastest way out, a fresh ring
 *    tries every GPU as its start and first the GPUs that share its NIC
 *    as its end (in and out on one rail). So the rings are as many as the
 *    NICs carry: a DGX-1 node's 4 NICs at 12.5 GB/s give 4 rings, each in
 *    and out by one NIC (its 6 NVLink rings would put two on a NIC); an
 *    xGMI mesh with a NIC per GPU gives 8 at 50 GB/s (its own search
 *    stops at 6 rings, two NICs idle), 400 GB/s out of the node.
 */
#include "graph.h"

#include <stdlib.h>
#include <string.h>

#define GRAPH_MAX_RINGS 16          /* NCCL's search stops at MAXCHANNELS/2 too */
#define GRAPH_MAX_GROUP 64          /* larger nodes keep rank order */
#define GRAPH_SEARCH_BUDGET 20000   /* DFS steps per ring: bounded on large nodes */

const char *graph_path_name(graph_path_t p) {
    static const char *const names[GRAPH_PATH_COUNT] = {"NV", "SW", "PHB", "SYS", "NET"};
    return p < GRAPH_PATH_COUNT ? names[p] : "?";
}

/* The class of a route: the worst thing it crosses. */
static graph_hop_t classify(const topo_t *t, const topo_route_t *r) {
    int cpus = 0, switches = 0, nics = 0, seen[4] = {-1, -1, -1, -1};
    for (int i = 0; i + 1 < r->nlinks; i++) {
        int v = topo_dlink(t, r->links[i])->dst, again = 0;
        node_kind_t k = topo_node(t, v)->kind;
        for (int j = 0; j < 4; j++) again |= seen[j] == v;
        if (k == NODE_CPU && !again && cpus < 4) seen[cpus] = v;
        cpus += k == NODE_CPU && !again;           /* staged routes pass their CPU twice */
        switches += k == NODE_SWITCH;
        nics += k == NODE_NIC;
    }
    graph_path_t type = nics ? GRAPH_PATH_NET : cpus > 1 ? GRAPH_PATH_SOCKETS : cpus ? GRAPH_PATH_HOST
                      : switches ? GRAPH_PATH_SWITCH : GRAPH_PATH_DIRECT;
    return (graph_hop_t){type, r->bw};
}

/* Search state: the capacity left on each directed link (bytes/s). */
typedef struct {
    topo_t *t;
    const graph_t *g;
    graph_path_t type;   /* the path type hops must have */
    int net;             /* rings close through the nodes' NICs (see net_room) */
    int *nic;            /* across nodes: local rank's nearest NIC (-1: none) */
    int exit;            /* the GPU the ring must end at, or -1 */
    double speed, *cap;
    int *ring, *used;
    long budget;
} search_t;

/* The room left on a route's most loaded link, or -1 without a route. */
static double route_room(search_t *x, int a, int b) {
    topo_route_t r;
    double room = 1e300;
    if (topo_route(x->t, a, b, &r, NULL) < 0) return -1;
    for (int i = 0; i < r.nlinks; i++) if (x->cap[r.links[i]] < room) room = x->cap[r.links[i]];
    return room;
}

static void route_take(search_t *x, int a, int b, int sign) {
    topo_route_t r;
    if (topo_route(x->t, a, b, &r, NULL) < 0) return;
    for (int i = 0; i < r.nlinks; i++) x->cap[r.links[i]] -= sign * x->speed;
}

/* Across nodes a ring's cycle in node 0 closes through the network: its
 * last GPU a sends to the next node's first GPU b, and the previous node's
 * a sends to this node's b. Both routes carry the ring: a's NIC out, b's
 * NIC in, as NCCL's search takes a ring's NET bandwidth at both ends (on
 * two nodes exactly the ring's two crossings). */
static double net_room(search_t *x, int a, int b) {
    int n = x->g->group;
    double r1 = route_room(x, a, n + b), r2 = route_room(x, n + a, b), room = r1 < r2 ? r1 : r2;
    return r1 >= 0 && r2 >= 0 && room >= x->speed * (1 - 1e-9) ? room : -1;
}

static void net_take(search_t *x, int a, int b, int sign) {
    route_take(x, a, x->g->group + b, sign);
    route_take(x, x->g->group + a, b, sign);
}

/* The room hop a -> b has left (its most loaded link's capacity), or -1 if
 * it is not of an allowed type or cannot carry the speed. */
static double hop_room(search_t *x, int a, int b) {
    const graph_hop_t *h = &x->g->path[a * x->g->group + b];
    if (a == b || h->type > x->type) return -1;
    double room = route_room(x, a, b);
    return room >= x->speed * (1 - 1e-9) ? room : -1;
}


/* The hop that closes a ring, last -> first: through the network when the
 * search is across nodes, else inside the node. */
static double close_room(search_t *x, int a, int b) { return x->net ? net_room(x, a, b) : hop_room(x, a, b); }

static void close_take(search_t *x, int a, int b, int sign) {
    if (x->net) net_take(x, a, b, sign);
    else route_take(x, a, b, sign);
}

/* The best next hop from a not yet tried: the better path type, then the
 * most room, then the lowest rank. -1 if none. */
static int next_hop(search_t *x, int a, const int *tried) {
    int best = -1;
    double best_room = 0;
    for (int b = 0; b < x->g->group; b++) {
        if (x->used[b] || tried[b]) continue;
        double room = hop_room(x, a, b);
        if (room < 0) continue;
        graph_path_t tb = x->g->path[a * x->g->group + b].type;
        if (best < 0 || tb < x->g->path[a * x->g->group + best].type ||
            (tb == x->g->path[a * x->g->group + best].type && room > best_room * (1 + 1e-9)))
            best = b, best_room = room;
    }
    return best;
}

/* Extend the ring at position i (ring[0..i-1] placed, their hops taken). */
static int dfs(search_t *x, int i) {
    int n = x->g->group, last = x->ring[i - 1];
    if (--x->budget < 0) return 0;
    if (i == n) {
        if (close_room(x, last, x->ring[0]) < 0) return 0;
        close_take(x, last, x->ring[0], 1);
        return 1;
    }
    int tried[GRAPH_MAX_GROUP] = {0};
    if (x->exit >= 0 && i < n - 1) tried[x->exit] = 1;     /* kept for the last place */
    for (int b; (b = next_hop(x, last, tried)) >= 0;) {
        tried[b] = 1;
        if (x->net && i == n - 1 && net_room(x, b, x->ring[0]) < 0) continue;   /* no way out to the next node */
        route_take(x, last, b, 1);
        x->used[b] = 1;
        x->ring[i] = b;
        if (dfs(x, i + 1)) return 1;
        x->used[b] = 0;
        route_take(x, last, b, -1);
        if (x->budget < 0) return 0;
    }
    return 0;
}

/* Take ring whole if every hop fits; else take nothing. */
static int take_ring(search_t *x, const int32_t *ring) {
    int n = x->g->group, k;
    for (k = 0; k + 1 < n; k++) {
        if (hop_room(x, ring[k], ring[k + 1]) < 0) break;
        route_take(x, ring[k], ring[k + 1], 1);
    }
    if (k + 1 == n && close_room(x, ring[n - 1], ring[0]) >= 0) {
        close_take(x, ring[n - 1], ring[0], 1);
        return 1;
    }
    while (k-- > 0) route_take(x, ring[k], ring[k + 1], -1);
    return 0;
}

/* A fresh ring from local rank `start` ending at `exit` (-1: anywhere):
 * a depth-first search. */
static int search_from(search_t *x, int start, int exit, int32_t *ring) {
    int n = x->g->group;
    memset(x->used, 0, (size_t)n * sizeof *x->used);
    x->ring[0] = start;
    x->used[start] = 1;
    x->exit = exit;
    x->budget = GRAPH_SEARCH_BUDGET;
    int found = dfs(x, 1);
    x->exit = -1;
    if (found) memcpy(ring, x->ring, (size_t)n * sizeof *ring);
    return found;
}

/* Across nodes, a fresh ring entering at `start`: first one that leaves by
 * the same NIC (a GPU that shares it: in and out on one rail, as
 * NCCL_CROSS_NIC's default prefers), else one that leaves anywhere. */
static int search_net(search_t *x, int start, int32_t *ring) {
    int way_in = 0;
    for (int a = 0; a < x->g->group && !way_in; a++) way_in = a != start && net_room(x, a, start) >= 0;
    if (!way_in) return 0;                          /* its NIC is full: no ring enters here */
    for (int e = 0; e < x->g->group; e++)
        if (e != start && x->nic[e] >= 0 && x->nic[e] == x->nic[start] && search_from(x, start, e, ring)) return 1;
    return search_from(x, start, -1, ring);
}

/* The next ring after prev as NCCL tries it: prev again, prev reversed
 * (same start; across nodes end to end, in where it left), or a fresh
 * search from local rank 0. Across nodes a ring starts where it enters
 * the node, so a fresh search tries every GPU as the start, as NCCL starts
 * a ring at each NIC in turn. */
static int next_ring(search_t *x, const int32_t *prev, int32_t *ring) {
    int n = x->g->group;
    if (prev) {
        for (int k = 0; k < n; k++) ring[k] = prev[k];
        if (take_ring(x, ring)) return 1;
        for (int k = 0; k < n; k++) ring[k] = x->net ? prev[n - 1 - k] : prev[(n - k) % n];
        if (take_ring(x, ring)) return 1;
    }
    if (!x->net) return search_from(x, 0, -1, ring);
    for (int start = 0; start < n; start++)
        if (search_net(x, start, ring)) return 1;
    return 0;
}

/* Rings at x->speed into out (GRAPH_MAX_RINGS x group); their count. */
static int rings_at(search_t *x, int32_t *out) {
    int n = x->g->group, found = 0;
    for (int l = 0; l < topo_nlinks(x->t); l++) x->cap[l] = topo_dlink(x->t, l)->bw;
    while (found < GRAPH_MAX_RINGS &&
           next_ring(x, found ? out + (size_t)(found - 1) * n : NULL, out + (size_t)found * n))
        found++;
    return found;
}

static int cmp_desc(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x < y) - (x > y);
}

/* Speed steps: every hop bandwidth of the allowed types over 1..4, and
 * across nodes every GPU's way to the next node, high to low, without
 * repeats; across nodes none faster than the fastest way out (a ring must
 * leave its node). Their count. */
static int speed_steps(search_t *x, double *steps, int max) {
    int n = x->g->group, k = 0;
    double out = 0;
    for (int a = 0; x->net && a < n && k + 4 <= max; a++) {
        topo_route_t r;
        if (topo_route(x->t, a, n + a, &r, NULL) < 0) continue;
        out = r.bw > out ? r.bw : out;
        for (int d = 1; d <= 4; d++) steps[k++] = r.bw / d;
    }
    for (int i = 0; i < n * n && k + 4 <= max; i++)
        if (i / n != i % n && x->g->path[i].type <= x->type)
            for (int d = 1; d <= 4; d++) steps[k++] = x->g->path[i].bw / d;
    qsort(steps, (size_t)k, sizeof *steps, cmp_desc);
    int m = 0;
    for (int i = 0; i < k; i++)
        if ((!x->net || steps[i] <= out * (1 + 1e-9)) && (m == 0 || steps[i] < steps[m - 1] * (1 - 1e-9))) steps[m++] = steps[i];
    return m;
}

/* The best rings of one path type: most total bandwidth, ties to speed. */
static int search_type(search_t *x, graph_t *g, int32_t *scratch) {
    double steps[4 * GRAPH_MAX_GROUP * 4];
    int nsteps = speed_steps(x, steps, (int)(sizeof steps / sizeof *steps)), best = 0;
    for (int i = 0; i < nsteps; i++) {
        x->speed = steps[i];
        int found = rings_at(x, scratch);
        if (found > 0 && found * steps[i] > best * g->speed * (1 + 1e-9)) {
            best = found;
            g->speed = steps[i];
            memcpy(g->local, scratch, (size_t)found * g->group * sizeof *scratch);
        }
    }
    return best;
}

/* Paths between the first node's GPUs; 1 if no ring order is better than
 * another: two GPUs, the pairs all alike and sharing what they cross (a
 * switch), or a single-port rank using one of its links at a time. */
static int find_paths(topo_t *t, graph_t *g, baton_err_t *e) {
    int n = g->group, flat = 1;
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++) {
            topo_route_t r;
            if (a == b) continue;
            if (topo_route(t, a, b, &r, e) < 0) return -1;
            g->path[a * n + b] = classify(t, &r);
            const graph_hop_t *h0 = &g->path[n > 1 ? 1 : 0];
            if (g->path[a * n + b].type != h0->type || g->path[a * n + b].bw != h0->bw) flat = 0;
        }
    /* a full mesh of links is not flat: its rings choose links, unless a rank
     * can use one link at a time anyway (single-port, the textbook machines);
     * two GPUs have one ring order whatever joins them */
    return n < 3 || (flat && (g->path[1].type != GRAPH_PATH_DIRECT || topo_params_c(t)->ports == 1));
}

/* Every node repeats node 0's rings, nodes visited in order: every node
 * of a folded cluster, not only its witnesses (node 0 is one). */
static int spread_orders(const topo_t *t, graph_t *g) {
    int p = topo_whole_ranks(t), n = g->group;
    int32_t *rank = malloc((size_t)g->nrings * p * sizeof *rank), *pos = malloc((size_t)g->nrings * p * sizeof *pos);
    if (!rank || !pos) { free(rank); free(pos); return -1; }
    for (int c = 0; c < g->nrings; c++)
        for (int i = 0; i < p; i++) {
            int r = (i / n) * n + g->local[c * n + i % n];
            rank[(size_t)c * p + i] = r;
            pos[(size_t)c * p + r] = i;
        }
    g->orders = (sched_orders_t){.nranks = p, .count = g->nrings, .rank = rank, .pos = pos};
    return 0;
}

static void graph_free(void *p) {
    graph_t *g = p;
    if (!g) return;
    free(g->path);
    free(g->local);
    free((void *)g->orders.rank);
    free((void *)g->orders.pos);
    free(g);
}

/* Search the rings of g's node: the best path type that has any. Across
 * nodes (more GPUs than a node, NICs near them) every ring closes through
 * the network (net_room). */
static int search_rings(topo_t *t, graph_t *g, int *nic) {
    int n = g->group;
    search_t x = {.t = t, .g = g, .net = g->nics > 0 && n < topo_nranks(t), .nic = nic, .exit = -1};
    x.cap = malloc((size_t)topo_nlinks(t) * sizeof *x.cap);
    x.ring = malloc((size_t)n * sizeof *x.ring);
    x.used = malloc((size_t)n * sizeof *x.used);
    int32_t *scratch = malloc((size_t)GRAPH_MAX_RINGS * n * sizeof *scratch);
    g->local = malloc((size_t)GRAPH_MAX_RINGS * n * sizeof *g->local);
    int rc = x.cap && x.ring && x.used && scratch && g->local ? 0 : -1;
    g->across = x.net;
    for (x.type = GRAPH_PATH_DIRECT; rc == 0 && g->nrings == 0 && x.type < GRAPH_PATH_COUNT; x.type++) {
        g->nrings = search_type(&x, g, scratch);
        g->worst = x.type;
    }
    free(x.cap);
    free(x.ring);
    free(x.used);
    free(scratch);
    return rc;
}

/* The NIC stride of n GPUs whose nearest NICs are nic[] (graph_t.stride):
 * s if local ranks j and j' share a NIC exactly when j / s == j' / s, with
 * at least two NICs; else 1. */
static int nic_stride(const int *nic, int n) {
    int s = 1;
    while (s < n && nic[s] == nic[0]) s++;
    if (nic[0] < 0 || s == n || n % s) return 1;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++)
            if ((nic[i] == nic[j]) != (i / s == j / s)) return 1;
    return s;
}

/* The class of a GPU's way to its NIC: what it crosses (classify's words). */
static graph_path_t nic_class(const int cross[NODE_KIND_COUNT]) {
    return cross[NODE_CPU] > 1 ? GRAPH_PATH_SOCKETS : cross[NODE_CPU] ? GRAPH_PATH_HOST
         : cross[NODE_SWITCH] ? GRAPH_PATH_SWITCH : GRAPH_PATH_DIRECT;
}

/* Each of the first node's GPUs' nearest NIC into nic[] (-1: none), found
 * once for the ring search and the stride, and the best way from a GPU to
 * its NIC into *inter (GRAPH_PATH_COUNT: no NIC); how many different ones. */
static int node_nics(topo_t *t, int n, int *nic, graph_path_t *inter) {
    int count = 0, cross[NODE_KIND_COUNT];
    *inter = GRAPH_PATH_COUNT;
    for (int j = 0; j < n; j++) {
        nic[j] = topo_nearest_via(t, topo_rank_node(t, j), NODE_NIC, cross);
        if (nic[j] >= 0 && nic_class(cross) < *inter) *inter = nic_class(cross);
    }
    for (int j = 0; j < n; j++) {
        int seen = nic[j] < 0;
        for (int i = 0; i < j && !seen; i++) seen = nic[i] == nic[j];
        count += !seen;
    }
    return count;
}

static graph_t *graph_search(topo_t *t, baton_err_t *e) {
    int p = topo_nranks(t), gs = topo_params_c(t)->group_size;
    graph_t *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    g->group = gs > 0 && gs <= p && p % gs == 0 ? gs : p;
    g->inter = GRAPH_PATH_COUNT;
    if (g->group < p && (g->group < 2 || g->group > GRAPH_MAX_GROUP)) {   /* no search below: only the ways */
        int nic[GRAPH_MAX_GROUP];                                          /* to the NICs (the first 64 GPUs') */
        node_nics(t, g->group < GRAPH_MAX_GROUP ? g->group : GRAPH_MAX_GROUP, nic, &g->inter);
    }
    if (g->group > GRAPH_MAX_GROUP || g->group < 2) return g;    /* nothing to classify, or too big to search */
    g->path = calloc((size_t)g->group * g->group, sizeof *g->path);
    int flat = g->path ? find_paths(t, g, e) : (err_set(e, BATON_ENOMEM, "out of memory in the ring search"), -1);
    graph_path_t inter = GRAPH_PATH_COUNT;
    int nic[GRAPH_MAX_GROUP], nics = flat >= 0 ? node_nics(t, g->group, nic, &inter) : 0;
    g->nics = g->group < p ? nics : 0;               /* across nodes only */
    g->inter = g->group < p ? inter : GRAPH_PATH_COUNT;
    if (flat == 0) search_rings(t, g, nic);
    g->stride = flat == 1 && g->group < p ? nic_stride(nic, g->group) : 1;
    if (flat == 0 && (g->nrings > 0 && spread_orders(t, g) < 0))
        flat = err_set(e, BATON_ENOMEM, "out of memory in the ring search");
    if (flat < 0) graph_free(g);
    return flat < 0 ? NULL : g;
}

const graph_t *graph_get(topo_t *t, baton_err_t *e) {
    graph_t *g = topo_derived(t);
    if (g) return g;
    if ((g = graph_search(t, e)) == NULL) return NULL;
    topo_set_derived(t, g, graph_free);
    return g;
}

int graph_nvlink(const graph_t *g) {
    if (g->group < 2 || g->path == NULL) return 1;
    const graph_hop_t *h = &g->path[1];
    return h->type == GRAPH_PATH_DIRECT || (h->type == GRAPH_PATH_SWITCH && h->bw >= 100e9);
}

int graph_node_nics(topo_t *t) {
    const graph_t *g = graph_get(t, NULL);
    return g ? g->nics : 0;
}

int graph_nic_count(const topo_t *t) {
    int k = 0;
    for (int i = 0; i < topo_nnodes(t); i++) k += topo_node(t, i)->kind == NODE_NIC;
    return k;
}

#define RING_SEARCH_MAX 16       /* search.cc: MAXCHANNELS / 2 */
int graph_domain_rings(topo_t *t) {
    const topo_params_t *tp = topo_params_c(t);
    int p = topo_whole_ranks(t), g = tp->group_size, built = topo_fold_witnesses(t);
    if (tp->channels > 0 || g < 2 || g >= p || p % g) return 0;
    const graph_t *gr = graph_get(t, NULL);
    if (gr == NULL || gr->nrings > 0 || !graph_nvlink(gr)) return 0;
    int domains = built > 0 ? built : p / g, nics = graph_nic_count(t) / (domains > 0 ? domains : 1);
    return nics < 2 ? 0 : nics < RING_SEARCH_MAX ? nics : RING_SEARCH_MAX;
}

int graph_ring_stride(topo_t *t) {
    const graph_t *g = graph_get(t, NULL);
    return g && g->nrings == 0 && g->stride > 1 ? g->stride : 1;
}

const sched_orders_t *graph_rings(topo_t *t, baton_err_t *e) {
    const graph_t *g = graph_get(t, e);
    return g && g->nrings > 0 ? &g->orders : NULL;
}
