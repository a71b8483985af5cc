/* topo_yaml.c - read a topology from a YAML machine file (topo_yaml.h).
 *
 * Format (topologies/README.md has the full reference):
 *
 *   name: cluster-h100
 *   params: {nodes: 2, nic_bw: 400Gb/s}     # defaults; --set nodes=128 overrides
 *   ports: 0              # transfers a rank may send/receive at once, 0 = unlimited
 *   reduce_bw: 0          # bytes/s of a rank's reduction, 0 = free
 *   max_inflight: 8       # sends a stream may have posted and unfinished
 *   eager: false          # true: a send may land before its receive is posted (NCCL's FIFO)
 *   group_size: 8         # ranks per node, for hierarchical algorithms
 *   channels: 8           # rings side by side when a command gives no --channels
 *   p2p: true             # false: GPU-to-GPU traffic is staged in host memory
 *   pxn: false            # true: sends across nodes go over NVLink to the peer on the
 *                         #   destination's rail and out through its NIC (NCCL's PXN)
 *   gdr: true             # false: GPUDirect RDMA off, GPU-NIC hops through the GPU's host
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
 * The whole document is loaded first (ydoc.c, the only file that includes
 * <yaml.h>, keeps every node's line and column); every error is
 * "file:line:col: what". This file reads a file's top level, in its order,
 * and a machine that `extends:` another; each section is read by its own
 * file over mfile.h: params:, require: and the engine values
 * (mfile_params.c), include:, nodes:, links: and generate: (mfile_include.c,
 * mfile_graph.c), protocols:, link_efficiency:, gpu: and sharp_fabric:
 * (mfile_machine.c), library: and nccl_env: (mfile_library.c),
 * calibration: (mfile_calib.c), and whether a cluster folds (mfile_fold.c). */
#include "topo_yaml.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "find.h"
#include "knobs.h"
#include "mfile.h"
#include "mfile_calib.h"
#include "mfile_fold.h"
#include "mfile_include.h"
#include "mfile_library.h"
#include "mfile_machine.h"
#include "mfile_params.h"

/* A key list: fixed, then the knobs (knobs.h; only those a calibrated
 * overlay may set, if overlay), NULL-terminated in out[cap]. */
static void with_knobs(const char *const *fixed, int overlay, const char **out, int cap) {
    int n = 0;
    for (int i = 0; fixed[i] && n < cap - 1; i++) out[n++] = fixed[i];
    for (int i = 0; knobs_name(i) && n < cap - 1; i++)
        if (!overlay || knobs_overlay(knobs_name(i))) out[n++] = knobs_name(i);
    out[n] = NULL;
}

#define EXTENDS_MAX_DEPTH 8

static topo_t *load_file(const char *path, const char *const *sets, int nsets, int depth, int fold_min, baton_err_t *e);

/* The base's --set list: this file's params (defaults), then the command
 * line's (they win: expand_set keeps the last). Strings point into buf. */
static int overlay_sets(mfile_t *c, ynode_t *root, const char *const *sets, int nsets, const char ***out, int *n,
                        char **buf) {
    ynode_t *pm = mf_get(c, root, "params");
    int np = 0;
    size_t len = 1;
    if (pm && !ydoc_is_map(pm)) return mf_fail(c, pm, "'params' must be a mapping of the base's parameters to values", NULL, NULL);
    for (int p = 0; p < ydoc_len(pm); p++, np++) {
        const char *k = ydoc_scalar(ydoc_key(c->doc, pm, p)), *v = ydoc_scalar(ydoc_value(c->doc, pm, p));
        if (!k || !v) return mf_fail(c, ydoc_key(c->doc, pm, p), "a parameter is 'name: value'", NULL, NULL);
        len += strlen(k) + strlen(v) + 2;
    }
    *out = calloc((size_t)(np + nsets) + 1, sizeof **out);
    *buf = malloc(len);
    if (!*out || !*buf) return err_set(c->e, BATON_ENOMEM, "out of memory");
    char *w = *buf;
    *n = 0;
    for (int p = 0; p < ydoc_len(pm); p++) {
        (*out)[(*n)++] = w;
        w += sprintf(w, "%s=%s", ydoc_scalar(ydoc_key(c->doc, pm, p)), ydoc_scalar(ydoc_value(c->doc, pm, p))) + 1;
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
static void note_what_if(mfile_t *c, ynode_t *root, const char *const *sets, int nsets) {
    ynode_t *pm = mf_get(c, root, "params");
    topo_calib_t *k = &topo_params(c->t)->calib;
    for (int i = 0; k->present && !k->what_if[0] && i < nsets; i++) {
        const char *eq = strchr(sets[i], '='), *v = NULL;
        if (eq && (!strncmp(sets[i], "nodes=", 6) || !strncmp(sets[i], "racks=", 6) || !strncmp(sets[i], "trays=", 6)))
            continue;
        for (int p = 0; eq && p < ydoc_len(pm); p++) {
            const char *key = ydoc_scalar(ydoc_key(c->doc, pm, p));
            if (key && strlen(key) == (size_t)(eq - sets[i]) && !strncmp(key, sets[i], (size_t)(eq - sets[i])))
                v = ydoc_scalar(ydoc_value(c->doc, pm, p));
        }
        if (!v && eq && eq - sets[i] < 128) {     /* the base's parameter: the value its file gives it */
            char key[128];
            snprintf(key, sizeof key, "%.*s", (int)(eq - sets[i]), sets[i]);
            v = topo_param_file_value(c->t, key);
        }
        if (!v || strcmp(v, eq + 1)) snprintf(k->what_if, sizeof k->what_if, "%s", sets[i]);
    }
}

/* A knob an overlay may not set (knobs_overlay) gets its own error: the
 * name is right, the place is not. */
static int overlay_knobs(mfile_t *c, ynode_t *root) {
    for (int p = 0; p < ydoc_len(root); p++) {
        const char *k = ydoc_scalar(ydoc_key(c->doc, root, p));
        if (k && knobs_is(k) && !knobs_overlay(k))
            return mf_fail(c, ydoc_key(c->doc, root, p), "'%s' shapes the machine or says which NCCL and network software it runs, so a "
                        "machine that extends another takes it from the base file, nccl_env or --set %s=...", k, k);
    }
    return 0;
}

/* `extends: hgx-h100` names a shipped machine (topo_find_shipped: the
 * search path without the current folder, so a user's own hgx-h100.yaml
 * lying in the folder never stands in for the base silently), so a
 * calibrated machine of a shipped one can be kept anywhere; a value
 * with a '/' or ending in .yaml is a file, relative to this one's folder. */
static int extends_path(mfile_t *c, ynode_t *fv, const char *file, char *path, size_t len) {
    size_t n = strlen(file);
    if (strchr(file, '/') || (n > 5 && strcmp(file + n - 5, ".yaml") == 0)) return mf_include_path(c, fv, file, path, len);
    if (topo_find_shipped(file, path, len)) return 0;
    char share[1024];
    return mf_fail(c, fv, "extends '%s': no machine of that name in topologies/, $BATON_PATH or %s (a file: give its "
                "path)", file, topo_find_share(share, sizeof share));
}

/* A calibrated machine: `extends: base.yaml` (beside this file) builds the
 * graph, with this file's params as the base's defaults; then this file's
 * engine values, protocols, link efficiencies and calibration record replace
 * the base's, and the command line's engine --set values replace those. It
 * changes values, never the graph, so every parameter and flag of the base
 * (nodes, nic_bw, reduce: true) still works. */
static int overlay(mfile_t *c, ynode_t *root, const char *const *sets, int nsets, int depth) {
    static const char *const fixed[] = {"name", "description", "extends", "params", "arch", "gpu", "protocols", "library",
                                        "link_efficiency", "calibration", "nccl_env", NULL};
    const char *keys[64];
    char file[MF_TEXT], path[MF_TEXT * 2], *buf = NULL;
    const char **all = NULL;
    ynode_t *fv = NULL, *nv = mf_get(c, root, "name");
    with_knobs(fixed, 1, keys, 64);
    int n = 0, rc = overlay_knobs(c, root);
    if (rc == 0 && nv && !ydoc_scalar(nv))
        rc = mf_fail(c, nv, "'name' is one word or phrase (name: my-cluster), not a list or mapping", NULL, NULL);
    if (rc == 0) rc = mf_only_keys(c, root, keys, "a machine that extends another (nodes and links come from the base)");
    if (rc == 0) rc = mf_need(c, root, "extends", file, &fv);
    if (rc == 0 && depth >= EXTENDS_MAX_DEPTH) rc = mf_fail(c, fv, "machines extend each other more than 8 deep", NULL, NULL);
    if (rc == 0) rc = extends_path(c, fv, file, path, sizeof path);
    if (rc == 0) rc = overlay_sets(c, root, sets, nsets, &all, &n, &buf);
    if (rc == 0 && (c->t = load_file(path, all, n, depth + 1, c->fold_min, c->e)) == NULL) {
        rc = -1;
        if (c->e && strlen(c->e->msg) + 64 < sizeof c->e->msg)
            snprintf(c->e->msg + strlen(c->e->msg), sizeof c->e->msg - strlen(c->e->msg), " (extended by %s:%lu)",
                     c->file, ydoc_line(fv));
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
    if (rc == 0) rc = mf_read_engine(c, root);
    if (rc == 0) rc = mf_read_protocols(c, root);
    if (rc == 0) rc = mf_read_gpu(c, root);
    if (rc == 0) rc = mf_read_efficiency(c, root);
    if (rc == 0) rc = mf_read_calibration(c, root);
    if (rc == 0) note_what_if(c, root, sets, nsets);
    if (rc == 0) rc = mf_read_library(c, root);
    if (rc == 0) rc = mf_read_nccl_env(c, root);
    if (rc == 0 && nv && ydoc_scalar(nv) && topo_rename(c->t, ydoc_scalar(nv)) < 0) rc = err_set(c->e, BATON_ENOMEM, "out of memory");
    return rc;
}

static int walk(mfile_t *c, const char *const *sets, int nsets) {
    static const char *const fixed[] = {"name", "description", "params", "arch", "gpu", "protocols", "library", "include",
                                        "nodes", "links", "generate", "link_efficiency", "calibration", "sharp_fabric",
                                        "nccl_env", "require", "fidelity", NULL};
    const char *keys[64];
    with_knobs(fixed, 0, keys, 64);
    ynode_t *root = ydoc_root(c->doc);
    if (root == NULL) return err_set(c->e, BATON_EPARSE, "%s:1:1: empty topology file", c->file);
    if (!ydoc_is_map(root)) return mf_fail(c, root, "a topology must be a mapping (name:, nodes:, links:)", NULL, NULL);
    ynode_t *nv = mf_get(c, root, "name");
    if (nv && !ydoc_scalar(nv)) return mf_fail(c, nv, "'name' is one word or phrase (name: my-cluster), not a list or mapping", NULL, NULL);
    int rc = mf_only_keys(c, root, keys, "a topology");
    if (rc < 0 || (rc = mf_read_params(c, root, sets, nsets)) < 0 || (rc = mf_read_require(c, root)) < 0 ||
        (rc = mf_read_engine(c, root)) < 0)
        return rc;
    mf_fold_plan(c, root);
    if ((rc = mf_read_gpu(c, root)) < 0 || (rc = mf_walk_body(c, root)) < 0 || (rc = mf_read_protocols(c, root)) < 0) return rc;
    if ((rc = mf_read_efficiency(c, root)) < 0 || (rc = mf_read_calibration(c, root)) < 0 || (rc = mf_read_fidelity(c, root)) < 0 ||
        (rc = mf_read_library(c, root)) < 0 ||
        (rc = mf_read_sharp(c, root)) < 0 || (rc = mf_read_nccl_env(c, root)) < 0)
        return rc;
    mf_plain_default(c, root);
    for (int i = 0; i < c->params.n; i++)
        if (topo_add_param(c->t, c->params.v[i].name, c->params.v[i].value, c->params.v[i].file_value) < 0)
            return err_set(c->e, BATON_ENOMEM, "out of memory");
    ynode_t *gs = mf_get(c, root, "group_size");        /* where a group_size that does not divide the ranks is */
    for (int i = 0; i < nsets; i++) topo_params(c->t)->group_size_set |= !strncmp(sets[i], "group_size=", 11);
    if (gs) topo_params(c->t)->group_size_line = (int)ydoc_line(gs), topo_params(c->t)->group_size_col = (int)ydoc_col(gs);
    if ((rc = topo_finalize(c->t, c->file, c->e)) < 0) return rc;
    if (!c->fold_nw) return topo_set_fold_whole_why(c->t, c->fold_why), 0;
    fold_map_t *map = c->fold_map;
    c->fold_map = NULL;                           /* the topology's now */
    return topo_set_fold(c->t, c->fold_nodes, c->fold_nw, map, c->fabric_first, c->e);
}

static const char *base_name(const char *path) {
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static topo_t *load_file(const char *path, const char *const *sets, int nsets, int depth, int fold_min, baton_err_t *e) {
    mfile_t c = {.file = path, .e = e, .fold_min = fold_min};
    c.next_rank = &c.own_next_rank;
    c.own_copies_left = MF_INCLUDE_MAX_COPIES;
    c.copies_left = &c.own_copies_left;
    if (ydoc_load(path, &c.doc, e) < 0) return NULL;
    ynode_t *root = ydoc_root(c.doc);
    int mapping = root && ydoc_is_map(root);
    topo_t *t = NULL;
    if (mapping && mf_get(&c, root, "extends")) {
        if (overlay(&c, root, sets, nsets, depth) < 0) topo_free(c.t);
        else t = c.t;
    } else {
        const char *name = mapping ? ydoc_scalar(mf_get(&c, root, "name")) : NULL;
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
    ydoc_free(c.doc);
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
    mfile_t c = {.file = path, .e = e};
    int rc = ydoc_load(path, &c.doc, e);
    if (rc < 0) return rc;
    ynode_t *root = ydoc_root(c.doc);
    if (root == NULL || !ydoc_is_map(root))
        rc = err_set(e, BATON_EPARSE, "%s:1:1: want a mapping of keys to values", path);
    for (int p = 0; rc == 0 && p < ydoc_len(root); p++) {
        ynode_t *k = ydoc_key(c.doc, root, p), *v = ydoc_value(c.doc, root, p);
        const char *why = !ydoc_scalar(k) || !ydoc_scalar(v) ? "want key: value" : fn(ctx, ydoc_scalar(k), ydoc_scalar(v));
        if (why) { rc = mf_fail(&c, ydoc_scalar(k) && ydoc_scalar(v) ? v : k, "%s", why, NULL); break; }
    }
    ydoc_free(c.doc);
    return rc;
}
