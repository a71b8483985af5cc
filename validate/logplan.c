/* logplan.c - the plan a log shows (logplan.h). */
#include "logplan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sim/nccl/nccl.h"
#include "../topologies/units.h"

#define MAX_ROWS 64          /* NCCL's rows of every collective x protocols */

typedef struct {
    const algo_t *a;
    proto_t pr;
} row_t;

/* How far off the time of sample x is with request q: |model / measured - 1|,
 * or -1 where the row cannot run it. */
static double off_by(topo_t *t, const cal_req_t *q, const cal_sample_t *x) {
    baton_err_t quiet = {0};
    double time;
    if (cal_predict(t, q, x, &time, NULL, NULL, &quiet) < 0) return -1;
    return fabs(time / x->meas_s - 1);
}

/* The rows of NCCL's that might have run a sample: each algorithm NCCL has,
 * with each protocol NCCL runs it with on t. */
static int rows_of(topo_t *t, row_t *out) {
    int k = 0;
    for (const algo_t *const *a = algo_all(); *a; a++)
        for (int p = PROTO_LL; p <= PROTO_SIMPLE && (*a)->nccl; p++)
            if (k < MAX_ROWS && ncclrule_runs(t, *a, (proto_t)p, 0)) out[k++] = (row_t){*a, (proto_t)p};
    return k;
}

/* Sample x's errors on each row of NCCL's (err[j]) whose protocol is in
 * mask (bit per protocol) and collective is x's; -1 for the others and for
 * a row that cannot run it. */
static void errors(topo_t *t, const cal_req_t *q, const cal_sample_t *x, const row_t *rows, int k, unsigned mask,
                   double *err) {
    for (int j = 0; j < k; j++) {
        cal_req_t r = *q;
        r.algo = rows[j].a->name, r.proto = rows[j].pr, r.cut = RUN_CUT_SIZED;
        err[j] = rows[j].a->coll == x->coll && (mask >> rows[j].pr & 1) ? off_by(t, &r, x) : -1;
    }
}

/* Does row j explain sample i (logplan.h: near, and at most half the plan's error)? */
static int fits(const double *off, const double *err, int k, int i, int j) {
    double d = err[(size_t)i * k + j];
    return off[i] > LOGPLAN_OFF && d >= 0 && d <= LOGPLAN_NEAR && d <= off[i] / 2;
}

/* Do samples i and j (i before j) belong to one log, j a larger size? */
static int same_log(const cal_sample_t *i, const cal_sample_t *j) {
    return i->coll == j->coll && i->machine == j->machine && i->bytes < j->bytes;
}

/* A rule for samples first..last, on every machine with room. */
static void add_rule(topo_t *const *m, int nm, const cal_sample_t *first, const cal_sample_t *last, row_t r,
                     topo_lib_rule_t *out, int *nout) {
    topo_lib_rule_t x = {.coll = first->coll, .ranks = topo_whole_ranks(first->machine ? first->machine : m[0]),
                         .min = first->bytes, .max = last->bytes, .align = 1, .proto = r.pr};
    snprintf(x.algo, sizeof x.algo, "%s", r.a->name);
    for (int j = 0; j < nm; j++) {
        topo_library_t *l = &topo_params(m[j])->lib;
        if (l->nrules < TOPO_MAX_LIB_RULES) l->rule[l->nrules++] = x;
    }
    if (*nout < TOPO_MAX_LIB_RULES) out[(*nout)++] = x;
}

/* The fitted samples in order (held-out ones left out: they neither read
 * nor break a run), each log's sizes consecutive. */
static int fitted_order(const cal_sample_t *s, int n, int *idx) {
    int m = 0;
    for (int i = 0; i < n; i++) if (!s[i].held_out) idx[m++] = i;
    return m;
}

/* From the m fitted samples' errors: each run of consecutive sizes of one
 * log that one row explains, the longest first from each start (ties: the
 * row listed first), kept if two sizes or more. */
static void runs(topo_t *const *m, int nm, const cal_sample_t *s, const int *idx, int cnt, const row_t *rows, int k,
                 const double *off, const double *err, topo_lib_rule_t *out, int *nout) {
    for (int i = 0; i < cnt;) {
        int best = -1, len = 0;
        for (int j = 0; j < k; j++) {
            int l = 0;
            while (i + l < cnt && fits(off, err, k, i + l, j) && (l == 0 || same_log(&s[idx[i + l - 1]], &s[idx[i + l]])))
                l++;
            if (l > len) len = l, best = j;
        }
        if (len >= 2) add_rule(m, nm, &s[idx[i]], &s[idx[i + len - 1]], rows[best], out, nout);
        i += len >= 2 ? len : 1;
    }
}

/* The protocols NCCL may have run fitted sample i on: the plan's there and
 * at the sizes beside it in its log (a switch point a size off). */
static unsigned protocols_near(const cal_sample_t *s, const int *idx, int cnt, const proto_t *plan, int i) {
    unsigned mask = 1u << plan[i];
    if (i > 0 && same_log(&s[idx[i - 1]], &s[idx[i]])) mask |= 1u << plan[i - 1];
    if (i + 1 < cnt && same_log(&s[idx[i]], &s[idx[i + 1]])) mask |= 1u << plan[i + 1];
    return mask;
}

int logplan_read(topo_t *const *m, int nm, const cal_req_t *q, const cal_sample_t *s, int n, topo_lib_rule_t *out,
                 int *nout, baton_err_t *e) {
    *nout = 0;
    if (strcmp(q->algo, "nccl") || q->proto != RUN_PROTO_AUTO || q->des || q->nccl_model || n < 2) return 0;
    for (int i = 0; i < n; i++)
        if (s[i].nccl_algos || s[i].protos) return 0;    /* NCCL was told what to run: no plan to read */
    row_t rows[MAX_ROWS];
    int k = rows_of(m[0], rows), *idx = malloc((size_t)n * sizeof *idx), rc = 0, cnt = 0;
    double *off = malloc((size_t)n * sizeof *off), *err = malloc((size_t)n * (k ? k : 1) * sizeof *err);
    proto_t *plan = malloc((size_t)n * sizeof *plan);
    if (!idx || !off || !err || !plan) rc = err_set(e, BATON_ENOMEM, "out of memory");
    else cnt = fitted_order(s, n, idx);
    for (int i = 0; i < cnt && rc == 0; i++) {             /* the plan, and how far off it is */
        double t;
        if ((rc = cal_predict(m[0], q, &s[idx[i]], &t, NULL, &plan[i], e)) == 0) off[i] = fabs(t / s[idx[i]].meas_s - 1);
    }
    for (int i = 0; i < cnt && rc == 0; i++) {             /* the other rows where it misses */
        const cal_sample_t *x = &s[idx[i]];
        topo_t *on = x->machine ? x->machine : m[0];
        if (topo_library_rule(on, x->coll, topo_whole_ranks(on), x->bytes, -1, 1)) off[i] = 0;   /* a rule plans it */
        if (off[i] > LOGPLAN_OFF) errors(m[0], q, x, rows, k, protocols_near(s, idx, cnt, plan, i), &err[(size_t)i * k]);
    }
    if (rc == 0) runs(m, nm, s, idx, cnt, rows, k, off, err, out, nout);
    free(idx), free(off), free(err), free(plan);
    return rc < 0 ? -1 : 0;
}

void logplan_rule_text(const topo_lib_rule_t *r, char *buf, size_t n) {
    char lo[32], hi[32];
    units_fmt_size(r->min, lo, sizeof lo);
    units_fmt_size(r->max, hi, sizeof hi);
    int at = snprintf(buf, n, "%s%s/%s at %s%s%s", r->nccl ? "NCCL's " : "", r->algo, proto_name((proto_t)r->proto), lo,
                      r->max > r->min ? "-" : "", r->max > r->min ? hi : "");
    if (at >= 0 && (size_t)at < n && r->channels)
        at += snprintf(buf + at, n - (size_t)at, " on %d channel%s", r->channels, r->channels > 1 ? "s" : "");
    if (at >= 0 && (size_t)at < n) snprintf(buf + at, n - (size_t)at, " (%d ranks)", r->ranks);
}
