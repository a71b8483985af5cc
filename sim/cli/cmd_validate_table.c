/* cmd_validate_table.c - what validate and calibrate print: the table of
 * every size (measured against predicted, busbw, the plan), each log's and
 * the whole MAPE, the fit with the sizes whose plan it moved, as text or
 * JSON. Apart from the command (cmd_validate.c) and the logs
 * (cmd_validate_logs.c): the output is read by people and scripts alike,
 * and its form is one concept. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../topologies/units.h"
#include "../../validate/logplan.h"
#include "../answer/report.h"
#include "cmd_validate.h"

/* Did the fit move sample i's plan (algorithm or protocol) from the one
 * the file's values give? */
static int moved(const cmd_val_extra_t *x, int i) {
    return x->before && x->after && (strcmp(x->before[i].algo, x->after[i].algo) || x->before[i].proto != x->after[i].proto);
}

/* Where sample j continues sample i's run of moved sizes: the same log,
 * moved the same way. */
static int same_move(const cmd_val_extra_t *x, int i, int j) {
    return x->file_of[i] == x->file_of[j] && !strcmp(x->before[i].algo, x->before[j].algo) &&
           x->before[i].proto == x->before[j].proto && !strcmp(x->after[i].algo, x->after[j].algo) &&
           x->after[i].proto == x->after[j].proto;
}

/* The sizes whose plan the fit moved: "SIZE[-SIZE]: from -> to" a line, a
 * run of sizes moved alike together (the log's name first when the table
 * has several); their count. */
static int print_moved(const cmd_val_extra_t *x, const cal_sample_t *s, int n, int nlogs) {
    int k = 0;
    for (int i = 0, j; i < n; i = j) {
        for (j = i + 1; j < n && moved(x, i) && moved(x, j) && same_move(x, i, j);) j++;
        if (!moved(x, i)) continue;
        char lo[32], hi[32];
        const char *base = strrchr(x->file_of[i], '/');
        units_fmt_size(s[i].bytes, lo, sizeof lo);
        units_fmt_size(s[j - 1].bytes, hi, sizeof hi);
        printf("        %s%s%s%s%s: %s/%s -> %s/%s\n", nlogs > 1 ? (base ? base + 1 : x->file_of[i]) : "",
               nlogs > 1 ? " " : "", lo, j - 1 > i ? "-" : "", j - 1 > i ? hi : "", x->before[i].algo,
               proto_name(x->before[i].proto), x->after[i].algo, proto_name(x->after[i].proto));
        k += j - i;
    }
    return k;
}

static void json_moved(const cmd_val_extra_t *x, const cal_sample_t *s, int n) {
    char esc[1024];
    printf(",\"replanned_sizes\":[");
    for (int i = 0, k = 0; i < n; i++)
        if (moved(x, i))
            printf("%s{\"log\":\"%s\",\"line\":%d,\"bytes\":%llu,\"from_algorithm\":\"%s\",\"from_protocol\":\"%s\","
                   "\"algorithm\":\"%s\",\"protocol\":\"%s\"}", k++ ? "," : "", report_json_escape(x->file_of[i], esc, sizeof esc),
                   s[i].line, (unsigned long long)s[i].bytes, x->before[i].algo, proto_name(x->before[i].proto),
                   x->after[i].algo, proto_name(x->after[i].proto));
    printf("]");
}

static void json_extra(const cmd_val_extra_t *x) {
    printf(",\"plan_logged_sizes\":%d", x->logged);
    if (x->args) cmd_val_json_said(x->args);
    if (x->cv_mape >= 0) printf(",\"cv_folds\":%d,\"cv_mape_pct\":%.4f,\"band_pct\":[%.4f,%.4f]", x->folds, x->cv_mape, x->band_lo, x->band_hi);
    if (x->cv_mape >= 0 && x->large_lo < x->large_hi) printf(",\"band_large_pct\":[%.4f,%.4f]", x->large_lo, x->large_hi);
    if (x->fit == NULL) return;
    printf(",\"replanned\":%s,\"links_kept\":%s,\"parameters\":[", x->fit->replanned ? "true" : "false",
           x->fit->links_kept ? "true" : "false");
    for (int i = 0; i < x->fit->k; i++) {
        const cal_param_t *p = &x->fit->p[i];
        printf("%s{\"name\":\"%s\",\"value\":%.9g,\"given\":%.9g,\"rel_se\":%.6g,\"seen\":%s,\"kept\":%s,\"at_bound\":%s,\"low\":%.9g,\"high\":%.9g}",
               i ? "," : "", p->name, p->value, p->given, p->rel_se, p->seen ? "true" : "false", p->kept ? "true" : "false",
               p->at_bound ? "true" : "false",
               p->lo, p->hi);
    }
    printf("]");
    printf(",\"plan_read\":[");
    for (int i = 0; i < x->fit->nread; i++) {
        const topo_lib_rule_t *r = &x->fit->read[i];
        printf("%s{\"coll\":\"%s\",\"ranks\":%d,\"min\":%llu,\"max\":%llu,\"algorithm\":\"%s\",\"protocol\":\"%s\"}",
               i ? "," : "", coll_name((coll_t)r->coll), r->ranks, (unsigned long long)r->min, (unsigned long long)r->max,
               r->algo, proto_name((proto_t)r->proto));
    }
    printf("]");
}

/* One row of the table: the model's time for sample x, and where NCCL's
 * TUNING lines planned it, what -a nccl alone would have (*agree counts
 * the same). */
static int table_row(topo_t *t, const cal_req_t *q, const cal_sample_t *x, const cal_pred_t *pred, const char *file,
                     int json, int first, int *agree, baton_err_t *e) {
    int ranks = topo_nranks(x->machine ? x->machine : t);
    double factor = run_busbw_factor(x->coll, ranks) * (double)x->bytes / 1e9;   /* busbw = factor / time */
    double p = pred->time_s;
    const char *algo = pred->algo, *ga;
    proto_t pr = pred->proto, gp;
    char sz[32], m[32], pp[32], guess[64] = "";
    int said = tuningplan_guess(t, q, x, &ga, &gp, e), same = said > 0 && tuningplan_same(x->coll, algo, pr, ga, gp);
    if (said < 0) return -1;
    if (said) snprintf(guess, sizeof guess, "%s/%s", ga, proto_name(gp));
    *agree += same;
    double err = 100 * (p - x->meas_s) / x->meas_s;
    if (json) {
        char esc[8192];
        printf("%s{\"log\":\"%s\",\"line\":%d,\"collective\":\"%s\",\"bytes\":%llu,\"measured_s\":%.9g,\"predicted_s\":%.9g,"
               "\"error_pct\":%.4f,\"measured_busbw_GBps\":%.6g,\"predicted_busbw_GBps\":%.6g,\"ranks\":%d,"
               "\"algorithm\":\"%s\",\"protocol\":\"%s\",\"held_out\":%s,\"disturbed\":%s%s%s%s}",
               first ? "" : ",", report_json_escape(file, esc, sizeof esc), x->line, coll_name(x->coll), (unsigned long long)x->bytes, x->meas_s, p, err,
               factor / x->meas_s, p > 0 ? factor / p : 0, ranks, algo, proto_name(pr), x->held_out ? "true" : "false", x->disturbed ? "true" : "false",
               said ? ",\"nccl_said\":true,\"guess\":\"" : "", guess, said ? "\"" : "");
        return 0;
    }
    units_fmt_size(x->bytes, sz, sizeof sz);
    units_fmt_time(x->meas_s, m, sizeof m);
    units_fmt_time(p, pp, sizeof pp);
    if (first) printf("%s (%s on %d ranks)\n", file, coll_name(x->coll), ranks);   /* a log's rows under its name */
    printf("%10s %12s %12s %+7.1f%%  %14.4g  %15.4g  %s/%s%s%s%s%s%s%s\n", sz, m, pp, err, factor / x->meas_s,
           p > 0 ? factor / p : 0, algo, proto_name(pr), said ? " (NCCL's)" : "", said && !same ? " [-a nccl alone: " : "", said && !same ? guess : "",
           said && !same ? "]" : "", x->held_out ? "  (held out)" : "", x->disturbed ? "  (*)" : "");
    return 0;
}

/* Each log's own MAPE (file_of[i]: row i's log; cmd_val_load() puts one
 * log's rows together); their count, at most max. */
typedef struct { const char *file; double mape; int sizes; } val_log_mape_t;
static int per_log(const cal_sample_t *s, const cal_pred_t *p, int n, const char **file_of, val_log_mape_t *out, int max) {
    int k = 0;
    for (int i = 0, j; i < n && k < max; i = j) {
        for (j = i + 1; j < n && file_of[j] == file_of[i]; j++) {}
        out[k++] = (val_log_mape_t){.file = file_of[i], .mape = cal_mape_of(s + i, p + i, j - i, -1, 0), .sizes = j - i};
    }
    return k;
}

int cmd_val_table(topo_t *t, const cal_req_t *q, const cal_sample_t *s, int n, const char **file_of, int json,
                  cmd_val_extra_t *x, double *fitted, baton_err_t *e) {
    cal_pred_t *p = malloc(((size_t)n + 1) * sizeof *p);    /* each size once: the simulator's take seconds */
    if (p == NULL) return err_set(e, BATON_ENOMEM, "out of memory");
    if (cal_predict_all(t, q, s, n, -1, p, e) < 0) { free(p); return e->code ? e->code : BATON_EINVAL; }
    double all = cal_mape_of(s, p, n, -1, 0), big = cal_mape_of(s, p, n, -1, 64ull << 20), held = cal_mape_of(s, p, n, 1, 0);
    *fitted = cal_mape_of(s, p, n, 0, 0);
    int disturbed = 0, agree = 0;
    if (!json)
        printf("error = (predicted - measured) / measured: + means the model is slower than measured, - faster\n"
               "busbw: nccl-tests' bus bandwidth in GB/s, size / time x 2(p-1)/p for all-reduce, (p-1)/p for\n"
               "       all-gather, reduce-scatter and all-to-all, 1 otherwise\n"
               "%10s %12s %12s %8s  %14s  %15s  %s\n", "size", "measured", "predicted", "error", "busbw measured",
               "busbw predicted", "model");
    else {
        char esc[512];
        printf("{\"topology\":\"%s\",\"ranks\":%d,\"error\":\"(predicted - measured) / measured: + means the model "
               "is slower\",\"rows\":[", report_json_escape(topo_name(t), esc, sizeof esc), topo_nranks(t));
    }
    for (int i = 0; i < n; i++) {
        int first = json ? i == 0 : i == 0 || file_of[i] != file_of[i - 1];   /* text: a log's heading */
        if (table_row(t, q, &s[i], &p[i], file_of[i], json, first, &agree, e) < 0) { free(p); return e->code; }
        disturbed += s[i].disturbed;
    }
    val_log_mape_t logs[64];
    int nl = per_log(s, p, n, file_of, logs, 64);
    free((void *)x->after);
    x->after = p;                                 /* the plan the fit gives, beside x->before's */
    if (json) {
        printf("],\"mape_pct\":%.4f,\"mape_large_pct\":%s", all, big >= 0 ? "" : "null");
        if (big >= 0) printf("%.4f", big);
        if (held >= 0) printf(",\"mape_held_out_pct\":%.4f", held);
        printf(",\"logs\":[");
        for (int j = 0; j < nl; j++) {
            char esc[1024];
            printf("%s{\"log\":\"%s\",\"sizes\":%d,\"mape_pct\":%.4f}", j ? "," : "",
                   report_json_escape(logs[j].file, esc, sizeof esc), logs[j].sizes, logs[j].mape);
        }
        printf("]");
        printf(",\"plan_guessed_same\":%d", agree);
        json_extra(x);
        if (x->fit && x->before) json_moved(x, s, n);
        printf("}\n");
        return 0;
    }
    if (disturbed)
        printf("(*) the faster of the log's two columns: the other ran the same transfers more than a fifth slower\n");
    for (int j = 0; nl > 1 && j < nl; j++)
        printf("%s: MAPE %.2f %% over %d sizes\n", logs[j].file, logs[j].mape, logs[j].sizes);
    printf("MAPE %.2f %% over %d sizes", all, n);
    if (big >= 0) printf(", %.2f %% for sizes >= 64 MiB", big);
    if (held >= 0) printf(", %.2f %% on the held-out sizes", held);
    printf("\n");
    if (x->logged)
        printf("plan: NCCL's own at %d size%s, as the logs' TUNING lines say (NCCL_DEBUG_SUBSYS=TUNING), where -a nccl "
               "alone plans %d the same; -a nccl's elsewhere\n", x->logged, x->logged > 1 ? "s" : "", agree);
    return 0;
}

void cmd_val_print_fit(const cmd_val_args_t *a, const cal_fit_t *f, const cmd_val_extra_t *x, const cal_sample_t *s, int n) {
    char fit[4096];
    int count = 0;
    cal_fit_text(f, fit, sizeof fit);
    printf("fitted on %d sizes (value, one standard error, the file's value):\n%s", f->used, fit);
    for (int i = 0; i < n; i++) count += moved(x, i);
    if (f->replanned && count)
        printf("plan: the fit moved NCCL's algorithm or protocol at %d size%s (a point or more better in\n"
               "      sample than keeping the plan the file's values give), from the file's to the fit's:\n",
               count, count > 1 ? "s" : "");
    else printf(f->replanned ? "plan: the fit moved NCCL's algorithm or protocol at some sizes (a point or more better in\n"
                               "      sample than keeping the plan the file's values give)\n"
                             : "plan: kept, each size on the algorithm and protocol the file's values give\n");
    if (f->replanned) print_moved(x, s, n, a->nlogs);
    if (x->forced)
        printf("      at %d size%s, within what the logs' NCCL_ALGO and NCCL_PROTO left NCCL (nothing read off\n"
               "      the times there)\n", x->forced, x->forced > 1 ? "s" : "");
    if (f->nread) printf("      read off the logs where -a nccl plans another (written as library rules):\n");
    for (int i = 0; i < f->nread; i++) {
        char rule[128];
        logplan_rule_text(&f->read[i], rule, sizeof rule);
        printf("        %s\n", rule);
    }
    if (f->links_kept)
        printf("links: kept at the file's efficiencies; fewer than two fitted sizes of 1 MiB or more ran Simple,\n"
               "       and LL's and LL128's sizes cannot tell a slow link from a slow protocol (their\n"
               "       efficiencies were fitted instead)\n");
    if (x->cv_mape >= 0)
        printf("cross-validated (%d folds): MAPE %.2f %% on sizes each fit did not see; 90 %% of errors within "
               "[%+.1f %%, %+.1f %%]\n", x->folds, x->cv_mape, x->band_lo, x->band_hi);
    if (x->cv_mape >= 0 && x->large_lo < x->large_hi)
        printf("  at sizes >= 64 MiB alone within [%+.1f %%, %+.1f %%]: the band predict gives those sizes\n", x->large_lo,
               x->large_hi);
    fflush(stdout);                               /* warnings after the table, not inside it */
    int bound = 0;
    for (int i = 0; i < f->k; i++)
        if (f->p[i].at_bound)
            bound = 1, fprintf(stderr, "baton %s: warning: %s ends at its bound (%g): the model lacks something "
                               "these logs show, or the file's value is off\n", cmd_val_name(a),
                               f->p[i].name, f->p[i].value);
    if ((bound || f->nread) && x->logged == 0 && cmd_val_follows_logs(a))   /* a plan question the times cannot settle */
        fprintf(stderr, "baton %s: hint: run nccl-tests with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING and the log "
                "says which algorithm NCCL ran at each size; baton then follows it instead of guessing\n",
                cmd_val_name(a));
}
