/* cmd_validate_fit.c - what a calibration does around its fit: the sizes
 * held out of it, the cross-validation's folds, the check that the fitted
 * values are physical, and the calibrated machine written. Apart from the
 * command (cmd_validate.c): these are the steps a fit's result passes
 * through before it becomes a file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../topologies/find.h"
#include "../../topologies/topo_write.h"
#include "../../topologies/units.h"
#include "cmd_validate.h"

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* LO:HI into lo and hi (middle and top: 1 and nothing set, the logs'
 * sizes decide); -1 with e set when the spec is neither. */
static int hold_range(const char *spec, uint64_t *lo, uint64_t *hi, baton_err_t *e) {
    char lo_s[64], hi_s[64];
    const char *why, *colon = strchr(spec, ':');
    if (!strcmp(spec, "middle") || !strcmp(spec, "top")) return 1;
    if (!colon || (size_t)(colon - spec) >= sizeof lo_s || strlen(colon + 1) >= sizeof hi_s)
        return err_set(e, BATON_EINVAL, "--hold-out LO:HI (e.g. 1MiB:64MiB), middle or top, not '%s'", spec);
    memcpy(lo_s, spec, (size_t)(colon - spec));
    lo_s[colon - spec] = '\0';
    strcpy(hi_s, colon + 1);
    if (units_size(lo_s, lo, &why) < 0 || units_size(hi_s, hi, &why) < 0) return err_set(e, BATON_EINVAL, "--hold-out: %s", why);
    if (*lo > *hi) return err_set(e, BATON_EINVAL, "--hold-out %s: the first size is the smaller (LO:HI)", spec);
    return 0;
}

int cmd_val_hold_spec(const char *spec, baton_err_t *e) {
    uint64_t lo, hi;
    return hold_range(spec, &lo, &hi, e) < 0 ? -1 : 0;
}

int cmd_val_hold_out(const char *spec, cal_sample_t *s, int n, baton_err_t *e) {
    uint64_t lo = 0, hi = 0;
    int rc = hold_range(spec, &lo, &hi, e);
    if (rc < 0) return rc;
    if (rc == 1) {
        if (n < 4) return err_set(e, BATON_EINVAL, "--hold-out %s needs at least 4 sizes", spec);
        uint64_t *b = malloc(((size_t)n + 1) * sizeof *b);
        if (b == NULL) return err_set(e, BATON_ENOMEM, "out of memory");
        for (int i = 0; i < n; i++) b[i] = s[i].bytes;
        qsort(b, (size_t)n, sizeof *b, cmp_u64);
        int top = !strcmp(spec, "top");
        lo = b[top ? n - n / 4 : n / 3];
        hi = b[top ? n - 1 : n - 1 - n / 3];
        free(b);
    }
    int held = 0;
    for (int i = 0; i < n; i++) held += s[i].held_out = s[i].bytes >= lo && s[i].bytes <= hi;
    /* holding out nothing or everything would report an in-sample error, or none, as held out */
    if (held == 0) return err_set(e, BATON_EINVAL, "--hold-out %s: no size of the logs is in it", spec);
    if (held == n) return err_set(e, BATON_EINVAL, "--hold-out %s: every size of the logs is in it, none is left to fit", spec);
    return 0;
}

/* A fresh copy of the machine for each fold of the cross-validation. */
static topo_t *fresh_machine(void *ctx, baton_err_t *e) {
    const cmd_val_args_t *a = ctx;
    topo_t *t = cmd_load_topo(a->topo, a->sets.v, a->sets.n, e);
    char why[512];
    if (t && cmd_val_apply_tuner(a, t, why, sizeof why, e) < 0) { topo_free(t); return NULL; }
    if (t) cmd_val_apply_logged_plan(a, t, 1);
    return t;
}

int cmd_val_cross_validate(const cmd_val_args_t *a, const cal_req_t *q, cal_sample_t *s, int n, cmd_val_extra_t *x,
                           baton_err_t *e) {
    cal_cv_t cv = {0};
    int rc = cal_cross_validate(fresh_machine, (void *)a, q, s, n, a->cv, &cv, e);
    if (rc == 0) x->cv_mape = cv.mape_pct, x->band_lo = cv.band_lo_pct, x->band_hi = cv.band_hi_pct, x->folds = cv.folds,
                 x->large_lo = cv.large_lo_pct, x->large_hi = cv.large_hi_pct;
    return rc;
}

/* The date of the calibration record: $SOURCE_DATE_EPOCH when set (the
 * reproducible-builds convention: the same inputs, the same bytes), else today. */
static void record_date(char *buf, size_t n) {
    const char *env = getenv("SOURCE_DATE_EPOCH");
    time_t now = env && *env ? (time_t)strtoll(env, NULL, 10) : time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(buf, n, "%Y-%m-%d", &tm);
}

int cmd_val_write_calibrated(const cmd_val_args_t *a, const cal_req_t *q, topo_t *t, const cal_fit_t *f,
                             const cmd_val_extra_t *x, const cal_sample_t *s, int n, double mape, baton_err_t *e) {
    char base[4096], rel[4096], date[32], stem[256], comment[8192];
    topo_calib_t *k = &topo_params(t)->calib;
    if (!cmd_find_topo(a->topo, base, sizeof base)) return err_set(e, BATON_EIO, "%s: cannot find it again", a->topo);
    if (topo_find_ref(base, rel, sizeof rel) < 0) return err_set(e, BATON_EIO, "%s: cannot resolve its path", base);
    *k = (topo_calib_t){.present = 1, .mape_pct = mape, .cv_mape_pct = x->cv_mape, .band_lo_pct = x->band_lo,
                        .band_hi_pct = x->band_hi, .large_lo_pct = x->large_lo, .large_hi_pct = x->large_hi};
    snprintf(k->algo, sizeof k->algo, "%s", q->algo);
    snprintf(k->nccl, sizeof k->nccl, "%s", a->nccl);
    for (int i = 0; i < 2 && !a->env_mixed && a->env_logs; i++)       /* what the logs' NCCL was told */
        if (a->env[i][0]) snprintf(topo_params(t)->nccl_env[i], sizeof topo_params(t)->nccl_env[i], "%s", a->env[i]);
    cal_record_seen(k, t, s, n);
    snprintf(k->proto, sizeof k->proto, "%s", q->proto == RUN_PROTO_AUTO ? "auto" : proto_name((proto_t)q->proto));
    snprintf(k->model, sizeof k->model, "%s", cmd_val_model(a));
    if (a->des) snprintf(k->contention, sizeof k->contention, "%s", engine_contention_name((contention_t)a->contention));
    snprintf(stem, sizeof stem, "%s", strrchr(a->out, '/') ? strrchr(a->out, '/') + 1 : a->out);
    if (strrchr(stem, '.')) *strrchr(stem, '.') = '\0';
    if (topo_rename(t, stem) < 0) return err_set(e, BATON_ENOMEM, "out of memory");
    record_date(date, sizeof date);
    int len = snprintf(comment, sizeof comment, "%s calibrated by `baton calibrate` (%s%s%s, -a %s --proto %s%s).\n"
                       "Fitted on %d sizes (value, one standard error, the file's value):\n", topo_name(t), cmd_val_model(a),
                       a->des ? " --contention " : "", k->contention, k->algo, k->proto, a->channels > 1 ? ", --channels" : "",
                       f->used);
    cal_fit_text(f, comment + len, sizeof comment - (size_t)len);
    if (comment[strlen(comment) - 1] == '\n') comment[strlen(comment) - 1] = '\0';
    /* --channels C ran the fit: the file keeps it (channels=C among its params), or it would not answer as fitted */
    const char *sets[sizeof a->sets.v / sizeof a->sets.v[0] + 1];
    char chans[32];
    int nsets = 0;
    for (int i = 0; i < a->sets.n; i++)
        if (a->channels == 0 || strncmp(a->sets.v[i], "channels=", 9)) sets[nsets++] = a->sets.v[i];
    if (a->channels > 0) snprintf(chans, sizeof chans, "channels=%d", a->channels), sets[nsets++] = chans;
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    int rc = !out ? -1 : a->standalone ? topo_write_standalone(t, a->logs, a->nlogs, date, comment, out)
                                       : topo_write_overlay(t, rel, sets, nsets, a->logs, a->nlogs, date, comment, out);
    if (out && fclose(out) != 0) rc = -1;
    if (rc < 0) err_set(e, BATON_ENOMEM, "out of memory");
    else rc = cmd_write_file(a->out, text, size, e);
    free(text);
    return rc;
}

int cmd_val_judge_physical(const cmd_val_args_t *a, const cal_fit_t *f, baton_err_t *e) {
    char why[2048];
    int hard, k = cal_unphysical(f, why, sizeof why, &hard);
    if (k == 0) return 0;
    fprintf(stderr, "baton %s: the fit is not physical: %d value%s stand%s in for a mechanism the machine lacks:\n%s",
            cmd_val_name(a), k, k > 1 ? "s" : "", k > 1 ? "" : "s", why);
    if (!a->out || hard == 0 || a->unphysical_ok) {
        if (a->out && hard) fprintf(stderr, "baton %s: written anyway (--accept-unphysical)\n", cmd_val_name(a));
        return 0;
    }
    return err_set(e, BATON_EINVAL, "%s not written: %d link efficienc%s below %.1f hide%s a missing mechanism, and "
                   "the fit would predict wrong elsewhere (other sizes, other node counts); model the mechanism, or "
                   "--accept-unphysical to write it anyway", a->out, hard, hard > 1 ? "ies" : "y", CAL_MIN_EFFICIENCY,
                   hard > 1 ? "" : "s");
}
