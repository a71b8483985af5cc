/* topo_fold.c - a folded cluster (topo_yaml_load_folded): the witness
 * nodes it built and what they stand for: the whole's counts, a witness
 * pair for any two nodes (fold.h), and the links every node has a copy of
 * (declared in topo.h). */
#define _DEFAULT_SOURCE          /* madvise(MADV_HUGEPAGE), where the system has it */
#include "topo_internal.h"
#include "fold.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

int topo_fold_nodes(const topo_t *t) { return t->fold.nodes; }
int topo_fold_witnesses(const topo_t *t) { return t->fold.witnesses; }
int topo_fold_ranks(const topo_t *t) { return t->fold.ranks; }
int topo_fold_reducers(const topo_t *t) { return t->fold.reducers; }
int topo_whole_ranks(const topo_t *t) { return t->fold.ranks ? t->fold.ranks : t->nranks; }
int topo_fold_copies(const topo_t *t) { return t->fold.ncopies; }
const char *topo_fold_whole_why(const topo_t *t) { return t->fold.whole_why; }
void topo_set_fold_whole_why(topo_t *t, const char *why) { t->fold.whole_why = why; }
int topo_fold_copy_link(const topo_t *t, int i) { return t->fold.copy_link[i]; }

int topo_fold_copy(const topo_t *t, int l, int *owner) {
    if (t->fold.ncopies < 0) return *owner = -1;
    *owner = t->fold.copy_owner[l];
    return t->fold.copy[l];
}

/* A large zeroed buffer on huge pages where the system has them: tens of
 * MiB of link loads touched at random would otherwise fault in 4 KiB at a
 * time (a sixth of a million-GPU predict). */
static void *zeroed(size_t bytes) {
#if defined(MADV_HUGEPAGE)
    enum { HUGE = 2 << 20 };
    void *p = NULL;
    if (bytes >= HUGE && posix_memalign(&p, HUGE, bytes) == 0) {
        madvise(p, bytes, MADV_HUGEPAGE);
        return memset(p, 0, bytes);
    }
#endif
    return calloc(1, bytes);
}

void *topo_fold_scratch(topo_t *t, size_t bytes) {
    if (bytes <= t->fold.nscratch) return t->fold.scratch;
    free(t->fold.scratch);
    t->fold.nscratch = 0;
    if ((t->fold.scratch = zeroed(bytes)) != NULL) t->fold.nscratch = bytes;
    return t->fold.scratch;
}

int topo_fold_stand_in(topo_t *t, int src, int dst, int *fsrc, int *fdst) {
    int g = t->fold.witnesses ? t->nranks / t->fold.witnesses : 0;
    int pair = t->fold.map && g ? fold_map_pair(t->fold.map, src / g, dst / g) : -1;
    if (pair < 0) return -1;
    *fsrc = pair / t->fold.witnesses * g + src % g;
    *fdst = pair % t->fold.witnesses * g + dst % g;
    return 0;
}

void topo_fold_free(topo_t *t) {
    fold_map_free(t->fold.map);
    free(t->fold.scratch);
    free(t->fold.copy);
    free(t->fold.copy_owner);
    free(t->fold.copy_link);
}

static int find(int *up, int v) {
    while (up[v] != v) v = up[v] = up[up[v]];
    return v;
}

/* Each part's witness (wit) and place in it (loc): parts are the nodes
 * before the fabric (ff on), joined to a witness's ranks by links outside
 * it. M: the parts a witness has. 0, or -1 if the witnesses are not copies
 * of one node. */
static int parts(const topo_t *t, int g, int ff, int *up, int *wit, int *loc, int *M) {
    int W = t->nranks / g, *count = calloc((size_t)W + 1, sizeof *count), rc = 0;
    if (count == NULL) return -1;
    for (int v = 0; v < ff; v++) up[v] = v, wit[v] = -1;
    for (int l = 0; l < t->ndl; l++)
        if (t->dl[l].src < ff && t->dl[l].dst < ff) up[find(up, t->dl[l].src)] = find(up, t->dl[l].dst);
    for (int w = 0; w < W; w++) {
        int root = find(up, t->rank_node[w * g]);
        if (wit[root] >= 0) rc = -1;                 /* two witnesses joined outside the fabric */
        wit[root] = w;
    }
    for (int v = 0; v < ff && rc == 0; v++) {
        int w = wit[find(up, v)];
        if (w < 0) rc = -1;                           /* a part of no witness */
        else loc[v] = count[w]++;
    }
    for (int w = 0; w < W && rc == 0; w++) rc = count[w] == count[0] ? 0 : -1;
    *M = count[0];
    for (int v = 0; v < ff && rc == 0; v++) wit[v] = wit[find(up, v)];
    free(count);
    return rc;
}

/* Number the links a witness owns (both ends its parts, or one its part and
 * the other the fabric's) by their ends' places, the fabric end as place M:
 * the same in every witness. -1 if a witness has two links of one number. */
static int number_links(topo_t *t, int ff, const int *wit, const int *loc, int M) {
    int K = (M + 1) * (M + 1), *id = malloc((size_t)K * sizeof *id), *seen = malloc((size_t)K * sizeof *seen), rc = 0, n = 0;
    if (id == NULL || seen == NULL || (t->fold.copy_link = malloc((size_t)K * sizeof(int))) == NULL) rc = -1;
    for (int i = 0; rc == 0 && i < K; i++) id[i] = -1, seen[i] = -1;
    for (int l = 0; rc == 0 && l < t->ndl; l++) {
        const topo_dlink_t *d = &t->dl[l];
        int ws = d->src < ff ? wit[d->src] : -1, wd = d->dst < ff ? wit[d->dst] : -1, w = ws >= 0 ? ws : wd;
        t->fold.copy[l] = t->fold.copy_owner[l] = -1;
        if (w < 0) continue;                          /* the fabric's own */
        if (ws >= 0 && wd >= 0 && ws != wd) { rc = -1; break; }
        int key = (ws >= 0 ? loc[d->src] : M) * (M + 1) + (wd >= 0 ? loc[d->dst] : M);
        if (seen[key] == w) { rc = -1; break; }       /* parallel links: no single number */
        seen[key] = w;
        if (id[key] < 0) id[key] = n, t->fold.copy_link[n++] = l;
        t->fold.copy[l] = id[key], t->fold.copy_owner[l] = w;
    }
    free(id), free(seen);
    return rc < 0 ? -1 : n;
}

/* The links every node has a copy of (topo_fold_copies): every message that
 * loads node k's copy starts or ends in node k. -1 where the witnesses are
 * not copies of one node (or memory ran out): nothing is numbered. */
static int number_copies(topo_t *t, int g, int ff) {
    int *up = malloc(((size_t)ff + 1) * sizeof *up), *wit = malloc(((size_t)ff + 1) * sizeof *wit),
        *loc = malloc(((size_t)ff + 1) * sizeof *loc), M = 0, n = -1;
    t->fold.copy = malloc(((size_t)t->ndl + 1) * sizeof(int));
    t->fold.copy_owner = malloc(((size_t)t->ndl + 1) * sizeof(int));
    if (up && wit && loc && t->fold.copy && t->fold.copy_owner && ff > 0 && parts(t, g, ff, up, wit, loc, &M) == 0)
        n = number_links(t, ff, wit, loc, M);
    free(up), free(wit), free(loc);
    return n;
}

int topo_set_fold(topo_t *t, int nodes, int witnesses, struct fold_map *map, int fabric_first, baton_err_t *e) {
    int per = witnesses > 0 ? t->nranks / witnesses : 0, g = t->params.group_size;
    topo_fold_free(t);
    memset(&t->fold, 0, sizeof t->fold);
    t->fold.map = map;
    t->fold.ncopies = -1;
    if (witnesses < 1 || t->nranks % witnesses || t->nreducers % witnesses || (int64_t)per * nodes > INT32_MAX ||
        (g > 0 && per % g))                        /* a group spanning nodes is not a copy's */
        return err_set(e, BATON_EINVAL, "%s: %d witness nodes do not hold the same ranks and switches each", t->name, witnesses);
    t->fold.nodes = nodes, t->fold.witnesses = witnesses;
    t->fold.ranks = t->nranks / witnesses * nodes;
    t->fold.reducers = t->nreducers / witnesses * nodes;
    t->fold.fabric_first = fabric_first;
    t->fold.ncopies = per > 0 ? number_copies(t, per, fabric_first) : -1;
    return 0;
}

/* --- how a witness route crosses the fabric ----------------------------- */

static int fabric_link(const topo_t *t, int l) { return t->dl[l].src >= t->fold.fabric_first && t->dl[l].dst >= t->fold.fabric_first; }
static int degree(const topo_t *t, int v) { return t->adj_off[v + 1] - t->adj_off[v]; }

/* Link l's place among the last `ports` links of its source (a switch's up
 * ports come after its down ports), -1 if it is not one of them. */
static int up_port(const topo_t *t, int l, int ports) {
    int j = t->adj_pos[l] - (degree(t, t->dl[l].src) - ports);
    return j >= 0 && j < ports ? j : -1;
}

static int mod(int a, int m) { return ((a % m) + m) % m; }

/* Where a route meets the fabric: `in`, the link from a host into its leaf;
 * `out`, the link from a leaf down to a host; between them the fabric's own
 * links (first, nf of them, one rate *bw). 0 if it stays inside a node, 1
 * if it crosses as a fat-tree route does, -1 if not. */
typedef struct { int in, out, first, nf; } crossing_t;

static int crossing(const topo_t *t, const int32_t *links, int n, crossing_t *x, double *bw) {
    *x = (crossing_t){-1, -1, -1, 0};
    *bw = 0;
    for (int i = 0; i < n; i++) {
        if (x->in < 0 && t->dl[links[i]].dst >= t->fold.fabric_first) x->in = i;
        if (t->dl[links[i]].src >= t->fold.fabric_first) x->out = i;
        if (!fabric_link(t, links[i])) continue;
        if (x->first < 0) x->first = i;
        if (i != x->first + x->nf++ || (*bw && t->dl[links[i]].bw != *bw)) return -1;   /* one run, one rate */
        *bw = t->dl[links[i]].bw;
    }
    if (x->in < 0) return 0;
    if (x->out < x->in || (x->nf && (x->first != x->in + 1 || x->out != x->first + x->nf))) return -1;
    return x->nf == 0 || x->nf == 2 || x->nf == 4 ? 1 : -1;
}

int topo_fold_cross(const topo_t *t, const int32_t *links, int n, struct fold_cross *cr, double *bw) {
    const fold_map_t *m = t->fold.map;
    crossing_t x;
    int rc = crossing(t, links, n, &x, bw), up, half;
    *cr = (fold_cross_t){0};
    if (rc <= 0 || m == NULL) return m == NULL && rc > 0 ? -1 : rc;
    cr->a = fold_map_host(m, t->dl[links[x.in]].src), cr->b = fold_map_host(m, t->dl[links[x.out]].dst);
    cr->links = x.nf;
    if (cr->a < 0 || cr->b < 0) return -1;
    if (x.nf == 0) return 1;                                                   /* one leaf: no choice */
    fold_map_ports(m, &up, &half);
    int k = topo_key_link(t, links, n), key = k == x.out ? t->adj_pos[links[k]] : 0;
    cr->keyed = k == x.out;
    cr->j = up_port(t, links[x.first], up);
    cr->c = x.nf == 4 ? up_port(t, links[x.first + 1], half) : 0;
    if (k < x.out || cr->j < 0 || cr->c < 0) return -1;                        /* keyed above the leaf, or no up port */
    cr->j = mod(cr->j - key, up), cr->c = mod(cr->c - key, half);
    return 1;
}

long topo_fold_fabric_links(const topo_t *t) { return t->fold.map ? fold_map_fabric_links(t->fold.map) : 0; }

int topo_fold_cross_ids(const topo_t *t, int k, int x, const struct fold_cross *cr, long *id) {
    return t->fold.map ? fold_map_cross(t->fold.map, k, x, cr, id) : -1;
}
