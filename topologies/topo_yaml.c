/* topo_yaml.c - read a topology from YAML. The only file that includes <yaml.h>.
 *
 * Format (see topologies/README.md):
 *
 *   name: hgx-h100
 *   ports: 0              # transfers a rank may send/receive at once, 0 = unlimited
 *   reduce_bw: 0          # bytes/s of a rank's reduction, 0 = free
 *   group_size: 8         # ranks per node, for hierarchical algorithms
 *   nodes:
 *     - {name: gpu0, kind: gpu}          # gpus get ranks in order unless `rank:` says
 *     - {name: nvswitch, kind: switch}
 *   links:
 *     - {a: gpu0, b: nvswitch, bw: 450GB/s, latency: 0.6us}
 *     - {mesh: [A, B, C], bw: 1B/s, latency: 0s}   # every pair
 *
 * The whole document is loaded first (libyaml's document API keeps every
 * node's line and column), then walked; every error is "file:line:col: what". */
#include "topo_yaml.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "units.h"

typedef struct {
    yaml_document_t doc;
    const char *file;
    topo_t *t;
    baton_err_t *e;
    int next_rank;
} ctx_t;

static int fail(ctx_t *c, yaml_node_t *n, const char *fmt, const char *a, const char *b) {
    char what[384];
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
        if (!ok) return fail(c, kn, "unknown key '%s' in %s", k ? k : "?", what);
    }
    return 0;
}

static int want_scalar(ctx_t *c, yaml_node_t *m, yaml_node_t *v, const char *key, const char **out) {
    if (v == NULL) return fail(c, m, "missing '%s'", key, NULL);
    if (!(*out = scalar(v))) return fail(c, v, "'%s' must be a single value", key, NULL);
    return 0;
}

static int get_bw(ctx_t *c, yaml_node_t *m, const char *key, double *out) {
    const char *s, *why;
    yaml_node_t *v = get(c, m, key);
    int rc = want_scalar(c, m, v, key, &s);
    if (rc < 0) return rc;
    if (units_bandwidth(s, out, &why) < 0) return fail(c, v, "bad bandwidth '%s': %s", s, why);
    return 0;
}

static int get_time(ctx_t *c, yaml_node_t *m, const char *key, double *out) {
    const char *s, *why;
    yaml_node_t *v = get(c, m, key);
    int rc = want_scalar(c, m, v, key, &s);
    if (rc < 0) return rc;
    if (units_time(s, out, &why) < 0) return fail(c, v, "bad latency '%s': %s", s, why);
    return 0;
}

static int get_int(ctx_t *c, yaml_node_t *v, const char *key, int lo, int *out) {
    const char *s = scalar(v);
    char *end;
    if (s == NULL) return fail(c, v, "'%s' must be a whole number", key, NULL);
    errno = 0;
    long x = strtol(s, &end, 10);
    if (end == s || *end || errno || x < lo || x > 1 << 30)
        return fail(c, v, "'%s' must be a whole number, at least %s", key, lo == 0 ? "0" : "1");
    *out = (int)x;
    return 0;
}

static int add_node(ctx_t *c, yaml_node_t *n) {
    static const char *const keys[] = {"name", "kind", "rank", NULL};
    if (n->type != YAML_MAPPING_NODE) return fail(c, n, "a node must be a mapping {name: ..., kind: ...}", NULL, NULL);
    int rc = only_keys(c, n, keys, "a node");
    const char *name, *kind = "gpu";
    if (rc < 0 || (rc = want_scalar(c, n, get(c, n, "name"), "name", &name)) < 0) return rc;
    yaml_node_t *kv = get(c, n, "kind");
    if (kv && !(kind = scalar(kv))) return fail(c, kv, "'kind' must be one of gpu, switch, nic, cpu", NULL, NULL);
    int k = topo_kind_parse(kind);
    if (k < 0) return fail(c, kv, "unknown node kind '%s' (gpu, switch, nic or cpu)", kind, NULL);
    yaml_node_t *nn = get(c, n, "name");
    if (topo_find_node(c->t, name) >= 0) return fail(c, nn, "duplicate node name '%s'", name, NULL);
    int id = topo_add_node(c->t, name, (node_kind_t)k, (int)nn->start_mark.line + 1,
                           (int)nn->start_mark.column + 1, c->e);
    if (id < 0) return id;
    int rank = -1;
    yaml_node_t *rv = get(c, n, "rank");
    if (rv && (rc = get_int(c, rv, "rank", 0, &rank)) < 0) return rc;
    if (rank < 0 && k == NODE_GPU) rank = c->next_rank++;
    return rank >= 0 ? topo_set_rank(c->t, id, rank, c->e) : 0;
}

static int endpoint(ctx_t *c, yaml_node_t *m, yaml_node_t *v, const char *key) {
    const char *s;
    int rc = want_scalar(c, m, v, key, &s);
    if (rc < 0) return rc;
    int id = topo_find_node(c->t, s);
    if (id < 0) return fail(c, v, "unknown node '%s' (declare it under nodes:)", s, NULL);
    return id;
}

static int add_mesh(ctx_t *c, yaml_node_t *mv, double bw, double lat) {
    if (mv->type != YAML_SEQUENCE_NODE) return fail(c, mv, "'mesh' must be a list of node names", NULL, NULL);
    int n = (int)(mv->data.sequence.items.top - mv->data.sequence.items.start), rc;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            int a = endpoint(c, mv, node(c, mv->data.sequence.items.start[i]), "mesh");
            int b = endpoint(c, mv, node(c, mv->data.sequence.items.start[j]), "mesh");
            if (a < 0) return a;
            if (b < 0) return b;
            if (a == b) return fail(c, mv, "node '%s' appears twice in the mesh", topo_node(c->t, a)->name, NULL);
            if ((rc = topo_add_link(c->t, a, b, bw, lat, c->e)) < 0) return rc;
        }
    return 0;
}

static int add_link(ctx_t *c, yaml_node_t *l) {
    static const char *const keys[] = {"a", "b", "mesh", "bw", "latency", NULL};
    if (l->type != YAML_MAPPING_NODE) return fail(c, l, "a link must be a mapping {a: X, b: Y, bw: ..., latency: ...}", NULL, NULL);
    double bw, lat;
    int rc = only_keys(c, l, keys, "a link");
    if (rc < 0 || (rc = get_bw(c, l, "bw", &bw)) < 0 || (rc = get_time(c, l, "latency", &lat)) < 0) return rc;
    if (!(bw > 0)) return fail(c, get(c, l, "bw"), "link bandwidth must be positive", NULL, NULL);
    yaml_node_t *mv = get(c, l, "mesh");
    if (mv) return add_mesh(c, mv, bw, lat);
    int a = endpoint(c, l, get(c, l, "a"), "a");
    if (a < 0) return a;
    int b = endpoint(c, l, get(c, l, "b"), "b");
    if (b < 0) return b;
    if (a == b) return fail(c, l, "link from '%s' to itself", topo_node(c->t, a)->name, NULL);
    return topo_add_link(c->t, a, b, bw, lat, c->e);
}

static int each(ctx_t *c, yaml_node_t *root, const char *key, int (*fn)(ctx_t *, yaml_node_t *)) {
    yaml_node_t *s = get(c, root, key);
    if (s == NULL) return fail(c, root, "missing '%s:' list", key, NULL);
    if (s->type != YAML_SEQUENCE_NODE) return fail(c, s, "'%s' must be a list", key, NULL);
    for (yaml_node_item_t *i = s->data.sequence.items.start; i < s->data.sequence.items.top; i++) {
        int rc = fn(c, node(c, *i));
        if (rc < 0) return rc;
    }
    return 0;
}

static int read_params(ctx_t *c, yaml_node_t *root) {
    topo_params_t *p = topo_params(c->t);
    yaml_node_t *v;
    int rc = 0;
    if ((v = get(c, root, "ports")) && (rc = get_int(c, v, "ports", 0, &p->ports)) < 0) return rc;
    if ((v = get(c, root, "max_inflight")) && (rc = get_int(c, v, "max_inflight", 1, &p->max_inflight)) < 0) return rc;
    if ((v = get(c, root, "group_size")) && (rc = get_int(c, v, "group_size", 1, &p->group_size)) < 0) return rc;
    if (get(c, root, "reduce_bw") && (rc = get_bw(c, root, "reduce_bw", &p->reduce_bw)) < 0) return rc;
    return 0;
}

static int walk(ctx_t *c) {
    static const char *const keys[] = {"name", "description", "ports", "reduce_bw", "max_inflight",
                                       "group_size", "nodes", "links", NULL};
    yaml_node_t *root = yaml_document_get_root_node(&c->doc);
    if (root == NULL) return err_set(c->e, BATON_EPARSE, "%s:1:1: empty topology file", c->file);
    if (root->type != YAML_MAPPING_NODE) return fail(c, root, "a topology must be a mapping (name:, nodes:, links:)", NULL, NULL);
    int rc = only_keys(c, root, keys, "a topology");
    if (rc < 0 || (rc = read_params(c, root)) < 0) return rc;
    if ((rc = each(c, root, "nodes", add_node)) < 0) return rc;
    if ((rc = each(c, root, "links", add_link)) < 0) return rc;
    return topo_finalize(c->t, c->file, c->e);
}

static const char *base_name(const char *path) {
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

topo_t *topo_yaml_load(const char *path, baton_err_t *e) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        err_set(e, BATON_EIO, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    yaml_parser_t parser;
    ctx_t c = {.file = path, .e = e};
    topo_t *t = NULL;
    yaml_parser_initialize(&parser);
    yaml_parser_set_input_file(&parser, f);
    if (!yaml_parser_load(&parser, &c.doc)) {
        err_set(e, BATON_EPARSE, "%s:%lu:%lu: YAML syntax error: %s", path,
                (unsigned long)parser.problem_mark.line + 1,
                (unsigned long)parser.problem_mark.column + 1,
                parser.problem ? parser.problem : "unknown");
        goto out;
    }
    yaml_node_t *root = yaml_document_get_root_node(&c.doc);
    const char *name = root && root->type == YAML_MAPPING_NODE ? scalar(get(&c, root, "name")) : NULL;
    char stem[256];
    snprintf(stem, sizeof stem, "%s", base_name(path));
    char *dot = strrchr(stem, '.');
    if (dot) *dot = '\0';
    t = topo_create(name ? name : stem);
    if (t == NULL) err_set(e, BATON_ENOMEM, "out of memory");
    else {
        c.t = t;
        if (walk(&c) < 0) { topo_free(t); t = NULL; }
    }
    yaml_document_delete(&c.doc);
out:
    yaml_parser_delete(&parser);
    fclose(f);
    return t;
}
