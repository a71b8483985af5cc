/* flow.c - Dinic's max-flow: BFS levels from the source, then blocking flows
 * by DFS along level-increasing residual edges, until the sink is cut off. */
#include "flow.h"

#include <stdlib.h>

typedef struct { int to, next; double cap; } edge_t;

typedef struct {
    edge_t *e;
    int ne, *head, *level, *it, *queue, n;
} graph_t;

static void add_edge(graph_t *g, int u, int v, double cap) {
    g->e[g->ne] = (edge_t){v, g->head[u], cap};
    g->head[u] = g->ne++;
    g->e[g->ne] = (edge_t){u, g->head[v], 0};
    g->head[v] = g->ne++;
}

static int levels(graph_t *g, int s, int t) {
    int qh = 0, qt = 0;
    for (int i = 0; i < g->n; i++) g->level[i] = -1;
    g->level[s] = 0;
    g->queue[qt++] = s;
    while (qh < qt) {
        int u = g->queue[qh++];
        for (int k = g->head[u]; k >= 0; k = g->e[k].next)
            if (g->e[k].cap > 1e-9 && g->level[g->e[k].to] < 0) {
                g->level[g->e[k].to] = g->level[u] + 1;
                g->queue[qt++] = g->e[k].to;
            }
    }
    return g->level[t] >= 0;
}

static double push(graph_t *g, int u, int t, double f) {
    if (u == t) return f;
    for (; g->it[u] >= 0; g->it[u] = g->e[g->it[u]].next) {
        edge_t *ed = &g->e[g->it[u]];
        if (ed->cap <= 1e-9 || g->level[ed->to] != g->level[u] + 1) continue;
        double got = push(g, ed->to, t, f < ed->cap ? f : ed->cap);
        if (got > 0) {
            ed->cap -= got;
            g->e[g->it[u] ^ 1].cap += got;
            return got;
        }
    }
    return 0;
}

double flow_between_halves(const topo_t *t, int split) {
    int nn = topo_nnodes(t), s = nn, k = nn + 1, p = topo_nranks(t), nl = topo_nlinks(t);
    graph_t g = {.n = nn + 2};
    g.e = malloc(((size_t)nl + (size_t)p + 1) * 2 * sizeof *g.e);
    g.head = malloc((size_t)g.n * sizeof *g.head);
    g.level = malloc((size_t)g.n * sizeof *g.level);
    g.it = malloc((size_t)g.n * sizeof *g.it);
    g.queue = malloc((size_t)g.n * sizeof *g.queue);
    double total = -1;
    if (g.e && g.head && g.level && g.it && g.queue) {
        for (int i = 0; i < g.n; i++) g.head[i] = -1;
        for (int l = 0; l < nl; l++)
            add_edge(&g, topo_dlink(t, l)->src, topo_dlink(t, l)->dst, topo_dlink(t, l)->bw * topo_params_c(t)->bw_scale);
        for (int r = 0; r < p; r++)
            if (r < split) add_edge(&g, s, topo_rank_node(t, r), 1e300);
            else add_edge(&g, topo_rank_node(t, r), k, 1e300);
        total = 0;
        while (levels(&g, s, k)) {
            for (int i = 0; i < g.n; i++) g.it[i] = g.head[i];
            for (double f; (f = push(&g, s, k, 1e300)) > 0;) total += f;
        }
    }
    free(g.e);
    free(g.head);
    free(g.level);
    free(g.it);
    free(g.queue);
    return total;
}
