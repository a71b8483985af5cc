/* calsample.c - a log's rows as samples, the model's prediction of each,
 * and how far off (calsample.h). */
#include "calsample.h"

#include "../sim/nccl/nccl.h"

#include <math.h>
#include <stdlib.h>

#include "../util/par.h"

/* A row's time, in us: the mean of the two columns, except where they run
 * the same transfers (all-reduce, broadcast, reduce: in place only changes
 * which buffer is written) and differ by more than DISTURBED: then the
 * smaller, since a disturbed run is slower and never faster. The 2080 Ti
 * broadcast's 1 MiB took 288 us in place against 114 out of place, the
 * 8 x 400G H200's 16 MiB 304 us out of place against 208. Differences of
 * a few per cent either way are the runs' noise and are averaged. Where in
 * place skips work (all-gather, reduce-scatter, all-to-all leave the rank's
 * own block where it is; out of place copies it), always the mean. */
#define DISTURBED 1.2
static double row_time(coll_t coll, const nt_row_t *r, int *disturbed) {
    *disturbed = 0;
    if (r->ip_us < 0) return r->oop_us;
    double lo = r->ip_us < r->oop_us ? r->ip_us : r->oop_us, hi = r->ip_us + r->oop_us - lo;
    int same = coll == COLL_ALLREDUCE || coll == COLL_BROADCAST || coll == COLL_REDUCE;
    *disturbed = same && hi > DISTURBED * lo;
    return *disturbed ? lo : (lo + hi) / 2;
}

int cal_samples(const nt_log_t *log, cal_sample_t **out, int *n, baton_err_t *e) {
    *out = calloc((size_t)log->nrows + 1, sizeof **out);
    if (*out == NULL) return err_set(e, BATON_ENOMEM, "out of memory");
    *n = 0;
    for (int i = 0; i < log->nrows; i++) {
        const nt_row_t *r = &log->rows[i];
        int disturbed;
        double t = row_time(log->coll, r, &disturbed);
        if (r->bytes == 0 || t <= 0) continue;            /* nothing was measured */
        (*out)[(*n)++] = (cal_sample_t){.coll = log->coll, .bytes = r->bytes, .meas_s = t * 1e-6, .line = r->line,
                                          .gpus_per_thread = log->graph ? 1 : log->gpus_per_thread,
                                          .disturbed = disturbed,
                                          .nccl_algos = log->env_algo.mask, .protos = log->env_proto.mask};
    }
    return 0;
}

int cal_predict_checked(topo_t *t, const cal_req_t *q, const cal_sample_t *s, double *time_s, const char **algo,
                        proto_t *proto, double *sim_s, baton_err_t *e) {
    run_req_t r = {.coll = s->coll, .algo = q->algo, .bytes = s->bytes, .proto = q->proto, .predict = !q->des,
                   .opts = q->opts, .gpus_per_thread = s->gpus_per_thread, .contention = (contention_t)q->contention,
                   .cut = q->cut, .unsaid = q->unsaid,
                   .nccl_algos = s->nccl_algos, .protos = s->protos};      /* as the log's NCCL was told */
    run_out_t o;
    if (s->machine) t = s->machine;
    int rc = q->nccl_model ? plan_run(t, &r, &o, e) : run_collective(t, &r, &o, e);
    if (rc < 0) return rc;
    *time_s = o.time_s;
    if (algo) *algo = o.algo->name;
    if (proto) *proto = o.proto;
    if (sim_s) {
        run_check_t c = {0};
        *sim_s = 0;
        if (r.predict && !q->nccl_model && !topo_fold_ranks(t) && run_check_table_cheap(&o) &&
            run_check_row(t, &r, &o, &c) == BATON_ENOMEM)
            return err_set(e, BATON_ENOMEM, "out of memory");
        if (c.state == RUN_CHECK_DONE && c.beyond) *sim_s = c.sim_s;
    }
    engine_result_free(&o.eng);
    return 0;
}

int cal_predict(topo_t *t, const cal_req_t *q, const cal_sample_t *s, double *time_s, const char **algo,
                proto_t *proto, baton_err_t *e) {
    return cal_predict_checked(t, q, s, time_s, algo, proto, NULL, e);
}

typedef struct {
    topo_t *t;
    const cal_req_t *q;
    const cal_sample_t *s;
    const int *idx;           /* the samples to predict */
} some_ctx_t;

static int predict_one(void *ctx, int i, void *out, baton_err_t *e) {
    const some_ctx_t *c = ctx;
    cal_pred_t *p = out;
    return cal_predict(c->t, c->q, &c->s[c->idx[i]], &p->time_s, &p->algo, &p->proto, e);
}

int cal_predict_all(topo_t *t, const cal_req_t *q, const cal_sample_t *s, int n, int which, cal_pred_t *out,
                    baton_err_t *e) {
    int *idx = malloc(((size_t)n + 1) * sizeof *idx), m = 0;
    cal_pred_t *got = malloc(((size_t)n + 1) * sizeof *got);
    some_ctx_t c = {.t = t, .q = q, .s = s, .idx = idx};
    int rc = idx && got ? 0 : err_set(e, BATON_ENOMEM, "out of memory");
    for (int i = 0; rc == 0 && i < n; i++) {
        out[i] = (cal_pred_t){.time_s = -1};
        if (which < 0 || s[i].held_out == which) idx[m++] = i;
    }
    if (rc == 0) rc = par_map(m, sizeof *got, got, predict_one, &c, q->des ? q->jobs : 1, e);   /* the simulator's over workers */
    for (int j = 0; rc == 0 && j < m; j++) out[idx[j]] = got[j];
    free(idx);
    free(got);
    return rc < 0 ? rc : 0;
}

double cal_mape_of(const cal_sample_t *s, const cal_pred_t *p, int n, int which, uint64_t min_bytes) {
    double sum = 0;
    int m = 0;
    for (int i = 0; i < n; i++) {
        if ((which >= 0 && s[i].held_out != which) || s[i].bytes < min_bytes || p[i].time_s < 0) continue;
        sum += fabs(p[i].time_s - s[i].meas_s) / s[i].meas_s;
        m++;
    }
    return m ? 100 * sum / m : -1;
}

double cal_mape(topo_t *t, const cal_req_t *q, const cal_sample_t *s, int n, int which, uint64_t min_bytes,
                baton_err_t *e) {
    cal_pred_t *p = malloc(((size_t)n + 1) * sizeof *p);
    int rc = p ? cal_predict_all(t, q, s, n, which, p, e) : err_set(e, BATON_ENOMEM, "out of memory");
    double mape = rc < 0 ? -2 : cal_mape_of(s, p, n, which, min_bytes);
    free(p);
    return mape;
}
