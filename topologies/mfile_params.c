/* mfile_params.c - a machine file's parameters and engine values: params:
 * (defaults) under the command line's --set, require: (the values a
 * parameter may take), and the engine's knobs (knobs.h: ports, channels,
 * ...) with arch:, the file's then --set's. */
#include "mfile_params.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/suggest.h"
#include "../models/arch.h"
#include "knobs.h"

/* Engine values (knobs.h): the file's, then the command line's (kept among
 * the params by mf_read_params), each by the one table. */
int mf_read_engine(mfile_t *c, ynode_t *root) {
    topo_params_t *p = topo_params(c->t);
    char s[MF_TEXT], why[160], what[MF_TEXT + 256];
    ynode_t *v;
    int rc = 0;
    for (int i = 0; knobs_name(i); i++) {
        const char *k = knobs_name(i);
        if ((v = mf_get(c, root, k)) == NULL) continue;
        if ((rc = mf_text(c, v, k, s)) < 0) return rc;
        if (knobs_set(p, k, s, why, sizeof why) < 0) {
            snprintf(what, sizeof what, "'%s' %s, not '%s'", k, why, s);
            return mf_fail(c, v, "%s", what, NULL);
        }
    }
    if ((v = mf_get(c, root, "arch"))) {
        if ((rc = mf_text(c, v, "arch", s)) < 0) return rc;
        if ((p->arch = arch_parse(s)) < 0) return mf_fail(c, v, "unknown arch '%s' (volta, ampere, hopper, blackwell)", s, NULL);
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
const char *mf_param_hint(const expand_params_t *ps, const char *name) {
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
int mf_read_params(mfile_t *c, ynode_t *root, const char *const *sets, int nsets) {
    ynode_t *pm = mf_get(c, root, "params");
    if (pm && !ydoc_is_map(pm)) return mf_fail(c, pm, "'params' must be a mapping of names to defaults", NULL, NULL);
    for (int p = 0; p < ydoc_len(pm); p++) {
        const char *k = ydoc_scalar(ydoc_key(c->doc, pm, p)), *v = ydoc_scalar(ydoc_value(c->doc, pm, p));
        if (!k || !v) return mf_fail(c, ydoc_key(c->doc, pm, p), "a parameter is 'name: default'", NULL, NULL);
        if (expand_set(&c->params, k, v) < 0) return err_set(c->e, BATON_ENOMEM, "out of memory");
    }
    expand_mark_file(&c->params);
    for (int i = 0; i < nsets; i++) {
        const char *eq = strchr(sets[i], '=');
        char name[128];
        if (eq == NULL || eq == sets[i] || (size_t)(eq - sets[i]) >= sizeof name)
            return err_set(c->e, BATON_EINVAL, "--set %s: write --set name=value", sets[i]);
        memcpy(name, sets[i], (size_t)(eq - sets[i]));
        name[eq - sets[i]] = '\0';
        if (!expand_get(&c->params, name) && !knobs_is(name))
            return err_set(c->e, BATON_EINVAL, "--set %s: %s has no parameter '%s'%s (see `baton topo %s`)",
                           sets[i], c->file, name, mf_param_hint(&c->params, name), c->file);
        if (expand_set(&c->params, name, eq + 1) < 0) return err_set(c->e, BATON_ENOMEM, "out of memory");
    }
    return 0;
}

/* A whole number in decimal, all of s (not 1e2, 0x10, 2.5 or 28abc). */
static int whole(const char *s, long long *v) {
    char *end;
    errno = 0;
    *v = strtoll(s, &end, 10);
    return end == s || *end || errno ? -1 : 0;
}

/* require: [{param: trays, min: 1, max: 18, why: "an NVL72 rack has 18
 * trays"}]: the values of a parameter the machine can have. A --set outside
 * them is an error at the rule's line, saying why, before anything is built
 * (an empty range or a fabric too small would name the symptom, not the cause). */
int mf_read_require(mfile_t *c, ynode_t *root) {
    static const char *const keys[] = {"param", "min", "max", "why", NULL};
    ynode_t *l = mf_get(c, root, "require");
    if (l == NULL) return 0;
    if (!ydoc_is_seq(l)) return mf_fail(c, l, "'require' is a list of {param: NAME, min: N, max: N, why: TEXT}", NULL, NULL);
    for (int i = 0; i < ydoc_len(l); i++) {
        ynode_t *r = ydoc_item(c->doc, l, i);
        if (!ydoc_is_map(r)) return mf_fail(c, r, "a requirement is {param: NAME, min: N, max: N, why: TEXT}", NULL, NULL);
        int rc = mf_only_keys(c, r, keys, "a requirement");
        if (rc < 0) return rc;
        const char *name = ydoc_scalar(mf_get(c, r, "param")), *why = ydoc_scalar(mf_get(c, r, "why")), *v = name ? expand_get(&c->params, name) : NULL;
        if (name == NULL) return mf_fail(c, r, "a requirement names its parameter (param: NAME)", NULL, NULL);
        if (v == NULL) return mf_fail(c, r, "require: no parameter '%s' in params", name, NULL);
        char *end, msg[512];
        long long x = strtoll(v, &end, 10), lo = LLONG_MIN, hi = LLONG_MAX;
        const char *smin = ydoc_scalar(mf_get(c, r, "min")), *smax = ydoc_scalar(mf_get(c, r, "max"));
        if ((smin && whole(smin, &lo) < 0) || (smax && whole(smax, &hi) < 0))
            return mf_fail(c, r, "require: min and max are whole numbers in decimal (min: 1, max: 28)", NULL, NULL);
        if (lo > hi) return mf_fail(c, r, "require: min %s is above max %s: no value could pass", smin, smax);
        if (end != v && *end == '\0' && x >= lo && x <= hi) continue;
        int n = hi == LLONG_MAX ? snprintf(msg, sizeof msg, "%s=%s: %s must be a whole number, at least %lld", name, v, name, lo)
                                : snprintf(msg, sizeof msg, "%s=%s: %s must be a whole number in %lld..%lld", name, v, name, lo, hi);
        if (why && n > 0 && (size_t)n < sizeof msg) snprintf(msg + n, sizeof msg - (size_t)n, ": %s", why);
        return mf_fail(c, r, "%s", msg, NULL);
    }
    return 0;
}
