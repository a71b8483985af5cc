/* mfile_include.c - a machine file's body: its includes (a node file copied
 * N times under a prefix, with the includer's parameters), then its nodes,
 * links and generators (mfile_graph.c). An included file's body is read
 * the same way, so includes nest (8 deep at most, MF_INCLUDE_MAX_COPIES
 * copies in all). */
#include "mfile_include.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mfile_graph.h"
#include "mfile_library.h"
#include "mfile_machine.h"

/* One copy of an included file (parsed once, in doc): its nodes, links and
 * generators under a prefix, with the includer's parameters (and ${replica})
 * in scope. */
static int include_copy(mfile_t *c, const char *path, ydoc_t *doc, const char *prefix, int replica) {
    mfile_t sub = {.doc = doc, .file = path, .t = c->t, .e = c->e, .next_rank = c->next_rank,
                 .copies_left = c->copies_left, .depth = c->depth + 1};
    char idx[32];
    int rc = 0;
    strcpy(sub.prefix, prefix);             /* add_include checked its length */
    snprintf(idx, sizeof idx, "%d", replica);
    for (int i = 0; i < c->params.n && rc == 0; i++)
        if (expand_set(&sub.params, c->params.v[i].name, c->params.v[i].value) < 0) rc = err_set(c->e, BATON_ENOMEM, "out of memory");
    if (rc == 0 && expand_set(&sub.params, "replica", idx) < 0) rc = err_set(c->e, BATON_ENOMEM, "out of memory");
    ynode_t *root = ydoc_root(sub.doc);
    if (rc == 0 && (root == NULL || !ydoc_is_map(root)))
        rc = err_set(c->e, BATON_EPARSE, "%s:1:1: an included file is a mapping (nodes:, links:)", path);
    if (rc == 0) {                                  /* its own parameters are defaults only */
        ynode_t *pm = mf_get(&sub, root, "params");
        for (int p = 0; ydoc_is_map(pm) && p < ydoc_len(pm) && rc == 0; p++) {
            const char *k = ydoc_scalar(ydoc_key(sub.doc, pm, p)), *v = ydoc_scalar(ydoc_value(sub.doc, pm, p));
            if (k && v && !expand_get(&sub.params, k) && expand_set(&sub.params, k, v) < 0) rc = err_set(c->e, BATON_ENOMEM, "out of memory");
        }
    }
    if (rc == 0) rc = mf_walk_body(&sub, root);
    expand_free(&sub.params);
    return rc;
}

/* The included file's path: relative to the including file, a regular file
 * (not a FIFO or device that could block or never end). */
int mf_include_path(mfile_t *c, ynode_t *fv, const char *file, char *path, size_t len) {
    const char *slash = strrchr(c->file, '/');
    struct stat st;
    if (file[0] == '/' || slash == NULL) snprintf(path, len, "%s", file);
    else snprintf(path, len, "%.*s/%s", (int)(slash - c->file), c->file, file);
    if (stat(path, &st) < 0) return mf_fail(c, fv, "cannot open included file '%s': %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode)) return mf_fail(c, fv, "included file '%s' is not a regular file", path, NULL);
    return 0;
}

/* include: [{file: node.yaml, replicate: N, prefix: "n{i}."}]: N copies, {i} their number. */
static int add_include(mfile_t *c, ynode_t *n) {
    static const char *const keys[] = {"file", "replicate", "prefix", "if", "unless", NULL};
    if (!ydoc_is_map(n)) return mf_fail(c, n, "an include is {file: ..., replicate: N, prefix: ...}", NULL, NULL);
    int rc = mf_only_keys(c, n, keys, "an include"), copies = 1;
    if (rc < 0 || (rc = mf_wanted(c, n)) <= 0) return rc;
    if (c->depth >= 8) return mf_fail(c, n, "includes nested more than 8 deep", NULL, NULL);
    char file[MF_TEXT], pre[MF_TEXT] = "", path[MF_TEXT * 2], full[sizeof c->prefix];
    ynode_t *fv = NULL, *rv = mf_get(c, n, "replicate"), *pv = mf_get(c, n, "prefix");
    if ((rc = mf_need(c, n, "file", file, &fv)) < 0) return rc;
    if (rv && (rc = mf_get_int(c, rv, "replicate", 1, &copies)) < 0) return rc;
    if (copies > *c->copies_left) return mf_fail(c, rv ? rv : n, "more than %s included copies in all (baton's limit)", MF_INCLUDE_MAX_COPIES_S, NULL);
    *c->copies_left -= copies;
    if (pv && (rc = mf_text(c, pv, "prefix", pre)) < 0) return rc;
    if (!pv && copies > 1) strcpy(pre, "{i}.");
    char *at = strstr(pre, "{i}");
    if (copies > 1 && !at) return mf_fail(c, pv, "with replicate the prefix must contain {i}, e.g. \"n{i}.\"", NULL, NULL);
    if ((rc = mf_include_path(c, fv, file, path, sizeof path)) < 0) return rc;
    ydoc_t *parsed;
    if ((rc = ydoc_load(path, &parsed, c->e)) < 0) return rc;
    for (int i = 0; i < copies && rc == 0; i++) {
        char copy[MF_TEXT];
        if (at) snprintf(copy, sizeof copy, "%.*s%d%s", (int)(at - pre), pre, i, at + 3);
        else snprintf(copy, sizeof copy, "%s", pre);
        if (strlen(c->prefix) + strlen(copy) >= sizeof full) rc = mf_fail(c, pv, "prefix longer than 127 characters", NULL, NULL);
        if (rc < 0) break;
        memcpy(full, c->prefix, strlen(c->prefix));
        strcpy(full + strlen(c->prefix), copy);
        rc = include_copy(c, path, parsed, full, i);
    }
    if (rc < 0 && c->e && strlen(c->e->msg) + 64 < sizeof c->e->msg)   /* say which include, as compilers do */
        snprintf(c->e->msg + strlen(c->e->msg), sizeof c->e->msg - strlen(c->e->msg), " (included from %s:%lu)",
                 c->file, ydoc_line(n));
    ydoc_free(parsed);
    return rc;
}

/* What a file holds besides the machine-wide settings: includes, nodes, links,
 * generators. A fragment may also say which library runs on its nodes and
 * its protocols' costs (RCCL on an MI300X platform), so the files that
 * include it need not repeat them; the including file's own win (read after). */
int mf_walk_body(mfile_t *c, ynode_t *root) {
    static const char *const frag_keys[] = {"name", "description", "params", "include", "nodes", "links", "generate",
                                            "protocols", "library", NULL};
    int rc = c->depth > 0 ? mf_only_keys(c, root, frag_keys, "an included file") : 0;
    if (rc == 0 && c->depth > 0 && (rc = mf_read_protocols(c, root)) == 0) rc = mf_read_library(c, root);
    if (rc < 0 || (rc = mf_each(c, root, "include", 0, add_include)) < 0) return rc;
    if ((rc = mf_each(c, root, "nodes", c->depth == 0 && !mf_get(c, root, "include"), mf_add_node)) < 0) return rc;
    if ((rc = mf_each(c, root, "links", 0, mf_add_link)) < 0) return rc;
    return mf_each(c, root, "generate", 0, mf_add_generated);
}
