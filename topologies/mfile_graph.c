/* mfile_graph.c - the graph a machine file declares: its nodes, its links
 * and its generated fabrics (fat-trees, tori, rings, dragonflies), each
 * entry read and added to the topology in the order written.
 *
 * Link patterns pair their two sides: equal counts zip; one side of one node
 * fans out; otherwise each b gets an equal run of consecutive a's. */
#include "mfile_graph.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "dragonfly.h"
#include "generate.h"

int mf_add_node(mfile_t *c, ynode_t *n) {
    static const char *const keys[] = {"name", "kind", "rank", "transit", "reduce", "if", "unless", NULL};
    if (!ydoc_is_map(n)) return mf_fail(c, n, "a node must be a mapping {name: ..., kind: ...}", NULL, NULL);
    int rc = mf_only_keys(c, n, keys, "a node");
    if (rc < 0 || (rc = mf_wanted(c, n)) <= 0) return rc;
    char pat[MF_TEXT], kind[MF_TEXT] = "gpu", **names;
    const char *why;
    ynode_t *nn = NULL, *kv = mf_get(c, n, "kind"), *rv = mf_get(c, n, "rank");
    int count, rank = -1;
    if ((rc = mf_need(c, n, "name", pat, &nn)) < 0) return rc;
    if (kv && (rc = mf_text(c, kv, "kind", kind)) < 0) return rc;
    int k = topo_kind_parse(kind);
    if (k < 0) return mf_fail(c, kv, "unknown node kind '%s' (gpu, switch, nic or cpu)", kind, NULL);
    if (expand_range(pat, &names, &count, &why) < 0) return mf_fail(c, nn, "bad name pattern '%s': %s", pat, why);
    int transit = mf_get_bool(c, n, "transit", k != NODE_GPU), reduces = mf_get_bool(c, n, "reduce", 0);
    if (transit < 0) rc = transit;
    if (reduces < 0 && rc == 0) rc = reduces;
    if (reduces > 0 && k != NODE_SWITCH && rc == 0) rc = mf_fail(c, mf_get(c, n, "reduce"), "only a switch can reduce in the network", NULL, NULL);
    if (rv && count != 1 && rc == 0) rc = mf_fail(c, rv, "'rank' needs a single node, not a range", NULL, NULL);
    if (rv && rc == 0) rc = mf_get_int(c, rv, "rank", 0, &rank);
    for (int i = 0; i < count && rc == 0; i++) {
        char full[MF_TEXT + 128];
        mf_prefixed(c, names[i], full, sizeof full);
        if (topo_find_node(c->t, full) >= 0) { rc = mf_fail(c, nn, "duplicate node name '%s'", full, NULL); break; }
        int id = topo_add_node(c->t, full, (node_kind_t)k, (int)ydoc_line(nn), (int)ydoc_col(nn), c->e);
        if (id < 0) { rc = id; break; }
        topo_set_transit(c->t, id, transit);
        topo_set_reduces(c->t, id, reduces > 0);
        int r = rank >= 0 ? rank : k == NODE_GPU ? (*c->next_rank)++ : -1;
        if (r >= 0) rc = topo_set_rank(c->t, id, r, c->e);
    }
    expand_names_free(names, count);
    return rc;
}

/* Join the two sides of a pattern link (see the file comment). */
static int pair_up(mfile_t *c, ynode_t *l, const int *a, int na, const int *b, int nb, double bw, double lat) {
    int rc = 0;
    if (!(na == nb || na == 1 || nb == 1 || (nb > 0 && na % nb == 0) || (na > 0 && nb % na == 0)))
        return mf_fail(c, l, "cannot pair the link's sides: counts do not divide each other", NULL, NULL);
    int n = na > nb ? na : nb;
    for (int i = 0; i < n && rc == 0; i++) {
        int x = na >= nb ? a[i] : a[na == 1 ? 0 : i / (nb / na)];
        int y = nb >= na ? b[i] : b[nb == 1 ? 0 : i / (na / nb)];
        if (x == y) return mf_fail(c, l, "link from '%s' to itself", topo_node(c->t, x)->name, NULL);
        rc = topo_add_link_at(c->t, x, y, bw, lat, (int)ydoc_line(l), (int)ydoc_col(l), c->e);
    }
    return rc;
}

static int add_mesh(mfile_t *c, ynode_t *mv, double bw, double lat) {
    int *ids, n, rc;
    if ((rc = mf_resolve(c, mv, "mesh", &ids, &n)) < 0) return rc;
    for (int i = 0; i < n && rc == 0; i++)
        for (int j = i + 1; j < n && rc == 0; j++) {
            if (ids[i] == ids[j]) { rc = mf_fail(c, mv, "node '%s' appears twice in the mesh", topo_node(c->t, ids[i])->name, NULL); break; }
            rc = topo_add_link_at(c->t, ids[i], ids[j], bw, lat, (int)ydoc_line(mv), (int)ydoc_col(mv), c->e);
        }
    free(ids);
    return rc;
}

int mf_add_link(mfile_t *c, ynode_t *l) {
    static const char *const keys[] = {"a", "b", "mesh", "bw", "latency", "if", "unless", NULL};
    if (!ydoc_is_map(l)) return mf_fail(c, l, "a link must be a mapping {a: X, b: Y, bw: ..., latency: ...}", NULL, NULL);
    double bw, lat;
    int rc = mf_only_keys(c, l, keys, "a link");
    if (rc < 0 || (rc = mf_wanted(c, l)) <= 0) return rc;
    if ((rc = mf_get_bw(c, l, "bw", &bw)) < 0 || (rc = mf_get_time(c, l, "latency", &lat)) < 0) return rc;
    if (!(bw > 0)) return mf_fail(c, mf_get(c, l, "bw"), "link bandwidth must be positive", NULL, NULL);
    ynode_t *mv = mf_get(c, l, "mesh"), *av = mf_get(c, l, "a"), *bv = mf_get(c, l, "b");
    if (mv) return add_mesh(c, mv, bw, lat);
    if (!av || !bv) return mf_fail(c, l, "a link needs 'a' and 'b' (or 'mesh')", NULL, NULL);
    int *a = NULL, *b = NULL, na, nb;
    if ((rc = mf_resolve(c, av, "a", &a, &na)) == 0 && (rc = mf_resolve(c, bv, "b", &b, &nb)) == 0)
        rc = pair_up(c, l, a, na, b, nb, bw, lat);
    free(a);
    free(b);
    return rc;
}

static int get_dims(mfile_t *c, ynode_t *g, int *dims, int *nd) {
    ynode_t *dv = mf_get(c, g, "dims");
    *nd = 0;
    if (dv == NULL) return 0;
    if (!ydoc_is_seq(dv)) return mf_fail(c, dv, "'dims' must be a list like [4, 4]", NULL, NULL);
    for (int i = 0; i < ydoc_len(dv); i++) {
        if (*nd == 3) return mf_fail(c, dv, "at most 3 dimensions", NULL, NULL);
        int rc = mf_get_int(c, ydoc_item(c->doc, dv, i), "dims", 1, &dims[(*nd)++]);
        if (rc < 0) return rc;
    }
    return 0;
}

/* A fat_tree generator's numbers (not its bandwidth and latency). */
int mf_fabric_of(mfile_t *c, ynode_t *g, gen_fabric_t *f, char *prefix) {
    ynode_t *v;
    int rc = 0;
    f->prefix = "fabric", f->radix = 64, f->oversub = 1, f->rails = 1;
    if ((v = mf_get(c, g, "radix")) && rc == 0) rc = mf_get_int(c, v, "radix", 2, &f->radix);
    if ((v = mf_get(c, g, "oversubscription")) && rc == 0) rc = mf_get_int(c, v, "oversubscription", 1, &f->oversub);
    if ((v = mf_get(c, g, "rails")) && rc == 0) rc = mf_get_int(c, v, "rails", 1, &f->rails);
    if ((v = mf_get(c, g, "prefix")) && rc == 0 && (rc = mf_text(c, v, "prefix", prefix)) == 0) f->prefix = prefix;
    if (rc == 0 && (rc = mf_get_bool(c, g, "sharp", 0)) >= 0) f->sharp = rc, rc = 0;
    return rc;
}

/* A folded cluster's n fabric hosts (its witnesses' NICs, node-major): where
 * the whole cluster's fabric puts each (f->pos, f->total); malloc'd. */
static int *fold_places(const mfile_t *c, int n, gen_fabric_t *f) {
    int hpn = n / c->fold_nw, *pos = malloc(((size_t)n + 1) * sizeof *pos);
    for (int i = 0; pos && i < n; i++) pos[i] = c->fold_w[i / hpn] * hpn + i % hpn;
    f->pos = pos, f->total = c->fold_nodes * hpn;
    return pos;
}

/* A dragonfly generator's numbers beyond its hosts' bandwidth and latency
 * (global links default to the same). */
static int dragonfly_of(mfile_t *c, ynode_t *g, gen_dragonfly_t *f, char *prefix) {
    static const struct { const char *key; int lo; size_t off; } ints[] = {
        {"hosts_per_router", 1, offsetof(gen_dragonfly_t, per_router)},
        {"routers_per_group", 1, offsetof(gen_dragonfly_t, per_group)},
        {"global_ports", 0, offsetof(gen_dragonfly_t, globals)},
        {"global_links", 1, offsetof(gen_dragonfly_t, links)},
    };
    ynode_t *v;
    char how[MF_TEXT];
    int rc = 0;
    f->prefix = "df", f->per_router = 16, f->per_group = 32, f->globals = 17;   /* Rosetta's 16 + 31 + 17 ports */
    f->global_bw = f->bw, f->global_lat = f->lat;
    for (size_t i = 0; i < sizeof ints / sizeof *ints && rc == 0; i++)
        if ((v = mf_get(c, g, ints[i].key))) rc = mf_get_int(c, v, ints[i].key, ints[i].lo, (int *)((char *)f + ints[i].off));
    if (rc == 0 && mf_get(c, g, "global_bw")) rc = mf_get_bw(c, g, "global_bw", &f->global_bw);
    if (rc == 0 && mf_get(c, g, "global_latency")) rc = mf_get_time(c, g, "global_latency", &f->global_lat);
    if (rc == 0 && (v = mf_get(c, g, "prefix")) && (rc = mf_text(c, v, "prefix", prefix)) == 0) f->prefix = prefix;
    if (rc == 0 && (v = mf_get(c, g, "routing")) && (rc = mf_text(c, v, "routing", how)) == 0) {
        if (strcmp(how, "adaptive") && strcmp(how, "minimal"))
            return mf_fail(c, v, "routing '%s': a dragonfly routes minimal or adaptive", how, NULL);
        f->adaptive = !strcmp(how, "adaptive");
    }
    if (rc == 0 && !(f->global_bw > 0)) rc = mf_fail(c, mf_get(c, g, "global_bw"), "global_bw must be positive", NULL, NULL);
    return rc;
}

static int add_dragonfly(mfile_t *c, ynode_t *g, const int *ids, int n, double bw, double lat) {
    gen_dragonfly_t f = {.bw = bw, .lat = lat};
    char prefix[MF_TEXT];
    baton_err_t inner = {0};
    int rc = dragonfly_of(c, g, &f, prefix);
    if (rc == 0 && gen_dragonfly(c->t, ids, n, &f, &inner) < 0) rc = mf_fail(c, g, "%s", inner.msg, NULL);
    return rc;
}

int mf_add_generated(mfile_t *c, ynode_t *g) {
    static const char *const keys[] = {"fat_tree", "torus", "ring", "dragonfly", "radix", "oversubscription", "rails",
                                       "prefix", "dims", "bw", "latency", "sharp", "hosts_per_router",
                                       "routers_per_group", "global_ports", "global_links", "global_bw",
                                       "global_latency", "routing", "if", "unless", NULL};
    if (!ydoc_is_map(g)) return mf_fail(c, g, "a generator must be a mapping {fat_tree: ..., ...}", NULL, NULL);
    int rc = mf_only_keys(c, g, keys, "a generator");
    if (rc < 0 || (rc = mf_wanted(c, g)) <= 0) return rc;
    double bw, lat;
    if ((rc = mf_get_bw(c, g, "bw", &bw)) < 0 || (rc = mf_get_time(c, g, "latency", &lat)) < 0) return rc;
    ynode_t *ft = mf_get(c, g, "fat_tree"), *to = mf_get(c, g, "torus"), *ri = mf_get(c, g, "ring"), *df = mf_get(c, g, "dragonfly");
    ynode_t *over = ft ? ft : to ? to : ri ? ri : df;
    if (!over || (!!ft + !!to + !!ri + !!df) != 1)
        return mf_fail(c, g, "a generator names one of fat_tree, torus, ring or dragonfly", NULL, NULL);
    int *ids, n, dims[3], nd;
    if ((rc = mf_resolve(c, over, "nodes", &ids, &n)) < 0) return rc;
    if (df) {
        rc = add_dragonfly(c, g, ids, n, bw, lat);
    } else if (ft) {
        gen_fabric_t f = {.bw = bw, .lat = lat};
        char prefix[MF_TEXT];
        int *pos = NULL;
        rc = mf_fabric_of(c, g, &f, prefix);
        if (rc == 0 && c->fold_nw && (pos = fold_places(c, n, &f)) == NULL) rc = err_set(c->e, BATON_ENOMEM, "out of memory");
        if (rc == 0 && c->fold_nw) {              /* the fabric's switches come next */
            c->fabric_first = topo_nnodes(c->t);
            fold_map_free(c->fold_map);
            c->fold_map = fold_map_new(&f, c->fold_nodes, n / c->fold_nw, c->fold_w, c->fold_nw, ids);
        }
        baton_err_t inner = {0};
        if (rc == 0 && gen_fat_tree(c->t, ids, n, &f, &inner) < 0) rc = mf_fail(c, g, "%s", inner.msg, NULL);
        free(pos);
    } else if (mf_get(c, g, "sharp")) {
        rc = mf_fail(c, mf_get(c, g, "sharp"), "'sharp' is for a fat_tree (its switches reduce)", NULL, NULL);
    } else {
        rc = get_dims(c, g, dims, &nd);
        if (rc == 0 && ri) { dims[0] = n; nd = 1; }
        if (rc == 0 && nd == 0) rc = mf_fail(c, g, "a torus needs 'dims'", NULL, NULL);
        if (rc == 0) {
            baton_err_t inner = {0};
            if (gen_torus(c->t, ids, n, dims, nd, bw, lat, &inner) < 0) rc = mf_fail(c, g, "%s", inner.msg, NULL);
        }
    }
    free(ids);
    return rc;
}
