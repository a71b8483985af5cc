/* topo.c - the machine graph, rank map and route cache. */
#include "topo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct route_slot {
    uint64_t key;        /* (src << 32 | dst) + 1; 0 = empty */
    const int32_t *links;   /* in a route block: never moves */
    int32_t nlinks;
    double lat, bw;
} route_slot_t;

/* Route link ids live in blocks that are never reallocated, so a route's
 * pointer stays valid for the topology's lifetime and callers may keep it. */
#define ROUTE_BLOCK 65536

struct topo {
    char *name;
    topo_node_t *nodes;
    int nnodes, capnodes;
    topo_dlink_t *dl;
    int ndl, capdl;
    int *rank_node;      /* rank -> node */
    int nranks;
    topo_params_t params;
    int *adj_off, *adj;  /* CSR: directed links leaving each node, in declaration order */
    int *adj_pos;        /* per directed link: its place among its source's links */
    route_slot_t *routes;
    uint32_t route_cap, route_count;
    int32_t **blocks;    /* every route block, for topo_free */
    int nblocks, capblocks;
    int32_t *cur;        /* the block being filled */
    int32_t cur_used;
    int *bfs_dist, *bfs_queue;     /* scratch for route search: distances, the queue */
    uint32_t *bfs_stamp;           /* a distance counts only if its stamp is the search's */
    uint32_t stamp;
    int32_t *route_tmp;  /* scratch: a probe route (at most nnodes - 1 links) */
    char **param_name, **param_value;   /* what the file's parameters were */
    int nparams;
    int *reducer;        /* reducing switches (helper ranks), in declaration order */
    int nreducers;
    int no_shortcut;     /* topo_set_route_shortcut(t, 0): search every pair */
    int routes_stale;    /* a link changed since the routes were cached */
    uint64_t searches;   /* bfs runs after topo_finalize */
    int dist_to;         /* bfs_dist holds every node's distance to this node; -1: partial */
    int *comp;           /* per node: its set of transit nodes joined by transit links (-1: not transit) */
    /* Complete searches kept for gated routes (funnel_dist), by source node. */
    struct dmap { int node; uint64_t used; uint8_t *hops; } *dmaps;
    int ndmaps, maxdmaps;
    uint64_t dmap_tick;
    int *dmap_slot;        /* per node: its map's index + 1, 0 if none */
    uint32_t *dmap_spent;  /* per node: nodes visited by stopped searches into it since it was last kept */
    const uint8_t *dmap;   /* while set, distances come from this map (255: unreached), not the stamps */
    int *name_slot;      /* open-addressing index of node names: node + 1, 0 = empty */
    uint32_t name_cap;   /* a power of two, more than twice nnodes */
    void *derived;       /* topo_set_derived */
    void (*derived_free)(void *);
};

static const char *kind_names[NODE_KIND_COUNT] = {"gpu", "switch", "nic", "cpu"};

const char *topo_kind_name(node_kind_t k) { return (k < NODE_KIND_COUNT) ? kind_names[k] : "?"; }

int topo_kind_parse(const char *s) {
    for (int i = 0; i < NODE_KIND_COUNT; i++)
        if (strcmp(s, kind_names[i]) == 0) return i;
    return -1;
}

topo_t *topo_create(const char *name) {
    topo_t *t = calloc(1, sizeof *t);
    if (t == NULL) return NULL;
    t->name = strdup(name ? name : "unnamed");
    if (t->name == NULL) { free(t); return NULL; }
    t->params.ports = 0;
    t->params.max_inflight = 8;
    t->params.p2p = 1;
    t->dist_to = -1;
    t->params.bw_scale = t->params.lat_scale = 1;
    t->params.launch = 2.8e-6;
    t->params.arch = -1;
    t->params.nvls_eff = 1;
    for (int i = 0; i < PROTO_COUNT; i++) t->params.proto[i] = proto_default((proto_t)i);
    return t;
}

void *topo_derived(const topo_t *t) { return t->derived; }

void topo_set_derived(topo_t *t, void *p, void (*free_fn)(void *)) {
    if (t->derived && t->derived_free) t->derived_free(t->derived);
    t->derived = p;
    t->derived_free = free_fn;
}

void topo_free(topo_t *t) {
    if (t == NULL) return;
    topo_set_derived(t, NULL, NULL);
    for (int i = 0; i < t->nnodes; i++) free(t->nodes[i].name);
    free(t->nodes);
    free(t->dl);
    free(t->rank_node);
    free(t->adj_off);
    free(t->adj);
    free(t->adj_pos);
    free(t->routes);
    for (int i = 0; i < t->nblocks; i++) free(t->blocks[i]);
    free(t->blocks);
    free(t->bfs_dist);
    free(t->bfs_stamp);
    free(t->bfs_queue);
    free(t->route_tmp);
    free(t->comp);
    for (int i = 0; i < t->ndmaps; i++) free(t->dmaps[i].hops);
    free(t->dmaps);
    free(t->dmap_slot);
    free(t->dmap_spent);
    for (int i = 0; i < t->nparams; i++) { free(t->param_name[i]); free(t->param_value[i]); }
    free(t->param_name);
    free(t->param_value);
    free(t->reducer);
    free(t->name_slot);
    free(t->name);
    free(t);
}

int topo_add_param(topo_t *t, const char *name, const char *value) {
    char **n = realloc(t->param_name, (size_t)(t->nparams + 1) * sizeof *n);
    if (n == NULL) return -1;
    t->param_name = n;
    char **v = realloc(t->param_value, (size_t)(t->nparams + 1) * sizeof *v);
    if (v == NULL) return -1;
    t->param_value = v;
    n[t->nparams] = strdup(name);
    v[t->nparams] = strdup(value);
    if (!n[t->nparams] || !v[t->nparams]) { free(n[t->nparams]); free(v[t->nparams]); return -1; }
    t->nparams++;
    return 0;
}

int topo_nparams(const topo_t *t) { return t->nparams; }

void topo_param_at(const topo_t *t, int i, const char **name, const char **value) {
    *name = t->param_name[i];
    *value = t->param_value[i];
}

/* ---- node names: a hash index, so a 4 M-node file loads in linear time -- */

static uint32_t name_hash(const char *s) {       /* FNV-1a */
    uint32_t h = 2166136261u;
    while (*s) h = (h ^ (unsigned char)*s++) * 16777619u;
    return h;
}

/* The slot holding name, or the empty slot where it would go. */
static uint32_t name_probe(const topo_t *t, const char *name) {
    uint32_t mask = t->name_cap - 1, i = name_hash(name) & mask;
    while (t->name_slot[i] && strcmp(t->nodes[t->name_slot[i] - 1].name, name) != 0) i = (i + 1) & mask;
    return i;
}

/* Make room for one more name: double the index and re-insert every node. */
static int name_reserve(topo_t *t) {
    if ((uint32_t)(t->nnodes + 1) * 2 < t->name_cap) return 0;
    uint32_t cap = t->name_cap ? t->name_cap * 2 : 64;
    int *slot = calloc(cap, sizeof *slot);
    if (slot == NULL) return -1;
    free(t->name_slot);
    t->name_slot = slot;
    t->name_cap = cap;
    for (int i = 0; i < t->nnodes; i++) slot[name_probe(t, t->nodes[i].name)] = i + 1;
    return 0;
}

int topo_find_node(const topo_t *t, const char *name) {
    return t->name_cap ? t->name_slot[name_probe(t, name)] - 1 : -1;
}

static int grow(void **p, int *cap, int need, size_t elem) {
    if (need <= *cap) return 0;
    int nc = *cap ? *cap * 2 : 16;
    while (nc < need) nc *= 2;
    void *q = realloc(*p, (size_t)nc * elem);
    if (q == NULL) return -1;
    *p = q;
    *cap = nc;
    return 0;
}

int topo_add_node(topo_t *t, const char *name, node_kind_t kind, int line, int col,
                  baton_err_t *e) {
    int prev = topo_find_node(t, name);
    if (prev >= 0)
        return err_set(e, BATON_EPARSE, "duplicate node name '%s' (first declared at line %d)",
                       name, t->nodes[prev].line);
    if (t->nnodes >= TOPO_MAX_NODES)
        return err_set(e, BATON_EINVAL, "more than %d nodes (baton's limit); '%s' is one too many", TOPO_MAX_NODES, name);
    if (grow((void **)&t->nodes, &t->capnodes, t->nnodes + 1, sizeof *t->nodes) < 0 || name_reserve(t) < 0)
        return err_set(e, BATON_ENOMEM, "out of memory adding node '%s'", name);
    topo_node_t *n = &t->nodes[t->nnodes];
    n->name = strdup(name);
    if (n->name == NULL) return err_set(e, BATON_ENOMEM, "out of memory");
    n->kind = kind;
    n->rank = -1;
    n->line = line;
    n->col = col;
    n->transit = kind != NODE_GPU;
    n->reduces = 0;
    n->hidden = 0;
    t->name_slot[name_probe(t, name)] = t->nnodes + 1;
    return t->nnodes++;
}

int topo_add_link(topo_t *t, int a, int b, double bw, double lat, baton_err_t *e) {
    if (a < 0 || a >= t->nnodes || b < 0 || b >= t->nnodes || a == b)
        return err_set(e, BATON_EINVAL, "a link needs two different existing nodes");
    if (!(bw > 0)) return err_set(e, BATON_EINVAL, "link bandwidth must be positive");
    if (!(lat >= 0)) return err_set(e, BATON_EINVAL, "link latency must not be negative");
    if (t->ndl + 2 > TOPO_MAX_LINKS)
        return err_set(e, BATON_EINVAL, "more than %d full-duplex links (baton's limit)", TOPO_MAX_LINKS / 2);
    if (grow((void **)&t->dl, &t->capdl, t->ndl + 2, sizeof *t->dl) < 0)
        return err_set(e, BATON_ENOMEM, "out of memory adding a link");
    t->dl[t->ndl++] = (topo_dlink_t){a, b, bw, lat};
    t->dl[t->ndl++] = (topo_dlink_t){b, a, bw, lat};
    return 0;
}

void topo_set_transit(topo_t *t, int node, int transit) { t->nodes[node].transit = transit; }

void topo_set_route_shortcut(topo_t *t, int on) {
    t->no_shortcut = !on;
    t->routes_stale = 1;                 /* routes found the other way are forgotten */
}

uint64_t topo_nsearches(const topo_t *t) { return t->searches; }

void topo_set_reduces(topo_t *t, int node, int reduces) { t->nodes[node].reduces = reduces; }

int topo_nreducers(const topo_t *t) { return t->nreducers; }

/* The node of rank r, or of helper rank r >= nranks (a reducing switch). */
static int node_of(const topo_t *t, int r) { return r < t->nranks ? t->rank_node[r] : t->reducer[r - t->nranks]; }

int topo_set_rank(topo_t *t, int node, int rank, baton_err_t *e) {
    if (rank < 0) return err_set(e, BATON_EINVAL, "rank must not be negative");
    t->nodes[node].rank = rank;
    return 0;
}

static int build_adjacency(topo_t *t) {
    t->adj_off = calloc((size_t)t->nnodes + 1, sizeof *t->adj_off);
    t->adj = malloc(((size_t)t->ndl + 1) * sizeof *t->adj);
    t->adj_pos = malloc(((size_t)t->ndl + 1) * sizeof *t->adj_pos);
    t->bfs_dist = malloc(((size_t)t->nnodes + 1) * sizeof *t->bfs_dist);
    t->bfs_stamp = calloc((size_t)t->nnodes + 1, sizeof *t->bfs_stamp);
    t->bfs_queue = malloc(((size_t)t->nnodes + 1) * sizeof *t->bfs_queue);
    t->route_tmp = malloc(((size_t)t->nnodes + 1) * sizeof *t->route_tmp);
    if (!t->adj_off || !t->adj || !t->adj_pos || !t->bfs_dist || !t->bfs_stamp || !t->bfs_queue || !t->route_tmp)
        return -1;
    for (int i = 0; i < t->ndl; i++) t->adj_off[t->dl[i].src + 1]++;
    for (int i = 0; i < t->nnodes; i++) t->adj_off[i + 1] += t->adj_off[i];
    int *fill = calloc((size_t)t->nnodes + 1, sizeof *fill);
    if (fill == NULL) return -1;
    for (int i = 0; i < t->ndl; i++) {
        int s = t->dl[i].src;
        t->adj_pos[i] = fill[s];
        t->adj[t->adj_off[s] + fill[s]++] = i;
    }
    free(fill);
    return 0;
}

/* Node v's distance in the last search, -1 if it did not reach v. */
static int dist_of(const topo_t *t, int v) {
    if (t->dmap) return t->dmap[v] == 255 ? -1 : t->dmap[v];
    return t->bfs_stamp[v] == t->stamp ? t->bfs_dist[v] : -1;
}

static void dist_set(topo_t *t, int v, int d) { t->bfs_dist[v] = d; t->bfs_stamp[v] = t->stamp; }

/* Breadth-first search from node s, stopping once `stop` is reached (-1:
 * search everything): dist_of(v) = hops from s, -1 if not reached. Stopping
 * early leaves every node closer than `stop` with its final distance. A new
 * stamp forgets the last search in O(1), so a search costs what it visits,
 * not the whole graph (a rail of a cluster is an eighth of it). */
static int bfs(topo_t *t, int s, int stop) {
    int *q = t->bfs_queue, head = 0, tail = 0;
    t->dist_to = stop < 0 ? s : -1;      /* stopped early, some distances are missing */
    t->searches++;
    if (++t->stamp == 0) {               /* wrapped: clear the old stamps once */
        memset(t->bfs_stamp, 0, (size_t)t->nnodes * sizeof *t->bfs_stamp);
        t->stamp = 1;
    }
    dist_set(t, s, 0);
    q[tail++] = s;
    while (head < tail) {
        int u = q[head++];
        if (u != s && !t->nodes[u].transit) continue;       /* an endpoint, not a relay */
        for (int k = t->adj_off[u]; k < t->adj_off[u + 1]; k++) {
            int v = t->dl[t->adj[k]].dst;
            if (dist_of(t, v) >= 0) continue;
            dist_set(t, v, t->bfs_dist[u] + 1);
            q[tail++] = v;
            if (v == stop) return tail;
        }
    }
    return tail;
}

int topo_nearest(topo_t *t, int node, node_kind_t kind) {
    if (node < 0 || node >= t->nnodes) return -1;
    int n = bfs(t, node, -1), best = -1;
    for (int i = 0; i < n; i++) {                        /* the queue holds the reached nodes, nearest first */
        int v = t->bfs_queue[i];
        if (v != node && t->nodes[v].kind == kind && (best < 0 || dist_of(t, v) < dist_of(t, best) ||
                                                       (dist_of(t, v) == dist_of(t, best) && v < best)))
            best = v;
    }
    return best;
}

static int map_ranks(topo_t *t, const char *file, baton_err_t *e) {
    int p = 0;
    for (int i = 0; i < t->nnodes; i++)
        if (t->nodes[i].rank >= p) p = t->nodes[i].rank + 1;
    if (p == 0) return err_set(e, BATON_EPARSE, "%s:1:1: the topology has no ranks: declare gpu nodes (kind: gpu, the default)", file);
    t->rank_node = malloc((size_t)p * sizeof *t->rank_node);
    if (t->rank_node == NULL) return err_set(e, BATON_ENOMEM, "out of memory");
    for (int r = 0; r < p; r++) t->rank_node[r] = -1;
    for (int i = 0; i < t->nnodes; i++) {
        topo_node_t *n = &t->nodes[i];
        if (n->rank < 0) continue;
        if (t->rank_node[n->rank] >= 0)
            return err_set(e, BATON_EPARSE, "%s:%d:%d: rank %d given to both '%s' and '%s'",
                           file, n->line, n->col, n->rank,
                           t->nodes[t->rank_node[n->rank]].name, n->name);
        t->rank_node[n->rank] = i;
    }
    for (int r = 0; r < p; r++)
        if (t->rank_node[r] < 0) {                  /* point at the highest rank: the one past the gap */
            const topo_node_t *hi = &t->nodes[t->rank_node[p - 1]];
            return err_set(e, BATON_EPARSE, "%s:%d:%d: ranks must be numbered 0..%d without gaps; rank %d is missing",
                           file, hi->line, hi->col, p - 1, r);
        }
    t->nranks = p;
    return 0;
}

/* ---- reachability: every rank reaches every rank; some rank each reducer  */

static int uf_find(int *up, int x) {
    while (up[x] != x) x = up[x] = up[up[x]];
    return x;
}

/* Does one connected set of transit nodes touch every rank? Then every pair
 * is joined through it (routes relay only through transit nodes, so reaching
 * rank 0 is not enough: GPUs do not relay). stamp[c] >= 0 afterwards for
 * every set some rank touches. */
static int one_fabric(const topo_t *t, int *up, int *stamp, int *count) {
    for (int i = 0; i < t->nnodes; i++) { up[i] = i; stamp[i] = -1; count[i] = 0; }
    for (int i = 0; i < t->ndl; i++)
        if (t->nodes[t->dl[i].src].transit && t->nodes[t->dl[i].dst].transit)
            up[uf_find(up, t->dl[i].src)] = uf_find(up, t->dl[i].dst);
    int best = -1;
    for (int r = 0; r < t->nranks; r++) {
        int u = t->rank_node[r];
        for (int k = t->adj_off[u] - 1; k < t->adj_off[u + 1]; k++) {
            int v = k < t->adj_off[u] ? u : t->dl[t->adj[k]].dst;   /* the rank itself, then its neighbours */
            if (!t->nodes[v].transit) continue;
            int c = uf_find(up, v);
            if (stamp[c] == r) continue;
            stamp[c] = r;
            if (++count[c] == t->nranks) best = c;
        }
    }
    return best >= 0;
}

/* Every rank reaches every other rank: one shared fabric (linear time) or,
 * failing that, a search from each rank. Every reducer is reached by some
 * rank (a node's NVSwitch by its own GPUs: a cluster's reducing switches are
 * not every rank's; a schedule that sends a rank to a switch it cannot reach
 * fails with that route). */
static int check_all_pairs(topo_t *t, const char *file, baton_err_t *e) {
    int n = t->nnodes, *up = malloc(3 * ((size_t)n + 1) * sizeof *up);
    if (up == NULL) return err_set(e, BATON_ENOMEM, "out of memory");
    int ok = one_fabric(t, up, up + n, up + 2 * n);
    for (int i = 0; i < t->nreducers; i++)
        if (up[n + uf_find(up, t->reducer[i])] < 0) {
            const topo_node_t *nr = &t->nodes[t->reducer[i]];
            free(up);
            return err_set(e, BATON_EPARSE, "%s:%d:%d: no rank reaches the reducing switch '%s'", file, nr->line, nr->col,
                           nr->name);
        }
    for (int i = 0; i < n; i++) up[i] = uf_find(up, i);      /* each node's set, for gated routes */
    for (int i = 0; i < n; i++) if (!t->nodes[i].transit) up[i] = -1;
    t->comp = realloc(up, ((size_t)n + 1) * sizeof *up);
    if (t->comp == NULL) t->comp = up;
    for (int a = 0; a < t->nranks && !ok; a++) {
        bfs(t, t->rank_node[a], -1);
        for (int b = 0; b < t->nranks; b++) {
            int v = t->rank_node[b];
            if (dist_of(t, v) >= 0) continue;
            const topo_node_t *na = &t->nodes[t->rank_node[a]], *nb = &t->nodes[v];
            return err_set(e, BATON_EPARSE, "%s:%d:%d: no route from rank %d ('%s') to '%s': routes pass only "
                           "through switches, NICs and CPUs (a GPU relays only with transit: true)",
                           file, nb->line, nb->col, a, na->name, nb->name);
        }
    }
    return 0;
}

/* p2p off with host_bw set: each CPU gets its host memory, a node joined to
 * it by one link at host_bw, so staged traffic goes in and out of memory,
 * shares it and is counted there. Without host_bw no such hop: a link much
 * faster than the routes through it would only make FIFO reservations hold
 * it for their bottleneck's time. */
static int add_host_memory(topo_t *t, baton_err_t *e) {
    int n = t->nnodes;
    double bw = t->params.host_bw;
    for (int i = 0; i < n; i++) {
        if (t->nodes[i].kind != NODE_CPU) continue;
        char name[512];
        snprintf(name, sizeof name, "%s.hostmem", t->nodes[i].name);
        int m = topo_add_node(t, name, NODE_SWITCH, t->nodes[i].line, t->nodes[i].col, e);
        if (m < 0) return m;
        t->nodes[m].hidden = 1;
        int rc = topo_add_link(t, i, m, bw, 0, e);
        if (rc < 0) return rc;
    }
    return 0;
}

/* The directed link from CPU node c into its host memory, -1 if none. */
static int host_memory_link(const topo_t *t, int c) {
    for (int k = t->adj_off[c]; k < t->adj_off[c + 1]; k++)
        if (t->nodes[t->dl[t->adj[k]].dst].hidden) return t->adj[k];
    return -1;
}

int topo_finalize(topo_t *t, const char *file, baton_err_t *e) {
    int rc = map_ranks(t, file, e);
    if (rc < 0) return rc;
    if (!t->params.p2p && t->params.host_bw > 0 && (rc = add_host_memory(t, e)) < 0) return rc;
    t->reducer = malloc(((size_t)t->nnodes + 1) * sizeof *t->reducer);
    if (t->reducer == NULL) return err_set(e, BATON_ENOMEM, "out of memory");
    for (int i = 0; i < t->nnodes; i++)
        if (t->nodes[i].reduces) t->reducer[t->nreducers++] = i;
    if (t->params.group_size > 0 && t->nranks % t->params.group_size)
        return err_set(e, BATON_EPARSE, "%s: group_size %d does not divide the %d ranks",
                       file, t->params.group_size, t->nranks);
    if (build_adjacency(t) < 0) return err_set(e, BATON_ENOMEM, "out of memory");
    bfs(t, t->rank_node[0], -1);
    for (int r = 1; r < t->nranks; r++) {
        const topo_node_t *n = &t->nodes[t->rank_node[r]];
        if (dist_of(t, t->rank_node[r]) < 0)
            return err_set(e, BATON_EPARSE,
                           "%s:%d:%d: rank %d ('%s') is disconnected: no path from rank 0 ('%s')",
                           file, n->line, n->col, r, n->name, t->nodes[t->rank_node[0]].name);
    }
    rc = check_all_pairs(t, file, e);
    t->searches = 0;
    return rc;
}

int topo_nranks(const topo_t *t) { return t->nranks; }
int topo_nnodes(const topo_t *t) { return t->nnodes; }
int topo_nlinks(const topo_t *t) { return t->ndl; }
const char *topo_name(const topo_t *t) { return t->name; }
const topo_node_t *topo_node(const topo_t *t, int i) { return &t->nodes[i]; }
const topo_dlink_t *topo_dlink(const topo_t *t, int i) { return &t->dl[i]; }
int topo_rank_node(const topo_t *t, int rank) { return t->rank_node[rank]; }
const char *topo_rank_name(const topo_t *t, int rank) { return t->nodes[t->rank_node[rank]].name; }
const char *topo_reducer_name(const topo_t *t, int i) { return t->nodes[t->reducer[i]].name; }
topo_params_t *topo_params(topo_t *t) { return &t->params; }
const topo_params_t *topo_params_c(const topo_t *t) { return &t->params; }

/* --- route cache: open addressing on the (src, dst) pair --------------- */

static uint32_t hash_key(uint64_t k) {
    k ^= k >> 33; k *= 0xff51afd7ed558ccdULL; k ^= k >> 33;
    return (uint32_t)k;
}

static route_slot_t *route_slot(topo_t *t, uint64_t key) {
    uint32_t mask = t->route_cap - 1, i = hash_key(key) & mask;
    while (t->routes[i].key != 0 && t->routes[i].key != key) i = (i + 1) & mask;
    return &t->routes[i];
}

static int route_rehash(topo_t *t) {
    uint32_t oldcap = t->route_cap;
    route_slot_t *old = t->routes;
    t->route_cap = oldcap ? oldcap * 2 : 1024;
    t->routes = calloc(t->route_cap, sizeof *t->routes);
    if (t->routes == NULL) { t->routes = old; t->route_cap = oldcap; return -1; }
    for (uint32_t i = 0; i < oldcap; i++)
        if (old[i].key) *route_slot(t, old[i].key) = old[i];
    free(old);
    return 0;
}

/* Room for n link ids that will not move. A route longer than a block gets
 * a block of its own; the current block stays current. */
static int32_t *route_alloc(topo_t *t, int n) {
    int own = n > ROUTE_BLOCK;
    if (own || t->cur == NULL || t->cur_used + n > ROUTE_BLOCK) {
        int32_t *b = malloc((size_t)(own ? n : ROUTE_BLOCK) * sizeof *b);
        if (b == NULL || grow((void **)&t->blocks, &t->capblocks, t->nblocks + 1, sizeof *t->blocks) < 0) {
            free(b);
            return NULL;
        }
        t->blocks[t->nblocks++] = b;
        if (own) return b;
        t->cur = b;
        t->cur_used = 0;
    }
    int32_t *r = t->cur + t->cur_used;
    t->cur_used += n;
    return r;
}

/* Is link k (out of a node du hops from d) one step closer to d, through a
 * node routes may use? */
static int next_hop(const topo_t *t, int du, int d, int k) {
    int v = t->dl[t->adj[k]].dst;
    return dist_of(t, v) == du - 1 && du > 0 && (v == d || t->nodes[v].transit);
}

/* Append link k to a route being built. */
static void route_add(const topo_t *t, route_slot_t *r, int32_t *links, int k) {
    const topo_dlink_t *l = &t->dl[k];
    links[r->nlinks++] = k;
    r->lat += l->lat;
    if (l->bw < r->bw) r->bw = l->bw;
}

/* Walk from u towards d (dist[] = hops to d, or to any node beyond d on
 * every path through it: only differences count), the route so far first.
 * Where several next hops are equally short, take number (key + hop) mod
 * ways. */
static void walk_keyed(const topo_t *t, int u, int d, int key, route_slot_t *r, int32_t *links) {
    while (u != d) {
        int ways = 0, pick, du = dist_of(t, u);
        for (int k = t->adj_off[u]; k < t->adj_off[u + 1]; k++) ways += next_hop(t, du, d, k);
        pick = (key + r->nlinks) % ways;
        for (int k = t->adj_off[u]; k < t->adj_off[u + 1]; k++) {
            if (!next_hop(t, du, d, k) || pick-- > 0) continue;
            route_add(t, r, links, t->adj[k]);
            u = t->dl[t->adj[k]].dst;
            break;
        }
    }
}

/* The route: link `first` (-1: none), the walk u -> v, links last[0], last[1] (-1: none). */
static void route_fill(const topo_t *t, int first, int u, int v, const int *last, int key, route_slot_t *r,
                       int32_t *links) {
    *r = (route_slot_t){.links = links, .nlinks = 0, .lat = 0, .bw = 1e300};
    if (first >= 0) route_add(t, r, links, first);
    walk_keyed(t, u, v, key, r, links);
    for (int i = 0; i < 2; i++)
        if (last[i] >= 0) route_add(t, r, links, last[i]);
}

/* The CPU nearest to node s (first found breadth-first), or -1. */
static int nearest_cpu(topo_t *t, int s) {
    int reached = bfs(t, s, -1);
    for (int i = 0; i < reached; i++)
        if (t->nodes[t->bfs_queue[i]].kind == NODE_CPU) return t->bfs_queue[i];
    return -1;
}

/* The key of destination-mod-k routing: the port, on the last switch of the
 * path with more than two links, through which the path goes down towards d
 * (a host's port on its leaf). The part of the path below the spines is the
 * same whichever spine is taken, so a first walk finds it. */
static int down_port(const topo_t *t, const route_slot_t *probe) {
    for (int i = probe->nlinks - 1; i >= 0; i--) {
        int u = t->dl[probe->links[i]].src;
        if (t->adj_off[u + 1] - t->adj_off[u] <= 2) continue;
        return t->adj_pos[probe->links[i]];
    }
    return 0;
}

/* Shortest route `first`, u ... v (dist[] = hops to v), `last`; among equal
 * next hops destination-mod-k picks (the deterministic fat-tree routing of
 * InfiniBand subnet managers), which spreads the hosts of one leaf over all
 * the spines. A probe walk with key 0 finds the destination's down port. */
static int route_walk(topo_t *t, int first, int u, int v, const int *last, route_slot_t *slot) {
    if (u != v && dist_of(t, u) < 0) return -2;
    int inner = u == v ? 0 : dist_of(t, u) - dist_of(t, v);  /* unreachable: possible only when staged through a CPU (p2p: false) */
    int n = (first >= 0) + inner + (last[0] >= 0) + (last[1] >= 0);
    route_slot_t probe;
    route_fill(t, first, u, v, last, 0, &probe, t->route_tmp);
    int32_t *links = route_alloc(t, n > 0 ? n : 1);
    if (links == NULL) return -1;
    route_fill(t, first, u, v, last, down_port(t, &probe), slot, links);
    return 0;
}

#define MAX_GATES 8

/* The gates of an endpoint n: its neighbours, if every one relays (a GPU on
 * an NVSwitch and a NIC), with one link each; 0 if not (then n's routes are
 * searched in full). */
static int gates(const topo_t *t, int n, int *g, int *link) {
    int k = 0;
    if (t->nodes[n].transit) return 0;
    for (int i = t->adj_off[n]; i < t->adj_off[n + 1]; i++) {
        int v = t->dl[t->adj[i]].dst;
        if (!t->nodes[v].transit || k == MAX_GATES) return 0;
        for (int j = 0; j < k; j++)
            if (g[j] == v) return 0;
        link[k] = t->adj[i];
        g[k++] = v;
    }
    return k;
}

/* The one link from u to v, or -1 if there is none or more than one (the
 * full search would choose among them). */
static int only_link(const topo_t *t, int u, int v) {
    int l = -1;
    for (int i = t->adj_off[u]; i < t->adj_off[u + 1]; i++)
        if (t->dl[t->adj[i]].dst == v) {
            if (l >= 0) return -1;
            l = t->adj[i];
        }
    return l;
}

/* g's one relaying neighbour when g's other neighbours do not relay (a NIC
 * between its GPU and its leaf switch): every route into g comes from it. */
static int funnel(const topo_t *t, int g) {
    int f = -1;
    for (int i = t->adj_off[g]; i < t->adj_off[g + 1]; i++) {
        int v = t->dl[t->adj[i]].dst;
        if (!t->nodes[v].transit) continue;
        if (f >= 0 && f != v) return -1;
        f = v;
    }
    return f;
}

/* Hops to f from every node, from a cache of complete searches (a byte per
 * node, 255 unreached; 512 MiB at most, 2 to 4,096 maps; the least recently
 * used goes): a pattern's routes into one leaf's NICs share one search,
 * however they interleave with routes into other leaves. A route not in the
 * cache first searches only until it reaches `from` (a near pair stops
 * early) and the stamps' distances serve: NULL, dist_of reads the stamps.
 * Once stopped searches into f have visited half the nodes a whole search
 * would (ski rental: a bounded multiple of the better choice's work), the whole
 * search is run and kept. -1 on failure. */
static int funnel_dist(topo_t *t, int f, int from, const uint8_t **out) {
    *out = NULL;
    if (t->dmap_slot && t->dmap_slot[f]) {
        struct dmap *m = &t->dmaps[t->dmap_slot[f] - 1];
        m->used = ++t->dmap_tick;
        *out = m->hops;
        return 0;
    }
    if (t->dist_to == f) return 0;
    if (t->maxdmaps == 0) {
        long k = (512L << 20) / ((long)t->nnodes + 1);
        t->maxdmaps = k < 2 ? 2 : k > 4096 ? 4096 : (int)k;
        t->dmaps = calloc((size_t)t->maxdmaps, sizeof *t->dmaps);
        t->dmap_slot = calloc((size_t)t->nnodes + 1, sizeof *t->dmap_slot);
        t->dmap_spent = calloc((size_t)t->nnodes + 1, sizeof *t->dmap_spent);
        if (!t->dmaps || !t->dmap_slot || !t->dmap_spent) return -1;
    }
    t->dmap_spent[f] += (uint32_t)bfs(t, f, from);
    if (t->dmap_spent[f] < (uint32_t)t->nnodes / 2) return 0;
    t->dmap_spent[f] = 0;
    int reached = bfs(t, f, -1);
    if (dist_of(t, t->bfs_queue[reached - 1]) > 254) return 0;   /* too far for a byte: the stamps serve */
    struct dmap *m = &t->dmaps[0];
    if (t->ndmaps < t->maxdmaps) {
        m = &t->dmaps[t->ndmaps];
        if ((m->hops = malloc((size_t)t->nnodes + 1)) == NULL) return -1;
        t->ndmaps++;
    } else {
        for (int i = 1; i < t->ndmaps; i++)
            if (t->dmaps[i].used < m->used) m = &t->dmaps[i];
        t->dmap_slot[m->node] = 0;
    }
    for (int v = 0; v < t->nnodes; v++) {
        int d = dist_of(t, v);
        m->hops[v] = (uint8_t)(d < 0 ? 255 : d);
    }
    m->node = f;
    m->used = ++t->dmap_tick;
    t->dmap_slot[f] = (int)(m - t->dmaps) + 1;
    *out = m->hops;
    return 0;
}

/* Routes between endpoints whose neighbours all relay (a GPU on a switch
 * port; a GPU on an NVSwitch and a NIC), without a search per pair: on a
 * 65,536-GPU switch no search at all. Routes enter and leave only through
 * gates, and a gate path needs both gates in one set of transit nodes. One
 * shared gate: the route is the two links through it. Else, if exactly one
 * pair of gates (gs, gd) shares a set, every route runs s, gs ... gd, d, and
 * the walk gs ... gd with distances to gd is the full search's walk (only
 * differences count; links come in pairs 2i: a -> b, 2i + 1: b -> a, so
 * d's link to gd, reversed, enters d); where gd funnels through one switch (a NIC on its
 * leaf) the distances are the leaf's, one search for all its NICs. 1 if
 * done, 0 if not applicable, < 0 on error. Exactness: the route_shortcut
 * test and the loader's differential fuzzer. */
static int route_gated(topo_t *t, int s, int d, route_slot_t *slot) {
    int gs[MAX_GATES], ls[MAX_GATES], gd[MAX_GATES], ld[MAX_GATES], a = -1, b = -1, shared = 0, pairs = 0;
    int ns = gates(t, s, gs, ls), nd = ns ? gates(t, d, gd, ld) : 0;
    if (ns == 0 || nd == 0 || t->comp == NULL) return 0;
    for (int i = 0; i < ns; i++)
        for (int j = 0; j < nd; j++) {
            if (gs[i] == gd[j]) shared++, a = i, b = j;
            else if (!shared && t->comp[gs[i]] == t->comp[gd[j]]) pairs++, a = i, b = j;
        }
    if (shared > 1 || (!shared && pairs != 1)) return 0;
    int into = ld[b] ^ 1, f = shared ? -1 : funnel(t, gd[b]), via = f >= 0 ? only_link(t, f, gd[b]) : -1;
    if (shared) return route_walk(t, ls[a], gs[a], gs[a], (int[2]){into, -1}, slot) < 0 ? -1 : 1;
    if (via < 0) f = gd[b];                            /* no funnel: distances to gd itself */
    const uint8_t *map;
    if (funnel_dist(t, f, gs[a], &map) < 0) return -1;
    t->dmap = map;
    int rc = route_walk(t, ls[a], gs[a], f, (int[2]){via < 0 ? into : via, via < 0 ? -1 : into}, slot);
    t->dmap = NULL;
    return rc < 0 ? rc : 1;
}

/* Can a route join nodes s and d at all? Routes relay only through transit
 * nodes, so only if they are neighbours or touch one set of transit nodes
 * (t->comp). O(degree^2): another node's reducing switch is refused at once,
 * not after a search of the whole fabric. */
static int may_reach(const topo_t *t, int s, int d) {
    if (t->comp == NULL || s == d) return 1;
    for (int i = t->adj_off[s] - 1; i < t->adj_off[s + 1]; i++) {
        int u = i < t->adj_off[s] ? s : t->dl[t->adj[i]].dst;
        if (u == d) return 1;
        if (t->comp[u] < 0) continue;
        for (int k = t->adj_off[d] - 1; k < t->adj_off[d + 1]; k++) {
            int v = k < t->adj_off[d] ? d : t->dl[t->adj[k]].dst;
            if (t->comp[v] == t->comp[u]) return 1;
        }
    }
    return 0;
}

static int route_compute(topo_t *t, int s, int d, route_slot_t *slot) {
    int via = -1;
    if (!may_reach(t, s, d)) return -2;
    if (!t->params.p2p && s != d && t->nodes[s].kind == NODE_GPU && t->nodes[d].kind == NODE_GPU)
        via = nearest_cpu(t, s);
    if (via < 0 && s != d && !t->no_shortcut) {     /* GPUs on switch ports, NVSwitch + NIC: no search per pair */
        int rc = route_gated(t, s, d, slot);
        if (rc != 0) return rc < 0 ? rc : 0;
    }
    if (via < 0) {
        if (s != d && t->dist_to != d) bfs(t, d, s);     /* distances to d; links are full duplex */
        return route_walk(t, -1, s, d, (int[2]){-1, -1}, slot);
    }
    /* staged in host memory: s up to the CPU, into its memory and out, down to d */
    route_slot_t up, down;
    bfs(t, via, s);
    int rc = route_walk(t, -1, s, via, (int[2]){-1, -1}, &up);
    if (rc < 0) return rc;
    bfs(t, d, via);
    if ((rc = route_walk(t, -1, via, d, (int[2]){-1, -1}, &down)) < 0) return rc;
    int mem = host_memory_link(t, via), nm = mem >= 0 ? 2 : 0;
    int32_t *links = route_alloc(t, up.nlinks + nm + down.nlinks);
    if (links == NULL) return -1;
    memcpy(links, up.links, (size_t)up.nlinks * sizeof *links);
    if (nm) links[up.nlinks] = mem, links[up.nlinks + 1] = mem ^ 1;
    memcpy(links + up.nlinks + nm, down.links, (size_t)down.nlinks * sizeof *links);
    double bw = up.bw < down.bw ? up.bw : down.bw;
    if (nm && t->dl[mem].bw < bw) bw = t->dl[mem].bw;
    *slot = (route_slot_t){.links = links, .nlinks = up.nlinks + nm + down.nlinks, .lat = up.lat + down.lat, .bw = bw};
    return 0;
}

/* Drop every cached route (link numbers changed). */
static void forget_routes(topo_t *t) {
    for (int i = 0; i < t->nblocks; i++) free(t->blocks[i]);
    t->nblocks = 0;
    t->cur = NULL;
    t->cur_used = 0;
    if (t->routes) memset(t->routes, 0, (size_t)t->route_cap * sizeof *t->routes);
    t->route_count = 0;
}

int topo_set_link_bw(topo_t *t, int l, double bw, baton_err_t *e) {
    if (l < 0 || l >= t->ndl) return err_set(e, BATON_EINVAL, "no link %d", l);
    if (!(bw >= 1e-3 && bw <= 1e18)) return err_set(e, BATON_EINVAL, "link bandwidth %g B/s is out of range", bw);
    t->dl[l].bw = t->dl[l ^ 1].bw = bw;
    t->routes_stale = 1;                 /* forgotten at the next lookup: one sweep for many links */
    topo_set_derived(t, NULL, NULL);     /* the rings were searched on the old bandwidths */
    return 0;
}

int topo_route(topo_t *t, int src_rank, int dst_rank, topo_route_t *out, baton_err_t *e) {
    int all = t->nranks + t->nreducers;
    if (src_rank < 0 || src_rank >= all || dst_rank < 0 || dst_rank >= all)
        return err_set(e, BATON_EINVAL, "route between ranks %d and %d: no such rank", src_rank, dst_rank);
    if (t->routes_stale) forget_routes(t), t->routes_stale = 0;
    if ((t->route_count + 1) * 2 > t->route_cap && route_rehash(t) < 0)
        return err_set(e, BATON_ENOMEM, "out of memory in the route cache");
    uint64_t key = (((uint64_t)src_rank << 32) | (uint32_t)dst_rank) + 1;
    route_slot_t *slot = route_slot(t, key);
    if (slot->key == 0) {
        int s = node_of(t, src_rank), d = node_of(t, dst_rank);
        int rc = route_compute(t, s, d, slot);
        if (rc == -2 && !t->params.p2p && src_rank < t->nranks && dst_rank < t->nranks)
            return err_set(e, BATON_EINVAL, "no route from rank %d to rank %d through the host (p2p: false): "
                           "the CPU nearest rank %d does not reach rank %d", src_rank, dst_rank, src_rank, dst_rank);
        if (rc == -2)
            return err_set(e, BATON_EINVAL, "no route from %s to %s: routes pass only through switches, NICs and CPUs",
                           t->nodes[s].name, t->nodes[d].name);
        if (rc < 0) return err_set(e, BATON_ENOMEM, "out of memory");
        slot->key = key;
        t->route_count++;
    }
    out->links = slot->links;
    out->nlinks = slot->nlinks;
    out->lat = slot->lat * t->params.lat_scale;
    out->bw = slot->nlinks ? slot->bw * t->params.bw_scale : 1e300;
    return 0;
}

int topo_cost_model(topo_t *t, cost_model_t *m, baton_err_t *e) {
    *m = (cost_model_t){0};
    double lat = 0, bw = 1e300, lat_lo = 1e300, bw_hi = 0;
    int p = t->nranks;
    /* Every rank to rank 0, then every rank to rank p-1 (the two ends, so
     * both near and far pairs of each are seen). Each family shares one
     * search (route_compute reuses complete distances): O(V + E + p x path),
     * not a search per pair, so a million-rank fabric takes seconds. */
    for (int k = 0; k < 2; k++) {
        int dst = k == 0 ? 0 : p - 1;
        if (p > 1) bfs(t, t->rank_node[dst], -1);
        for (int r = 0; r < p && p > 1; r++) {
            int src = r;
            if (src == dst) continue;
            topo_route_t rt;
            int rc = topo_route(t, src, dst, &rt, e);
            if (rc < 0) return rc;
            if (rt.lat > lat) lat = rt.lat;
            if (rt.bw < bw) bw = rt.bw;
            if (rt.lat < lat_lo) lat_lo = rt.lat;
            if (rt.bw > bw_hi) bw_hi = rt.bw;
        }
    }
    m->alpha = lat;
    m->beta = m->beta_path = (p > 1) ? 1.0 / bw : 0;
    m->channels = 1;
    m->gamma = t->params.reduce_bw > 0 ? 1.0 / t->params.reduce_bw : 0;
    m->ports = t->params.ports;
    m->reducers = t->nreducers;
    topo_route_t hr;
    if (t->nreducers > 0 && p > 0 && topo_route(t, 0, p, &hr, NULL) == 0 && hr.nlinks > 0)
        m->helper_beta = 1.0 / (hr.bw * t->params.nvls_eff), m->helper_alpha = hr.lat;
    m->uniform = p < 2 || (lat - lat_lo <= 1e-12 * (lat > 0 ? lat : 1) && bw_hi - bw <= 1e-9 * bw);
    return 0;
}
