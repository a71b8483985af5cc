/* mfile_calib.c - a calibrated machine's record (calibration:): how it was
 * fitted, how far off it was, and the collectives, rank counts and sizes
 * its logs covered (seen:), which bound where its error band holds. */
#include "mfile_calib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../algorithms/sched.h"
#include "expand.h"

/* seen: [{coll: allreduce, ranks: 16, min: 8, max: 8GiB, gpus_per_thread: 8}, ...]:
 * what the fitted sizes of a calibration covered (gpus_per_thread 1 if left out). */
static int read_seen(mfile_t *c, ynode_t *v, topo_calib_t *k) {
    static const char *const keys[] = {"coll", "ranks", "min", "max", "gpus_per_thread", NULL};
    if (!ydoc_is_seq(v)) return mf_fail(c, v, "'seen' is a list of {coll:, ranks:, min:, max:}", NULL, NULL);
    for (int it = 0; it < ydoc_len(v); it++) {
        ynode_t *e = ydoc_item(c->doc, v, it), *at = NULL;
        char s[MF_TEXT];
        if (k->nseen == TOPO_MAX_SEEN) return mf_fail(c, e, "more than 16 entries in 'seen'", NULL, NULL);
        int rc = ydoc_is_map(e) ? mf_only_keys(c, e, keys, "a 'seen' entry")
               : mf_fail(c, e, "a 'seen' entry is {coll:, ranks:, min:, max:}", NULL, NULL);
        int *coll = &k->seen[k->nseen].coll;
        if (rc == 0 && (rc = mf_need(c, e, "coll", s, &at)) == 0 && (*coll = coll_parse(s)) < 0)
            rc = mf_fail(c, at, "unknown collective '%s'", s, NULL);
        if (rc == 0 && (rc = mf_need(c, e, "ranks", s, &at)) == 0) rc = mf_get_int(c, at, "ranks", 1, &k->seen[k->nseen].ranks);
        if (rc == 0) rc = mf_get_size(c, e, "min", &k->seen[k->nseen].min);
        if (rc == 0) rc = mf_get_size(c, e, "max", &k->seen[k->nseen].max);
        if (rc == 0 && k->seen[k->nseen].min > k->seen[k->nseen].max) rc = mf_fail(c, e, "'min' is above 'max'", NULL, NULL);
        k->seen[k->nseen].gpus_per_thread = 1;
        if (rc == 0 && (at = mf_get(c, e, "gpus_per_thread")))
            rc = mf_get_int(c, at, "gpus_per_thread", 1, &k->seen[k->nseen].gpus_per_thread);
        if (rc < 0) return rc;
        k->nseen++;
    }
    return 0;
}

/* A band [low, high] (%) at key, into lo and hi (left as they are where absent). */
static int read_band(mfile_t *c, ynode_t *m, const char *key, double *lo_pct, double *hi_pct) {
    ynode_t *v = mf_get(c, m, key);
    if (v == NULL) return 0;
    const char *lo = ydoc_is_seq(v) && ydoc_len(v) == 2 ? ydoc_scalar(ydoc_item(c->doc, v, 0)) : NULL;
    const char *hi = lo ? ydoc_scalar(ydoc_item(c->doc, v, 1)) : NULL;
    char *e1 = NULL, *e2 = NULL;
    if (lo && hi) *lo_pct = strtod(lo, &e1), *hi_pct = strtod(hi, &e2);
    if (!lo || !hi || e1 == lo || *e1 || e2 == hi || *e2 || *lo_pct > *hi_pct)
        return mf_fail(c, v, "'%s' is [low, high]: the errors (%%) held-out sizes fell within", key, NULL);
    return 0;
}

/* calibration: {algo: nccl, proto: auto, model: closed, mape_pct: 3.2,
 * cv_mape_pct: 5.1, band_pct: [-6.1, 5.3], band_large_pct: [-4.0, 3.1],
 * seen: [...], logs: [...], date: ...}. */
int mf_read_calibration(mfile_t *c, ynode_t *root) {
    static const char *const keys[] = {"algo", "proto", "model", "contention", "mape_pct", "cv_mape_pct", "band_pct", "band_large_pct", "seen",
                                       "logs", "date", "nccl", NULL};
    ynode_t *m = mf_get(c, root, "calibration"), *v;
    topo_calib_t *k = &topo_params(c->t)->calib;
    int rc;
    if (m == NULL) return 0;
    if (!ydoc_is_map(m)) return mf_fail(c, m, "'calibration' is a mapping (algo:, proto:, model:, mape_pct:, ...)", NULL, NULL);
    if ((rc = mf_only_keys(c, m, keys, "a calibration record")) < 0) return rc;
    k->present = 1;
    const char *a = ydoc_scalar(mf_get(c, m, "algo")), *pr = ydoc_scalar(mf_get(c, m, "proto")), *mo = ydoc_scalar(mf_get(c, m, "model"));
    snprintf(k->algo, sizeof k->algo, "%s", a ? a : "");
    snprintf(k->proto, sizeof k->proto, "%s", pr ? pr : "");
    snprintf(k->model, sizeof k->model, "%s", mo ? mo : "");
    const char *co = (v = mf_get(c, m, "contention")) ? ydoc_scalar(v) : NULL;   /* the engine's names (sim/engine/engine.c
                                                     engine_contention_name): a machine is read below the engine */
    if (v && (co == NULL || strcmp(k->model, "des") || (strcmp(co, "fifo") && strcmp(co, "fair") && strcmp(co, "none"))))
        return mf_fail(c, v, "'contention' is the simulator's (model: des): fifo, fair or none", NULL, NULL);
    snprintf(k->contention, sizeof k->contention, "%s", co ? co : !strcmp(k->model, "des") ? "fifo" : "");
    const char *num[2] = {"mape_pct", "cv_mape_pct"};
    double *dst[2] = {&k->mape_pct, &k->cv_mape_pct};
    for (int i = 0; i < 2; i++) {
        const char *s = (v = mf_get(c, m, num[i])) ? ydoc_scalar(v) : NULL;
        char *end;
        if (v == NULL) continue;
        *dst[i] = s ? strtod(s, &end) : -1;
        if (s == NULL || end == s || *end || *dst[i] < 0) return mf_fail(c, v, "'%s' is a percentage", num[i], NULL);
    }
    if ((rc = read_band(c, m, "band_pct", &k->band_lo_pct, &k->band_hi_pct)) < 0 ||
        (rc = read_band(c, m, "band_large_pct", &k->large_lo_pct, &k->large_hi_pct)) < 0)
        return rc;
    const char *nv = (v = mf_get(c, m, "nccl")) ? ydoc_scalar(v) : NULL;
    if (v && (nv == NULL || strlen(nv) >= sizeof k->nccl))
        return mf_fail(c, v, "'nccl' is the logs' NCCL versions, at most 63 characters", NULL, NULL);
    snprintf(k->nccl, sizeof k->nccl, "%s", nv ? nv : "");
    k->nseen = 0, k->what_if[0] = '\0';            /* an overlay's record replaces its base's */
    return (v = mf_get(c, m, "seen")) ? read_seen(c, v, k) : 0;
}

/* A percentage in (0, 1000] at key k of map e. */
static int read_pct(mfile_t *c, ynode_t *e, const char *k, double *out) {
    ynode_t *v = mf_get(c, e, k);
    const char *s = v ? ydoc_scalar(v) : NULL;
    char *end = NULL;
    if (v == NULL) return mf_fail(c, e, "a fidelity band needs '%s' (a percentage)", k, NULL);
    *out = s ? strtod(s, &end) : 0;
    if (s == NULL || end == s || *end || !(*out > 0 && *out <= 1000))
        return mf_fail(c, v, "'%s' is a percentage above 0 (baton's error on the machine's logs)", k, NULL);
    return 0;
}

/* A band's rank bound k (a whole number >= 1), 0 where the band has none. */
static int read_ranks(mfile_t *c, ynode_t *band, const char *k, int *out) {
    ynode_t *v = mf_get(c, band, k);
    const char *s = v ? ydoc_scalar(v) : NULL;
    char *end;
    *out = 0;
    if (v == NULL) return 0;
    long x = s ? strtol(s, &end, 10) : 0;
    if (s == NULL || end == s || *end || x < 1 || x > TOPO_MAX_NODES)
        return mf_fail(c, v, "'%s' is a whole number of ranks, at least 1", k, NULL);
    *out = (int)x;
    return 0;
}

int mf_read_fidelity(mfile_t *c, ynode_t *root) {
    static const char *const keys[] = {"logs", "bands", NULL},
                             *const bkeys[] = {"coll", "socket", "min_ranks", "max_ranks", "large", "all", NULL};
    ynode_t *m = mf_get(c, root, "fidelity"), *l, *at = NULL;
    topo_fidelity_t *f = &topo_params(c->t)->fidelity;
    int rc;
    if (m == NULL) return 0;
    if (!ydoc_is_map(m)) return mf_fail(c, m, "'fidelity' is {logs: TEXT, bands: [{coll:, large:, all:}]}", NULL, NULL);
    if ((rc = mf_only_keys(c, m, keys, "a fidelity record")) < 0) return rc;
    char logs[MF_TEXT];
    if ((rc = mf_need(c, m, "logs", logs, &at)) < 0) return rc;
    size_t len = strlen(logs);
    if (len >= sizeof f->logs) return mf_fail(c, at, "'logs' names the logs in at most 159 characters", NULL, NULL);
    memcpy(f->logs, logs, len + 1);            /* fits: checked above (snprintf's truncation warning at -O1) */
    snprintf(f->machine, sizeof f->machine, "%s", topo_name(c->t));   /* before a file that extends it renames it */
    if (!(l = mf_get(c, m, "bands")) || !ydoc_is_seq(l) || ydoc_len(l) < 1 || ydoc_len(l) > TOPO_MAX_FIDELITY)
        return mf_fail(c, l ? l : m, "'bands' is a list of 1 to 12 {coll:, large:, all:}", NULL, NULL);
    for (int i = 0; i < ydoc_len(l); i++) {
        ynode_t *e = ydoc_item(c->doc, l, i);
        char s[MF_TEXT];
        if (!ydoc_is_map(e)) return mf_fail(c, e, "a fidelity band is {coll:, large:, all:}", NULL, NULL);
        if ((rc = mf_only_keys(c, e, bkeys, "a fidelity band")) < 0 || (rc = mf_need(c, e, "coll", s, &at)) < 0) return rc;
        if ((f->band[i].coll = coll_parse(s)) < 0) return mf_fail(c, at, "unknown collective '%s'", s, NULL);
        if ((rc = read_pct(c, e, "large", &f->band[i].large_pct)) < 0 || (rc = read_pct(c, e, "all", &f->band[i].all_pct)) < 0)
            return rc;
        ynode_t *sv = mf_get(c, e, "socket");
        const char *so = sv ? ydoc_scalar(sv) : NULL;
        f->band[i].socket = so ? expand_bool(so) : -1;
        if (sv && f->band[i].socket < 0) return mf_fail(c, sv, "'socket' is true or false (the band's transport)", NULL, NULL);
        if ((rc = read_ranks(c, e, "min_ranks", &f->band[i].min_ranks)) < 0 ||
            (rc = read_ranks(c, e, "max_ranks", &f->band[i].max_ranks)) < 0)
            return rc;
        if (f->band[i].max_ranks && f->band[i].max_ranks < f->band[i].min_ranks)
            return mf_fail(c, e, "a fidelity band's max_ranks is below its min_ranks", NULL, NULL);
    }
    f->n = ydoc_len(l);
    return 0;
}
