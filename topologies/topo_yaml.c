/* topo_yaml.c - read a topology from YAML. The only file that includes <yaml.h>.
 *
 * Format (topologies/README.md has the full reference):
 *
 *   name: cluster-h100
 *   params: {nodes: 2, nic_bw: 400Gb/s}     # defaults; --set nodes=128 overrides
 *   ports: 0              # transfers a rank may send/receive at once, 0 = unlimited
 *   reduce_bw: 0          # bytes/s of a rank's reduction, 0 = free
 *   max_inflight: 8       # sends a stream may have posted and unfinished
 *   group_size: 8         # ranks per node, for hierarchical algorithms
 *   channels: 8           # rings side by side when a command gives no --channels
 *   p2p: true             # false: GPU-to-GPU traffic is staged in host memory
 *   pxn: false            # true: sends across nodes go over NVLink to the peer on the
 *                         #   destination's rail and out through its NIC (NCCL's PXN)
 *   bw_scale: 1           # every link's bandwidth x this (calibration writes it)
 *   lat_scale: 1          # every link's latency x this
 *   protocols: {LL: {latency: 0.6us, efficiency: 0.5, base: 6.6us}}   # NCCL's by default
 *   library: {name: RCCL, ll128: false, rules: [{coll: allreduce, ranks: 8, min: 1KiB,
 *             max: 64KiB, align: 1KiB, algo: direct, proto: LL}]}    # not NCCL: what -a nccl runs
 *   nodes:
 *     - {name: "n[0-${nodes-1}].gpu[0-7]"}          # gpus get ranks in order
 *     - {name: "n[0-${nodes-1}].nvswitch", kind: switch}
 *   links:
 *     - {a: "n[0-${nodes-1}].gpu[0-7]", b: "n[0-${nodes-1}].nvswitch", bw: 450GB/s, latency: 0.3us}
 *     - {mesh: [A, B, C], bw: 1B/s, latency: 0s}    # every pair
 *     - {a: x, b: y, bw: 12GB/s, latency: 1us, if: "${p2p}"}   # only when true
 *   include:                                 # a node file, copied N times
 *     - {file: hgx-h100-node.yaml, replicate: "${nodes}", prefix: "n{i}."}
 *   generate:
 *     - {fat_tree: "n[0-${nodes-1}].nic[0-7]", radix: 64, oversubscription: 1, rails: 8,
 *        bw: "${nic_bw}", latency: 1us}
 *     - {torus: "gpu[0-15]", dims: [4, 4], bw: 100GB/s, latency: 1us}
 *
 * Link patterns pair their two sides: equal counts zip; one side of one node
 * fans out; otherwise each b gets an equal run of consecutive a's.
 * The whole document is loaded first (libyaml's document API keeps every
 * node's line and column); every error is "file:line:col: what". */
#include "topo_yaml.h"

#include <errno.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>
#include <yaml.h>

#include "../util/suggest.h"
#include "../models/arch.h"
#include "../algorithms/algo.h"
#include "expand.h"
#include "fold.h"
#include "dragonfly.h"
#include "generate.h"
#include "find.h"
#include "knobs.h"
#include "units.h"

#define TEXT 1024
#define FOLD_MAX 64                      /* witnesses of a folded cluster, at most */
#define FOLD_BRACKET "[0-${nodes-1}]"     /* the bracket that numbers a cluster's nodes */
#define INCLUDE_MAX_COPIES 1048576L     /* copies of included files, all includes together */
#define INCLUDE_MAX_COPIES_S "1048576"

typedef struct {
    yaml_document_t doc;
    const char *file;
    topo_t *t;
    baton_err_t *e;
    int *next_rank;          /* shared with included files: ranks in declaration order */
    int own_next_rank;
    long *copies_left;       /* shared: included copies still allowed, against include bombs */
    long own_copies_left;
    expand_params_t params;
    char prefix[128];        /* an included copy's names start with this */
    int depth;               /* of includes */
    int fold_min;            /* fold a cluster of at least this many nodes (0: never) */
    int fold_nodes, fold_nw; /* folded: the nodes it stands for, the witnesses built */
    int fold_w[FOLD_MAX];    /* the witnesses, ascending */
    char fold_text[FOLD_MAX * 10 + 2];  /* "[0,1,...]": what the node bracket becomes (nodes < 2^24) */
    fold_map_t *fold_map;    /* folded: which witnesses stand for two nodes (the topology's once loaded) */
    int fabric_first;        /* folded: the first node the fat_tree made */
} ctx_t;

/* A node name as declared in this file, as the topology knows it. */
static void prefixed(const ctx_t *c, const char *name, char *out, size_t len) {
    snprintf(out, len, "%s%s", c->prefix, name);
}

static int fail(ctx_t *c, yaml_node_t *n, const char *fmt, const char *a, const char *b) {
    char what[2400];
    snprintf(what, sizeof what, fmt, a ? a : "", b ? b : "");
    return err_set(c->e, BATON_EPARSE, "%s:%lu:%lu: %s", c->file,
                   (unsigned long)n->start_mark.line + 1,
                   (unsigned long)n->start_mark.column + 1, what);
}

static const char *scalar(yaml_node_t *n) {
    return (n && n->type == YAML_SCALAR_NODE) ? (const char *)n->data.scalar.value : NULL;
}

static yaml_node_t *node(ctx_t *c, int id) { return yaml_document_get_node(&c->doc, id); }

/* Look up key in mapping m; NULL if absent. */
static yaml_node_t *get(ctx_t *c, yaml_node_t *m, const char *key) {
    for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
        const char *k = scalar(node(c, p->key));
        if (k && strcmp(k, key) == 0) return node(c, p->value);
    }
    return NULL;
}

/* Every key of m must be in the NULL-terminated list: typos are errors. */
static int only_keys(ctx_t *c, yaml_node_t *m, const char *const *keys, const char *what) {
    for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
        yaml_node_t *kn = node(c, p->key);
        const char *k = scalar(kn);
        int ok = 0;
        for (int i = 0; k && keys[i]; i++) ok |= strcmp(k, keys[i]) == 0;
        if (!ok) {
            char why[256];
            snprintf(why, sizeof why, "unknown key '%.60s' in %.80s%s", k ? k : "?", what, k ? suggest_hint(k, keys) : "");
            return fail(c, kn, "%s", why, NULL);
        }
    }
    return 0;
}

/* The scalar v with its ${...} substituted, into buf. */
static int text(ctx_t *c, yaml_node_t *v, const char *key, char *buf) {
    const char *s = scalar(v), *why, *at;
    char folded[TEXT];
    if (s == NULL) return fail(c, v, "'%s' must be a single value", key, NULL);
    if (c->fold_nw && (at = strstr(s, FOLD_BRACKET)) != NULL) {   /* a folded cluster: its witnesses only */
        snprintf(folded, sizeof folded, "%.*s%s%s", (int)(at - s), s, c->fold_text, at + strlen(FOLD_BRACKET));
        s = folded;
    }
    if (expand_subst(&c->params, s, buf, TEXT, &why) < 0) return fail(c, v, "in '%s': %s", s, why);
    return 0;
}

/* Required key, as substituted text. */
static int need(ctx_t *c, yaml_node_t *m, const char *key, char *buf, yaml_node_t **vn) {
    yaml_node_t *v = get(c, m, key);
    if (v == NULL) return fail(c, m, "missing '%s'", key, NULL);
    if (vn) *vn = v;
    return text(c, v, key, buf);
}

static int get_bw(ctx_t *c, yaml_node_t *m, const char *key, double *out) {
    char s[TEXT];
    const char *why;
    yaml_node_t *v = NULL;
    int rc = need(c, m, key, s, &v);
    if (rc < 0) return rc;
    if (units_bandwidth(s, out, &why) < 0) return fail(c, v, "bad bandwidth '%s': %s", s, why);
    return 0;
}

/* A size: "64KiB", "80GB", a number of bytes. */
static int get_size(ctx_t *c, yaml_node_t *m, const char *key, uint64_t *out) {
    char s[TEXT];
    const char *why;
    yaml_node_t *v = NULL;
    int rc = need(c, m, key, s, &v);
    if (rc < 0) return rc;
    if (units_size(s, out, &why) < 0) return fail(c, v, "bad size '%s': %s", s, why);
    return 0;
}

static int get_time(ctx_t *c, yaml_node_t *m, const char *key, double *out) {
    char s[TEXT];
    const char *why;
    yaml_node_t *v = NULL;
    int rc = need(c, m, key, s, &v);
    if (rc < 0) return rc;
    if (units_time(s, out, &why) < 0) return fail(c, v, "bad latency '%s': %s", s, why);
    return 0;
}

static int get_int(ctx_t *c, yaml_node_t *v, const char *key, int lo, int *out) {
    char s[TEXT], *end;
    int rc = text(c, v, key, s);
    if (rc < 0) return rc;
    errno = 0;
    long x = strtol(s, &end, 10);
    if (end == s || *end || errno || x < lo || x > 1 << 30)
        return fail(c, v, "'%s' must be a whole number, at least %s", key, lo == 0 ? "0" : "1");
    *out = (int)x;
    return 0;
}

/* A boolean key's value: 1, 0, `absent` if missing, negative on error. */
static int get_bool(ctx_t *c, yaml_node_t *m, const char *key, int absent) {
    yaml_node_t *v = get(c, m, key);
    char s[TEXT];
    if (v == NULL) return absent;
    int rc = text(c, v, key, s);
    if (rc < 0) return rc;
    int b = expand_bool(s);
    return b < 0 ? fail(c, v, "'%s' must be true or false, not '%s'", key, s) : b;
}

/* `if:` / `unless:` decide whether an entry exists: 1 yes, 0 no, negative error. */
static int wanted(ctx_t *c, yaml_node_t *m) {
    int yes = get_bool(c, m, "if", 1), no = get_bool(c, m, "unless", 0);
    if (yes < 0) return yes;
    if (no < 0) return no;
    return yes && !no;
}

/* Node ids named by a pattern (or a list of patterns); malloc'd into *ids. */
static int resolve(ctx_t *c, yaml_node_t *v, const char *key, int **ids, int *n) {
    int cap = 0, count = 0, rc = 0, last = -1;   /* names come in the order they were declared: try the next first */
    int items = v->type == YAML_SEQUENCE_NODE ? (int)(v->data.sequence.items.top - v->data.sequence.items.start) : 1;
    *ids = NULL;
    for (int i = 0; i < items && rc == 0; i++) {
        yaml_node_t *it = v->type == YAML_SEQUENCE_NODE ? node(c, v->data.sequence.items.start[i]) : v;
        char s[TEXT], **names = NULL;
        const char *why;
        int k = 0;
        if ((rc = text(c, it, key, s)) < 0) break;
        if (expand_range(s, &names, &k, &why) < 0) { rc = fail(c, it, "bad name pattern '%s': %s", s, why); break; }
        for (int j = 0; j < k && rc == 0; j++) {
            char full[TEXT + 128];
            prefixed(c, names[j], full, sizeof full);
            int id = last + 1 < topo_nnodes(c->t) && strcmp(topo_node(c->t, last + 1)->name, full) == 0
                         ? last + 1 : topo_find_node(c->t, full);
            if (id < 0) {
                rc = fail(c, it, "unknown node '%s' (declare it under nodes:)%s", full, topo_node_hint(c->t, full));
                break;
            }
            last = id;
            if (count == cap) {
                cap = cap ? cap * 2 : 64;
                int *q = realloc(*ids, (size_t)cap * sizeof *q);
                if (q == NULL) { rc = err_set(c->e, BATON_ENOMEM, "out of memory"); break; }
                *ids = q;
            }
            (*ids)[count++] = id;
        }
        expand_names_free(names, k);
    }
    if (rc < 0) { free(*ids); *ids = NULL; return rc; }
    *n = count;
    return 0;
}

static int add_node(ctx_t *c, yaml_node_t *n) {
    static const char *const keys[] = {"name", "kind", "rank", "transit", "reduce", "if", "unless", NULL};
    if (n->type != YAML_MAPPING_NODE) return fail(c, n, "a node must be a mapping {name: ..., kind: ...}", NULL, NULL);
    int rc = only_keys(c, n, keys, "a node");
    if (rc < 0 || (rc = wanted(c, n)) <= 0) return rc;
    char pat[TEXT], kind[TEXT] = "gpu", **names;
    const char *why;
    yaml_node_t *nn = NULL, *kv = get(c, n, "kind"), *rv = get(c, n, "rank");
    int count, rank = -1;
    if ((rc = need(c, n, "name", pat, &nn)) < 0) return rc;
    if (kv && (rc = text(c, kv, "kind", kind)) < 0) return rc;
    int k = topo_kind_parse(kind);
    if (k < 0) return fail(c, kv, "unknown node kind '%s' (gpu, switch, nic or cpu)", kind, NULL);
    if (expand_range(pat, &names, &count, &why) < 0) return fail(c, nn, "bad name pattern '%s': %s", pat, why);
    int transit = get_bool(c, n, "transit", k != NODE_GPU), reduces = get_bool(c, n, "reduce", 0);
    if (transit < 0) rc = transit;
    if (reduces < 0 && rc == 0) rc = reduces;
    if (reduces > 0 && k != NODE_SWITCH && rc == 0) rc = fail(c, get(c, n, "reduce"), "only a switch can reduce in the network", NULL, NULL);
    if (rv && count != 1 && rc == 0) rc = fail(c, rv, "'rank' needs a single node, not a range", NULL, NULL);
    if (rv && rc == 0) rc = get_int(c, rv, "rank", 0, &rank);
    for (int i = 0; i < count && rc == 0; i++) {
        char full[TEXT + 128];
        prefixed(c, names[i], full, sizeof full);
        if (topo_find_node(c->t, full) >= 0) { rc = fail(c, nn, "duplicate node name '%s'", full, NULL); break; }
        int id = topo_add_node(c->t, full, (node_kind_t)k, (int)nn->start_mark.line + 1,
                               (int)nn->start_mark.column + 1, c->e);
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
static int pair_up(ctx_t *c, yaml_node_t *l, const int *a, int na, const int *b, int nb, double bw, double lat) {
    int rc = 0;
    if (!(na == nb || na == 1 || nb == 1 || (nb > 0 && na % nb == 0) || (na > 0 && nb % na == 0)))
        return fail(c, l, "cannot pair the link's sides: counts do not divide each other", NULL, NULL);
    int n = na > nb ? na : nb;
    for (int i = 0; i < n && rc == 0; i++) {
        int x = na >= nb ? a[i] : a[na == 1 ? 0 : i / (nb / na)];
        int y = nb >= na ? b[i] : b[nb == 1 ? 0 : i / (na / nb)];
        if (x == y) return fail(c, l, "link from '%s' to itself", topo_node(c->t, x)->name, NULL);
        rc = topo_add_link_at(c->t, x, y, bw, lat, (int)l->start_mark.line + 1, (int)l->start_mark.column + 1, c->e);
    }
    return rc;
}

static int add_mesh(ctx_t *c, yaml_node_t *mv, double bw, double lat) {
    int *ids, n, rc;
    if ((rc = resolve(c, mv, "mesh", &ids, &n)) < 0) return rc;
    for (int i = 0; i < n && rc == 0; i++)
        for (int j = i + 1; j < n && rc == 0; j++) {
            if (ids[i] == ids[j]) { rc = fail(c, mv, "node '%s' appears twice in the mesh", topo_node(c->t, ids[i])->name, NULL); break; }
            rc = topo_add_link_at(c->t, ids[i], ids[j], bw, lat, (int)mv->start_mark.line + 1,
                                  (int)mv->start_mark.column + 1, c->e);
        }
    free(ids);
    return rc;
}

static int add_link(ctx_t *c, yaml_node_t *l) {
    static const char *const keys[] = {"a", "b", "mesh", "bw", "latency", "if", "unless", NULL};
    if (l->type != YAML_MAPPING_NODE) return fail(c, l, "a link must be a mapping {a: X, b: Y, bw: ..., latency: ...}", NULL, NULL);
    double bw, lat;
    int rc = only_keys(c, l, keys, "a link");
    if (rc < 0 || (rc = wanted(c, l)) <= 0) return rc;
    if ((rc = get_bw(c, l, "bw", &bw)) < 0 || (rc = get_time(c, l, "latency", &lat)) < 0) return rc;
    if (!(bw > 0)) return fail(c, get(c, l, "bw"), "link bandwidth must be positive", NULL, NULL);
    yaml_node_t *mv = get(c, l, "mesh"), *av = get(c, l, "a"), *bv = get(c, l, "b");
    if (mv) return add_mesh(c, mv, bw, lat);
    if (!av || !bv) return fail(c, l, "a link needs 'a' and 'b' (or 'mesh')", NULL, NULL);
    int *a = NULL, *b = NULL, na, nb;
    if ((rc = resolve(c, av, "a", &a, &na)) == 0 && (rc = resolve(c, bv, "b", &b, &nb)) == 0)
        rc = pair_up(c, l, a, na, b, nb, bw, lat);
    free(a);
    free(b);
    return rc;
}

static int get_dims(ctx_t *c, yaml_node_t *g, int *dims, int *nd) {
    yaml_node_t *dv = get(c, g, "dims");
    *nd = 0;
    if (dv == NULL) return 0;
    if (dv->type != YAML_SEQUENCE_NODE) return fail(c, dv, "'dims' must be a list like [4, 4]", NULL, NULL);
    for (yaml_node_item_t *i = dv->data.sequence.items.start; i < dv->data.sequence.items.top; i++) {
        if (*nd == 3) return fail(c, dv, "at most 3 dimensions", NULL, NULL);
        int rc = get_int(c, node(c, *i), "dims", 1, &dims[(*nd)++]);
        if (rc < 0) return rc;
    }
    return 0;
}

/* A fat_tree generator's numbers (not its bandwidth and latency). */
static int fabric_of(ctx_t *c, yaml_node_t *g, gen_fabric_t *f, char *prefix) {
    yaml_node_t *v;
    int rc = 0;
    f->prefix = "fabric", f->radix = 64, f->oversub = 1, f->rails = 1;
    if ((v = get(c, g, "radix")) && rc == 0) rc = get_int(c, v, "radix", 2, &f->radix);
    if ((v = get(c, g, "oversubscription")) && rc == 0) rc = get_int(c, v, "oversubscription", 1, &f->oversub);
    if ((v = get(c, g, "rails")) && rc == 0) rc = get_int(c, v, "rails", 1, &f->rails);
    if ((v = get(c, g, "prefix")) && rc == 0 && (rc = text(c, v, "prefix", prefix)) == 0) f->prefix = prefix;
    if (rc == 0 && (rc = get_bool(c, g, "sharp", 0)) >= 0) f->sharp = rc, rc = 0;
    return rc;
}

/* A folded cluster's n fabric hosts (its witnesses' NICs, node-major): where
 * the whole cluster's fabric puts each (f->pos, f->total); malloc'd. */
static int *fold_places(const ctx_t *c, int n, gen_fabric_t *f) {
    int hpn = n / c->fold_nw, *pos = malloc(((size_t)n + 1) * sizeof *pos);
    for (int i = 0; pos && i < n; i++) pos[i] = c->fold_w[i / hpn] * hpn + i % hpn;
    f->pos = pos, f->total = c->fold_nodes * hpn;
    return pos;
}

/* A dragonfly generator's numbers beyond its hosts' bandwidth and latency
 * (global links default to the same). */
static int dragonfly_of(ctx_t *c, yaml_node_t *g, gen_dragonfly_t *f, char *prefix) {
    static const struct { const char *key; int lo; size_t off; } ints[] = {
        {"hosts_per_router", 1, offsetof(gen_dragonfly_t, per_router)},
        {"routers_per_group", 1, offsetof(gen_dragonfly_t, per_group)},
        {"global_ports", 0, offsetof(gen_dragonfly_t, globals)},
        {"global_links", 1, offsetof(gen_dragonfly_t, links)},
    };
    yaml_node_t *v;
    char how[TEXT];
    int rc = 0;
    f->prefix = "df", f->per_router = 16, f->per_group = 32, f->globals = 17;   /* Rosetta's 16 + 31 + 17 ports */
    f->global_bw = f->bw, f->global_lat = f->lat;
    for (size_t i = 0; i < sizeof ints / sizeof *ints && rc == 0; i++)
        if ((v = get(c, g, ints[i].key))) rc = get_int(c, v, ints[i].key, ints[i].lo, (int *)((char *)f + ints[i].off));
    if (rc == 0 && get(c, g, "global_bw")) rc = get_bw(c, g, "global_bw", &f->global_bw);
    if (rc == 0 && get(c, g, "global_latency")) rc = get_time(c, g, "global_latency", &f->global_lat);
    if (rc == 0 && (v = get(c, g, "prefix")) && (rc = text(c, v, "prefix", prefix)) == 0) f->prefix = prefix;
    if (rc == 0 && (v = get(c, g, "routing")) && (rc = text(c, v, "routing", how)) == 0) {
        if (strcmp(how, "adaptive") && strcmp(how, "minimal"))
            return fail(c, v, "routing '%s': a dragonfly routes minimal or adaptive", how, NULL);
        f->adaptive = !strcmp(how, "adaptive");
    }
    if (rc == 0 && !(f->global_bw > 0)) rc = fail(c, get(c, g, "global_bw"), "global_bw must be positive", NULL, NULL);
    return rc;
}

static int add_dragonfly(ctx_t *c, yaml_node_t *g, const int *ids, int n, double bw, double lat) {
    gen_dragonfly_t f = {.bw = bw, .lat = lat};
    char prefix[TEXT];
    baton_err_t inner = {0};
    int rc = dragonfly_of(c, g, &f, prefix);
    if (rc == 0 && gen_dragonfly(c->t, ids, n, &f, &inner) < 0) rc = fail(c, g, "%s", inner.msg, NULL);
    return rc;
}

static int add_generated(ctx_t *c, yaml_node_t *g) {
    static const char *const keys[] = {"fat_tree", "torus", "ring", "dragonfly", "radix", "oversubscription", "rails",
                                       "prefix", "dims", "bw", "latency", "sharp", "hosts_per_router",
                                       "routers_per_group", "global_ports", "global_links", "global_bw",
                                       "global_latency", "routing", "if", "unless", NULL};
    if (g->type != YAML_MAPPING_NODE) return fail(c, g, "a generator must be a mapping {fat_tree: ..., ...}", NULL, NULL);
    int rc = only_keys(c, g, keys, "a generator");
    if (rc < 0 || (rc = wanted(c, g)) <= 0) return rc;
    double bw, lat;
    if ((rc = get_bw(c, g, "bw", &bw)) < 0 || (rc = get_time(c, g, "latency", &lat)) < 0) return rc;
    yaml_node_t *ft = get(c, g, "fat_tree"), *to = get(c, g, "torus"), *ri = get(c, g, "ring"), *df = get(c, g, "dragonfly");
    yaml_node_t *over = ft ? ft : to ? to : ri ? ri : df;
    if (!over || (!!ft + !!to + !!ri + !!df) != 1)
        return fail(c, g, "a generator names one of fat_tree, torus, ring or dragonfly", NULL, NULL);
    int *ids, n, dims[3], nd;
    if ((rc = resolve(c, over, "nodes", &ids, &n)) < 0) return rc;
    if (df) {
        rc = add_dragonfly(c, g, ids, n, bw, lat);
    } else if (ft) {
        gen_fabric_t f = {.bw = bw, .lat = lat};
        char prefix[TEXT];
        int *pos = NULL;
        rc = fabric_of(c, g, &f, prefix);
        if (rc == 0 && c->fold_nw && (pos = fold_places(c, n, &f)) == NULL) rc = err_set(c->e, BATON_ENOMEM, "out of memory");
        if (rc == 0 && c->fold_nw) {              /* the fabric's switches come next */
            c->fabric_first = topo_nnodes(c->t);
            fold_map_free(c->fold_map);
            c->fold_map = fold_map_new(&f, c->fold_nodes, n / c->fold_nw, c->fold_w, c->fold_nw, ids);
        }
        baton_err_t inner = {0};
        if (rc == 0 && gen_fat_tree(c->t, ids, n, &f, &inner) < 0) rc = fail(c, g, "%s", inner.msg, NULL);
        free(pos);
    } else if (get(c, g, "sharp")) {
        rc = fail(c, get(c, g, "sharp"), "'sharp' is for a fat_tree (its switches reduce)", NULL, NULL);
    } else {
        rc = get_dims(c, g, dims, &nd);
        if (rc == 0 && ri) { dims[0] = n; nd = 1; }
        if (rc == 0 && nd == 0) rc = fail(c, g, "a torus needs 'dims'", NULL, NULL);
        if (rc == 0) {
            baton_err_t inner = {0};
            if (gen_torus(c->t, ids, n, dims, nd, bw, lat, &inner) < 0) rc = fail(c, g, "%s", inner.msg, NULL);
        }
    }
    free(ids);
    return rc;
}

static int each(ctx_t *c, yaml_node_t *root, const char *key, int required, int (*fn)(ctx_t *, yaml_node_t *)) {
    yaml_node_t *s = get(c, root, key);
    if (s == NULL) return required ? fail(c, root, "missing '%s:' list", key, NULL) : 0;
    if (s->type != YAML_SEQUENCE_NODE) return fail(c, s, "'%s' must be a list", key, NULL);
    for (yaml_node_item_t *i = s->data.sequence.items.start; i < s->data.sequence.items.top; i++) {
        int rc = fn(c, node(c, *i));
        if (rc < 0) return rc;
    }
    return 0;
}

/* A key list: fixed, then the knobs (knobs.h; only those a calibrated
 * overlay may set, if overlay), NULL-terminated in out[cap]. */
static void with_knobs(const char *const *fixed, int overlay, const char **out, int cap) {
    int n = 0;
    for (int i = 0; fixed[i] && n < cap - 1; i++) out[n++] = fixed[i];
    for (int i = 0; knobs_name(i) && n < cap - 1; i++)
        if (!overlay || knobs_overlay(knobs_name(i))) out[n++] = knobs_name(i);
    out[n] = NULL;
}

/* Engine values (knobs.h): the file's, then the command line's (kept among
 * the params by read_params), each by the one table. */
static int read_engine(ctx_t *c, yaml_node_t *root) {
    topo_params_t *p = topo_params(c->t);
    char s[TEXT], why[160], what[TEXT + 256];
    yaml_node_t *v;
    int rc = 0;
    for (int i = 0; knobs_name(i); i++) {
        const char *k = knobs_name(i);
        if ((v = get(c, root, k)) == NULL) continue;
        if ((rc = text(c, v, k, s)) < 0) return rc;
        if (knobs_set(p, k, s, why, sizeof why) < 0) {
            snprintf(what, sizeof what, "'%s' %s, not '%s'", k, why, s);
            return fail(c, v, "%s", what, NULL);
        }
    }
    if ((v = get(c, root, "arch"))) {
        if ((rc = text(c, v, "arch", s)) < 0) return rc;
        if ((p->arch = arch_parse(s)) < 0) return fail(c, v, "unknown arch '%s' (volta, ampere, hopper, blackwell)", s, NULL);
    }
    for (int i = 0; knobs_name(i); i++) {
        const char *k = knobs_name(i), *set = expand_get(&c->params, k);
        if (set && knobs_set(p, k, set, why, sizeof why) < 0)
            return err_set(c->e, BATON_EPARSE, "--set %s=%s: %s", k, set, why);
    }
    return 0;
}

/* "; did you mean 'nvlink_gbps'?" among the file's parameters and the
 * engine's keys, or "". Past spelling, the one candidate that shares the
 * word before the first '_' (nvlink_bw: nvlink_gbps), when only one does. */
static const char *param_hint(const expand_params_t *ps, const char *name) {
    const char *cands[256], *same = NULL;
    static char buf[128];
    int n = 0, nsame = 0;
    size_t stem = strcspn(name, "_");
    for (int i = 0; i < ps->n && n < 200; i++) cands[n++] = ps->v[i].name;
    for (int i = 0; knobs_name(i) && n < 255; i++) cands[n++] = knobs_name(i);
    cands[n] = NULL;
    const char *hint = suggest_hint(name, cands);
    if (hint[0] || stem < 3 || name[stem] != '_') return hint;
    for (int i = 0; i < n; i++)
        if (strncmp(cands[i], name, stem + 1) == 0) { same = cands[i]; nsame++; }
    if (nsame != 1) return "";
    snprintf(buf, sizeof buf, "; did you mean '%.80s'?", same);
    return buf;
}

/* Defaults from `params:`, then the command line's --set name=value. */
static int read_params(ctx_t *c, yaml_node_t *root, const char *const *sets, int nsets) {
    yaml_node_t *pm = get(c, root, "params");
    if (pm && pm->type != YAML_MAPPING_NODE) return fail(c, pm, "'params' must be a mapping of names to defaults", NULL, NULL);
    for (yaml_node_pair_t *p = pm ? pm->data.mapping.pairs.start : NULL; pm && p < pm->data.mapping.pairs.top; p++) {
        const char *k = scalar(node(c, p->key)), *v = scalar(node(c, p->value));
        if (!k || !v) return fail(c, node(c, p->key), "a parameter is 'name: default'", NULL, NULL);
        if (expand_set(&c->params, k, v) < 0) return err_set(c->e, BATON_ENOMEM, "out of memory");
    }
    for (int i = 0; i < nsets; i++) {
        const char *eq = strchr(sets[i], '=');
        char name[128];
        if (eq == NULL || eq == sets[i] || (size_t)(eq - sets[i]) >= sizeof name)
            return err_set(c->e, BATON_EINVAL, "--set %s: write --set name=value", sets[i]);
        memcpy(name, sets[i], (size_t)(eq - sets[i]));
        name[eq - sets[i]] = '\0';
        if (!expand_get(&c->params, name) && !knobs_is(name))
            return err_set(c->e, BATON_EINVAL, "--set %s: %s has no parameter '%s'%s (see `baton topo %s`)",
                           sets[i], c->file, name, param_hint(&c->params, name), c->file);
        if (expand_set(&c->params, name, eq + 1) < 0) return err_set(c->e, BATON_ENOMEM, "out of memory");
    }
    return 0;
}

/* protocols: {LL: {latency: 0.6us, efficiency: 0.5, base: 6.6us,
 * max_busbw: 39GB/s}, ...}: any field left out keeps NCCL's default. */
static int read_protocols(ctx_t *c, yaml_node_t *root) {
    static const char *const keys[] = {"latency", "efficiency", "base", "max_busbw", NULL};
    yaml_node_t *pm = get(c, root, "protocols");
    if (pm == NULL) return 0;
    topo_params(c->t)->said_protocols = 1;
    if (scalar(pm) && strcmp(scalar(pm), "none") == 0) { topo_params(c->t)->no_protocols = 1; return 0; }
    if (pm->type != YAML_MAPPING_NODE) return fail(c, pm, "'protocols' maps LL, LL128 and Simple to their costs (or is 'none')", NULL, NULL);
    for (yaml_node_pair_t *p = pm->data.mapping.pairs.start; p < pm->data.mapping.pairs.top; p++) {
        yaml_node_t *kn = node(c, p->key), *v = node(c, p->value);
        const char *name = scalar(kn);
        int pr = name ? proto_parse(name) : -1, rc = 0;
        if (pr <= PROTO_NONE) return fail(c, kn, "unknown protocol '%s' (LL, LL128 or Simple)", name ? name : "?", NULL);
        if (v->type != YAML_MAPPING_NODE) return fail(c, v, "a protocol is {latency: ..., efficiency: ..., base: ...}", NULL, NULL);
        if ((rc = only_keys(c, v, keys, "a protocol")) < 0) return rc;
        proto_cost_t *pc = &topo_params(c->t)->proto[pr];
        yaml_node_t *ev = get(c, v, "efficiency");
        if (get(c, v, "latency") && (rc = get_time(c, v, "latency", &pc->msg_latency)) < 0) return rc;
        if (get(c, v, "base") && (rc = get_time(c, v, "base", &pc->base_latency)) < 0) return rc;
        if (get(c, v, "max_busbw") && (rc = get_bw(c, v, "max_busbw", &pc->max_busbw)) < 0) return rc;
        if (ev) {
            char s[TEXT], *end;
            if ((rc = text(c, ev, "efficiency", s)) < 0) return rc;
            pc->efficiency = strtod(s, &end);
            if (end == s || *end || !(pc->efficiency > 0 && pc->efficiency <= 1))
                return fail(c, ev, "efficiency must be a number in (0, 1], not '%s'", s, NULL);
        }
    }
    return 0;
}

/* link_efficiency: {gpu-switch: 0.82, nic-switch: 0.93}: the share of their
 * declared rate the links of a class carry (achieved / line rate). */
static int read_efficiency(ctx_t *c, yaml_node_t *root) {
    yaml_node_t *m = get(c, root, "link_efficiency");
    if (m == NULL) return 0;
    if (m->type != YAML_MAPPING_NODE)
        return fail(c, m, "'link_efficiency' maps link classes (gpu-switch, nic-switch, ...) to shares of their rate", NULL, NULL);
    for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
        yaml_node_t *kn = node(c, p->key), *v = node(c, p->value);
        const char *k = scalar(kn);
        char s[TEXT], *end;
        int rc;
        if (k == NULL || !topo_link_class_valid(k) || strlen(k) >= 24)
            return fail(c, kn, "'%s' is not a link class: the kinds of its ends, gpu first and switch last "
                        "(gpu-switch, gpu-nic, gpu-gpu, nic-switch, cpu-cpu, switch-switch, ...)", k ? k : "?", NULL);
        if ((rc = text(c, v, k, s)) < 0) return rc;
        double eff = strtod(s, &end);
        if (end == s || *end || !(eff > 0 && eff <= 1))
            return fail(c, v, "an efficiency is a share of the link's rate in (0, 1], not '%s'", s, NULL);
        if (topo_set_class_efficiency(c->t, k, eff, c->e) < 0) return -1;
    }
    return 0;
}

/* "989.4TFLOPS", "2.25PFLOPS": a peak rate; the unit is required. */
static int get_flops(ctx_t *c, yaml_node_t *v, const char *key, double *out) {
    char s[TEXT], *end;
    int rc = text(c, v, key, s);
    if (rc < 0) return rc;
    double x = strtod(s, &end);
    double unit = !strcmp(end, "TFLOPS") ? 1e12 : !strcmp(end, "PFLOPS") ? 1e15 : !strcmp(end, "GFLOPS") ? 1e9
                : !strcmp(end, "FLOPS") ? 1 : 0;
    if (end == s || unit == 0 || !(x >= 0) || x > 1e9)
        return fail(c, v, "'%s' is a peak rate with its unit (989.4TFLOPS, 2.25PFLOPS), not '%s'", key, s);
    *out = x * unit;
    return 0;
}

/* gpu: h100-sxm, or gpu: {like: h100-sxm, hbm_bw: 3TB/s, ...}: the GPU's own
 * numbers (models/gpu.h), for the step's compute, memory and overhead. */
static int read_gpu(ctx_t *c, yaml_node_t *root) {
    static const char *const keys[] = {"like", "name", "bf16", "fp8", "hbm_bw", "hbm", "launch", "graph_launch", NULL};
    yaml_node_t *m = get(c, root, "gpu"), *v;
    topo_params_t *p = topo_params(c->t);
    char s[TEXT];
    int rc;
    if (m == NULL) return 0;
    yaml_node_t *base = m->type == YAML_MAPPING_NODE ? get(c, m, "like") : m;
    gpu_spec_t g;
    memset(&g, 0, sizeof g);
    if (base) {
        if ((rc = text(c, base, "gpu", s)) < 0) return rc;
        const gpu_spec_t *known = gpu_find(s);
        if (known == NULL) return fail(c, base, "unknown GPU '%s' (`baton gpus` lists them; or describe it: "
                                       "gpu: {name: ..., bf16: ...TFLOPS, hbm_bw: ...TB/s, hbm: ...GB})%s", s, gpu_hint(s));
        g = *known;
    }
    if (m->type == YAML_MAPPING_NODE) {
        if ((rc = only_keys(c, m, keys, "'gpu'")) < 0) return rc;
        if ((v = get(c, m, "name")) && (rc = text(c, v, "name", s)) < 0) return rc;
        if (v) snprintf(g.name, sizeof g.name, "%.23s", s);
        if ((v = get(c, m, "bf16")) && (rc = get_flops(c, v, "bf16", &g.flops[GPU_BF16])) < 0) return rc;
        if ((v = get(c, m, "fp8")) && (rc = get_flops(c, v, "fp8", &g.flops[GPU_FP8])) < 0) return rc;
        if (get(c, m, "hbm_bw") && (rc = get_bw(c, m, "hbm_bw", &g.hbm_bw)) < 0) return rc;
        if (get(c, m, "launch") && (rc = get_time(c, m, "launch", &g.launch)) < 0) return rc;
        if (get(c, m, "graph_launch") && (rc = get_time(c, m, "graph_launch", &g.graph_launch)) < 0) return rc;
        if (get(c, m, "hbm")) {
            uint64_t b;
            if ((rc = get_size(c, m, "hbm", &b)) < 0) return rc;
            g.hbm_bytes = (double)b;
        }
        if (g.name[0] == 0) return fail(c, m, "a GPU described here needs a 'name' (or 'like: h100-sxm')", NULL, NULL);
        if (!(g.flops[GPU_BF16] > 0) || !(g.hbm_bw > 0))
            return fail(c, m, "GPU '%s' needs its bf16 peak and hbm_bw (or 'like:' a known GPU)", g.name, NULL);
    }
    p->gpu = g;
    p->has_gpu = 1;
    return 0;
}

/* seen: [{coll: allreduce, ranks: 16, min: 8, max: 8GiB, gpus_per_thread: 8}, ...]:
 * what the fitted sizes of a calibration covered (gpus_per_thread 1 if left out). */
static int read_seen(ctx_t *c, yaml_node_t *v, topo_calib_t *k) {
    static const char *const keys[] = {"coll", "ranks", "min", "max", "gpus_per_thread", NULL};
    if (v->type != YAML_SEQUENCE_NODE) return fail(c, v, "'seen' is a list of {coll:, ranks:, min:, max:}", NULL, NULL);
    for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
        yaml_node_t *e = node(c, *it), *at = NULL;
        char s[TEXT];
        if (k->nseen == TOPO_MAX_SEEN) return fail(c, e, "more than 16 entries in 'seen'", NULL, NULL);
        int rc = e->type == YAML_MAPPING_NODE ? only_keys(c, e, keys, "a 'seen' entry")
               : fail(c, e, "a 'seen' entry is {coll:, ranks:, min:, max:}", NULL, NULL);
        int *coll = &k->seen[k->nseen].coll;
        if (rc == 0 && (rc = need(c, e, "coll", s, &at)) == 0 && (*coll = coll_parse(s)) < 0)
            rc = fail(c, at, "unknown collective '%s'", s, NULL);
        if (rc == 0 && (rc = need(c, e, "ranks", s, &at)) == 0) rc = get_int(c, at, "ranks", 1, &k->seen[k->nseen].ranks);
        if (rc == 0) rc = get_size(c, e, "min", &k->seen[k->nseen].min);
        if (rc == 0) rc = get_size(c, e, "max", &k->seen[k->nseen].max);
        if (rc == 0 && k->seen[k->nseen].min > k->seen[k->nseen].max) rc = fail(c, e, "'min' is above 'max'", NULL, NULL);
        k->seen[k->nseen].gpus_per_thread = 1;
        if (rc == 0 && (at = get(c, e, "gpus_per_thread")))
            rc = get_int(c, at, "gpus_per_thread", 1, &k->seen[k->nseen].gpus_per_thread);
        if (rc < 0) return rc;
        k->nseen++;
    }
    return 0;
}

/* calibration: {algo: nccl, proto: auto, model: closed, mape_pct: 3.2,
 * cv_mape_pct: 5.1, band_pct: [-6.1, 5.3], seen: [...], logs: [...], date: ...}. */
static int read_calibration(ctx_t *c, yaml_node_t *root) {
    static const char *const keys[] = {"algo", "proto", "model", "contention", "mape_pct", "cv_mape_pct", "band_pct", "seen",
                                       "logs", "date", "nccl", NULL};
    yaml_node_t *m = get(c, root, "calibration"), *v;
    topo_calib_t *k = &topo_params(c->t)->calib;
    int rc;
    if (m == NULL) return 0;
    if (m->type != YAML_MAPPING_NODE) return fail(c, m, "'calibration' is a mapping (algo:, proto:, model:, mape_pct:, ...)", NULL, NULL);
    if ((rc = only_keys(c, m, keys, "a calibration record")) < 0) return rc;
    k->present = 1;
    const char *a = scalar(get(c, m, "algo")), *pr = scalar(get(c, m, "proto")), *mo = scalar(get(c, m, "model"));
    snprintf(k->algo, sizeof k->algo, "%s", a ? a : "");
    snprintf(k->proto, sizeof k->proto, "%s", pr ? pr : "");
    snprintf(k->model, sizeof k->model, "%s", mo ? mo : "");
    const char *co = (v = get(c, m, "contention")) ? scalar(v) : NULL;   /* the engine's names (sim/engine/engine.c
                                                     engine_contention_name): a machine is read below the engine */
    if (v && (co == NULL || strcmp(k->model, "des") || (strcmp(co, "fifo") && strcmp(co, "fair") && strcmp(co, "none"))))
        return fail(c, v, "'contention' is the simulator's (model: des): fifo, fair or none", NULL, NULL);
    snprintf(k->contention, sizeof k->contention, "%s", co ? co : !strcmp(k->model, "des") ? "fifo" : "");
    const char *num[2] = {"mape_pct", "cv_mape_pct"};
    double *dst[2] = {&k->mape_pct, &k->cv_mape_pct};
    for (int i = 0; i < 2; i++) {
        const char *s = (v = get(c, m, num[i])) ? scalar(v) : NULL;
        char *end;
        if (v == NULL) continue;
        *dst[i] = s ? strtod(s, &end) : -1;
        if (s == NULL || end == s || *end || *dst[i] < 0) return fail(c, v, "'%s' is a percentage", num[i], NULL);
    }
    if ((v = get(c, m, "band_pct"))) {
        yaml_node_item_t *it = v->type == YAML_SEQUENCE_NODE ? v->data.sequence.items.start : NULL;
        const char *lo = it && v->data.sequence.items.top - it == 2 ? scalar(node(c, it[0])) : NULL;
        const char *hi = lo ? scalar(node(c, it[1])) : NULL;
        char *e1 = NULL, *e2 = NULL;
        if (lo && hi) k->band_lo_pct = strtod(lo, &e1), k->band_hi_pct = strtod(hi, &e2);
        if (!lo || !hi || e1 == lo || *e1 || e2 == hi || *e2 || k->band_lo_pct > k->band_hi_pct)
            return fail(c, v, "'band_pct' is [low, high]: the errors (%%) held-out sizes fell within", NULL, NULL);
    }
    const char *nv = (v = get(c, m, "nccl")) ? scalar(v) : NULL;
    if (v && (nv == NULL || strlen(nv) >= sizeof k->nccl))
        return fail(c, v, "'nccl' is the logs' NCCL versions, at most 63 characters", NULL, NULL);
    snprintf(k->nccl, sizeof k->nccl, "%s", nv ? nv : "");
    k->nseen = 0, k->what_if[0] = '\0';            /* an overlay's record replaces its base's */
    return (v = get(c, m, "seen")) ? read_seen(c, v, k) : 0;
}

/* Does baton have a row of coll that NCCL calls name (algo_t.nccl)? */
static int nccl_has(coll_t coll, const char *name) {
    for (const algo_t *const *a = algo_all(); *a; a++)
        if ((*a)->coll == coll && (*a)->nccl && strcmp((*a)->nccl, name) == 0) return 1;
    return 0;
}

/* The rule's algorithm: `algo:` a row of the registry, or `nccl_algo:`
 * NCCL's name for one (a log's TUNING lines), whose rows -a nccl picks among. */
static int read_rule_algo(ctx_t *c, yaml_node_t *v, topo_lib_rule_t *r) {
    char s[TEXT];
    yaml_node_t *at = get(c, v, "nccl_algo");
    int rc;
    r->nccl = at != NULL;
    if (r->nccl && get(c, v, "algo")) return fail(c, v, "a rule has 'algo' or 'nccl_algo', not both", NULL, NULL);
    if (!r->nccl && (rc = need(c, v, "algo", s, &at)) < 0) return rc;
    if (r->nccl && (rc = text(c, at, "nccl_algo", s)) < 0) return rc;
    if (!r->nccl && algo_find((coll_t)r->coll, s) == NULL)
        return fail(c, at, "no algorithm '%s' for this collective (see `baton algos`)", s, NULL);
    if (r->nccl && !nccl_has((coll_t)r->coll, s))
        return fail(c, at, "no row of NCCL's algorithm '%s' for this collective (tree, ring, nvls, nvls_tree, collnet_direct)",
                    s, NULL);
    snprintf(r->algo, sizeof r->algo, "%.23s", s);        /* the names are shorter */
    return 0;
}

/* {coll: allreduce, ranks: 8, min: 1KiB, max: 64KiB, align: 1KiB, algo: direct, proto: LL,
 * max_busbw: 210GB/s}; max_busbw may be left out (no ceiling); nccl_algo: tree in place of
 * algo, and channels: 16, for a plan a log's TUNING lines gave */
static int read_rule(ctx_t *c, yaml_node_t *v, topo_lib_rule_t *r) {
    static const char *const keys[] = {"coll", "ranks", "min", "max", "align", "algo", "nccl_algo", "proto", "channels",
                                       "max_busbw", NULL};
    char s[TEXT];
    yaml_node_t *at = NULL;
    int rc = v->type == YAML_MAPPING_NODE ? only_keys(c, v, keys, "a library rule")
           : fail(c, v, "a rule is {coll:, ranks:, min:, max:, align:, algo:, proto:}", NULL, NULL);
    if (rc == 0 && (rc = need(c, v, "coll", s, &at)) == 0 && (r->coll = coll_parse(s)) < 0)
        rc = fail(c, at, "unknown collective '%s'", s, NULL);
    if (rc == 0 && (rc = need(c, v, "ranks", s, &at)) == 0) rc = get_int(c, at, "ranks", 1, &r->ranks);
    if (rc == 0) rc = get_size(c, v, "min", &r->min);
    if (rc == 0) rc = get_size(c, v, "max", &r->max);
    r->align = 1;
    if (rc == 0 && get(c, v, "align") && (rc = get_size(c, v, "align", &r->align)) == 0 && r->align == 0)
        rc = fail(c, get(c, v, "align"), "'align' must be at least 1 byte", NULL, NULL);
    if (rc == 0 && r->min > r->max) rc = fail(c, v, "'min' is above 'max'", NULL, NULL);
    if (rc == 0) rc = read_rule_algo(c, v, r);
    if (rc == 0 && (rc = need(c, v, "proto", s, &at)) == 0 && (r->proto = proto_parse(s)) <= PROTO_NONE)
        rc = fail(c, at, "unknown protocol '%s' (LL, LL128 or Simple)", s, NULL);
    if (rc == 0 && (at = get(c, v, "channels")) && (rc = get_int(c, at, "channels", 1, &r->channels)) == 0 &&
        r->channels > TOPO_MAX_CHANNELS)
        rc = fail(c, at, "'channels' must be at most 64", NULL, NULL);
    if (rc == 0 && get(c, v, "max_busbw")) rc = get_bw(c, v, "max_busbw", &r->max_busbw);
    return rc;
}

/* library: {name: "RCCL 2.22 (gfx942)", ll128: false, rules: [...]}: the
 * collective library when it is not NCCL, for -a nccl; {nccl: 2.26.6}: the
 * NCCL it runs, whose version rules -a nccl follows (knobs_version). */
static int read_library(ctx_t *c, yaml_node_t *root) {
    static const char *const keys[] = {"name", "ll128", "rules", "nccl", NULL};
    yaml_node_t *m = get(c, root, "library"), *v;
    topo_library_t *l = &topo_params(c->t)->lib;
    char s[TEXT];
    int rc;
    if (m == NULL) return 0;
    if (m->type != YAML_MAPPING_NODE) return fail(c, m, "'library' is a mapping (name:, ll128:, rules:)", NULL, NULL);
    if ((rc = only_keys(c, m, keys, "a library")) < 0) return rc;
    int version = l->nccl_version;                   /* the base's, unless this one says */
    *l = (topo_library_t){.ll128 = -1, .nccl_version = version};   /* an overlay's replaces its base's whole */
    if ((v = get(c, m, "nccl"))) {
        char why[200];
        if ((rc = text(c, v, "nccl", s)) < 0) return rc;
        if (knobs_version(s, &l->nccl_version, why, sizeof why) < 0) return fail(c, v, "'nccl' %s", why, NULL);
    }
    if ((v = get(c, m, "name")) && (rc = text(c, v, "name", s)) < 0) return rc;
    if (v && strlen(s) >= sizeof l->name) return fail(c, v, "a library's name is at most 47 characters", NULL, NULL);
    if (v) snprintf(l->name, sizeof l->name, "%.47s", s);
    if ((v = get(c, m, "ll128"))) {
        if ((rc = text(c, v, "ll128", s)) < 0) return rc;
        if (strcmp(s, "true") && strcmp(s, "false")) return fail(c, v, "'ll128' is true or false, not '%s'", s, NULL);
        l->ll128 = strcmp(s, "true") == 0;
    }
    if ((v = get(c, m, "rules")) == NULL) return 0;
    if (v->type != YAML_SEQUENCE_NODE)
        return fail(c, v, "'rules' is a list of {coll:, ranks:, min:, max:, algo: (or nccl_algo:), proto:}", NULL, NULL);
    for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
        if (l->nrules == TOPO_MAX_LIB_RULES) return fail(c, node(c, *it), "more than 64 library rules", NULL, NULL);
        if ((rc = read_rule(c, node(c, *it), &l->rule[l->nrules++])) < 0) return rc;
    }
    return 0;
}

static int walk_body(ctx_t *c, yaml_node_t *root);

/* Load a YAML file's document into c->doc; 0 or an error naming the place. */
static int load_doc(ctx_t *c, const char *path) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) return err_set(c->e, BATON_EIO, "%s: cannot open: %s", path, strerror(errno));
    yaml_parser_t parser;
    int rc = 0;
    yaml_parser_initialize(&parser);
    yaml_parser_set_input_file(&parser, f);
    errno = 0;
    if (!yaml_parser_load(&parser, &c->doc) && parser.error == YAML_READER_ERROR && ferror(f))
        rc = err_set(c->e, BATON_EIO, "%s: cannot read: %s", path, strerror(errno ? errno : EIO));   /* a directory */
    else if (parser.error != YAML_NO_ERROR)
        rc = err_set(c->e, BATON_EPARSE, "%s:%lu:%lu: YAML syntax error: %s", path,
                     (unsigned long)parser.problem_mark.line + 1, (unsigned long)parser.problem_mark.column + 1,
                     parser.problem ? parser.problem : "unknown");
    yaml_parser_delete(&parser);
    fclose(f);
    return rc;
}

/* One copy of an included file (parsed once, in doc): its nodes, links and
 * generators under a prefix, with the includer's parameters (and ${replica})
 * in scope. */
static int include_copy(ctx_t *c, const char *path, yaml_document_t *doc, const char *prefix, int replica) {
    ctx_t sub = {.doc = *doc, .file = path, .t = c->t, .e = c->e, .next_rank = c->next_rank,
                 .copies_left = c->copies_left, .depth = c->depth + 1};
    char idx[32];
    int rc = 0;
    strcpy(sub.prefix, prefix);             /* add_include checked its length */
    snprintf(idx, sizeof idx, "%d", replica);
    for (int i = 0; i < c->params.n && rc == 0; i++)
        if (expand_set(&sub.params, c->params.v[i].name, c->params.v[i].value) < 0) rc = err_set(c->e, BATON_ENOMEM, "out of memory");
    if (rc == 0 && expand_set(&sub.params, "replica", idx) < 0) rc = err_set(c->e, BATON_ENOMEM, "out of memory");
    yaml_node_t *root = yaml_document_get_root_node(&sub.doc);
    if (rc == 0 && (root == NULL || root->type != YAML_MAPPING_NODE))
        rc = err_set(c->e, BATON_EPARSE, "%s:1:1: an included file is a mapping (nodes:, links:)", path);
    if (rc == 0) {                                  /* its own parameters are defaults only */
        yaml_node_t *pm = get(&sub, root, "params");
        for (yaml_node_pair_t *p = pm && pm->type == YAML_MAPPING_NODE ? pm->data.mapping.pairs.start : NULL;
             p && p < pm->data.mapping.pairs.top && rc == 0; p++) {
            const char *k = scalar(node(&sub, p->key)), *v = scalar(node(&sub, p->value));
            if (k && v && !expand_get(&sub.params, k) && expand_set(&sub.params, k, v) < 0) rc = err_set(c->e, BATON_ENOMEM, "out of memory");
        }
    }
    if (rc == 0) rc = walk_body(&sub, root);
    expand_free(&sub.params);
    return rc;
}

/* The included file's path: relative to the including file, a regular file
 * (not a FIFO or device that could block or never end). */
static int include_path(ctx_t *c, yaml_node_t *fv, const char *file, char *path, size_t len) {
    const char *slash = strrchr(c->file, '/');
    struct stat st;
    if (file[0] == '/' || slash == NULL) snprintf(path, len, "%s", file);
    else snprintf(path, len, "%.*s/%s", (int)(slash - c->file), c->file, file);
    if (stat(path, &st) < 0) return fail(c, fv, "cannot open included file '%s': %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode)) return fail(c, fv, "included file '%s' is not a regular file", path, NULL);
    return 0;
}

/* include: [{file: node.yaml, replicate: N, prefix: "n{i}."}]: N copies, {i} their number. */
static int add_include(ctx_t *c, yaml_node_t *n) {
    static const char *const keys[] = {"file", "replicate", "prefix", "if", "unless", NULL};
    if (n->type != YAML_MAPPING_NODE) return fail(c, n, "an include is {file: ..., replicate: N, prefix: ...}", NULL, NULL);
    int rc = only_keys(c, n, keys, "an include"), copies = 1;
    if (rc < 0 || (rc = wanted(c, n)) <= 0) return rc;
    if (c->depth >= 8) return fail(c, n, "includes nested more than 8 deep", NULL, NULL);
    char file[TEXT], pre[TEXT] = "", path[TEXT * 2], full[sizeof c->prefix];
    yaml_node_t *fv = NULL, *rv = get(c, n, "replicate"), *pv = get(c, n, "prefix");
    if ((rc = need(c, n, "file", file, &fv)) < 0) return rc;
    if (rv && (rc = get_int(c, rv, "replicate", 1, &copies)) < 0) return rc;
    if (copies > *c->copies_left) return fail(c, rv ? rv : n, "more than %s included copies in all (baton's limit)", INCLUDE_MAX_COPIES_S, NULL);
    *c->copies_left -= copies;
    if (pv && (rc = text(c, pv, "prefix", pre)) < 0) return rc;
    if (!pv && copies > 1) strcpy(pre, "{i}.");
    char *at = strstr(pre, "{i}");
    if (copies > 1 && !at) return fail(c, pv, "with replicate the prefix must contain {i}, e.g. \"n{i}.\"", NULL, NULL);
    if ((rc = include_path(c, fv, file, path, sizeof path)) < 0) return rc;
    ctx_t parsed = {.file = path, .e = c->e};
    if ((rc = load_doc(&parsed, path)) < 0) return rc;
    for (int i = 0; i < copies && rc == 0; i++) {
        char copy[TEXT];
        if (at) snprintf(copy, sizeof copy, "%.*s%d%s", (int)(at - pre), pre, i, at + 3);
        else snprintf(copy, sizeof copy, "%s", pre);
        if (strlen(c->prefix) + strlen(copy) >= sizeof full) rc = fail(c, pv, "prefix longer than 127 characters", NULL, NULL);
        if (rc < 0) break;
        memcpy(full, c->prefix, strlen(c->prefix));
        strcpy(full + strlen(c->prefix), copy);
        rc = include_copy(c, path, &parsed.doc, full, i);
    }
    if (rc < 0 && c->e && strlen(c->e->msg) + 64 < sizeof c->e->msg)   /* say which include, as compilers do */
        snprintf(c->e->msg + strlen(c->e->msg), sizeof c->e->msg - strlen(c->e->msg), " (included from %s:%lu)",
                 c->file, (unsigned long)n->start_mark.line + 1);
    yaml_document_delete(&parsed.doc);
    return rc;
}

/* What a file holds besides the machine-wide settings: includes, nodes, links,
 * generators. A fragment may also say which library runs on its nodes and
 * its protocols' costs (RCCL on an MI300X platform), so the files that
 * include it need not repeat them; the including file's own win (read after). */
static int walk_body(ctx_t *c, yaml_node_t *root) {
    static const char *const frag_keys[] = {"name", "description", "params", "include", "nodes", "links", "generate",
                                            "protocols", "library", NULL};
    int rc = c->depth > 0 ? only_keys(c, root, frag_keys, "an included file") : 0;
    if (rc == 0 && c->depth > 0 && (rc = read_protocols(c, root)) == 0) rc = read_library(c, root);
    if (rc < 0 || (rc = each(c, root, "include", 0, add_include)) < 0) return rc;
    if ((rc = each(c, root, "nodes", c->depth == 0 && !get(c, root, "include"), add_node)) < 0) return rc;
    if ((rc = each(c, root, "links", 0, add_link)) < 0) return rc;
    return each(c, root, "generate", 0, add_generated);
}

#define EXTENDS_MAX_DEPTH 8

static topo_t *load_file(const char *path, const char *const *sets, int nsets, int depth, int fold_min, baton_err_t *e);

/* The base's --set list: this file's params (defaults), then the command
 * line's (they win: expand_set keeps the last). Strings point into buf. */
static int overlay_sets(ctx_t *c, yaml_node_t *root, const char *const *sets, int nsets, const char ***out, int *n,
                        char **buf) {
    yaml_node_t *pm = get(c, root, "params");
    int np = 0;
    size_t len = 1;
    if (pm && pm->type != YAML_MAPPING_NODE) return fail(c, pm, "'params' must be a mapping of the base's parameters to values", NULL, NULL);
    for (yaml_node_pair_t *p = pm ? pm->data.mapping.pairs.start : NULL; p && p < pm->data.mapping.pairs.top; p++, np++) {
        const char *k = scalar(node(c, p->key)), *v = scalar(node(c, p->value));
        if (!k || !v) return fail(c, node(c, p->key), "a parameter is 'name: value'", NULL, NULL);
        len += strlen(k) + strlen(v) + 2;
    }
    *out = calloc((size_t)(np + nsets) + 1, sizeof **out);
    *buf = malloc(len);
    if (!*out || !*buf) return err_set(c->e, BATON_ENOMEM, "out of memory");
    char *w = *buf;
    *n = 0;
    for (yaml_node_pair_t *p = pm ? pm->data.mapping.pairs.start : NULL; p && p < pm->data.mapping.pairs.top; p++) {
        (*out)[(*n)++] = w;
        w += sprintf(w, "%s=%s", scalar(node(c, p->key)), scalar(node(c, p->value))) + 1;
    }
    for (int i = 0; i < nsets; i++) (*out)[(*n)++] = sets[i];
    return 0;
}

/* The first --set that moves a calibrated machine from what its logs ran
 * (a parameter this file does not record, or records with another value)
 * goes into its record as `what_if`: its band does not hold there. The
 * machine's scale (nodes, racks, trays) is not one: the same machine at
 * another rank count carries the band, widened by its distance from the
 * rank counts the logs ran (run_error_bars). */
static void note_what_if(ctx_t *c, yaml_node_t *root, const char *const *sets, int nsets) {
    yaml_node_t *pm = get(c, root, "params");
    topo_calib_t *k = &topo_params(c->t)->calib;
    for (int i = 0; k->present && !k->what_if[0] && i < nsets; i++) {
        const char *eq = strchr(sets[i], '='), *v = NULL;
        if (eq && (!strncmp(sets[i], "nodes=", 6) || !strncmp(sets[i], "racks=", 6) || !strncmp(sets[i], "trays=", 6)))
            continue;
        for (yaml_node_pair_t *p = pm ? pm->data.mapping.pairs.start : NULL; eq && p && p < pm->data.mapping.pairs.top; p++) {
            const char *key = scalar(node(c, p->key));
            if (key && strlen(key) == (size_t)(eq - sets[i]) && !strncmp(key, sets[i], (size_t)(eq - sets[i])))
                v = scalar(node(c, p->value));
        }
        if (!v || strcmp(v, eq + 1)) snprintf(k->what_if, sizeof k->what_if, "%s", sets[i]);
    }
}

/* A calibrated machine: `extends: base.yaml` (beside this file) builds the
 * graph, with this file's params as the base's defaults; then this file's
 * engine values, protocols, link efficiencies and calibration record replace
 * the base's, and the command line's engine --set values replace those. It
 * changes values, never the graph, so every parameter and flag of the base
 * (nodes, nic_bw, reduce: true) still works. */
/* A knob an overlay may not set (knobs_overlay) gets its own error: the
 * name is right, the place is not. */
static int overlay_knobs(ctx_t *c, yaml_node_t *root) {
    for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; p++) {
        const char *k = scalar(node(c, p->key));
        if (k && knobs_is(k) && !knobs_overlay(k))
            return fail(c, node(c, p->key), "'%s' shapes the machine (its groups, staging or routes), so a machine that "
                        "extends another takes it from the base file or --set %s=...", k, k);
    }
    return 0;
}

static int read_nccl_env(ctx_t *c, yaml_node_t *root);

/* `extends: hgx-h100` names a shipped machine (topo_find_shipped: the
 * search path without the current folder, so a user's own hgx-h100.yaml
 * lying in the folder never stands in for the base silently), so a
 * calibrated machine of a shipped one can be kept anywhere; a value
 * with a '/' or ending in .yaml is a file, relative to this one's folder. */
static int extends_path(ctx_t *c, yaml_node_t *fv, const char *file, char *path, size_t len) {
    size_t n = strlen(file);
    if (strchr(file, '/') || (n > 5 && strcmp(file + n - 5, ".yaml") == 0)) return include_path(c, fv, file, path, len);
    if (topo_find_shipped(file, path, len)) return 0;
    char share[1024];
    return fail(c, fv, "extends '%s': no machine of that name in topologies/, $BATON_PATH or %s (a file: give its "
                "path)", file, topo_find_share(share, sizeof share));
}

static int overlay(ctx_t *c, yaml_node_t *root, const char *const *sets, int nsets, int depth) {
    static const char *const fixed[] = {"name", "description", "extends", "params", "arch", "gpu", "protocols", "library",
                                        "link_efficiency", "calibration", "nccl_env", NULL};
    const char *keys[64];
    char file[TEXT], path[TEXT * 2], *buf = NULL;
    const char **all = NULL;
    yaml_node_t *fv = NULL, *nv = get(c, root, "name");
    with_knobs(fixed, 1, keys, 64);
    int n = 0, rc = overlay_knobs(c, root);
    if (rc == 0) rc = only_keys(c, root, keys, "a machine that extends another (nodes and links come from the base)");
    if (rc == 0) rc = need(c, root, "extends", file, &fv);
    if (rc == 0 && depth >= EXTENDS_MAX_DEPTH) rc = fail(c, fv, "machines extend each other more than 8 deep", NULL, NULL);
    if (rc == 0) rc = extends_path(c, fv, file, path, sizeof path);
    if (rc == 0) rc = overlay_sets(c, root, sets, nsets, &all, &n, &buf);
    if (rc == 0 && (c->t = load_file(path, all, n, depth + 1, c->fold_min, c->e)) == NULL) {
        rc = -1;
        if (c->e && strlen(c->e->msg) + 64 < sizeof c->e->msg)
            snprintf(c->e->msg + strlen(c->e->msg), sizeof c->e->msg - strlen(c->e->msg), " (extended by %s:%lu)",
                     c->file, (unsigned long)fv->start_mark.line + 1);
    }
    free(all);
    free(buf);
    for (int i = 0; rc == 0 && i < nsets; i++) {         /* the command line's engine values, over this file's */
        const char *eq = strchr(sets[i], '=');
        char name[128];
        if (!eq || (size_t)(eq - sets[i]) >= sizeof name) continue;
        snprintf(name, sizeof name, "%.*s", (int)(eq - sets[i]), sets[i]);
        if (knobs_is(name) && expand_set(&c->params, name, eq + 1) < 0) rc = err_set(c->e, BATON_ENOMEM, "out of memory");
    }
    if (rc == 0) rc = read_engine(c, root);
    if (rc == 0) rc = read_protocols(c, root);
    if (rc == 0) rc = read_gpu(c, root);
    if (rc == 0) rc = read_efficiency(c, root);
    if (rc == 0) rc = read_calibration(c, root);
    if (rc == 0) note_what_if(c, root, sets, nsets);
    if (rc == 0) rc = read_library(c, root);
    if (rc == 0) rc = read_nccl_env(c, root);
    if (rc == 0 && nv && scalar(nv) && topo_rename(c->t, scalar(nv)) < 0) rc = err_set(c->e, BATON_ENOMEM, "out of memory");
    return rc;
}

/* nccl_env: {NCCL_ALGO: "Ring", NCCL_PROTO: "^LL128"}: what the machine's
 * NCCL is told (its environment, /etc/nccl.conf), in NCCL's own list syntax;
 * every name is checked here, for every collective. */
static int read_nccl_env(ctx_t *c, yaml_node_t *root) {
    static const char *const keys[] = {"NCCL_ALGO", "NCCL_PROTO", NULL};
    yaml_node_t *m = get(c, root, "nccl_env"), *v;
    topo_params_t *p = topo_params(c->t);
    char s[TEXT];
    int rc = 0;
    if (m == NULL) return 0;
    if (m->type != YAML_MAPPING_NODE || (rc = only_keys(c, m, keys, "nccl_env")) < 0)
        return rc < 0 ? rc : fail(c, m, "'nccl_env' must be a mapping {NCCL_ALGO: ..., NCCL_PROTO: ...}", NULL, NULL);
    for (int i = 0; i < 2 && rc == 0; i++) {
        if ((v = get(c, m, keys[i])) == NULL) continue;
        if ((rc = text(c, v, keys[i], s)) < 0) return rc;
        if (strlen(s) >= sizeof p->nccl_env[i]) return fail(c, v, "%s: a list of at most 63 characters", keys[i], NULL);
        for (int coll = 0; coll < COLL_COUNT; coll++) {
            unsigned mask;
            if (algo_nccl_env_mask(s, (coll_t)coll, i == 0, &mask) < 0)
                return fail(c, v, i == 0 ? "NCCL_ALGO '%s': a name NCCL does not have (Tree, Ring, CollNetDirect, "
                                           "CollNetChain, NVLS, NVLSTree, PAT; a list, ^ for all but)"
                                         : "NCCL_PROTO '%s': a name NCCL does not have (LL, LL128, Simple; a list, ^ "
                                           "for all but)", s, NULL);
        }
        memcpy(p->nccl_env[i], s, strlen(s) + 1);           /* it fits: checked above */
    }
    return rc;
}

/* sharp_fabric: what a fat_tree with `sharp: true` recorded, in a flat file
 * (topo_write.c), whose switches are written out with `reduce: true`. */
static int read_sharp(ctx_t *c, yaml_node_t *root) {
    static const char *const keys[] = {"rails", "per_leaf", "leaves", "first", NULL};
    yaml_node_t *m = get(c, root, "sharp_fabric"), *v;
    topo_sharp_t *sh = &topo_params(c->t)->sharp;
    int *out[] = {&sh->rails, &sh->per_leaf, &sh->leaves, &sh->first}, rc = 0;
    if (m == NULL) return 0;
    if (sh->rails) return fail(c, m, "'sharp_fabric' and a fat_tree with `sharp: true`: only one fabric may reduce", NULL, NULL);
    if (m->type != YAML_MAPPING_NODE || (rc = only_keys(c, m, keys, "sharp_fabric")) < 0)
        return rc < 0 ? rc : fail(c, m, "'sharp_fabric' must be a mapping {rails:, per_leaf:, leaves:, first:}", NULL, NULL);
    for (int i = 0; keys[i] && rc == 0; i++) {
        if ((v = get(c, m, keys[i])) == NULL) return fail(c, m, "'sharp_fabric' needs '%s'", keys[i], NULL);
        rc = get_int(c, v, keys[i], i == 3 ? 0 : 1, out[i]);
    }
    return rc;
}

/* Does m's key hold a pattern that starts with the node prefix P and names
 * no other node number? */
static int per_node(ctx_t *c, yaml_node_t *m, const char *key, const char *P) {
    const char *v = m && m->type == YAML_MAPPING_NODE ? scalar(get(c, m, key)) : NULL;
    return v && strncmp(v, P, strlen(P)) == 0 && strstr(v + strlen(P), "${nodes") == NULL;
}

/* Every item of list `key` of root passes ok(item). */
static int all_items(ctx_t *c, yaml_node_t *root, const char *key, const char *P,
                     int (*ok)(ctx_t *, yaml_node_t *, const char *)) {
    yaml_node_t *l = get(c, root, key);
    if (l == NULL || l->type != YAML_SEQUENCE_NODE) return 0;
    for (yaml_node_item_t *i = l->data.sequence.items.start; i < l->data.sequence.items.top; i++)
        if (!ok(c, node(c, *i), P)) return 0;
    return 1;
}

static int node_ok(ctx_t *c, yaml_node_t *n, const char *P) { return per_node(c, n, "name", P) && !get(c, n, "rank"); }
static int link_ok(ctx_t *c, yaml_node_t *l, const char *P) { return per_node(c, l, "a", P) && per_node(c, l, "b", P); }
static int tree_ok(ctx_t *c, yaml_node_t *g, const char *P) { return per_node(c, g, "fat_tree", P) && get_bool(c, g, "sharp", 0) == 0; }

/* The prefix every name of a cluster of copies starts with ("n[0-${nodes-1}]":
 * the first node's, up to and including its first bracket, if that bracket
 * is the node bracket) into P; 0 if the file is not written that way. */
static int fold_prefix(ctx_t *c, yaml_node_t *root, char *P) {
    yaml_node_t *nodes = get(c, root, "nodes"), *gen = get(c, root, "generate"), *n0;
    if (!nodes || nodes->type != YAML_SEQUENCE_NODE || nodes->data.sequence.items.top == nodes->data.sequence.items.start ||
        !gen || gen->type != YAML_SEQUENCE_NODE || gen->data.sequence.items.top - gen->data.sequence.items.start != 1 ||
        get(c, root, "include") || get(c, root, "sharp_fabric"))
        return 0;
    n0 = node(c, *nodes->data.sequence.items.start);
    const char *first = n0->type == YAML_MAPPING_NODE ? scalar(get(c, n0, "name")) : NULL, *at;
    if (!first || (at = strstr(first, FOLD_BRACKET)) == NULL || strchr(first, '[') != at) return 0;
    snprintf(P, TEXT, "%.*s%s", (int)(at - first), first, FOLD_BRACKET);
    return all_items(c, root, "nodes", P, node_ok) && all_items(c, root, "links", P, link_ok) &&
           tree_ok(c, node(c, *gen->data.sequence.items.start), P);
}

/* A cluster of at least c->fold_min copies of one node, as the cluster files
 * write it (every node and link named "P[0-${nodes-1}]...", one fat_tree over
 * their NICs, no include, no SHARP): build only its witness nodes
 * (topologies/fold.c), where the whole would have them. Anything else loads
 * whole; so does anything wrong here, and the whole load says what. */
static void fold_plan(ctx_t *c, yaml_node_t *root) {
    const char *nv = expand_get(&c->params, "nodes"), *why;
    char *end, P[TEXT], pat[TEXT], one[TEXT], prefix[TEXT], **names = NULL;
    long N = nv ? strtol(nv, &end, 10) : 0;
    if (c->fold_min <= 0 || c->depth > 0 || !nv || *end || N < c->fold_min || N > 1 << 24 || !fold_prefix(c, root, P))
        return;
    yaml_node_t *g = node(c, *get(c, root, "generate")->data.sequence.items.start);
    const char *hosts = scalar(get(c, g, "fat_tree"));
    gen_fabric_t f = {0};
    int hpn = 0;                                    /* NICs a node: the hosts pattern for node 0 alone */
    snprintf(pat, sizeof pat, "%.*s[0]%s", (int)(strlen(P) - strlen(FOLD_BRACKET)), hosts, hosts + strlen(P));
    if (fabric_of(c, g, &f, prefix) < 0 || expand_subst(&c->params, pat, one, TEXT, &why) < 0 ||
        expand_range(one, &names, &hpn, &why) < 0)
        return;
    expand_names_free(names, hpn);
    int nw = fold_witnesses(&f, (int)N, hpn, c->fold_w, FOLD_MAX);
    if (nw <= 0 || nw >= N) return;
    size_t w = 0, cap = sizeof c->fold_text;
    w += (size_t)snprintf(c->fold_text, cap, "[");
    for (int i = 0; i < nw && w < cap; i++) w += (size_t)snprintf(c->fold_text + w, cap - w, i ? ",%d" : "%d", c->fold_w[i]);
    if (w + 1 < cap) snprintf(c->fold_text + w, cap - w, "]"), c->fold_nodes = (int)N, c->fold_nw = nw;
}

/* require: [{param: trays, min: 1, max: 18, why: "an NVL72 rack has 18
 * trays"}]: the values of a parameter the machine can have. A --set outside
 * them is an error at the rule's line, saying why, before anything is built
 * (an empty range or a fabric too small would name the symptom, not the cause). */
static int read_require(ctx_t *c, yaml_node_t *root) {
    static const char *const keys[] = {"param", "min", "max", "why", NULL};
    yaml_node_t *l = get(c, root, "require");
    if (l == NULL) return 0;
    if (l->type != YAML_SEQUENCE_NODE) return fail(c, l, "'require' is a list of {param: NAME, min: N, max: N, why: TEXT}", NULL, NULL);
    for (yaml_node_item_t *i = l->data.sequence.items.start; i < l->data.sequence.items.top; i++) {
        yaml_node_t *r = node(c, *i);
        if (r->type != YAML_MAPPING_NODE) return fail(c, r, "a requirement is {param: NAME, min: N, max: N, why: TEXT}", NULL, NULL);
        int rc = only_keys(c, r, keys, "a requirement");
        if (rc < 0) return rc;
        const char *name = scalar(get(c, r, "param")), *why = scalar(get(c, r, "why")), *v = name ? expand_get(&c->params, name) : NULL;
        if (name == NULL) return fail(c, r, "a requirement names its parameter (param: NAME)", NULL, NULL);
        if (v == NULL) return fail(c, r, "require: no parameter '%s' in params", name, NULL);
        char *end, msg[512];
        long long x = strtoll(v, &end, 10), lo = LLONG_MIN, hi = LLONG_MAX;
        const char *smin = scalar(get(c, r, "min")), *smax = scalar(get(c, r, "max"));
        if ((smin && sscanf(smin, "%lld", &lo) != 1) || (smax && sscanf(smax, "%lld", &hi) != 1))
            return fail(c, r, "require: min and max are whole numbers", NULL, NULL);
        if (end != v && *end == '\0' && x >= lo && x <= hi) continue;
        int n = hi == LLONG_MAX ? snprintf(msg, sizeof msg, "%s=%s: %s must be a whole number, at least %lld", name, v, name, lo)
                                : snprintf(msg, sizeof msg, "%s=%s: %s must be a whole number in %lld..%lld", name, v, name, lo, hi);
        if (why && n > 0 && (size_t)n < sizeof msg) snprintf(msg + n, sizeof msg - (size_t)n, ": %s", why);
        return fail(c, r, "%s", msg, NULL);
    }
    return 0;
}

/* A file that says nothing of NCCL -- no protocols:, arch:, gpu:, library:
 * or nccl_env: -- describes links, not a library: it gets the plain
 * alpha-beta model by default (--proto auto means none) and one channel
 * unless it says channels:, the terms ASTRA-sim's and SMPI's platforms are
 * read in (issue 53: with NCCL's protocols and several rings baton read
 * 1.3-9.6x off on them). --proto and --channels still choose. */
static void plain_default(ctx_t *c, yaml_node_t *root) {
    static const char *const nccl[] = {"arch", "gpu", "library", "nccl_env", NULL};
    topo_params_t *p = topo_params(c->t);
    if (p->said_protocols) return;
    for (int i = 0; nccl[i]; i++)
        if (get(c, root, nccl[i])) return;
    p->plain = p->no_protocols = 1;
    if (p->channels == 0) p->channels = 1;
}

static int walk(ctx_t *c, const char *const *sets, int nsets) {
    static const char *const fixed[] = {"name", "description", "params", "arch", "gpu", "protocols", "library", "include",
                                        "nodes", "links", "generate", "link_efficiency", "calibration", "sharp_fabric",
                                        "nccl_env", "require", NULL};
    const char *keys[64];
    with_knobs(fixed, 0, keys, 64);
    yaml_node_t *root = yaml_document_get_root_node(&c->doc);
    if (root == NULL) return err_set(c->e, BATON_EPARSE, "%s:1:1: empty topology file", c->file);
    if (root->type != YAML_MAPPING_NODE) return fail(c, root, "a topology must be a mapping (name:, nodes:, links:)", NULL, NULL);
    int rc = only_keys(c, root, keys, "a topology");
    if (rc < 0 || (rc = read_params(c, root, sets, nsets)) < 0 || (rc = read_require(c, root)) < 0 ||
        (rc = read_engine(c, root)) < 0)
        return rc;
    fold_plan(c, root);
    if ((rc = read_gpu(c, root)) < 0 || (rc = walk_body(c, root)) < 0 || (rc = read_protocols(c, root)) < 0) return rc;
    if ((rc = read_efficiency(c, root)) < 0 || (rc = read_calibration(c, root)) < 0 || (rc = read_library(c, root)) < 0 ||
        (rc = read_sharp(c, root)) < 0 || (rc = read_nccl_env(c, root)) < 0)
        return rc;
    plain_default(c, root);
    for (int i = 0; i < c->params.n; i++)
        if (topo_add_param(c->t, c->params.v[i].name, c->params.v[i].value) < 0)
            return err_set(c->e, BATON_ENOMEM, "out of memory");
    if ((rc = topo_finalize(c->t, c->file, c->e)) < 0) return rc;
    if (!c->fold_nw) return 0;
    fold_map_t *map = c->fold_map;
    c->fold_map = NULL;                           /* the topology's now */
    return topo_set_fold(c->t, c->fold_nodes, c->fold_nw, map, c->fabric_first, c->e);
}

static const char *base_name(const char *path) {
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static topo_t *load_file(const char *path, const char *const *sets, int nsets, int depth, int fold_min, baton_err_t *e) {
    ctx_t c = {.file = path, .e = e, .fold_min = fold_min};
    c.next_rank = &c.own_next_rank;
    c.own_copies_left = INCLUDE_MAX_COPIES;
    c.copies_left = &c.own_copies_left;
    if (load_doc(&c, path) < 0) return NULL;
    yaml_node_t *root = yaml_document_get_root_node(&c.doc);
    int mapping = root && root->type == YAML_MAPPING_NODE;
    topo_t *t = NULL;
    if (mapping && get(&c, root, "extends")) {
        if (overlay(&c, root, sets, nsets, depth) < 0) topo_free(c.t);
        else t = c.t;
    } else {
        const char *name = mapping ? scalar(get(&c, root, "name")) : NULL;
        char stem[256];
        snprintf(stem, sizeof stem, "%s", base_name(path));
        char *dot = strrchr(stem, '.');
        if (dot) *dot = '\0';
        t = topo_create(name ? name : stem);
        if (t == NULL) err_set(e, BATON_ENOMEM, "out of memory");
        else {
            c.t = t;
            if (walk(&c, sets, nsets) < 0) { topo_free(t); t = NULL; }
        }
    }
    yaml_document_delete(&c.doc);
    expand_free(&c.params);
    fold_map_free(c.fold_map);                    /* not handed over: the load failed */
    struct stat st;
    if (t && stat(path, &st) == 0) topo_add_source(t, (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);
    return t;
}

topo_t *topo_yaml_load(const char *path, const char *const *sets, int nsets, baton_err_t *e) {
    return load_file(path, sets, nsets, 0, 0, e);
}

topo_t *topo_yaml_load_folded(const char *path, const char *const *sets, int nsets, int min_nodes, baton_err_t *e) {
    baton_err_t why = {0};
    topo_t *t = load_file(path, sets, nsets, 0, min_nodes > 0 ? min_nodes : 1, &why);
    return t ? t : load_file(path, sets, nsets, 0, 0, e);   /* what cannot fold loads whole, and says what is wrong */
}

int topo_yaml_scalars(const char *path, yaml_scalar_fn fn, void *ctx, baton_err_t *e) {
    ctx_t c = {.file = path, .e = e};
    int rc = load_doc(&c, path);
    if (rc < 0) return rc;
    yaml_node_t *root = yaml_document_get_root_node(&c.doc);
    if (root == NULL || root->type != YAML_MAPPING_NODE)
        rc = err_set(e, BATON_EPARSE, "%s:1:1: want a mapping of keys to values", path);
    for (yaml_node_pair_t *p = rc ? NULL : root->data.mapping.pairs.start; p && p < root->data.mapping.pairs.top; p++) {
        yaml_node_t *k = node(&c, p->key), *v = node(&c, p->value);
        const char *why = !scalar(k) || !scalar(v) ? "want key: value" : fn(ctx, scalar(k), scalar(v));
        if (why) { rc = fail(&c, scalar(k) && scalar(v) ? v : k, "%s", why, NULL); break; }
    }
    yaml_document_delete(&c.doc);
    return rc;
}
