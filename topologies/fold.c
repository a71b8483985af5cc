/* fold.c - a cluster's witness nodes: the few copies of a node whose routes
 * stand for all of them.
 *
 * A cluster file is `nodes` copies of one node, joined by a fat-tree over
 * their NICs. A route from GPU i of node k to GPU j of node x depends only on
 * i, j and how far apart the fabric holds node k's NICs and node x's: the
 * matrix D_k(a, b) of links between k's NIC a and x's NIC b (2: one leaf, 4:
 * a spine or a pod's aggregation switch, 6: a core), since every copy is the
 * same and every link of a fabric level is the same. The closed forms see
 * the routes of every rank to rank 0 and to rank p-1 (topo.c, cost_routes)
 * as a set (their slowest and fastest), so a node per distinct D_k, against
 * node 0 and against node N-1, shows every route they would see:
 *
 *     node 0   D = same leaf ........ node 1
 *              D = same pod ......... node 64      -> W = {0, 1, 64, 2048,
 *              D = other pod ........ node 2048          ..., N-1}
 *     node N-1 (its own classes)
 *
 * The distances come from the generator's arithmetic (generate.h,
 * gen_shape_t), not from a graph: 131,072 nodes of 8 NICs in milliseconds. */
#include "fold.h"

#include "../util/hash.h"

#include <stdlib.h>
#include <string.h>

/* Do nodes k and x have their hosts on the same leaves? Then they have the
 * same matrix against every other node. */
static int same_leaves(const gen_shape_t *s, int hpn, int k, int x) {
    for (int a = 0; a < hpn; a++)
        if (gen_shape_leaf(s, k * hpn + a) != gen_shape_leaf(s, x * hpn + a)) return 0;
    return 1;
}

/* Node k's distance matrix to node x, hpn x hpn bytes, into sig
 * (gen_shape_hops of each pair of their hosts; the leaves found once). */
static void signature(const gen_shape_t *s, int hpn, int k, int x, unsigned char *sig) {
    int lk[FOLD_HPN_MAX], lx[FOLD_HPN_MAX];
    for (int a = 0; a < hpn; a++) lk[a] = gen_shape_leaf(s, k * hpn + a), lx[a] = gen_shape_leaf(s, x * hpn + a);
    for (int a = 0; a < hpn; a++)
        for (int b = 0; b < hpn; b++)
            sig[a * hpn + b] = (unsigned char)(k == x && a == b ? 0 : gen_shape_leaf_hops(s, lk[a], lx[b]));
}

/* Add to w (n of them, at most max) the first node of each distinct matrix
 * against node x; -1 if there are more than max. */
static int classes_against(const gen_shape_t *s, int nodes, int hpn, int x, int *w, int *n, int max) {
    size_t len = (size_t)hpn * hpn;
    unsigned char *seen = malloc(len * (size_t)max), *sig = malloc(len);
    int found = 0, rc = 0, prev = -1;
    if (seen == NULL || sig == NULL) rc = -1;
    for (int k = 0; k < nodes && rc == 0; k++) {
        if (k == x) continue;
        if (prev >= 0 && same_leaves(s, hpn, k, prev)) continue;     /* the previous one's matrix */
        prev = k;
        signature(s, hpn, k, x, sig);
        int j = 0;
        while (j < found && memcmp(seen + (size_t)j * len, sig, len)) j++;
        if (j < found) continue;
        if (found == max || *n == max) { rc = -1; break; }
        memcpy(seen + (size_t)found++ * len, sig, len);
        w[(*n)++] = k;
    }
    free(seen);
    free(sig);
    return rc;
}

static int cmp_int(const void *a, const void *b) { return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b); }

int fold_witnesses(const gen_fabric_t *f, int nodes, int hpn, int *w, int max) {
    gen_shape_t s;
    if (nodes < 1 || hpn < 1 || hpn > FOLD_HPN_MAX || max < 2 || gen_shape_init(&s, f, nodes * hpn, NULL) < 0) return -1;
    int n = 0;
    w[n++] = 0;
    if (nodes > 1) w[n++] = nodes - 1;
    int rc = classes_against(&s, nodes, hpn, 0, w, &n, max);
    if (rc == 0 && nodes > 1) rc = classes_against(&s, nodes, hpn, nodes - 1, w, &n, max);
    gen_shape_free(&s);
    if (rc < 0) return -1;
    qsort(w, (size_t)n, sizeof *w, cmp_int);
    int u = 0;
    for (int i = 0; i < n; i++)
        if (u == 0 || w[i] != w[u - 1]) w[u++] = w[i];
    return u;
}

/* Which pair of witnesses stands for a pair of whole nodes: one whose
 * distance matrix is theirs (a route between them is, link for link, a route
 * of the same latency and bandwidth). The witness pairs' matrices sit in an
 * open-addressing table; recent pairs of leaf groups are remembered, since
 * a pattern's messages from one node go to few others. */
#define MAP_RECENT 4096

struct fold_map {
    gen_shape_t s;
    int nodes, hpn, nw, len;        /* len: hpn x hpn */
    unsigned char *sig, *scratch;   /* one matrix per witness pair; a matrix being looked up */
    int cap, *slot;                 /* pair + 1 of each distinct matrix, 0: empty */
    int *vid;                       /* per node: the first node whose hosts' leaves are its */
    int *host, nhost;               /* per built node below nhost: its place among its node's hosts, -1 */
    struct { int vk, vx, pair; } recent[MAP_RECENT];   /* by (vid k, vid x; -1: x = k) */
};

/* Number each node by the first node of its leaves (the nodes of one leaf
 * group are consecutive, so the previous one is tried first). */
static int number_leaves(fold_map_t *m) {
    if ((m->vid = malloc(((size_t)m->nodes + 1) * sizeof *m->vid)) == NULL) return -1;
    for (int k = 0; k < m->nodes; k++)
        m->vid[k] = k > 0 && same_leaves(&m->s, m->hpn, k, m->vid[k - 1]) ? m->vid[k - 1] : k;
    return 0;
}

/* The slot of matrix sig in the table: its pair's, or the empty one it would take. */
static int *sig_slot(const fold_map_t *m, const unsigned char *sig) {
    for (uint32_t i = hash_bytes(HASH_SEED, sig, (size_t)m->len) & (uint32_t)(m->cap - 1);; i = (i + 1) & (uint32_t)(m->cap - 1))
        if (m->slot[i] == 0 || !memcmp(m->sig + (size_t)(m->slot[i] - 1) * m->len, sig, (size_t)m->len)) return &m->slot[i];
}

/* Each built fabric host's place in its node (fold_map_host). */
static int number_hosts(fold_map_t *m, const int *hosts) {
    for (int i = 0; i < m->nw * m->hpn; i++)
        if (hosts[i] >= m->nhost) m->nhost = hosts[i] + 1;
    if ((m->host = malloc(((size_t)m->nhost + 1) * sizeof *m->host)) == NULL) return -1;
    for (int v = 0; v < m->nhost; v++) m->host[v] = -1;
    for (int i = 0; i < m->nw * m->hpn; i++) m->host[hosts[i]] = i % m->hpn;
    return 0;
}

fold_map_t *fold_map_new(const gen_fabric_t *f, int nodes, int hpn, const int *w, int nw, const int *hosts) {
    fold_map_t *m = calloc(1, sizeof *m);
    if (m == NULL || hpn < 1 || hpn > FOLD_HPN_MAX || nw < 1 || gen_shape_init(&m->s, f, nodes * hpn, NULL) < 0) { free(m); return NULL; }
    m->nodes = nodes, m->hpn = hpn, m->nw = nw, m->len = hpn * hpn;
    for (m->cap = 4; m->cap < 2 * nw * nw; m->cap *= 2) {}
    m->sig = malloc((size_t)nw * nw * m->len), m->scratch = malloc((size_t)m->len), m->slot = calloc((size_t)m->cap, sizeof *m->slot);
    if (m->sig == NULL || m->scratch == NULL || m->slot == NULL) { fold_map_free(m); return NULL; }
    for (int i = 0; i < nw * nw; i++) {
        unsigned char *sig = m->sig + (size_t)i * m->len;
        signature(&m->s, hpn, w[i / nw], w[i % nw], sig);
        int *s = sig_slot(m, sig);
        if (*s == 0) *s = i + 1;
    }
    for (int i = 0; i < MAP_RECENT; i++) m->recent[i].vk = -1;
    if (number_leaves(m) < 0 || number_hosts(m, hosts) < 0) { fold_map_free(m); return NULL; }
    return m;
}

void fold_map_free(fold_map_t *m) {
    if (m == NULL) return;
    gen_shape_free(&m->s);
    free(m->sig);
    free(m->scratch);
    free(m->slot);
    free(m->vid);
    free(m->host);
    free(m);
}

int fold_map_pair(fold_map_t *m, int k, int x) {
    if (k < 0 || x < 0 || k >= m->nodes || x >= m->nodes) return -1;
    int vk = m->vid[k], vx = k == x ? -1 : m->vid[x];      /* a node to itself: hosts to their own */
    unsigned h = ((unsigned)vk * 2654435761u ^ (unsigned)vx * 40503u) % MAP_RECENT;
    if (m->recent[h].vk == vk && m->recent[h].vx == vx) return m->recent[h].pair;
    signature(&m->s, m->hpn, k, x, m->scratch);
    int pair = *sig_slot(m, m->scratch) - 1;
    m->recent[h].vk = vk, m->recent[h].vx = vx, m->recent[h].pair = pair;
    return pair;
}

/* --- the whole fabric's own links --------------------------------------- */

int fold_map_host(const fold_map_t *m, int node) { return node >= 0 && node < m->nhost ? m->host[node] : -1; }

/* Numbering: leaves' up links (leaf x up + j), the same links down, then
 * the aggregation switches' links to the cores, up and down (switch
 * pod x up + j, port c: (pod x up + j) x half + c). */
static long leaf_links(const gen_shape_t *s) { return (long)s->nleaves * s->up; }
static long agg_links(const gen_shape_t *s) {
    return s->levels == 3 ? (long)(s->nleaves + s->half - 1) / s->half * s->up * s->half : 0;
}

void fold_map_ports(const fold_map_t *m, int *up, int *half) { *up = m->s.up, *half = m->s.half; }

long fold_map_fabric_links(const fold_map_t *m) { return 2 * leaf_links(&m->s) + 2 * agg_links(&m->s); }

int fold_map_cross(const fold_map_t *m, int k, int x, const fold_cross_t *cr, long *id) {
    const gen_shape_t *s = &m->s;
    int pb = x * m->hpn + cr->b, la = gen_shape_leaf(s, k * m->hpn + cr->a), lb = gen_shape_leaf(s, pb);
    int links = la == lb ? 0 : gen_shape_leaf_hops(s, la, lb) - 2;
    if (links != cr->links) return -1;
    if (links == 0) return 0;
    int key = cr->keyed ? gen_shape_port(s, pb) : 0;
    int j = (cr->j + key) % s->up, c = (cr->c + key) % s->half;
    long nl = leaf_links(s), na = agg_links(s);
    id[0] = (long)la * s->up + j;
    id[links - 1] = nl + (long)lb * s->up + j;
    if (links == 4) {
        id[1] = 2 * nl + ((long)la / s->half * s->up + j) * s->half + c;
        id[2] = 2 * nl + na + ((long)lb / s->half * s->up + j) * s->half + c;
    }
    return links;
}
