/* calibrate.c - predictions, the fit's residuals, and MAPE. */
#include "calibrate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../models/fit.h"

int cal_samples(const nt_log_t *log, cal_sample_t **out, int *n, baton_err_t *e) {
    *out = calloc((size_t)log->nrows + 1, sizeof **out);
    if (*out == NULL) return err_set(e, BATON_ENOMEM, "out of memory");
    *n = 0;
    for (int i = 0; i < log->nrows; i++) {
        const nt_row_t *r = &log->rows[i];
        double t = r->ip_us >= 0 ? (r->oop_us + r->ip_us) / 2 : r->oop_us;
        if (r->bytes == 0 || t <= 0) continue;            /* nothing was measured */
        (*out)[(*n)++] = (cal_sample_t){.coll = log->coll, .bytes = r->bytes, .meas_s = t * 1e-6, .line = r->line};
    }
    return 0;
}

int cal_predict(topo_t *t, const cal_req_t *q, const cal_sample_t *s, double *time_s, const char **algo,
                proto_t *proto, baton_err_t *e) {
    run_req_t r = {.coll = s->coll, .algo = q->algo, .bytes = s->bytes, .proto = q->proto, .predict = !q->des,
                   .opts = q->opts};
    run_out_t o;
    int rc = run_collective(t, &r, &o, e);
    if (rc < 0) return rc;
    *time_s = o.time_s;
    if (algo) *algo = o.algo->name;
    if (proto) *proto = o.proto;
    return 0;
}

typedef struct {
    topo_t *t;
    const cal_req_t *q;
    const cal_sample_t *s;
    int n;
    proto_cost_t base[PROTO_COUNT];   /* the protocols before fitting */
    double reduce_bw;                 /* before fitting */
    baton_err_t *e;
} fit_ctx_t;

/* A scale factor from its logarithm, kept within [1/1000, 1000]: outside
 * that the fit is fitting something the model does not have. */
static double scale(double th) { return exp(th < -6.9 ? -6.9 : th > 6.9 ? 6.9 : th); }

/* theta: bandwidth, latency, reduction bandwidth, then (with protocols)
 * protocol latency and base latency, all as log scale factors. */
static void apply(fit_ctx_t *c, const double *th, int k) {
    topo_params_t *p = topo_params(c->t);
    p->bw_scale = scale(th[0]);
    p->lat_scale = scale(th[1]);
    p->reduce_bw = c->reduce_bw * scale(th[2]);
    for (int i = 0; i < PROTO_COUNT; i++) {
        p->proto[i] = c->base[i];
        if (k > 3) p->proto[i].msg_latency *= scale(th[3]);
        if (k > 4) p->proto[i].base_latency *= scale(th[4]);
    }
}

static int k_of(const cal_req_t *q, const fit_ctx_t *c) {
    int k = c->reduce_bw > 0 ? 3 : 2;            /* free reductions have nothing to fit */
    return q->proto == PROTO_NONE ? k : 5;
}

static int resid(const double *th, double *r, void *ctx) {
    fit_ctx_t *c = ctx;
    apply(c, th, k_of(c->q, c));
    for (int i = 0, j = 0; i < c->n; i++) {
        if (c->s[i].held_out) continue;
        double t;
        if (cal_predict(c->t, c->q, &c->s[i], &t, NULL, NULL, c->e) < 0) return -1;
        r[j++] = (t - c->s[i].meas_s) / c->s[i].meas_s;
    }
    return 0;
}

int cal_fit(topo_t *t, const cal_req_t *q, const cal_sample_t *s, int n, cal_fit_t *out, baton_err_t *e) {
    fit_ctx_t c = {.t = t, .q = q, .s = s, .n = n, .e = e, .reduce_bw = topo_params(t)->reduce_bw};
    int used = 0, k = k_of(q, &c);
    memcpy(c.base, topo_params(t)->proto, sizeof c.base);
    for (int i = 0; i < n; i++) used += !s[i].held_out;
    if (used < k)                   /* GSL needs at least as many residuals as parameters */
        return err_set(e, BATON_EINVAL, "%d size%s to fit %d parameters: give at least %d (outside --hold-out)",
                       used, used == 1 ? "" : "s", k, k);
    /* The model is piecewise (the fastest protocol and algorithm change with
     * the parameters), so fit from a few starts and keep the best. */
    static const double starts[4][5] = {{0, 0, 0, 0, 0}, {-1, 1, 0, 1, 1}, {1, -1, 0, -1, -1}, {-2, 2, -1, 2, 0}};
    double best[5] = {0}, best_mape = -1, given[5] = {log(topo_params(t)->bw_scale), log(topo_params(t)->lat_scale), 0, 0, 0};
    for (int j = 0; j < 4; j++) {
        double th[5];
        for (int i = 0; i < 5; i++) th[i] = starts[j][i] + given[i];
        baton_err_t fe = {0};
        if (fit_nls(used, k, th, resid, &c, 1, &fe) < 0) continue;
        apply(&c, th, k);
        double m = cal_mape(t, q, s, n, 0, 0, e);
        if (m >= 0 && (best_mape < 0 || m < best_mape)) { best_mape = m; memcpy(best, th, sizeof best); }
        apply(&c, given, k);
    }
    if (best_mape < 0) return err_set(e, BATON_EINVAL, "the fit failed from every start");
    double *th = best;
    apply(&c, th, k);
    *out = (cal_fit_t){scale(th[0]), scale(th[1]), k > 3 ? scale(th[3]) : 1, k > 4 ? scale(th[4]) : 1, k,
                       k > 2 ? scale(th[2]) : 1};
    return 0;
}

double cal_mape(topo_t *t, const cal_req_t *q, const cal_sample_t *s, int n, int which, uint64_t min_bytes,
                baton_err_t *e) {
    double sum = 0;
    int m = 0;
    for (int i = 0; i < n; i++) {
        if ((which >= 0 && s[i].held_out != which) || s[i].bytes < min_bytes) continue;
        double p;
        if (cal_predict(t, q, &s[i], &p, NULL, NULL, e) < 0) return -2;
        sum += fabs(p - s[i].meas_s) / s[i].meas_s;
        m++;
    }
    return m ? 100 * sum / m : -1;
}
