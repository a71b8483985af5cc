/* mfile.c - a machine file's values as the file means them (mfile.h): a
 * key's node, its text with ${...} substituted (and, in a folded cluster,
 * the node bracket narrowed to its witnesses), its number in its unit, the
 * nodes a name pattern names; every error at the node that is wrong. */
#include "mfile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/suggest.h"
#include "units.h"

/* A node name as declared in this file, as the topology knows it. */
void mf_prefixed(const mfile_t *c, const char *name, char *out, size_t len) {
    snprintf(out, len, "%s%s", c->prefix, name);
}

int mf_fail(mfile_t *c, ynode_t *n, const char *fmt, const char *a, const char *b) {
    char what[2400];
    snprintf(what, sizeof what, fmt, a ? a : "", b ? b : "");
    return err_set(c->e, BATON_EPARSE, "%s:%lu:%lu: %s", c->file, ydoc_line(n), ydoc_col(n), what);
}

ynode_t *mf_get(mfile_t *c, ynode_t *m, const char *key) { return ydoc_get(c->doc, m, key); }

/* Every key of m must be in the NULL-terminated list: typos are errors. */
int mf_only_keys(mfile_t *c, ynode_t *m, const char *const *keys, const char *what) {
    for (int p = 0; p < ydoc_len(m); p++) {
        ynode_t *kn = ydoc_key(c->doc, m, p);
        const char *k = ydoc_scalar(kn);
        int ok = 0;
        for (int i = 0; k && keys[i]; i++) ok |= strcmp(k, keys[i]) == 0;
        if (!ok) {
            char why[256];
            snprintf(why, sizeof why, "unknown key '%.60s' in %.80s%s", k ? k : "?", what, k ? suggest_hint(k, keys) : "");
            return mf_fail(c, kn, "%s", why, NULL);
        }
    }
    return 0;
}

/* The scalar v with its ${...} substituted, into buf. */
int mf_text(mfile_t *c, ynode_t *v, const char *key, char *buf) {
    const char *s = ydoc_scalar(v), *why, *at;
    char folded[MF_TEXT];
    if (s == NULL) return mf_fail(c, v, "'%s' must be a single value", key, NULL);
    if (c->fold_nw && (at = strstr(s, c->fold_bracket)) != NULL) {   /* a folded cluster: its witnesses only */
        snprintf(folded, sizeof folded, "%.*s%s%s", (int)(at - s), s, c->fold_text, at + strlen(c->fold_bracket));
        s = folded;
    }
    if (expand_subst(&c->params, s, buf, MF_TEXT, &why) == 0) return 0;
    char name[64], msg[256];
    if (strcmp(why, EXPAND_UNKNOWN) != 0 || !expand_unknown(&c->params, s, name, sizeof name))
        return mf_fail(c, v, "in '%s': %s", s, why);
    snprintf(msg, sizeof msg, "unknown parameter '%s'%s", name, mf_param_hint(&c->params, name));
    return mf_fail(c, v, "in '%s': %s", s, msg);
}

/* Required key, as substituted text. */
int mf_need(mfile_t *c, ynode_t *m, const char *key, char *buf, ynode_t **vn) {
    ynode_t *v = mf_get(c, m, key);
    if (v == NULL) return mf_fail(c, m, "missing '%s'", key, NULL);
    if (vn) *vn = v;
    return mf_text(c, v, key, buf);
}

int mf_get_bw(mfile_t *c, ynode_t *m, const char *key, double *out) {
    char s[MF_TEXT];
    const char *why;
    ynode_t *v = NULL;
    int rc = mf_need(c, m, key, s, &v);
    if (rc < 0) return rc;
    if (units_bandwidth(s, out, &why) < 0) return mf_fail(c, v, "bad bandwidth '%s': %s", s, why);
    return 0;
}

/* A size: "64KiB", "80GB", a number of bytes. */
int mf_get_size(mfile_t *c, ynode_t *m, const char *key, uint64_t *out) {
    char s[MF_TEXT];
    const char *why;
    ynode_t *v = NULL;
    int rc = mf_need(c, m, key, s, &v);
    if (rc < 0) return rc;
    if (units_size(s, out, &why) < 0) return mf_fail(c, v, "bad size '%s': %s", s, why);
    return 0;
}

int mf_get_time(mfile_t *c, ynode_t *m, const char *key, double *out) {
    char s[MF_TEXT];
    const char *why;
    ynode_t *v = NULL;
    int rc = mf_need(c, m, key, s, &v);
    if (rc < 0) return rc;
    if (units_time(s, out, &why) < 0) return mf_fail(c, v, "bad latency '%s': %s", s, why);
    return 0;
}

int mf_get_int(mfile_t *c, ynode_t *v, const char *key, int lo, int *out) {
    char s[MF_TEXT], *end;
    int rc = mf_text(c, v, key, s);
    if (rc < 0) return rc;
    errno = 0;
    long x = strtol(s, &end, 10);
    if (end == s || *end || errno || x < lo || x > 1 << 30) {
        char msg[MF_TEXT + 160];                 /* the bound itself: "at least 1" read wrong for radix=1 */
        snprintf(msg, sizeof msg, "'%s' must be a whole number from %d to %d, not '%s'", key, lo, 1 << 30, s);
        return mf_fail(c, v, "%s", msg, NULL);
    }
    *out = (int)x;
    return 0;
}

/* A boolean key's value: 1, 0, `absent` if missing, negative on error. */
int mf_get_bool(mfile_t *c, ynode_t *m, const char *key, int absent) {
    ynode_t *v = mf_get(c, m, key);
    char s[MF_TEXT];
    if (v == NULL) return absent;
    int rc = mf_text(c, v, key, s);
    if (rc < 0) return rc;
    int b = expand_bool(s);
    return b < 0 ? mf_fail(c, v, "'%s' must be true or false, not '%s'", key, s) : b;
}

/* `if:` / `unless:` decide whether an entry exists: 1 yes, 0 no, negative error. */
int mf_wanted(mfile_t *c, ynode_t *m) {
    int yes = mf_get_bool(c, m, "if", 1), no = mf_get_bool(c, m, "unless", 0);
    if (yes < 0) return yes;
    if (no < 0) return no;
    return yes && !no;
}

/* Node ids named by a pattern (or a list of patterns); malloc'd into *ids. */
int mf_resolve(mfile_t *c, ynode_t *v, const char *key, int **ids, int *n) {
    int cap = 0, count = 0, rc = 0, last = -1;   /* names come in the order they were declared: try the next first */
    int items = ydoc_is_seq(v) ? ydoc_len(v) : 1;
    *ids = NULL;
    for (int i = 0; i < items && rc == 0; i++) {
        ynode_t *it = ydoc_is_seq(v) ? ydoc_item(c->doc, v, i) : v;
        char s[MF_TEXT], **names = NULL;
        const char *why;
        int k = 0;
        if ((rc = mf_text(c, it, key, s)) < 0) break;
        if (expand_range(s, &names, &k, &why) < 0) { rc = mf_fail(c, it, "bad name pattern '%s': %s", s, why); break; }
        for (int j = 0; j < k && rc == 0; j++) {
            char full[MF_TEXT + 128];
            mf_prefixed(c, names[j], full, sizeof full);
            int id = last + 1 < topo_nnodes(c->t) && strcmp(topo_node(c->t, last + 1)->name, full) == 0
                         ? last + 1 : topo_find_node(c->t, full);
            if (id < 0) {
                rc = mf_fail(c, it, "unknown node '%s' (declare it under nodes:)%s", full, topo_node_hint(c->t, full));
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

int mf_each(mfile_t *c, ynode_t *root, const char *key, int required, int (*fn)(mfile_t *, ynode_t *)) {
    ynode_t *s = mf_get(c, root, key);
    if (s == NULL) return required ? mf_fail(c, root, "missing '%s:' list", key, NULL) : 0;
    if (!ydoc_is_seq(s)) return mf_fail(c, s, "'%s' must be a list", key, NULL);
    for (int i = 0; i < ydoc_len(s); i++) {
        int rc = fn(c, ydoc_item(c->doc, s, i));
        if (rc < 0) return rc;
    }
    return 0;
}
