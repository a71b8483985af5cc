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

#define MAX_CLASSES 8                /* link classes fitted one by one (else one scale for all) */
#define MAX_PARAMS (MAX_CLASSES + 4)
/* A weak pull of each class's scale and of the reduction bandwidth towards
 * the file's values: one log of one collective pins only a mix of these
 * bandwidths (a ring's lockstep shows only its slowest link; adding and
 * moving take turns), and without the pull the fit returns any split of the
 * mix, e.g. reductions at the 1000x clamp. 0.02 costs as much as a 2 % error per
 * factor e, so what the data do pin moves freely. */
#define PRIOR 0.02

typedef struct {
    topo_t *t;
    const cal_req_t *q;
    const cal_sample_t *s;
    int n;
    proto_cost_t base[PROTO_COUNT];   /* the protocols before fitting */
    double reduce_bw;                 /* before fitting */
    int nclass;                       /* 0: one bw_scale; else per class (the simulator sees each link) */
    int *cls;                         /* per directed link: its class */
    double *bw0;                      /* per directed link: bandwidth before fitting */
    double given[MAX_PARAMS];         /* the start: the file's values */
    baton_err_t *e;
} fit_ctx_t;

/* A scale factor from its logarithm, kept within [1/1000, 1000]: outside
 * that the fit is fitting something the model does not have. */
static double scale(double th) { return exp(th < -6.9 ? -6.9 : th > 6.9 ? 6.9 : th); }

static int nbw(const fit_ctx_t *c) { return c->nclass ? c->nclass : 1; }

/* Residuals that pull towards the file: each link class and the reduction
 * bandwidth, which a log mixes with the links' (PRIOR). */
static int npriors(const fit_ctx_t *c) { return c->nclass + (c->reduce_bw > 0); }

/* theta: bandwidth (one, or one per link class), latency, reduction
 * bandwidth (when reductions cost), then (with protocols) protocol latency
 * and base latency, all as log scale factors. */
static int k_of(const fit_ctx_t *c) {
    int k = nbw(c) + 1 + (c->reduce_bw > 0);
    return c->q->proto == PROTO_NONE ? k : k + 2;
}

static void apply(fit_ctx_t *c, const double *th) {
    topo_params_t *p = topo_params(c->t);
    int b = nbw(c), k = k_of(c), i = b;
    if (c->nclass == 0) p->bw_scale = scale(th[0]);
    for (int l = 0; c->nclass && l < topo_nlinks(c->t); l += 2)
        topo_set_link_bw(c->t, l, c->bw0[l] * scale(th[c->cls[l]]), NULL);
    p->lat_scale = scale(th[i++]);
    if (c->reduce_bw > 0) p->reduce_bw = c->reduce_bw * scale(th[i++]);
    for (int j = 0; j < PROTO_COUNT; j++) {
        p->proto[j] = c->base[j];
        if (k > i) p->proto[j].msg_latency *= scale(th[i]);
        if (k > i + 1) p->proto[j].base_latency *= scale(th[i + 1]);
    }
}

static int resid(const double *th, double *r, void *ctx) {
    fit_ctx_t *c = ctx;
    int j = 0;
    apply(c, th);
    for (int i = 0; i < c->n; i++) {
        if (c->s[i].held_out) continue;
        double t;
        if (cal_predict(c->t, c->q, &c->s[i], &t, NULL, NULL, c->e) < 0) return -1;
        r[j++] = (t - c->s[i].meas_s) / c->s[i].meas_s;
    }
    for (int k = 0; k < c->nclass; k++) r[j++] = PRIOR * (th[k] - c->given[k]);
    if (c->reduce_bw > 0) r[j++] = PRIOR * (th[nbw(c) + 1] - c->given[nbw(c) + 1]);
    return 0;
}

/* Link classes: links with the file's same bandwidth and latency. With the
 * simulator each gets its own scale (NVLink and the network fit apart);
 * the closed forms see only the bottleneck, so they keep one. */
static int classes(fit_ctx_t *c, cal_fit_t *out) {
    int nl = topo_nlinks(c->t);
    c->cls = malloc(((size_t)nl + 1) * sizeof *c->cls);
    c->bw0 = malloc(((size_t)nl + 1) * sizeof *c->bw0);
    if (!c->cls || !c->bw0) return -1;
    for (int l = 0; l < nl; l += 2) {
        const topo_dlink_t *d = topo_dlink(c->t, l);
        int k = 0;
        while (k < out->nclasses && !(out->class_bw[k] == d->bw && out->class_lat[k] == d->lat)) k++;
        if (k == out->nclasses) {
            if (k == MAX_CLASSES) { out->nclasses = 0; break; }     /* too many: one scale */
            out->class_bw[k] = d->bw;
            out->class_lat[k] = d->lat;
            out->nclasses++;
        }
        c->cls[l] = c->cls[l + 1] = k;
        c->bw0[l] = c->bw0[l + 1] = d->bw;
    }
    c->nclass = c->q->des ? out->nclasses : 0;
    return 0;
}

/* Fit from a few starts (the model is piecewise: the fastest protocol and
 * algorithm change with the parameters) and keep the lowest MAPE. */
static int fit_starts(fit_ctx_t *c, int used, double *best) {
    static const double starts[4][3] = {{0, 0, 0}, {-1, 1, 1}, {1, -1, -1}, {-2, 2, 2}};   /* bw, latency, rest */
    int k = k_of(c), b = nbw(c);
    double best_mape = -1, *given = c->given;
    if (c->nclass == 0) given[0] = log(topo_params(c->t)->bw_scale);
    given[b] = log(topo_params(c->t)->lat_scale);
    for (int j = 0; j < 4; j++) {
        double th[MAX_PARAMS];
        for (int i = 0; i < k; i++) th[i] = given[i] + starts[j][i < b ? 0 : i == b ? 1 : 2];
        baton_err_t fe = {0};
        if (fit_nls(used + npriors(c), k, th, resid, c, 1, &fe) < 0) continue;
        apply(c, th);
        double m = cal_mape(c->t, c->q, c->s, c->n, 0, 0, c->e);
        if (m >= 0 && (best_mape < 0 || m < best_mape)) { best_mape = m; memcpy(best, th, sizeof th); }
        apply(c, given);
    }
    return best_mape < 0 ? -1 : 0;
}

int cal_fit(topo_t *t, const cal_req_t *q, const cal_sample_t *s, int n, cal_fit_t *out, baton_err_t *e) {
    fit_ctx_t c = {.t = t, .q = q, .s = s, .n = n, .e = e, .reduce_bw = topo_params(t)->reduce_bw};
    memset(out, 0, sizeof *out);
    memcpy(c.base, topo_params(t)->proto, sizeof c.base);
    int used = 0, rc = classes(&c, out), k = k_of(&c);
    for (int i = 0; i < n; i++) used += !s[i].held_out;
    double th[MAX_PARAMS] = {0};
    if (rc < 0) rc = err_set(e, BATON_ENOMEM, "out of memory");
    else if (used < k)            /* GSL needs at least as many residuals as parameters */
        rc = err_set(e, BATON_EINVAL, "%d size%s to fit %d parameters: give at least %d (outside --hold-out)",
                     used, used == 1 ? "" : "s", k, k);
    else if (fit_starts(&c, used, th) < 0) rc = err_set(e, BATON_EINVAL, "the fit failed from every start");
    if (rc == 0) {
        int b = nbw(&c), i = b + 1;
        apply(&c, th);
        out->nparams = k;
        out->bw_scale = c.nclass ? 1 : scale(th[0]);
        for (int j = 0; j < c.nclass; j++) out->class_scale[j] = scale(th[j]);
        if (c.nclass == 0) out->nclasses = 0;
        out->lat_scale = scale(th[b]);
        out->reduce_scale = c.reduce_bw > 0 ? scale(th[i++]) : 1;
        out->proto_lat_scale = k > i ? scale(th[i]) : 1;
        out->base_scale = k > i + 1 ? scale(th[i + 1]) : 1;
    }
    free(c.cls);
    free(c.bw0);
    return rc;
}

void cal_fit_text(const cal_fit_t *f, char *buf, size_t n) {
    int len = 0;
    if (f->nclasses == 0) len = snprintf(buf, n, "bw_scale %.4g", f->bw_scale);
    for (int i = 0; i < f->nclasses && len >= 0 && (size_t)len < n; i++)
        len += snprintf(buf + len, n - (size_t)len, "%s%.4g GB/s links x %.4g", i ? ", " : "", f->class_bw[i] / 1e9,
                        f->class_scale[i]);
    if (len >= 0 && (size_t)len < n)
        snprintf(buf + len, n - (size_t)len, ", lat_scale %.4g, reduction bandwidth x %.4g, protocol latency x %.4g, "
                 "base latency x %.4g", f->lat_scale, f->reduce_scale, f->proto_lat_scale, f->base_scale);
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
