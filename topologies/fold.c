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

#include <stdlib.h>
#include <string.h>

/* Node k's distance matrix to node x, hpn x hpn bytes, into sig. */
static void signature(const gen_shape_t *s, int hpn, int k, int x, unsigned char *sig) {
    for (int a = 0; a < hpn; a++)
        for (int b = 0; b < hpn; b++) sig[a * hpn + b] = (unsigned char)gen_shape_hops(s, k * hpn + a, x * hpn + b);
}

/* Add to w (n of them, at most max) the first node of each distinct matrix
 * against node x; -1 if there are more than max. */
static int classes_against(const gen_shape_t *s, int nodes, int hpn, int x, int *w, int *n, int max) {
    size_t len = (size_t)hpn * hpn;
    unsigned char *seen = malloc(len * (size_t)max), *sig = malloc(len);
    int found = 0, rc = 0;
    if (seen == NULL || sig == NULL) rc = -1;
    for (int k = 0; k < nodes && rc == 0; k++) {
        if (k == x) continue;
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
    if (nodes < 1 || hpn < 1 || hpn > 64 || max < 2 || gen_shape_init(&s, f, nodes * hpn, NULL) < 0) return -1;
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
