/* calsample.h - a log's rows as samples, the model's prediction of each,
 * and how far off: what validate reports and what a fit (calibrate.h)
 * moves the machine against.
 *
 * Apart from the fit so that what reads a log's plan for the fit
 * (logplan.h), and validate's and doctor's reports, stand on the samples
 * and predictions without the fit: the arrows run calibrate -> logplan ->
 * calsample. The cal_ prefix is calibration's, as in calibrate.h. */
#ifndef BATON_CALSAMPLE_H
#define BATON_CALSAMPLE_H

#include "../sim/answer/run.h"
#include "nccltests.h"

typedef struct cal_sample {
    coll_t coll;
    uint64_t bytes;
    double meas_s;            /* the row's time: out of place and in place together (cal_samples) */
    int line;
    int held_out;             /* 1: not used by the fit (predicted afterwards) */
    int disturbed;            /* 1: the row's two columns ran the same transfers and one was more
                                 than a fifth slower: meas_s is the faster (cal_samples) */
    int gpus_per_thread;      /* the log's -g: launches one host thread makes in turn */
    unsigned nccl_algos;      /* what the log's NCCL_ALGO and NCCL_PROTO left NCCL (run_req_t; 0: all) */
    unsigned protos;
    topo_t *machine;          /* NULL: the fit's machine; else the same file at the log's
                                 node count (a joint fit over several node counts: every
                                 fitted value goes into each such machine too) */
} cal_sample_t;

typedef struct cal_req {
    const char *algo;         /* a name or "auto" */
    int proto;                /* PROTO_* or RUN_PROTO_AUTO */
    int des;                  /* 1: predict with the simulator (fits then scale each link class) */
    int contention;           /* the simulator's contention_t (CONTENTION_FIFO by default) */
    int nccl_model;           /* 1: predict with NCCL's own cost model (sim/nccl/plan.h) */
    algo_opts_t opts;         /* channels etc. */
    int fit_efficiency;       /* 1: fit LL's and LL128's efficiency too */
    run_cut_t cut;            /* how a row NCCL runs is cut (run_req_t; RUN_CUT_SIZED: as NCCL runs it) */
    int unsaid;               /* 1: rules read off NCCL's TUNING lines do not count (run_req_t) */
    int jobs;                 /* the simulator's sizes over this many worker processes (util/par.h;
                                 0 or 1: one at a time); the closed forms always run in one */
    void (*progress)(void *ctx, long trials, int sizes);   /* the simulator's fit: after each trial
                                 (every fitted size simulated once more); NULL: nothing */
    void *progress_ctx;
} cal_req_t;

/* The samples of a log (one per row). A row's time is the mean of its two
 * columns, or the smaller where they run the same transfers (all-reduce,
 * broadcast, reduce) and differ by more than a fifth: a disturbed run. */
int cal_samples(const nt_log_t *log, cal_sample_t **out, int *n, baton_err_t *e);

/* The model's time for one sample on t; algo/proto get what was used. */
int cal_predict(topo_t *t, const cal_req_t *q, const cal_sample_t *s, double *time_s, const char **algo,
                proto_t *proto, baton_err_t *e);

/* cal_predict's closed form, and in *sim_s the simulator's time for the
 * same row where predict would print it beside the formula (run_check:
 * approximate there, and beyond the band), else 0; checked only where a
 * table's row stays cheap (run_check_table_cheap: a log has dozens). */
int cal_predict_checked(topo_t *t, const cal_req_t *q, const cal_sample_t *s, double *time_s, const char **algo,
                        proto_t *proto, double *sim_s, baton_err_t *e);

/* Each of the samples' predictions (cal_predict), the simulator's over
 * q->jobs workers: one cal_pred_t per sample, or only those with held_out ==
 * which (which >= 0; the others' time_s is -1). */
typedef struct cal_pred {
    double time_s;
    const char *algo;         /* the catalogue's name (static) */
    proto_t proto;
} cal_pred_t;
int cal_predict_all(topo_t *t, const cal_req_t *q, const cal_sample_t *s, int n, int which, cal_pred_t *out,
                    baton_err_t *e);

/* The mean absolute percentage error of predictions p (cal_predict_all) over
 * the samples with held_out == which (all when which < 0) and bytes >=
 * min_bytes; -1 if none. */
double cal_mape_of(const cal_sample_t *s, const cal_pred_t *p, int n, int which, uint64_t min_bytes);

/* Mean absolute percentage error of t's predictions over the samples with
 * held_out == which (or all when which < 0) and bytes >= min_bytes; -1 if none. */
double cal_mape(topo_t *t, const cal_req_t *q, const cal_sample_t *s, int n, int which, uint64_t min_bytes,
                baton_err_t *e);

#endif
