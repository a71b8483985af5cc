/* topo_route.c - searches and routes: breadth-first search, routes between
 * ranks (shortest, destination-mod-k among equal ones, gated through a
 * GPU's switch and NIC, staged through host memory when p2p is off) and
 * their caches; the nearest node of a kind. */
#include "topo_internal.h"
#include "dragonfly.h"

#include <stdlib.h>
#include <string.h>

/* The node of rank r, or of helper rank r (a reducing switch). */
static int node_of(const topo_t *t, int r) { return r < t->nranks ? t->rank_node[r] : t->reducer[r - t->nranks]; }

void topo_set_route_shortcut(topo_t *t, int on) {
    t->no_shortcut = !on;
    t->routes_stale = ROUTES_VOID;       /* routes found the other way are forgotten */
}

uint64_t topo_nsearches(const topo_t *t) { return t->searches; }
uint32_t topo_nroutes(const topo_t *t) { return t->rc.count; }

/* Node v's distance in the last search, -1 if it did not reach v. */
int topo_dist(const topo_t *t, int v) {
    if (t->dmap) return t->dmap[v] == 255 ? -1 : t->dmap[v];
    return t->bfs_stamp[v] == t->stamp ? t->bfs_dist[v] : -1;
}

void topo_dist_set(topo_t *t, int v, int d) { t->bfs_dist[v] = d; t->bfs_stamp[v] = t->stamp; }

/* Breadth-first search from node s, stopping once `stop` is reached (-1:
 * search everything) or, with kind >= 0, once every node as near as the
 * nearest of that kind is (topo_nearest: a GPU's NIC is a hop away, not a
 * search of a million-GPU cluster): topo_dist(v) = hops from s, -1 if not
 * reached. Stopping early leaves every node closer than `stop` with its
 * final distance. A new stamp forgets the last search in O(1), so a search
 * costs what it visits, not the whole graph (a rail of a cluster is an
 * eighth of it). */
static int bfs_until(topo_t *t, int s, int stop, int kind) {
    int *q = t->bfs_queue, head = 0, tail = 0, found = -1;
    t->dist_to = stop < 0 && kind < 0 ? s : -1;      /* stopped early, some distances are missing */
    t->searches++;
    if (++t->stamp == 0) {               /* wrapped: clear the old stamps once */
        memset(t->bfs_stamp, 0, (size_t)t->nnodes * sizeof *t->bfs_stamp);
        t->stamp = 1;
        t->hop_gen++;                    /* and the next hops found under them */
    }
    topo_dist_set(t, s, 0);
    q[tail++] = s;
    while (head < tail) {
        int u = q[head++];
        if (found >= 0 && t->bfs_dist[u] >= found) break;  /* the nearest level of that kind is in */
        if (u != s && !t->nodes[u].transit) continue;       /* an endpoint, not a relay */
        for (int k = t->adj_off[u]; k < t->adj_off[u + 1]; k++) {
            int v = t->dl[t->adj[k]].dst;
            if (topo_dist(t, v) >= 0) continue;
            topo_dist_set(t, v, t->bfs_dist[u] + 1);
            q[tail++] = v;
            if (v == stop) return tail;
            if (found < 0 && kind >= 0 && (int)t->nodes[v].kind == kind) found = t->bfs_dist[v];
        }
    }
    return tail;
}

int topo_bfs(topo_t *t, int s, int stop) { return bfs_until(t, s, stop, -1); }

int topo_nearest(topo_t *t, int node, node_kind_t kind) {
    if (node < 0 || node >= t->nnodes) return -1;
    int n = bfs_until(t, node, -1, (int)kind), best = -1;
    for (int i = 0; i < n; i++) {                        /* the queue holds the reached nodes, nearest first */
        int v = t->bfs_queue[i];
        if (v != node && t->nodes[v].kind == kind && (best < 0 || topo_dist(t, v) < topo_dist(t, best) ||
                                                       (topo_dist(t, v) == topo_dist(t, best) && v < best)))
            best = v;
    }
    return best;
}

/* Walk back from the nearest node of `kind` (the search above left every
 * distance on the way), one hop nearer each time, taking a node that is not
 * a CPU where there is one: the way that crosses the fewest host bridges,
 * as NCCL's path search prefers a PCIe switch to the host (paths.cc). */
int topo_nearest_via(topo_t *t, int node, node_kind_t kind, int cross[NODE_KIND_COUNT]) {
    int found = topo_nearest(t, node, kind), v = found;
    memset(cross, 0, NODE_KIND_COUNT * sizeof *cross);
    while (v >= 0 && topo_dist(t, v) > 1) {
        int next = -1, d = topo_dist(t, v);
        for (int k = t->adj_off[v]; k < t->adj_off[v + 1]; k++) {   /* links come in pairs: in = out */
            int u = t->dl[t->adj[k]].dst;
            if (topo_dist(t, u) != d - 1 || !t->nodes[u].transit) continue;
            if (next < 0 || (t->nodes[next].kind == NODE_CPU && t->nodes[u].kind != NODE_CPU)) next = u;
        }
        if (next < 0) break;                     /* a one-way link: count what was seen */
        cross[t->nodes[next].kind]++;
        v = next;
    }
    return found;
}

/* --- route cache: open addressing on the (src, dst) pair --------------- */

static uint32_t hash_key(uint64_t k) {
    k ^= k >> 33; k *= 0xff51afd7ed558ccdULL; k ^= k >> 33;
    return (uint32_t)k;
}

static route_slot_t *route_slot(topo_t *t, uint64_t key) {
    uint32_t mask = t->rc.cap - 1, i = hash_key(key) & mask;
    while (t->rc.slots[i].key != 0 && t->rc.slots[i].key != key) i = (i + 1) & mask;
    return &t->rc.slots[i];
}

static int route_rehash(topo_t *t) {
    uint32_t oldcap = t->rc.cap;
    route_slot_t *old = t->rc.slots;
    t->rc.cap = oldcap ? oldcap * 2 : 1024;
    t->rc.slots = calloc(t->rc.cap, sizeof *t->rc.slots);
    if (t->rc.slots == NULL) { t->rc.slots = old; t->rc.cap = oldcap; return -1; }
    for (uint32_t i = 0; i < oldcap; i++)
        if (old[i].key) *route_slot(t, old[i].key) = old[i];
    free(old);
    return 0;
}

/* Room for n link ids that will not move. A route longer than a block gets
 * a block of its own; the current block stays current. */
static int32_t *route_alloc(topo_t *t, int n) {
    if (t->scratch_on) {                       /* topo_route_peek: room for a join of two routes */
        int32_t *r = t->scratch + t->scratch_used;
        t->scratch_used += (uint32_t)n;
        return t->scratch_used <= 4 * ((uint32_t)t->nnodes + 1) ? r : NULL;
    }
    int own = n > ROUTE_BLOCK;
    if (own || t->rc.cur == NULL || t->rc.cur_used + n > ROUTE_BLOCK) {
        int32_t *b = malloc((size_t)(own ? n : ROUTE_BLOCK) * sizeof *b);
        if (b == NULL || topo_grow((void **)&t->rc.blocks, &t->rc.capblocks, t->rc.nblocks + 1, sizeof *t->rc.blocks) < 0) {
            free(b);
            return NULL;
        }
        t->rc.blocks[t->rc.nblocks++] = b;
        if (own) return b;
        t->rc.cur = b;
        t->rc.cur_used = 0;
    }
    int32_t *r = t->rc.cur + t->rc.cur_used;
    t->rc.cur_used += n;
    return r;
}

/* Is link k (out of a node du hops from d) one step closer to d, through a
 * node routes may use? */
static int next_hop(const topo_t *t, int du, int d, int k) {
    int v = t->dl[t->adj[k]].dst;
    return topo_dist(t, v) == du - 1 && du > 0 && (v == d || t->nodes[v].transit);
}

/* The widest of node u's next hops towards d (0 if none). Among equally
 * short routes the widest first link wins: a GPU reaches a GPU of its node
 * over the NVSwitch, not through the PCIe NIC the two share (two hops
 * either way), as NCCL's path search prefers NVLink. Equal widths (a
 * fat-tree's spines) leave the choice to destination-mod-k. */
static double widest(const topo_t *t, int u, int du, int d) {
    double w = 0;
    for (int k = t->adj_off[u]; k < t->adj_off[u + 1]; k++)
        if (next_hop(t, du, d, k) && t->dl[t->adj[k]].bw > w) w = t->dl[t->adj[k]].bw;
    return w;
}

/* Is link k one of u's next hops towards d at width w? */
static int wide_hop(const topo_t *t, int du, int d, int k, double w) {
    return next_hop(t, du, d, k) && t->dl[t->adj[k]].bw >= w;
}

/* Append link k to a route being built. */
static void route_add(const topo_t *t, route_slot_t *r, int32_t *links, int k) {
    const topo_dlink_t *l = &t->dl[k];
    links[r->nlinks++] = k;
    r->lat += l->lat;
    if (l->bw < r->bw) r->bw = l->bw;
}

/* Node u's next hops towards d (links, in adjacency order) for the
 * distances in force (key: which distances), from the memo or found
 * now; NULL if memory runs out. A million routes into one leaf walk the same
 * switches: each switch's 256 ports are scanned once, not per route. Each
 * node's hops have a fixed place, its links' places in adj (no more than
 * its degree): a memo found anew overwrites the node's last, where an
 * appended one grew the array to 2^26 entries and faulted its pages in (a
 * fifth of doctor's time on a 512-rank dragonfly all-to-all). */
static const int32_t *next_hops(topo_t *t, int u, int d, uint64_t key) {
    uint32_t nadj = (uint32_t)t->adj_off[t->nnodes];
    if (t->hop_memo == NULL && (t->hop_memo = calloc((size_t)t->nnodes + 1, sizeof *t->hop_memo)) == NULL) return NULL;
    if (t->caphops < nadj) {
        int32_t *h = realloc(t->hops, (size_t)nadj * sizeof *h);
        if (h == NULL) return NULL;
        t->hops = h, t->caphops = nadj, t->hop_gen++;       /* the memo's old places are void */
    }
    struct hop_memo *m = &t->hop_memo[u];
    if (m->key == key && m->to == d && m->gen == t->hop_gen && m->ways) return t->hops + m->off;
    int du = topo_dist(t, u);
    *m = (struct hop_memo){.key = key, .to = d, .gen = t->hop_gen, .off = (uint32_t)t->adj_off[u], .ways = 0};
    double w = widest(t, u, du, d);
    for (int k = t->adj_off[u]; k < t->adj_off[u + 1]; k++)
        if (wide_hop(t, du, d, k, w)) t->hops[m->off + m->ways++] = t->adj[k];
    return m->ways ? t->hops + m->off : NULL;
}

/* Walk from u towards d (dist[] = hops to d, or to any node beyond d on
 * every path through it: only differences count), the route so far first.
 * Where several next hops are equally short, take number (key + hop) mod
 * ways. */
static void walk_keyed(topo_t *t, int u, int d, int key, route_slot_t *r, int32_t *links) {
    uint64_t mkey = t->dmap ? (uint64_t)(uintptr_t)t->dmap : ((uint64_t)t->stamp << 1 | 1);   /* these distances */
    while (u != d) {
        const int32_t *hop = next_hops(t, u, d, mkey);
        uint32_t ways = hop ? t->hop_memo[u].ways : 0;
        if (hop == NULL) {                       /* no memory for the memo: scan, as it would */
            int du = topo_dist(t, u), n = 0, pick;
            double w = widest(t, u, du, d);
            for (int k = t->adj_off[u]; k < t->adj_off[u + 1]; k++) n += wide_hop(t, du, d, k, w);
            pick = (key + r->nlinks) % n;
            for (int k = t->adj_off[u]; k < t->adj_off[u + 1]; k++)
                if (wide_hop(t, du, d, k, w) && pick-- == 0) { route_add(t, r, links, t->adj[k]); break; }
        } else {
            route_add(t, r, links, hop[(uint32_t)(key + r->nlinks) % ways]);
        }
        u = t->dl[links[r->nlinks - 1]].dst;
    }
}

/* The route: link `first` (-1: none), the walk u -> v, links last[0], last[1] (-1: none). */
static void route_fill(topo_t *t, int first, int u, int v, const int *last, int key, route_slot_t *r,
                       int32_t *links) {
    *r = (route_slot_t){.links = links, .nlinks = 0, .lat = 0, .bw = 1e300};
    if (first >= 0) route_add(t, r, links, first);
    walk_keyed(t, u, v, key, r, links);
    for (int i = 0; i < 2; i++)
        if (last[i] >= 0) route_add(t, r, links, last[i]);
}

/* The CPU nearest to node s (first found breadth-first), or -1. */
static int nearest_cpu(topo_t *t, int s) {
    int reached = topo_bfs(t, s, -1);
    for (int i = 0; i < reached; i++)
        if (t->nodes[t->bfs_queue[i]].kind == NODE_CPU) return t->bfs_queue[i];
    return -1;
}

/* The key of destination-mod-k routing: the port, on the last switch of the
 * path with more than two links, through which the path goes down towards d
 * (a host's port on its leaf). The part of the path below the spines is the
 * same whichever spine is taken, so a first walk finds it. */
int topo_key_link(const topo_t *t, const int32_t *links, int n) {
    for (int i = n - 1; i >= 0; i--) {
        int u = t->dl[links[i]].src;
        if (t->adj_off[u + 1] - t->adj_off[u] > 2) return i;
    }
    return -1;
}

static int down_port(const topo_t *t, const route_slot_t *probe) {
    int i = topo_key_link(t, probe->links, probe->nlinks);
    return i < 0 ? 0 : t->adj_pos[probe->links[i]];
}

/* Shortest route `first`, u ... v (dist[] = hops to v), `last`; among equal
 * next hops destination-mod-k picks (the deterministic fat-tree routing of
 * InfiniBand subnet managers), which spreads the hosts of one leaf over all
 * the spines. A probe walk with key 0 finds the destination's down port. */
static int route_walk(topo_t *t, int first, int u, int v, const int *last, route_slot_t *slot) {
    if (u != v && topo_dist(t, u) < 0) return -2;
    int inner = u == v ? 0 : topo_dist(t, u) - topo_dist(t, v);  /* unreachable: possible only when staged through a CPU (p2p: false) */
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
        if (!t->dmaps || !t->dmap_slot || !t->dmap_spent) {       /* all or none, so a next call tries again */
            free(t->dmaps), free(t->dmap_slot), free(t->dmap_spent);
            t->dmaps = NULL, t->dmap_slot = NULL, t->dmap_spent = NULL, t->maxdmaps = 0;
            return -1;
        }
    }
    t->dmap_spent[f] += (uint32_t)topo_bfs(t, f, from);
    if (t->dmap_spent[f] < (uint32_t)t->nnodes / 2) return 0;
    t->dmap_spent[f] = 0;
    int reached = topo_bfs(t, f, -1);
    if (topo_dist(t, t->bfs_queue[reached - 1]) > 254) return 0;   /* too far for a byte: the stamps serve */
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
        int d = topo_dist(t, v);
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

/* A shortest route s -> d: without a search where the gates allow, else
 * distances to d and a walk. */
static int route_plain(topo_t *t, int s, int d, route_slot_t *slot) {
    if (s != d && !t->no_shortcut) {                /* GPUs on switch ports, NVSwitch + NIC: no search per pair */
        int rc = route_gated(t, s, d, slot);
        if (rc != 0) return rc < 0 ? rc : 0;
    }
    const uint8_t *map = NULL;      /* distances to d (links are full duplex): kept once d is asked often, */
    if (s != d && t->no_shortcut && t->dist_to != d) topo_bfs(t, d, s);   /* or the reference's search per pair */
    else if (s != d && !t->no_shortcut && funnel_dist(t, d, s, &map) < 0) return -1;
    t->dmap = map;
    int rc = route_walk(t, -1, s, d, (int[2]){-1, -1}, slot);
    t->dmap = NULL;
    return rc;
}

/* Route a, links mid[0..nmid) (rate midbw), route b: one route. */
static int route_join(topo_t *t, const route_slot_t *a, const int *mid, int nmid, double midbw,
                      const route_slot_t *b, route_slot_t *slot) {
    int32_t *links = route_alloc(t, a->nlinks + nmid + b->nlinks);
    if (links == NULL) return -1;
    memcpy(links, a->links, (size_t)a->nlinks * sizeof *links);
    for (int i = 0; i < nmid; i++) links[a->nlinks + i] = mid[i];
    memcpy(links + a->nlinks + nmid, b->links, (size_t)b->nlinks * sizeof *links);
    double bw = a->bw < b->bw ? a->bw : b->bw;
    if (nmid && midbw < bw) bw = midbw;
    *slot = (route_slot_t){.links = links, .nlinks = a->nlinks + nmid + b->nlinks, .lat = a->lat + b->lat, .bw = bw};
    return 0;
}

/* Staged in host memory: s up to CPU `via`, into its memory and out (when
 * the machine has host_bw), down to d. */
static int route_staged(topo_t *t, int s, int via, int d, route_slot_t *slot) {
    route_slot_t up, down;
    topo_bfs(t, via, s);
    int rc = route_walk(t, -1, s, via, (int[2]){-1, -1}, &up);
    if (rc < 0) return rc;
    topo_bfs(t, d, via);
    if ((rc = route_walk(t, -1, via, d, (int[2]){-1, -1}, &down)) < 0) return rc;
    int mem = topo_host_memory_link(t, via);
    return route_join(t, &up, (int[2]){mem, mem ^ 1}, mem >= 0 ? 2 : 0, mem >= 0 ? t->dl[mem].bw : 0, &down, slot);
}

/* GPU g's one neighbour of kind k (a transit one), and the link to it; -1 if none or several. */
static int gpu_only(const topo_t *t, int g, node_kind_t k, int *link) {
    int n = -1;
    for (int i = t->adj_off[g]; i < t->adj_off[g + 1]; i++) {
        int v = t->dl[t->adj[i]].dst;
        if (t->nodes[v].kind != k || !t->nodes[v].transit) continue;
        if (n >= 0) return -1;
        n = v, *link = t->adj[i];
    }
    return n;
}

/* Is GPU link l into switch sw NVLink? Fast enough that it can be nothing
 * else, or sw joins GPUs only, where a PCIe switch has a NIC or a CPU under
 * it too: NCCL relays through a peer whenever the path to it is NVLink
 * (PATH_NVL, src/graph/paths.cc), however many of its links are up, so a
 * GPU with 3 of 18 NVLinks (75 GB/s) still relays. */
static int nvlink_to(const topo_t *t, int l, int sw) {
    if (t->dl[l].bw >= PXN_NVLINK_BW) return 1;
    for (int k = t->adj_off[sw]; k < t->adj_off[sw + 1]; k++) {
        node_kind_t kind = t->nodes[t->dl[t->adj[k]].dst].kind;
        if (kind == NODE_NIC || kind == NODE_CPU) return 0;
    }
    return 1;
}

/* The place of GPU g among the GPUs on switch sw, in the order of sw's links
 * (k < 0: find g's), or with k >= 0 the GPU at place k; -1 if none. */
static int gpu_place(const topo_t *t, int sw, int g, int k) {
    int i = 0;
    for (int j = t->adj_off[sw]; j < t->adj_off[sw + 1]; j++) {
        int v = t->dl[t->adj[j]].dst;
        if (t->nodes[v].kind != NODE_GPU) continue;
        if (k < 0 ? v == g : i == k) return k < 0 ? i : v;
        i++;
    }
    return -1;
}

/* PXN (NCCL's "PCI x NVLink", on by default since NCCL 2.12): a GPU sending
 * to another node hands its bytes over NVLink to the GPU of its own node at
 * the destination's place (on a rail-optimized fabric, the one whose NIC is
 * on the destination's rail), which sends them through its NIC: traffic
 * between nodes stays on its rail instead of crossing the spines. Only
 * between GPUs with one NVSwitch and one NIC each, where the peer has
 * another NIC than the sender. The peer, or -1 (no PXN). */
static int pxn_peer(const topo_t *t, int s, int d) {
    int l, ls, nic_s, nic_p, sw, p;
    if (t->nodes[s].kind != NODE_GPU || t->nodes[d].kind != NODE_GPU) return -1;
    if ((nic_s = gpu_only(t, s, NODE_NIC, &l)) < 0 || gpu_only(t, d, NODE_NIC, &l) < 0) return -1;
    if ((sw = gpu_only(t, s, NODE_SWITCH, &ls)) < 0 || !nvlink_to(t, ls, sw)) return -1;
    int swd = gpu_only(t, d, NODE_SWITCH, &l);
    if (swd < 0 || swd == sw) return -1;                   /* same node, or not an NVSwitch node */
    if ((p = gpu_place(t, sw, -1, gpu_place(t, swd, d, -1))) < 0 || p == s) return -1;
    return (nic_p = gpu_only(t, p, NODE_NIC, &l)) >= 0 && nic_p != nic_s ? p : -1;
}

/* The link u -> v (the n-th of parallel ones, mod their count), or -1. */
static int link_to(const topo_t *t, int u, int v, int n) {
    int count = 0, pick;
    for (int k = t->adj_off[u]; k < t->adj_off[u + 1]; k++) count += t->dl[t->adj[k]].dst == v;
    if (count == 0) return -1;
    pick = n % count;
    for (int k = t->adj_off[u]; k < t->adj_off[u + 1]; k++)
        if (t->dl[t->adj[k]].dst == v && pick-- == 0) return t->adj[k];
    return -1;
}

/* A route on a dragonfly (dragonfly.h): the shortest route finds the
 * routers s and d hang off; across groups the route is rebuilt as the
 * dragonfly routes it (dfly_cross: minimal, or Valiant through another
 * group), its pieces inside groups shortest. */
static int route_dragonfly(topo_t *t, int s, int d, route_slot_t *slot) {
    route_slot_t m, piece, sofar;
    int rc = route_plain(t, s, d, &m), ra = -1, rb = -1, sport = 0, dport = 0, hop[4], pick = 0;
    if (rc < 0) return rc;
    for (int i = 0; i < m.nlinks; i++) {              /* the ports the route enters and leaves the fabric by */
        const topo_dlink_t *l = &t->dl[m.links[i]];
        if (ra < 0 && dfly_is_router(t, l->dst)) ra = l->dst, sport = t->adj_pos[m.links[i] ^ 1];
        if (dfly_is_router(t, l->src)) rb = l->src, dport = t->adj_pos[m.links[i]];
    }
    int n = ra >= 0 && rb >= 0 ? dfly_cross(t, ra, rb, sport, dport, hop, &pick) : 0;
    if (n == 0) { *slot = m; return 0; }
    if ((rc = route_plain(t, s, hop[0], &sofar)) < 0) return rc;
    for (int h = 0; h < n; h++) {
        int g = link_to(t, hop[2 * h], hop[2 * h + 1], pick), next = h + 1 < n ? hop[2 * h + 2] : d;
        if (g < 0) return -2;
        if ((rc = route_plain(t, hop[2 * h + 1], next, &piece)) < 0) return rc;
        if ((rc = route_join(t, &sofar, &g, 1, t->dl[g].bw, &piece, &sofar)) < 0) return rc;
        sofar.lat += t->dl[g].lat;
    }
    *slot = sofar;
    return 0;
}

/* GPU g's host when GDR is off: the CPU beside it (the file's, or the
 * hidden one topo_finalize adds where the GPU has none); the link g -> host
 * into *up, -1 if none. */
static int gdr_host(const topo_t *t, int g, int *up) {
    for (int i = t->adj_off[g]; i < t->adj_off[g + 1]; i++)
        if (t->nodes[t->dl[t->adj[i]].dst].kind == NODE_CPU) return *up = t->adj[i], t->dl[*up].dst;
    return -1;
}

/* Is directed link l a GPU <-> NIC hop (1 send, 2 receive), 0 if not. */
static int gpu_nic_hop(const topo_t *t, int l) {
    node_kind_t a = t->nodes[t->dl[l].src].kind, b = t->nodes[t->dl[l].dst].kind;
    return a == NODE_GPU && b == NODE_NIC ? 1 : a == NODE_NIC && b == NODE_GPU ? 2 : 0;
}

/* GPUDirect RDMA off (gdr: false): NCCL keeps the network's buffers in host
 * memory (src/transport/net.cc, NCCL 2.30.7: the send side's LL128 and
 * Simple buffers and the receive side's are device memory only with
 * useGdr), and its paths divert the GPU <-> NIC traffic through the CPU
 * local to the GPU (src/graph/paths.cc). So each GPU <-> NIC link of route
 * r becomes: the GPU's way to its host memory (g -> host when sending, host
 * -> g when receiving), host memory in and out where the machine has
 * host_bw, and the NIC's way: its own link to the GPU where the GPU has a
 * CPU beside it in the file (a root port each), else the same uplink the
 * other way (the file's GPU-NIC link is a PCIe switch: its uplink carries
 * the GPU's write and the NIC's read of every byte, and a ring's send and
 * receive share it). Steps of the dropped GDR flush and of the host's
 * memory are not timed: a latency the logs do not pin. */
static int route_no_gdr(topo_t *t, route_slot_t *r) {
    int n = 0, hops = 0;
    double bw = 1e300, lat = r->lat;
    for (int i = 0; i < r->nlinks; i++) hops += gpu_nic_hop(t, r->links[i]) != 0;
    if (hops == 0) return 0;
    int32_t *links = route_alloc(t, r->nlinks + 3 * hops);      /* a hop: at most 4 links */
    if (links == NULL) return -1;
    for (int i = 0; i < r->nlinks; i++) {
        const topo_dlink_t *l = &t->dl[r->links[i]];
        int hop = gpu_nic_hop(t, r->links[i]), send = hop == 1;       /* else 2: receiving */
        int up = -1, h = hop ? gdr_host(t, send ? l->src : l->dst, &up) : -1;
        if (h < 0) { links[n++] = r->links[i]; continue; }
        int mem = topo_host_memory_link(t, h), own = !t->nodes[h].hidden;   /* a CPU of the file's */
        links[n++] = send || !own ? up : r->links[i];                       /* into host memory */
        if (mem >= 0) links[n++] = mem, links[n++] = mem ^ 1;
        links[n++] = send && own ? r->links[i] : up ^ 1;                    /* out of it */
        lat += own ? t->dl[up].lat : 2 * t->dl[up].lat - l->lat;
    }
    for (int i = 0; i < n; i++) bw = t->dl[links[i]].bw < bw ? t->dl[links[i]].bw : bw;
    *r = (route_slot_t){.links = links, .nlinks = n, .lat = lat, .bw = bw};
    return 0;
}

static int route_compute(topo_t *t, int s, int d, route_slot_t *slot) {
    int via = -1, rc;
    if (!may_reach(t, s, d)) return -2;
    if (!t->params.p2p && s != d && t->nodes[s].kind == NODE_GPU && t->nodes[d].kind == NODE_GPU)
        via = nearest_cpu(t, s);
    if (via >= 0 && !may_reach(t, via, d)) via = -1;   /* another host: the network, as NCCL's NET transport */
    if (via >= 0) return route_staged(t, s, via, d, slot);
    if (!t->params.gdr) {             /* no PXN either: NCCL relays through a peer only with GDR on it */
        if ((rc = t->params.dragonfly.routers && s != d ? route_dragonfly(t, s, d, slot) : route_plain(t, s, d, slot)) < 0)
            return rc;
        return route_no_gdr(t, slot) < 0 ? -1 : 0;
    }
    if (t->params.pxn && (via = pxn_peer(t, s, d)) >= 0) {   /* s -> peer over NVLink, peer -> d on its rail */
        route_slot_t a, b;
        if ((rc = route_plain(t, s, via, &a)) < 0 || (rc = route_plain(t, via, d, &b)) < 0) return rc;
        return route_join(t, &a, NULL, 0, 0, &b, slot);
    }
    if (t->params.dragonfly.routers && s != d) return route_dragonfly(t, s, d, slot);
    return route_plain(t, s, d, slot);
}

/* Drop every cached route (link numbers changed). */
void topo_forget_routes(topo_t *t) {
    t->rc.cm.valid = 0;
    for (int i = 0; i < t->rc.nblocks; i++) free(t->rc.blocks[i]);
    t->rc.nblocks = 0;
    t->rc.cur = NULL;
    t->rc.cur_used = 0;
    if (t->rc.slots) memset(t->rc.slots, 0, (size_t)t->rc.cap * sizeof *t->rc.slots);
    t->rc.count = 0;
    free(t->rc.rates);
    t->rc.rates = NULL;    /* taken again with the first route found */
    t->hop_gen++;          /* next hops were chosen by the old rates (widest); kept distances are hops, still good */
    t->rc.epoch = ++t->epochs;
    t->rc.root = NULL;  /* a twin's routes were for the old rates */
}

/* Every directed link's rate now, into the cache's record (allocated if
 * none); -1 if memory runs out. */
int topo_routes_record(topo_t *t) {
    if (t->rc.rates == NULL && (t->rc.rates = malloc(((size_t)t->ndl + 1) * sizeof *t->rc.rates)) == NULL) return -1;
    for (int l = 0; l < t->ndl; l++) t->rc.rates[l] = t->dl[l].bw;
    return 0;
}

static double rate_on(const topo_t *t, const route_slot_t *r);

/* A calibration's every step, and NCCL's view of a machine (sim/nccl/view.c),
 * sets rates and asks for routes again: on a 512-rank dragonfly 262,144 of
 * them, found afresh a pass before (speed.md, "A change of rates keeps the routes"). Most
 * steps scale a class of links and move no route: where the rates' order
 * is the one the routes were found at, each keeps its links and reads its
 * narrowest rate again (route bandwidths are nothing else: rate_on), as a
 * search would find it. Their links are the same, so the epoch stays and
 * what was computed from the routes alone stands (the link loads of
 * sim/form/peers.c); a twin sharing them stays alike (orders compose). */
void topo_routes_settle(topo_t *t) {
    if (t->routes_stale == ROUTES_FRESH) return;
    int keep = t->routes_stale == ROUTES_RATES && t->rc.rates && topo_rates_route_alike(t, t->rc.rates);
    t->routes_stale = ROUTES_FRESH;
    if (!keep || topo_routes_record(t) < 0) { topo_forget_routes(t); return; }
    for (uint32_t i = 0; i < t->rc.cap; i++)
        if (t->rc.slots[i].key) t->rc.slots[i].bw = rate_on(t, &t->rc.slots[i]);
    t->rc.cm.valid = 0;                  /* the closed forms' summary read the old rates */
}

int topo_set_link_bw(topo_t *t, int l, double bw, baton_err_t *e) {
    if (l < 0 || l >= t->ndl) return err_set(e, BATON_EINVAL, "no link %d", l);
    if (!(bw >= 1e-3 && bw <= 1e18)) return err_set(e, BATON_EINVAL, "link bandwidth %g B/s is out of range", bw);
    t->dl[l].bw = t->dl[l ^ 1].bw = bw;
    if (t->routes_stale == ROUTES_FRESH) t->routes_stale = ROUTES_RATES;   /* settled at the next lookup: one sweep for many links */
    topo_set_derived(t, NULL, NULL);     /* the rings were searched on the old bandwidths */
    topo_set_memo(t, NULL, NULL);
    return 0;
}

/* Why there is no route (rc from route_compute). */
static int no_route(topo_t *t, int rc, int src_rank, int dst_rank, int s, int d, baton_err_t *e) {
    if (rc == -2 && !t->params.p2p && src_rank < t->nranks && dst_rank < t->nranks)
        return err_set(e, BATON_EINVAL, "no route from rank %d to rank %d through the host (p2p: false): "
                       "the CPU nearest rank %d does not reach rank %d", src_rank, dst_rank, src_rank, dst_rank);
    if (rc == -2)
        return err_set(e, BATON_EINVAL, "no route from %s to %s: routes pass only through switches, NICs and CPUs",
                       t->nodes[s].name, t->nodes[d].name);
    return err_set(e, BATON_ENOMEM, "out of memory");
}

int topo_route_peek(topo_t *t, int src_rank, int dst_rank, topo_route_t *out, baton_err_t *e) {
    int all = t->nranks + t->nreducers;
    if (src_rank < 0 || src_rank >= all || dst_rank < 0 || dst_rank >= all)
        return err_set(e, BATON_EINVAL, "route between ranks %d and %d: no such rank", src_rank, dst_rank);
    topo_routes_settle(t);               /* next hops chosen at the old rates */
    if (t->scratch == NULL && (t->scratch = malloc(4 * ((size_t)t->nnodes + 1) * sizeof *t->scratch)) == NULL)
        return err_set(e, BATON_ENOMEM, "out of memory");
    int s = node_of(t, src_rank), d = node_of(t, dst_rank);
    route_slot_t slot;
    t->scratch_on = 1, t->scratch_used = 0;
    int rc = route_compute(t, s, d, &slot);
    t->scratch_on = 0;
    if (rc < 0) return no_route(t, rc, src_rank, dst_rank, s, d, e);
    out->links = slot.links;
    out->nlinks = slot.nlinks;
    out->lat = slot.lat * t->params.lat_scale;
    out->bw = slot.nlinks ? slot.bw * t->params.bw_scale : 1e300;
    return 0;
}

/* t's routes' owner: t, or the twin it shares them with while that twin's
 * routes are the ones t's own would be (neither's rates changed since). */
topo_t *topo_route_owner(topo_t *t) {
    topo_routes_settle(t);
    topo_t *r = t->rc.root;             /* a twin whose routes are aside or changed: t's own for now */
    return r && !r->routes_stale && r->rc.epoch == t->rc.root_epoch ? r : t;
}

/* The route cache, and what was read off it, as it stood: its rates with
 * it, recorded now if no route was found (a share, a memo: kept too). */
int topo_routes_aside(topo_t *t) {
    topo_route_owner(t);
    route_cache_t *a = t->aside ? NULL : malloc(sizeof *a);
    if (a == NULL) return -1;
    if (t->rc.rates == NULL && topo_routes_record(t) < 0) { free(a); return -1; }
    *a = t->rc;
    t->rc = (route_cache_t){.epoch = ++t->epochs};
    t->hop_gen++;
    t->aside = a;
    return 0;
}

void topo_route_cache_free(route_cache_t *c) {
    free(c->slots);
    for (int i = 0; i < c->nblocks; i++) free(c->blocks[i]);
    free(c->blocks);
    free(c->rates);
}

void topo_routes_back(topo_t *t) {
    route_cache_t *a = t->aside;
    if (a == NULL) return;
    t->aside = NULL;
    if (t->routes_stale != ROUTES_VOID && a->rates && topo_rates_route_alike(t, a->rates)) {   /* they stand, at most re-rated */
        int same = 1;
        for (int l = 0; same && l < t->ndl; l++) same = memcmp(&a->rates[l], &t->dl[l].bw, sizeof a->rates[l]) == 0;
        topo_route_cache_free(&t->rc);
        t->rc = *a;
        t->routes_stale = same ? ROUTES_FRESH : ROUTES_RATES;
        t->hop_gen++;
    } else
        topo_route_cache_free(a);
    free(a);
}

uint64_t topo_route_epoch(topo_t *t) {
    topo_t *o = topo_route_owner(t);
    return o->rc.epoch;
}

/* Rank src's route to rank dst in o's cache, found now if not there. */
static int route_get(topo_t *o, int src_rank, int dst_rank, const route_slot_t **out, baton_err_t *e) {
    if ((o->rc.count + 1) * 2 > o->rc.cap && route_rehash(o) < 0)
        return err_set(e, BATON_ENOMEM, "out of memory in the route cache");
    uint64_t key = (((uint64_t)src_rank << 32) | (uint32_t)dst_rank) + 1;
    route_slot_t *slot = route_slot(o, key);
    if (slot->key == 0) {
        int s = node_of(o, src_rank), d = node_of(o, dst_rank);
        int rc = route_compute(o, s, d, slot);
        if (rc < 0) return no_route(o, rc, src_rank, dst_rank, s, d, e);
        if (o->rc.rates == NULL && topo_routes_record(o) < 0) return err_set(e, BATON_ENOMEM, "out of memory in the route cache");
        slot->key = key;
        o->rc.count++;
    }
    *out = slot;
    return 0;
}

/* A twin's route at t's own rates: the narrowest of its links (route
 * bandwidths are nothing else: route_add, route_join, route_no_gdr). */
static double rate_on(const topo_t *t, const route_slot_t *r) {
    double bw = 1e300;
    for (int i = 0; i < r->nlinks; i++)
        if (t->dl[r->links[i]].bw < bw) bw = t->dl[r->links[i]].bw;
    return bw;
}

int topo_route_crosses_nic(const topo_t *t, const topo_route_t *r) {
    for (int i = 0; i < r->nlinks; i++)
        if (t->nodes[t->dl[r->links[i]].dst].kind == NODE_NIC) return 1;
    return 0;
}

int topo_route(topo_t *t, int src_rank, int dst_rank, topo_route_t *out, baton_err_t *e) {
    int all = t->nranks + t->nreducers;
    if (src_rank < 0 || src_rank >= all || dst_rank < 0 || dst_rank >= all)
        return err_set(e, BATON_EINVAL, "route between ranks %d and %d: no such rank", src_rank, dst_rank);
    topo_t *o = topo_route_owner(t);
    const route_slot_t *slot = NULL;
    int rc = route_get(o, src_rank, dst_rank, &slot, e);
    if (rc < 0) return rc;
    out->links = slot->links;
    out->nlinks = slot->nlinks;
    out->lat = slot->lat * t->params.lat_scale;
    out->bw = slot->nlinks ? (o == t ? slot->bw : rate_on(t, slot)) * t->params.bw_scale : 1e300;
    return 0;
}
