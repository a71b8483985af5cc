/* topo_internal.h - the machine graph's representation, shared by topo.c
 * (building, finalising, the closed forms' view) and topo_route.c (searches,
 * routes and their caches). Not a public header: nothing outside
 * topologies/topo*.c includes it. */
#ifndef BATON_TOPO_INTERNAL_H
#define BATON_TOPO_INTERNAL_H

#include "topo.h"

typedef struct route_slot {
    uint64_t key;        /* (src << 32 | dst) + 1; 0 = empty */
    const int32_t *links;   /* in a route block: never moves */
    int32_t nlinks;
    double lat, bw;
} route_slot_t;

/* Route link ids live in blocks that are never reallocated, so a route's
 * pointer stays valid for the topology's lifetime and callers may keep it. */
#define ROUTE_BLOCK 65536

/* The routes found so far and what was read off them, at one set of link
 * rates: a hash table of (src, dst) rank pairs whose link lists live in
 * blocks. One struct, so topo_routes_aside keeps a whole cache aside and
 * topo_routes_back puts it back by a copy. */
typedef struct route_cache {
    route_slot_t *slots;
    uint32_t cap, count;
    int32_t **blocks;    /* every route block, for topo_route_cache_free */
    int nblocks, capblocks;
    int32_t *cur;        /* the block being filled */
    int32_t cur_used;
    uint64_t epoch;      /* the routes' age: a new one (++epochs) each time they are forgotten or put aside */
    struct topo *root;   /* topo_share_routes: routes are this twin's (NULL: its own) */
    uint64_t root_epoch; /* root's epoch when shared: another, and the share ends */
    double *rates;       /* every directed link's rate when these routes were found (NULL: none found
                            yet): a change that keeps their order re-rates the routes (topo_routes_settle) */
    struct cm_memo {     /* topo_cost_model's route summary, kept until the routes are forgotten */
        int valid;
        double lat_scale, bw_scale;   /* the scales it was taken under: another recomputes it */
        double lat, bw, lat_lo, bw_hi;
        int net;                      /* 1: a route passes a NIC (rendezvous_latency applies) */
        int helper;                   /* 1: a helper route, of hlat and hbw */
        double hlat, hbw;
    } cm;
} route_cache_t;

struct topo {
    char *name;
    topo_node_t *nodes;
    int nnodes, capnodes;
    topo_dlink_t *dl;
    int ndl, capdl;
    int32_t (*link_at)[2];   /* per full-duplex link (dl id / 2): line, column where the file declared
                                it, for errors about it; NULL until a link with a position is added */
    int cap_link_at;
    double *line_bw;     /* per directed link of a NIC under NCCL's socket transport: its rate
                            without it (what NCCL reads as the NIC's speed); NULL otherwise */
    double *line_lat;    /* beside line_bw: its latency without the transport's */
    int *rank_node;      /* rank -> node */
    int nranks;
    topo_params_t params;
    int *adj_off, *adj;  /* CSR: directed links leaving each node, in declaration order */
    int *adj_pos;        /* per directed link: its place among its source's links */
    route_cache_t rc;    /* the routes found at the links' present rates */
    int *bfs_dist, *bfs_queue;     /* scratch for route search: distances, the queue */
    uint32_t *bfs_stamp;           /* a distance counts only if its stamp is the search's */
    uint32_t stamp;
    int32_t *route_tmp;  /* scratch: a probe route (at most nnodes - 1 links) */
    int32_t *scratch;    /* topo_route_peek: its route's links (4 x (nnodes + 1): a join of two) */
    uint32_t scratch_used;
    int scratch_on;      /* route_alloc takes from `scratch`, not the cache's blocks */
    char **param_name, **param_value;   /* what the file's parameters were */
    char **param_file;   /* per parameter: its file's value where --set replaced it, else NULL */
    int nparams;
    int *reducer;        /* reducing switches (helper ranks), in declaration order */
    int nreducers;
    struct {             /* topo_fold.c (topo_set_fold); 0: not folded */
        int nodes, witnesses, ranks, reducers;
        struct fold_map *map;
        void *scratch;
        size_t nscratch;
        int ncopies;     /* links every node has a copy of (-1: not numbered) */
        int *copy, *copy_owner;   /* per built link: its copy's number (-1: the fabric's), its witness */
        int *copy_link;  /* per number: a built link of it */
        int fabric_first;   /* the first node of the fabric (its switches) */
        const char *whole_why;   /* large enough to fold but loaded whole: why (static text), or NULL */
    } fold;
    struct { unsigned long long dev, ino; } source[TOPO_MAX_SOURCES];   /* the files it was read from */
    int nsources;
    int no_shortcut;     /* topo_set_route_shortcut(t, 0): search every pair */
    int routes_stale;    /* ROUTES_RATES: a rate changed since the routes were cached; ROUTES_VOID: the routing */
    uint64_t epochs;     /* route caches' ages handed out so far */
    route_cache_t *aside;   /* topo_routes_aside: the routes of the rates before a passing change */
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
    /* Walks towards one place share their next hops (topo_route.c, walk_keyed):
     * per node, for the distances of `key` (the map, or the search's stamp)
     * towards `to`, its next hops' links at hops[off .. off + ways), off its
     * first link's place in adj; entries of another generation are void. */
    struct hop_memo { uint64_t key; int32_t to; uint32_t gen, off, ways; } *hop_memo;
    int32_t *hops;
    uint32_t caphops, hop_gen;
    struct name_slot { int node; uint32_t hash; } *name_slot;   /* open-addressing index of node
                            names: node + 1 (0 = empty) and its name's hash, compared first */
    uint32_t name_cap;   /* a power of two, more than twice nnodes */
    void *derived;       /* topo_set_derived */
    void (*derived_free)(void *);
    void *memo;          /* topo_set_memo */
    void (*memo_free)(void *);
    void *patterns;      /* topo_set_patterns */
    void (*patterns_free)(void *);
};

/* A GPU-switch link this fast is NVLink (NVSwitch), not PCIe: PXN's test
 * (topo_route.c, nvlink_to), which topo_twin.c compares too. */
#define PXN_NVLINK_BW 100e9

/* Free a route cache: its table and its blocks of links (topo_route.c). */
void topo_route_cache_free(route_cache_t *c);

/* Grow *p (elements of elem bytes, capacity *cap) to hold need; 0 or -1. */
int topo_grow(void **p, int *cap, int need, size_t elem);
/* Breadth-first search from node s through transit nodes, stopping at
 * `stop` (-1: everything); returns the nodes reached (t->bfs_queue). */
int topo_bfs(topo_t *t, int s, int stop);
/* Node v's distance in the last search, -1 if not reached. */
int topo_dist(const topo_t *t, int v);
void topo_dist_set(topo_t *t, int v, int d);
/* Drop every cached route (link numbers or bandwidths changed). */
void topo_forget_routes(topo_t *t);
/* topo_t.routes_stale: what changed since the routes were cached. */
enum { ROUTES_FRESH, ROUTES_RATES, ROUTES_VOID };
/* Record every directed link's rate now as the one t's cached routes were
 * found at (route_cache_t.rates); -1 without memory. */
int topo_routes_record(topo_t *t);
/* Bring t's cached routes up to date before a lookup: kept, with their
 * narrowest rates read again, where only rates changed and in an order
 * that picks every route the same (topo_rates_route_alike); else forgotten. */
void topo_routes_settle(topo_t *t);
/* Would routes found at rates x (one per directed link of t) be found the
 * same at t's rates? The order of each node's rates where topo_route.c
 * compares them, and PXN's NVLink threshold (topo_twin.c). */
int topo_rates_route_alike(const topo_t *t, const double *x);
/* The directed link from CPU node c into its host memory, -1 if none. */
int topo_host_memory_link(const topo_t *t, int c);

/* Destination-mod-k's key on a route (topo_route.c): the index of its last
 * link out of a node with more than two links (that link's port is the
 * key), -1 if none. topo_fold.c reads witness routes by the same rule. */
int topo_key_link(const topo_t *t, const int32_t *links, int n);
/* Free what topo_set_fold keeps (topo_fold.c). */
void topo_fold_free(topo_t *t);

#endif
