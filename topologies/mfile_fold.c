/* mfile_fold.c - whether a machine file is a cluster that folds: a cluster
 * of copies of one node written as the cluster files write it, large enough
 * (topo_yaml_load_folded's min_nodes), is built as its witness nodes only
 * (topologies/fold.c); this file decides which, and what the node bracket
 * becomes (mf_text narrows it), before anything is built. */
#include "mfile_fold.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mfile_graph.h"

/* Does m's key hold a pattern that starts with the node prefix P and names
 * no other node number? */
static int per_node(mfile_t *c, ynode_t *m, const char *key, const char *P) {
    const char *v = m && ydoc_is_map(m) ? ydoc_scalar(mf_get(c, m, key)) : NULL;
    char count[96];
    snprintf(count, sizeof count, "${%s", c->fold_count);
    return v && strncmp(v, P, strlen(P)) == 0 && strstr(v + strlen(P), count) == NULL;
}

/* Every item of list `key` of root passes ok(item). */
static int all_items(mfile_t *c, ynode_t *root, const char *key, const char *P,
                     int (*ok)(mfile_t *, ynode_t *, const char *)) {
    ynode_t *l = mf_get(c, root, key);
    if (l == NULL || !ydoc_is_seq(l)) return 0;
    for (int i = 0; i < ydoc_len(l); i++)
        if (!ok(c, ydoc_item(c->doc, l, i), P)) return 0;
    return 1;
}

static int node_ok(mfile_t *c, ynode_t *n, const char *P) { return per_node(c, n, "name", P) && !mf_get(c, n, "rank"); }
static int link_ok(mfile_t *c, ynode_t *l, const char *P) { return per_node(c, l, "a", P) && per_node(c, l, "b", P); }
static int tree_ok(mfile_t *c, ynode_t *g, const char *P) { return per_node(c, g, "fat_tree", P) && mf_get_bool(c, g, "sharp", 0) == 0; }
static int dragonfly_of(mfile_t *c, ynode_t *g, const char *P) { return per_node(c, g, "dragonfly", P); }

/* The copies' count parameter of a name's first bracket, "[0-${X-1}]" (X a
 * parameter's name: nodes, racks), into c->fold_count and the bracket into
 * c->fold_bracket; where it starts, or NULL if the bracket is not one. */
static const char *count_bracket(mfile_t *c, const char *name) {
    const char *at = strchr(name, '['), *x;
    if (at == NULL || strncmp(at, "[0-${", 5) != 0) return NULL;
    size_t n = strspn(x = at + 5, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
    if (n == 0 || n >= sizeof c->fold_count || strncmp(x + n, "-1}]", 4) != 0) return NULL;
    snprintf(c->fold_count, sizeof c->fold_count, "%.*s", (int)n, x);
    snprintf(c->fold_bracket, sizeof c->fold_bracket, "%.*s", (int)(x + n + 4 - at), at);
    return at;
}

/* The prefix every name of a cluster of copies starts with ("n[0-${nodes-1}]",
 * "r[0-${racks-1}]": the first node's, up to and including its first
 * bracket, if that bracket counts copies) into P; 0 if the file is not
 * written that way. */
static int fold_prefix(mfile_t *c, ynode_t *root, char *P) {
    ynode_t *nodes = mf_get(c, root, "nodes"), *gen = mf_get(c, root, "generate"), *n0;
    if (!nodes || !ydoc_is_seq(nodes) || ydoc_len(nodes) == 0 ||
        !gen || !ydoc_is_seq(gen) || ydoc_len(gen) != 1 ||
        mf_get(c, root, "include") || mf_get(c, root, "sharp_fabric"))
        return 0;
    n0 = ydoc_item(c->doc, nodes, 0);
    const char *first = ydoc_is_map(n0) ? ydoc_scalar(mf_get(c, n0, "name")) : NULL, *at;
    if (!first || (at = count_bracket(c, first)) == NULL) return 0;
    snprintf(P, MF_TEXT, "%.*s%s", (int)(at - first), first, c->fold_bracket);
    if (!all_items(c, root, "nodes", P, node_ok) || !all_items(c, root, "links", P, link_ok)) return 0;
    if (dragonfly_of(c, ydoc_item(c->doc, gen, 0), P))
        c->fold_why = "a dragonfly loads whole (global links of several rates, routes by group: "
                      "docs/decisions/symmetry-and-folding.md)";
    return tree_ok(c, ydoc_item(c->doc, gen, 0), P);
}

/* A cluster of at least c->fold_min copies of one node, as the cluster files
 * write it (every node and link named "P[0-${nodes-1}]...", one fat_tree over
 * their NICs, no include, no SHARP): build only its witness nodes
 * (topologies/fold.c), where the whole would have them. Anything else loads
 * whole; so does anything wrong here, and the whole load says what. */
void mf_fold_plan(mfile_t *c, ynode_t *root) {
    const char *nv, *why;
    char *end, P[MF_TEXT], pat[MF_TEXT], one[MF_TEXT], prefix[MF_TEXT], **names = NULL;
    int copies = c->fold_min > 0 && c->depth == 0 && fold_prefix(c, root, P);
    const char *whole = c->fold_why;               /* copies, but on a fabric that does not fold */
    c->fold_why = NULL;
    if ((!copies && !whole) || (nv = expand_get(&c->params, c->fold_count)) == NULL) return;
    long N = strtol(nv, &end, 10);
    if (*end || N < c->fold_min || N > 1 << 24) return;
    if ((c->fold_why = whole) != NULL) return;     /* large enough to fold: say why it does not */
    ynode_t *g = ydoc_item(c->doc, mf_get(c, root, "generate"), 0);
    const char *hosts = ydoc_scalar(mf_get(c, g, "fat_tree"));
    gen_fabric_t f = {0};
    int hpn = 0;                                    /* NICs a node: the hosts pattern for node 0 alone */
    snprintf(pat, sizeof pat, "%.*s[0]%s", (int)(strlen(P) - strlen(c->fold_bracket)), hosts, hosts + strlen(P));
    if (mf_fabric_of(c, g, &f, prefix) < 0 || expand_subst(&c->params, pat, one, MF_TEXT, &why) < 0 ||
        expand_range(one, &names, &hpn, &why) < 0)
        return;
    expand_names_free(names, hpn);
    int nw = fold_witnesses(&f, (int)N, hpn, c->fold_w, MF_FOLD_MAX);
    if (nw <= 0 || nw >= N) return;
    size_t w = 0, cap = sizeof c->fold_text;
    w += (size_t)snprintf(c->fold_text, cap, "[");
    for (int i = 0; i < nw && w < cap; i++) w += (size_t)snprintf(c->fold_text + w, cap - w, i ? ",%d" : "%d", c->fold_w[i]);
    if (w + 1 < cap) snprintf(c->fold_text + w, cap - w, "]"), c->fold_nodes = (int)N, c->fold_nw = nw;
}
