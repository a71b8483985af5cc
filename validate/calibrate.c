/* calibrate.c - the fit: its parameters and bounds, residuals, the plan it keeps or reads, cross-validation,
 * the fit's text, what a fit covered (seen:) and what it cannot stand for (unphysical). */
#include "calibrate.h"

#include "logplan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../models/fit.h"
#include "../util/par.h"

/* A weak pull of every parameter towards the file's value, in log units:
 * where one log cannot tell two parameters apart (a ring's lockstep shows
 * only its slowest link; adding and moving take turns) the fit keeps the
 * file's split instead of any split. 0.05 costs as much as a 5 % error per
 * factor e, so what the data do pin still moves. Chosen by held-out error
 * (`make fidelity`, medians over 16 logs; docs/decisions/calibration-bounds.md): 0.02 left the
 * middle third of the sizes 13.5 % off when fitted without them, 0.05 10.2 %
 * with cross-validation (5.5 %) and the top sizes (5.9 %) as good; 0.07 and
 * 0.1 held the top sizes worse (7.3 %, 7.4 %). */
#define PRIOR 0.05
#define NOISE_FLOOR 0.01     /* no model is better than 1 %: the standard errors' floor */

typedef struct {
    topo_t *m[CAL_MAX_MACHINES];      /* the fit's machine, then the samples' other machines */
    int nm;
    const cal_req_t *q;
    const cal_sample_t *s;
    int n, used;
    proto_cost_t base[CAL_MAX_MACHINES][PROTO_COUNT];   /* each machine's protocols before fitting */
    cal_fit_t *f;
    baton_err_t *e;
    const char **plan_algo;           /* each sample's algorithm and protocol on the file's values */
    proto_t *plan_proto;
    int pinned;                       /* 1: fit with the samples on that plan */
    long trials;                      /* residual evaluations so far (the simulator's progress) */
} fit_ctx_t;

/* Is sample i one the fit uses: not held out? */
static int fitted(const fit_ctx_t *c, int i) { return !c->s[i].held_out; }

/* The bounded coordinate: log x runs over [log lo, log hi] as theta runs
 * over the real line. */
static double sigm(double th) { return 1 / (1 + exp(-th)); }
static double to_x(const cal_param_t *p, double th) {
    if (p->kept) return p->given;
    return exp(log(p->lo) + (log(p->hi) - log(p->lo)) * sigm(th));
}
/* The coordinate of log x, kept eps inside the bounds (theta is infinite on them). */
static double logit_of(const cal_param_t *p, double lx, double eps) {
    double u = (lx - log(p->lo)) / (log(p->hi) - log(p->lo));
    u = u < eps ? eps : u > 1 - eps ? 1 - eps : u;
    return log(u / (1 - u));
}
static double to_theta(const cal_param_t *p, double x) { return logit_of(p, log(x), 0.02); }   /* starts just inside */

static void add(cal_fit_t *f, cal_kind_t kind, int which, const char *cls, const char *name, double given, double lo,
                double hi) {
    if (f->k == CAL_MAX_PARAMS) return;
    cal_param_t *p = &f->p[f->k++];
    *p = (cal_param_t){.kind = kind, .which = which, .value = given, .given = given, .lo = lo, .hi = hi, .seen = 1};
    snprintf(p->cls, sizeof p->cls, "%s", cls ? cls : "");
    snprintf(p->name, sizeof p->name, "%s", name);
}

/* The parameters this machine and rule have: a class's efficiency for each
 * class of link present, the links' latency (without protocols), the
 * reduction rate (when it
 * costs; with protocols, NCCL's model has no latency but theirs: a link
 * latency factor beside them could only trade places with them), each
 * protocol's latency (those the rule can use), and, if asked,
 * LL's and LL128's efficiency (better in sample, worse on held-out sizes of
 * the shared logs: docs/decisions/calibration-bounds.md). */
/* A class efficiency for each class of link any machine has (a one-node
 * log's machine has no fabric; the two-node one's does); under NCCL's
 * socket transport not a NIC's links, whose rate is the TCP streams' (the
 * socket stream rate is fitted instead: layout). */
static void layout_classes(fit_ctx_t *c, int *fabric, int *spine) {
    char cls[24], name[48];
    for (int j = 0; j < c->nm; j++) {
        topo_t *t = c->m[j];
        for (int l = 0; l < topo_nlinks(t); l += 2) {
            topo_link_class(t, l, cls, sizeof cls);
            int known = 0;
            *spine |= !strcmp(cls, "switch-switch");
            for (int i = 0; i < c->f->k; i++) known |= c->f->p[i].kind == CAL_LINK_EFF && !strcmp(c->f->p[i].cls, cls);
            if (known || !strcmp(cls, "switch-switch") || (topo_params_c(t)->socket && strstr(cls, "nic")) ||
                topo_node(t, topo_dlink(t, l)->src)->hidden ||
                topo_node(t, topo_dlink(t, l)->dst)->hidden) continue;
            if (!strcmp(cls, "nic-switch")) *fabric = c->f->k;
            snprintf(name, sizeof name, "%s efficiency", cls);
            add(c->f, CAL_LINK_EFF, 0, cls, name, topo_class_efficiency(t, cls), 0.02, 1);
        }
    }
}

static void layout(fit_ctx_t *c) {
    topo_params_t *tp = topo_params(c->m[0]);
    char name[48];
    int fabric = -1, spine = 0;
    if (!c->f->links_kept) layout_classes(c, &fabric, &spine);
    if (fabric >= 0) {          /* the fabric: NIC to leaf and leaf to spine together, also where the logs'
                                   nodes share one switch (Polaris's 2 and 8 nodes on one router): the
                                   machine the file is then asked about at 128 nodes crosses its
                                   switch-switch links, which the fit would otherwise leave at the file's */
        strcpy(c->f->p[fabric].cls2, "switch-switch");
        strcpy(c->f->p[fabric].name, "network efficiency");
        c->f->p[fabric].given2 = topo_class_efficiency(c->m[0], "switch-switch");
    } else if (spine)
        add(c->f, CAL_LINK_EFF, 0, "switch-switch", "switch-switch efficiency", topo_class_efficiency(c->m[0], "switch-switch"), 0.02, 1);
    if (tp->no_protocols || c->q->proto == PROTO_NONE)      /* else the protocols' latencies carry it, as in NCCL's model */
        add(c->f, CAL_LINK_LAT, 0, NULL, "link latency x", tp->lat_scale, 0.1 * tp->lat_scale, 10 * tp->lat_scale);
    if (tp->reduce_bw > 0 && (tp->no_protocols || c->q->proto == PROTO_NONE))
        add(c->f, CAL_REDUCE, 0, NULL, "reduction rate", tp->reduce_bw, 0.05 * tp->reduce_bw, 20 * tp->reduce_bw);
    if (!tp->p2p && tp->stage_bw > 0)       /* P2P off: NCCL's staging rate; at most PCIe 5 x16's line rate */
        add(c->f, CAL_STAGE, 0, NULL, "staging rate", tp->stage_bw, 0.05 * tp->stage_bw, 63e9);
    if (!tp->p2p && tp->stage_bw > 0 && tp->stage_lat > 0)   /* a host round trip or ten */
        add(c->f, CAL_STAGE_LAT, 0, NULL, "staging step latency", tp->stage_lat, 0.5e-6, 50e-6);
    if (tp->socket)                         /* one TCP stream: a slow host's .. a 200 Gb/s NIC's */
        add(c->f, CAL_SOCKET, 0, NULL, "socket stream rate", tp->socket_bw, 0.25e9, 25e9);
    if (tp->ll_scan > 0 && !tp->no_protocols && (c->q->proto == RUN_PROTO_AUTO || c->q->proto == PROTO_LL))
        add(c->f, CAL_LL_SCAN, 0, NULL, "LL proxy scan", tp->ll_scan, 0.2e-9, 500e-9);   /* a cached read .. a remote miss */
    if (topo_rdzv_lat(c->m[0]) > 0)         /* a NIC's round trip .. a host thread's wake-up */
        add(c->f, CAL_RDZV, 0, NULL, "rendezvous latency", tp->rdzv_lat, 0.5e-6, 100e-6);
    for (int j = PROTO_LL; j < PROTO_COUNT && !tp->no_protocols; j++) {
        if (c->q->proto != RUN_PROTO_AUTO && c->q->proto != j) continue;
        snprintf(name, sizeof name, "%s latency x", proto_name((proto_t)j));
        add(c->f, CAL_PROTO_LAT, j, NULL, name, 1, 0.1, 10);
    }
    int eff = c->q->fit_efficiency || c->f->links_kept;
    for (int j = PROTO_LL; eff && c->q->proto == RUN_PROTO_AUTO && j < PROTO_SIMPLE && !tp->no_protocols; j++) {
        snprintf(name, sizeof name, "%s efficiency", proto_name((proto_t)j));
        add(c->f, CAL_PROTO_EFF, j, NULL, name, tp->proto[j].efficiency, 0.1, 1);
    }
    for (int k = 0; k < tp->lib.nrules && !tp->no_protocols; k++) {   /* a library kernel's own ceiling */
        const topo_lib_rule_t *r = &tp->lib.rule[k];
        if (r->max_busbw <= 0) continue;
        snprintf(name, sizeof name, "%s %s ceiling", r->algo, proto_name((proto_t)r->proto));
        add(c->f, CAL_LIB_CAP, k, NULL, name, r->max_busbw, 0.2 * r->max_busbw, 5 * r->max_busbw);
    }
}

/* The spine's efficiency under the fabric's fitted x. Moved: by the same
 * factor as the NICs, at most the line rate (a file's NIC below its spine,
 * as Polaris's 0.732 for what a NIC carries from GPU memory, is the NIC's
 * own, not the fabric's); kept or unseen: the file's own. */
static double fabric_spine(const cal_param_t *p, double x) {
    if (!p->seen || p->kept || !(p->given > 0)) return p->given2;
    return fmin(1, x * p->given2 / p->given);
}

/* Put the values x[] into machine j. */
static int apply_one(fit_ctx_t *c, int j, const double *x) {
    topo_t *t = c->m[j];
    topo_params_t *tp = topo_params(t);
    const proto_cost_t *base = c->base[j];
    memcpy(tp->proto, base, sizeof c->base[j]);
    for (int i = 0; i < c->f->k; i++) {
        const cal_param_t *p = &c->f->p[i];
        switch (p->kind) {
        case CAL_LINK_EFF:
            if (topo_set_class_efficiency(t, p->cls, x[i], c->e) < 0) return -1;
            if (p->cls2[0] && topo_set_class_efficiency(t, p->cls2, fabric_spine(p, x[i]), c->e) < 0)
                return -1;
            break;
        case CAL_LINK_LAT: tp->lat_scale = x[i]; break;
        case CAL_REDUCE: tp->reduce_bw = x[i]; break;
        case CAL_STAGE: tp->stage_bw = x[i]; break;
        case CAL_STAGE_LAT: tp->stage_lat = x[i]; break;
        case CAL_LL_SCAN: tp->ll_scan = x[i]; break;
        case CAL_RDZV: tp->rdzv_lat = x[i]; break;
        case CAL_SOCKET:
            if (topo_set_socket_bw(t, x[i], c->e) < 0) return -1;
            break;
        case CAL_PROTO_LAT:
            tp->proto[p->which].msg_latency = base[p->which].msg_latency * x[i];
            tp->proto[p->which].base_latency = base[p->which].base_latency * x[i];
            break;
        case CAL_PROTO_EFF: tp->proto[p->which].efficiency = x[i]; break;
        case CAL_LIB_CAP:
            if (p->which < tp->lib.nrules) tp->lib.rule[p->which].max_busbw = x[i];
            break;
        }
    }
    return 0;
}

/* Put the values x[] into every machine. */
static int apply_x(fit_ctx_t *c, const double *x) {
    for (int j = 0; j < c->nm; j++)
        if (apply_one(c, j, x) < 0) return -1;
    return 0;
}

static int apply(fit_ctx_t *c, const double *th) {
    double x[CAL_MAX_PARAMS];
    for (int i = 0; i < c->f->k; i++) x[i] = to_x(&c->f->p[i], th[i]);
    return apply_x(c, x);
}

/* Sample i's time while fitting: on its plan when pinned, else on the plan
 * the values being tried give it. */
static int fit_predict(const fit_ctx_t *c, int i, double *t, baton_err_t *e) {
    if (!c->pinned) return cal_predict(c->m[0], c->q, &c->s[i], t, NULL, NULL, e);
    cal_req_t q = *c->q;
    q.algo = c->plan_algo[i];
    q.proto = (int)c->plan_proto[i];
    q.cut = strcmp(c->q->algo, "nccl") ? RUN_CUT_ALGO : RUN_CUT_SIZED;   /* sized as NCCL runs it, as the plan was */
    return cal_predict(c->m[0], &q, &c->s[i], t, NULL, NULL, e);
}

typedef struct {
    const fit_ctx_t *c;
    const int *idx;           /* the fitted samples */
} resid_ctx_t;

static int fit_predict_one(void *ctx, int j, void *out, baton_err_t *e) {
    const resid_ctx_t *r = ctx;
    return fit_predict(r->c, r->idx[j], out, e);
}

/* Relative errors of the fitted samples (the simulator's over q->jobs
 * workers), then the pulls towards the file. */
static int resid(const double *th, double *r, void *ctx) {
    fit_ctx_t *c = ctx;
    int j = 0, *idx = malloc(((size_t)c->n + 1) * sizeof *idx);
    double *t = malloc(((size_t)c->n + 1) * sizeof *t);
    resid_ctx_t rx = {.c = c, .idx = idx};
    int ok = idx && t ? 0 : err_set(c->e, BATON_ENOMEM, "out of memory");
    for (int i = 0; ok == 0 && i < c->n; i++)
        if (fitted(c, i)) idx[j++] = i;
    if (ok == 0 && apply(c, th) < 0) ok = -1;
    if (ok == 0) ok = par_map(j, sizeof *t, t, fit_predict_one, &rx, c->q->des ? c->q->jobs : 1, c->e);
    for (int m = 0; ok == 0 && m < j; m++) r[m] = (t[m] - c->s[idx[m]].meas_s) / c->s[idx[m]].meas_s;
    for (int i = 0; ok == 0 && i < c->f->k; i++) r[j + i] = PRIOR * (log(to_x(&c->f->p[i], th[i])) - log(c->f->p[i].given));
    if (ok == 0 && c->q->des && c->q->progress) c->q->progress(c->q->progress_ctx, ++c->trials, j);
    free(idx);
    free(t);
    return ok < 0 ? -1 : 0;
}

/* The same in log x (for the standard errors: the bounded coordinate's
 * slope vanishes at a bound, log x's does not). */
static int resid_log(const double *lx, double *r, void *ctx) {
    fit_ctx_t *c = ctx;
    double th[CAL_MAX_PARAMS];
    for (int i = 0; i < c->f->k; i++) th[i] = logit_of(&c->f->p[i], lx[i], 1e-12);
    return resid(th, r, ctx);
}

/* From the file's values, from a start a factor e^0.5 lower in the
 * latencies and higher in the rates, and from one the other way (the model
 * is piecewise: the fastest algorithm and protocol change with the
 * parameters; the p4d log on a 50 Gb/s cluster-a100 needs the third,
 * docs/decisions/calibration-bounds.md); or, given `from` (coordinates), from there only; the
 * lowest MAPE (on the plan the values give, as predictions will be made)
 * wins, into *mape. */
static int fit_starts(fit_ctx_t *c, int starts, const double *from, double *best, double *mape) {
    double best_mape = -1;
    for (int j = 0; j < (from ? 1 : starts); j++) {
        double th[CAL_MAX_PARAMS];
        for (int i = 0; i < c->f->k; i++) {
            const cal_param_t *p = &c->f->p[i];
            int lat = p->kind == CAL_LINK_LAT || p->kind == CAL_PROTO_LAT || p->kind == CAL_STAGE_LAT || p->kind == CAL_LL_SCAN ||
                      p->kind == CAL_RDZV;
            double shift = j == 0 ? 1 : (lat == (j == 1)) ? exp(-0.5) : exp(0.5);
            double x = p->given * shift;
            th[i] = from ? from[i] : to_theta(p, x < p->lo ? p->lo : x > p->hi ? p->hi : x);
        }
        baton_err_t fe = {0};
        if (fit_nls(c->used + c->f->k, c->f->k, th, resid, c, 1, &fe) < 0) continue;
        if (apply(c, th) < 0) return -1;
        double m = cal_mape(c->m[0], c->q, c->s, c->n, 0, 0, c->e);
        if (m >= 0 && (best_mape < 0 || m < best_mape)) { best_mape = m; memcpy(best, th, sizeof th); }
    }
    *mape = best_mape;
    return best_mape < 0 ? -1 : 0;
}

/* Which algorithm and protocol each sample runs on the file's values. */
static int plan_samples(fit_ctx_t *c) {
    c->plan_algo = calloc((size_t)c->n + 1, sizeof *c->plan_algo);
    c->plan_proto = calloc((size_t)c->n + 1, sizeof *c->plan_proto);
    cal_pred_t *p = calloc((size_t)c->n + 1, sizeof *p);
    int rc = c->plan_algo && c->plan_proto && p ? cal_predict_all(c->m[0], c->q, c->s, c->n, -1, p, c->e)
                                                : err_set(c->e, BATON_ENOMEM, "out of memory");
    for (int i = 0; rc == 0 && i < c->n; i++) c->plan_algo[i] = p[i].algo, c->plan_proto[i] = p[i].proto;
    free(p);
    return rc < 0 ? -1 : 0;
}

/* A link's efficiency is what Simple moves over it. LL and LL128 send flags
 * with the data and run at the pace of the GPU polling them, so sizes run
 * on them alone cannot tell a slow link from a slow protocol, and one
 * Simple size cannot tell the link from Simple's latency. With fewer than
 * two fitted sizes of 1 MiB or more on Simple (on the file's plan) the
 * links keep the file's efficiencies and LL's and LL128's are fitted
 * instead. Fitted on its sizes up to 64 MiB, 8 x A100's links went to 0.70
 * and its largest quarter came out 26 % slow; 5.0 % so (`make fidelity`,
 * top: the DGX-1 24.5 -> 9.4 %, p4d 81.5 -> 4.5 %; docs/decisions/calibration-bounds.md). */
static int links_unpinned(const fit_ctx_t *c) {
    if (c->q->nccl_model || c->q->proto != RUN_PROTO_AUTO || topo_params_c(c->m[0])->no_protocols || !c->plan_proto)
        return 0;
    int simple = 0;
    for (int i = 0; i < c->n; i++)
        simple += fitted(c, i) && c->s[i].bytes >= (1u << 20) && c->plan_proto[i] == PROTO_SIMPLE;
    return simple < 2;
}

/* NCCL's plan (algorithm and protocol per size) is NCCL's decision, not the
 * machine's: a fit free to change it can explain a time by a switch (a
 * reduce's LL sizes run as Simple at half Simple's latency) and then miss
 * the sizes it did not see. So fit once with every size on its plan on the
 * file's values and once free, and keep the first unless the free one is
 * better in sample by more than NOISE_FLOOR (a point of MAPE) or by half
 * (the plan on the file's values is then not the log's: EFA's ring where
 * the file plans a tree; a synthetic log made on other values, whose plan
 * the fit must find to give them back): docs/decisions/log-plan.md. */
static int des_fit(fit_ctx_t *c, double *th);
static int fit_plans(fit_ctx_t *c, double *th) {
    double pin_th[CAL_MAX_PARAMS], pin_mape = -1, free_mape = -1;
    if (c->q->des) return des_fit(c, th);
    if (!c->q->nccl_model) {
        c->pinned = 1;
        if (fit_starts(c, 3, NULL, pin_th, &pin_mape) < 0 && c->e->code) return -1;
    }
    c->pinned = 0;
    if (fit_starts(c, 3, NULL, th, &free_mape) < 0 && c->e->code) return -1;
    if (pin_mape < 0) return free_mape < 0 ? -1 : 0;
    c->f->replanned = free_mape >= 0 && (free_mape < pin_mape - 100 * NOISE_FLOOR || free_mape < pin_mape / 2);
    if (!c->f->replanned) {
        memcpy(th, pin_th, sizeof pin_th);
        c->pinned = 1;                         /* and the standard errors on that plan */
    }
    return 0;
}

/* The closed forms' fit, for the simulator's to start from. */
static int closed_start(fit_ctx_t *c, double *th) {
    cal_req_t closed = *c->q;
    const cal_req_t *des = c->q;
    closed.des = 0;
    c->q = &closed;
    int rc = fit_plans(c, th);
    c->q = des;
    return rc;
}

/* The simulator's fit: a log's evaluation simulates every size, every row
 * NCCL has within NCCL_SLACK of the fastest (8 x A100: 1.5 s, the
 * 16-rank H200 log: 15 s), so it does not search as the closed forms' does
 * (three starts, on the plan and free: 8 x A100 over 10 minutes). It starts
 * from the closed forms' fit or the file's values, whichever the simulator
 * finds better, from there only, each size pinned to the row and protocol
 * the simulator picks there, and keeps the start if the fit is no better
 * (the closed forms and the simulator part on the H200 logs' NVLS trees:
 * the closed fit's values simulate 12.3 % off, the file's 9.8 %). In
 * sample as the full search on the RTX 2080 Ti logs, 8.3 % on the H200's
 * as it after 828 s; 2 x RTX 2080 Ti 18.8 -> 0.24 s, 8 x A100 4.4 s, H200
 * 72 s (bench/bench_calibrate.sh; docs/decisions/calibration-simulator.md). */
static int des_fit(fit_ctx_t *c, double *th) {
    double start[CAL_MAX_PARAMS], from[CAL_MAX_PARAMS], file[CAL_MAX_PARAMS], at_start, at_file, fitted = -1;
    for (int i = 0; i < c->f->k; i++) file[i] = logit_of(&c->f->p[i], log(c->f->p[i].given), 1e-12);   /* as given */
    if (closed_start(c, start) < 0 && c->e->code) return -1;
    memcpy(from, start, sizeof start);
    if (apply(c, start) < 0 || (at_start = cal_mape(c->m[0], c->q, c->s, c->n, 0, 0, c->e)) < 0) return -1;
    if (apply(c, file) < 0 || (at_file = cal_mape(c->m[0], c->q, c->s, c->n, 0, 0, c->e)) < 0) return -1;
    if (at_file < at_start) {                      /* from just inside the bounds, as fit_starts starts */
        memcpy(start, file, sizeof file), at_start = at_file;
        for (int i = 0; i < c->f->k; i++) from[i] = to_theta(&c->f->p[i], c->f->p[i].given);
        c->f->replanned = 0;                       /* the plan is the file's values' */
    }
    free(c->plan_algo), free(c->plan_proto);
    if (apply(c, start) < 0 || plan_samples(c) < 0) return -1;
    c->pinned = 1;
    if (fit_starts(c, 1, from, th, &fitted) < 0 && c->e->code) return -1;
    if (fitted < 0 || fitted > at_start) memcpy(th, start, sizeof start);
    return 0;
}

/* Standard errors (in log x: relative), parameters no log depends on back
 * at the file's value, values at a bound flagged. Near a bound log x moves
 * the model only one way; the slope there is still the data's. */
static int judge(fit_ctx_t *c, double *th) {
    int k = c->f->k;
    double cov[CAL_MAX_PARAMS * CAL_MAX_PARAMS], norm[CAL_MAX_PARAMS], x[CAL_MAX_PARAMS], lx[CAL_MAX_PARAMS] = {0}, top = 0;
    for (int i = 0; i < k; i++) {
        const cal_param_t *p = &c->f->p[i];
        double u = sigm(th[i]);
        u = u < 0.001 ? 0.001 : u > 0.999 ? 0.999 : u;   /* a step inside the bound */
        lx[i] = log(p->lo) + (log(p->hi) - log(p->lo)) * u;
    }
    if (fit_covariance(c->used + k, c->used, k, lx, resid_log, c, NOISE_FLOOR, cov, norm, c->e) < 0) return -1;
    for (int i = 0; i < k; i++) top = fmax(top, norm[i]);
    for (int i = 0; i < k; i++) {
        cal_param_t *p = &c->f->p[i];
        double u = sigm(th[i]);
        if (p->kept) { x[i] = p->value = p->given; continue; }   /* its first judgement stands */
        p->rel_se = sqrt(fmax(cov[i * k + i], 0));
        p->seen = norm[i] > 1e-6 * top;
        p->value = p->seen ? to_x(p, th[i]) : p->given;
        p->at_bound = p->seen && (u < 0.005 || u > 0.995);
        x[i] = p->value;
    }
    return apply_x(c, x);
}

/* Fit (on the file's plan and free, the better kept) and judge the result. */
static int fit_and_judge(fit_ctx_t *c, double *th) {
    if (fit_plans(c, th) < 0) return c->e->code ? -1 : err_set(c->e, BATON_EINVAL, "the fit failed from every start");
    return judge(c, th);
}

/* Fit again with some values kept (keep_the_files), on the plan the first
 * fit chose (pinned or free), and judge: half the time of choosing again
 * (2 x 8 A100, 5 folds: 1.6 -> 1.0 s), cv within 0.8 points. */
static int refit_and_judge(fit_ctx_t *c, double *th) {
    double mape = -1, from[CAL_MAX_PARAMS];
    memcpy(from, th, sizeof from);                 /* the simulator's: from where its fit ended, only (des_fit) */
    if (fit_starts(c, 3, c->q->des ? from : NULL, th, &mape) < 0 && c->e->code) return -1;
    return mape < 0 ? err_set(c->e, BATON_EINVAL, "the fit failed from every start") : judge(c, th);
}

/* A link class's efficiency is the hardware's (as is the host's LL proxy
 * scan, which is kept the same way), and a calibrated machine
 * carries it to other node counts and NIC counts: it moves from the file's
 * value (itself measured, the machines' headers say where) only where the
 * data tell the two apart, by more than KEEP_SE standard errors (two: the
 * usual 95 % test). Else it is kept, and the fit runs again without it.
 * Measured (`make fidelity`): the 8 x 400G H200 fit left its network at
 * 0.86 +- 38 % (its top sizes, on NVLS, do not pin it) and the one-NIC log
 * it then predicted went 13.0 -> 18.2 %; kept, 13.0 %. Held out: MI355X's
 * middle third 14.2 -> 11.3 %, MI300X's 3.9 -> 6.2 %, the cv median 4.6 ->
 * 4.8 %. At one standard error the L40S x 4 fit without its middle third
 * moved the network to 0.43 +- 49 % on its 1-4 KiB sizes and missed the
 * middle by 14.9 %; at two, kept: 9.1 % (no other log moved). The protocols'
 * latencies are the model's, not the hardware's: always fitted (kept too,
 * the held-out medians lost: middle 8.7 -> 9.4 %). One at a bound is left
 * as it is, flagged. 1 if any was kept. */
#define KEEP_SE 2.0
static int keep_the_files(cal_fit_t *f) {
    int any = 0;
    for (int i = 0; i < f->k; i++) {
        cal_param_t *p = &f->p[i];
        int hardware = p->kind == CAL_LINK_EFF || p->kind == CAL_LL_SCAN || p->kind == CAL_SOCKET ||
                       p->kind == CAL_RDZV;   /* the links' and the host's */
        if (p->seen && !p->at_bound && hardware && fabs(log(p->value / p->given)) < KEEP_SE * p->rel_se)
            p->kept = 1, any = 1;
    }
    return any;
}

/* The fit before a plan read off the logs was tried on it. */
typedef struct {
    cal_fit_t f;
    double th[CAL_MAX_PARAMS];
    int pinned, nrules[CAL_MAX_MACHINES];
    const char **plan_algo;
    proto_t *plan_proto;
} fit_saved_t;

static void save_fit(const fit_ctx_t *c, const double *th, fit_saved_t *w) {
    w->f = *c->f, w->pinned = c->pinned, w->plan_algo = c->plan_algo, w->plan_proto = c->plan_proto;
    memcpy(w->th, th, sizeof w->th);
    for (int j = 0; j < c->nm; j++) w->nrules[j] = topo_params(c->m[j])->lib.nrules;
}

/* All as saved: the rules read dropped, the plan, the parameters and their values. */
static int restore_fit(fit_ctx_t *c, double *th, const fit_saved_t *w) {
    double x[CAL_MAX_PARAMS];
    if (c->plan_algo != w->plan_algo) free(c->plan_algo), free(c->plan_proto);
    for (int j = 0; j < c->nm; j++) topo_params(c->m[j])->lib.nrules = w->nrules[j];
    *c->f = w->f, c->pinned = w->pinned, c->plan_algo = w->plan_algo, c->plan_proto = w->plan_proto;
    memcpy(th, w->th, sizeof w->th);
    for (int i = 0; i < c->f->k; i++) x[i] = c->f->p[i].value;
    return apply_x(c, x);
}

/* Fit on the plan the rules read make (from the file's values): 1 if a
 * point better in sample than `was`, 0 if not, -1 on error. One start
 * first, cheap to drop; the whole fit only if that one is better already. */
static int fit_on_the_read_plan(fit_ctx_t *c, double *th, double was) {
    double trial[CAL_MAX_PARAMS], trial_mape = -1, better = was - 100 * NOISE_FLOOR;
    c->plan_algo = NULL, c->plan_proto = NULL, c->pinned = 1;
    if (plan_samples(c) < 0 || (fit_starts(c, 1, NULL, trial, &trial_mape) < 0 && c->e->code)) return -1;
    if (trial_mape < 0 || trial_mape > better) return 0;
    double now = fit_and_judge(c, th) < 0 ? -2 : cal_mape(c->m[0], c->q, c->s, c->n, 0, 0, c->e);
    return now < -1.5 ? -1 : now <= better;
}

/* Where another of NCCL's algorithms hits sizes the file's plan misses, the
 * log ran that algorithm (validate/logplan.h): add it as rules and fit
 * again, from the file's values, on the plan that now follows them; kept if
 * that is better in sample by a point or more, else all stays as it was (a
 * latency the fit mends is not a switch: the DGX-1's 2019 launches would
 * read as nccltree at 64-128 KiB). 8 x A100: 1-2 MiB on nccltree/LL and
 * 4-16 MiB on nccltree/LL128, where its fit had bent LL128's latency to x
 * 2.5 (in sample 6.5 -> 3.2 %, cross-validated 6.7 -> 5.7 %). */
static int fit_the_logs_plan(fit_ctx_t *c, double *th) {
    if (c->q->nccl_model) return 0;
    double x[CAL_MAX_PARAMS], was = cal_mape(c->m[0], c->q, c->s, c->n, 0, 0, c->e);   /* in sample, as fitted */
    fit_saved_t *w = was < -1.5 ? NULL : malloc(sizeof *w);
    if (was < -1.5) return -1;
    if (w == NULL) return err_set(c->e, BATON_ENOMEM, "out of memory");
    save_fit(c, th, w);
    for (int i = 0; i < c->f->k; i++) x[i] = c->f->p[i].given;
    int rc = apply_x(c, x);
    if (rc == 0) rc = logplan_read(c->m, c->nm, c->q, c->s, c->n, c->f->read, &c->f->nread, c->e);
    if (rc == 0 && c->f->nread) rc = fit_on_the_read_plan(c, th, was);
    if (rc == 0) rc = restore_fit(c, th, w);
    else if (c->plan_algo != w->plan_algo) free(w->plan_algo), free(w->plan_proto);   /* kept, or failed */
    free(w);
    return rc < 0 ? -1 : 0;
}

int cal_fit(topo_t *t, const cal_req_t *q, const cal_sample_t *s, int n, cal_fit_t *out, baton_err_t *e) {
    fit_ctx_t c = {.m = {t}, .nm = 1, .q = q, .s = s, .n = n, .f = out, .e = e};
    memset(out, 0, sizeof *out);
    for (int i = 0; i < n; i++) {                  /* the machines the samples run on */
        int j = 0;
        while (j < c.nm && s[i].machine && c.m[j] != s[i].machine) j++;
        if (s[i].machine == NULL || j < c.nm) continue;
        if (c.nm == CAL_MAX_MACHINES) return err_set(e, BATON_EINVAL, "more than %d node counts in one fit", CAL_MAX_MACHINES);
        c.m[c.nm++] = s[i].machine;
    }
    for (int j = 0; j < c.nm; j++) memcpy(c.base[j], topo_params(c.m[j])->proto, sizeof c.base[j]);
    for (int i = 0; i < n; i++) c.used += fitted(&c, i);
    out->used = c.used;
    double th[CAL_MAX_PARAMS] = {0};
    int rc = 0;
    if (c.used < 2)
        rc = err_set(e, BATON_EINVAL, "%d size%s to fit: give at least 2 (outside --hold-out)", c.used, c.used == 1 ? "" : "s");
    else if (!q->nccl_model && plan_samples(&c) < 0)
        rc = -1;
    if (rc == 0) {
        out->links_kept = links_unpinned(&c);
        layout(&c);
        rc = fit_and_judge(&c, th);
    }
    if (rc == 0 && keep_the_files(out)) rc = refit_and_judge(&c, th);   /* the rest again, those kept */
    if (rc == 0) rc = fit_the_logs_plan(&c, th);
    free(c.plan_algo);
    free(c.plan_proto);
    return rc < 0 ? rc : 0;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The q-quantile of sorted v[0..n) (linear between neighbours). */
static double quantile(const double *v, int n, double q) {
    double at = q * (n - 1);
    int i = (int)at;
    return i + 1 < n ? v[i] + (at - i) * (v[i + 1] - v[i]) : v[n - 1];
}

/* Where 90 % of the m signed errors v[] fell (sorted here; all of them with
 * fewer than 10). */
static void band_of(double *v, int m, double *lo, double *hi) {
    qsort(v, (size_t)m, sizeof *v, cmp_double);
    *lo = m < 10 ? v[0] : quantile(v, m, 0.05);
    *hi = m < 10 ? v[m - 1] : quantile(v, m, 0.95);
}

int cal_cross_validate(cal_fresh_fn fresh, void *ctx, const cal_req_t *q, cal_sample_t *s, int n, int k, cal_cv_t *out,
                       baton_err_t *e) {
    int m = 0, rc = 0, nl = 0, *idx = malloc(((size_t)n + 1) * sizeof *idx);
    double *errs = malloc(2 * ((size_t)n + 1) * sizeof *errs), *large = errs + n + 1, sum = 0;
    if (!idx || !errs) rc = err_set(e, BATON_ENOMEM, "out of memory");
    for (int i = 0; rc == 0 && i < n; i++)
        if (!s[i].held_out) idx[m++] = i;
    int K = k > m ? m : k;
    if (rc == 0 && m < 3)
        rc = err_set(e, BATON_EINVAL, "cross-validation (--cv %d) needs at least 3 sizes to fit, the logs give %d%s: "
                     "--cv 0 fits without it", k, m, n > m ? " outside --hold-out" : "");
    for (int f = 0; rc == 0 && f < K; f++) {
        topo_t *t = fresh(ctx, e);
        cal_fit_t fit;
        if (t == NULL) { rc = -1; break; }
        for (int j = f; j < m; j += K) s[idx[j]].held_out = 1;
        rc = cal_fit(t, q, s, n, &fit, e);
        for (int j = f; rc == 0 && j < m; j += K) {
            double p;
            if ((rc = cal_predict(t, q, &s[idx[j]], &p, NULL, NULL, e)) < 0) break;
            errs[j] = 100 * (p - s[idx[j]].meas_s) / s[idx[j]].meas_s;
            sum += fabs(errs[j]);
            if (s[idx[j]].bytes >= CAL_LARGE) large[nl++] = errs[j];
        }
        for (int j = f; j < m; j += K) s[idx[j]].held_out = 0;
        topo_free(t);
    }
    if (rc == 0) {
        *out = (cal_cv_t){.folds = K, .mape_pct = sum / m};
        band_of(errs, m, &out->band_lo_pct, &out->band_hi_pct);
        if (nl >= CAL_LARGE_MIN) band_of(large, nl, &out->large_lo_pct, &out->large_hi_pct);
    }
    free(idx);
    free(errs);
    return rc < 0 ? rc : 0;
}

/* The value in its unit: a share, a factor, or a rate. */
static int fmt_value(const cal_param_t *p, double v, char *b, size_t n) {
    if (p->kind == CAL_REDUCE || p->kind == CAL_STAGE || p->kind == CAL_LIB_CAP || p->kind == CAL_SOCKET)
        return snprintf(b, n, "%.4g GB/s", v / 1e9);
    if (p->kind == CAL_STAGE_LAT || p->kind == CAL_RDZV) return snprintf(b, n, "%.4g us", v * 1e6);
    if (p->kind == CAL_LL_SCAN) return snprintf(b, n, "%.4g ns", v * 1e9);
    return snprintf(b, n, "%.4g", v);
}

void cal_fit_text(const cal_fit_t *f, char *buf, size_t n) {
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < f->k && len < n; i++) {
        const cal_param_t *p = &f->p[i];
        char v[32], g[32];
        fmt_value(p, p->value, v, sizeof v);
        fmt_value(p, p->given, g, sizeof g);
        int w;
        if (!p->seen) w = snprintf(buf + len, n - len, "  %-24s %-12s no time in these logs depends on it: kept at the file's value\n", p->name, v);
        else if (p->kept)
            w = snprintf(buf + len, n - len, "  %-24s %-12s +- %5.1f %%   the logs do not tell it from the file's value: kept\n",
                         p->name, v, 100 * p->rel_se);
        else
            w = snprintf(buf + len, n - len, "  %-24s %-12s +- %5.1f %%   (file %s)%s%s\n", p->name, v, 100 * p->rel_se, g,
                         p->rel_se > 0.25 ? "  loosely pinned" : "",
                         p->at_bound ? "  AT ITS BOUND: the model lacks something these logs show" : "");
        if (w < 0) break;
        len += (size_t)w;
    }
}

static int cmp_bytes(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The seen entry of fitted sample x: its collective, rank count (a joint
 * fit's logs each at their own node count) and -g, its size. */
static topo_seen_t seen_of(const topo_t *t, const cal_sample_t *x) {
    int ranks = topo_nranks(x->machine ? x->machine : t), g = x->gpus_per_thread > 1 ? x->gpus_per_thread : 1;
    return (topo_seen_t){(int)x->coll, ranks, x->bytes, x->bytes, g};
}

static int same_key(const topo_seen_t *a, const topo_seen_t *b) {
    return a->coll == b->coll && a->ranks == b->ranks && a->gpus_per_thread == b->gpus_per_thread;
}

/* A run of fitted sizes ends where the next is more than SEEN_GAP times the
 * logs' own step beyond the last (the smallest ratio between neighbours: 2
 * for nccl-tests -f 2). The band is the cross-validation's, measured between
 * fitted neighbours (a fold leaves one size in K out); across a wider hole it
 * held for 53 % of the sizes, not 90 (scripts/band_coverage.sh: the middle
 * third held out), so a hole is outside what the logs saw. One size left out
 * of a -f 2 log (a gap of 4) is not a hole. */
#define SEEN_GAP 2.0

/* Add key's runs over the distinct sorted sizes v[0..m) to k, as room allows. */
static void add_runs(topo_calib_t *k, topo_seen_t key, const uint64_t *v, int m) {
    double step = 0;
    for (int i = 1; i < m; i++)
        if (step == 0 || (double)v[i] / v[i - 1] < step) step = (double)v[i] / v[i - 1];
    key.min = key.max = v[0];
    for (int i = 1; i <= m; i++) {
        if (i < m && (double)v[i] / v[i - 1] <= SEEN_GAP * step) continue;
        key.max = v[i - 1];
        if (k->nseen == TOPO_MAX_SEEN) return;      /* more than the record holds: those stay without a band */
        k->seen[k->nseen++] = key;
        if (i < m) key.min = v[i];
    }
}

void cal_record_seen(topo_calib_t *k, const topo_t *t, const cal_sample_t *s, int n) {
    uint64_t *v = malloc(((size_t)n + 1) * sizeof *v);
    if (v == NULL) return;                          /* no record: every size then keeps the band */
    for (int i = 0; i < n; i++) {
        topo_seen_t key = seen_of(t, &s[i]);
        int first = !s[i].held_out, m = 0;
        for (int j = 0; j < i && first; j++) {
            topo_seen_t other = seen_of(t, &s[j]);
            first = s[j].held_out || !same_key(&key, &other);
        }
        for (int j = i; j < n && first; j++) {
            topo_seen_t other = seen_of(t, &s[j]);
            if (!s[j].held_out && same_key(&key, &other)) v[m++] = s[j].bytes;
        }
        if (m == 0) continue;
        qsort(v, (size_t)m, sizeof *v, cmp_bytes);
        int d = 1;
        for (int j = 1; j < m; j++) if (v[j] != v[d - 1]) v[d++] = v[j];
        add_runs(k, key, v, d);
    }
    free(v);
}

/* --- a fit that stays physical ---------------------------------------- */

/* What a link class carrying less than half its rate stands for. */
static const char *link_mechanism(const cal_param_t *p) {
    if (strstr(p->cls, "nic") || strstr(p->cls, "switch-switch") || strstr(p->cls2, "switch-switch"))
        return "the network moves less than half its line rate: a transport the machine does not model "
               "(NCCL's TCP sockets when no RDMA plugin is loaded, staging through host memory without "
               "GPUDirect RDMA) or fewer or slower NICs than the file says";
    if (strstr(p->cls, "cpu"))
        return "PCIe carries less than half its rate: staging through host memory the machine does not "
               "model, or a root port shared more than the file says";
    return "links inside the node carry less than half their rate: the fit charges them with a cost "
           "that lies elsewhere (the network's transport or host staging, whose time the node's "
           "steps absorb) or the GPU kernel's own copy rate";
}

static const char *mechanism(const cal_param_t *p, int low) {
    switch (p->kind) {
    case CAL_LINK_EFF: return link_mechanism(p);
    case CAL_PROTO_EFF: return "the protocol moves less than half of what it carries: its kernel's rate, not the links";
    case CAL_PROTO_LAT:
    case CAL_LINK_LAT:
        return low ? "latencies at their floor: the machine's per-hop latencies are too high"
                   : "a per-message cost the model lacks (the network transport's software: NCCL's proxy "
                     "thread, TCP sockets, libfabric's rendezvous), or an algorithm NCCL did not run";
    case CAL_REDUCE: return "the reduction rate at its bound: the GPU's reduction kernel is not what limits these sizes";
    case CAL_STAGE:
    case CAL_STAGE_LAT: return "host staging at its bound: the host path is not what the machine says";
    case CAL_LIB_CAP: return "a library kernel's ceiling at its bound: another limit sets these sizes";
    case CAL_LL_SCAN: return "NCCL's LL proxy scan at its bound: small sizes pay a cost it is not";
    case CAL_SOCKET: return "a TCP stream's rate at its bound: the socket transport is not what limits these sizes";
    case CAL_RDZV: return "the rendezvous latency at its bound: the messages above the eager size pay a cost it is not";
    }
    return "the model lacks something these logs show";
}

int cal_unphysical(const cal_fit_t *f, char *why, size_t n, int *hard) {
    int count = 0;
    if (hard) *hard = 0;
    size_t w = 0;
    if (why && n) why[0] = 0;
    for (int i = 0; i < f->k; i++) {
        const cal_param_t *p = &f->p[i];
        int eff = p->kind == CAL_LINK_EFF || p->kind == CAL_PROTO_EFF;
        int low = p->seen && !p->kept && p->kind == CAL_LINK_EFF && p->value < CAL_MIN_EFFICIENCY;   /* LL's own is ~0.5 */
        int top = eff && p->value >= p->hi * 0.99;      /* an efficiency at 1: the line rate, physical */
        if (!low && !(p->at_bound && !top)) continue;
        count++;
        if (hard && low) ++*hard;
        int floor = p->value <= p->lo * 1.05;
        if (why && w < n)
            w += (size_t)snprintf(why + w, n - w, "  %s %.3g%s: %s\n", p->name, p->value,
                                  p->at_bound ? (floor ? " (at its lower bound)" : " (at its upper bound)")
                                              : " (below " "0.5" ")",
                                  mechanism(p, floor));
    }
    return count;
}
