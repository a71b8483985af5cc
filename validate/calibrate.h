/* calibrate.h - measured times in, fitted machine out.
 *
 * The model's free parameters are scale factors on what the topology file
 * says: every link's bandwidth (bw_scale: achieved vs datasheet; with the
 * simulator, one scale per link class: links of equal bandwidth and latency
 * in the file, e.g. NVLink and the network apart) and latency
 * (lat_scale), the reduction bandwidth, and, when protocols are modelled,
 * the protocols' per-message and base latencies and (if asked) the
 * efficiency of LL and LL128. They are fitted (in log space, so they stay positive) to
 * minimise the relative error of the predictions, robustly (Huber), with a
 * weak pull of each towards the file's value (calibrate.c, PRIOR), with
 * models/fit.c. */
#ifndef BATON_CALIBRATE_H
#define BATON_CALIBRATE_H

#include "../sim/run.h"
#include "nccltests.h"

typedef struct cal_sample {
    coll_t coll;
    uint64_t bytes;
    double meas_s;            /* the mean of out-of-place and in-place times */
    int line;
    int held_out;             /* 1: not used by the fit (predicted afterwards) */
    int gpus_per_thread;      /* the log's -g: launches one host thread makes in turn */
} cal_sample_t;

typedef struct cal_req {
    const char *algo;         /* a name or "auto" */
    int proto;                /* PROTO_* or RUN_PROTO_AUTO */
    int des;                  /* 1: predict with the simulator (fits then scale each link class) */
    int nccl_model;           /* 1: predict with NCCL's own cost model (sim/plan.h) */
    algo_opts_t opts;         /* channels etc. */
    int fit_efficiency;       /* 1: fit LL's and LL128's efficiency too */
} cal_req_t;

typedef struct cal_fit {
    double bw_scale, lat_scale, base_scale;
    double msg_lat_scale;                /* every protocol's per-message latency x this */
    double eff_scale[PROTO_COUNT];       /* each protocol's efficiency x this (LL, LL128; at most 1 after) */
    int fitted_efficiency;               /* 1 if eff_scale was fitted (else all 1) */
    int nparams;
    double reduce_scale;      /* reduction bandwidth x this */
    int nclasses;             /* with the simulator: link classes fitted one by one (else 0) */
    double class_bw[8], class_lat[8], class_scale[8];   /* each class's file values and its scale */
} cal_fit_t;

/* The samples of a log (one per row). */
int cal_samples(const nt_log_t *log, cal_sample_t **out, int *n, baton_err_t *e);

/* The model's time for one sample on t; algo/proto get what was used. */
int cal_predict(topo_t *t, const cal_req_t *q, const cal_sample_t *s, double *time_s, const char **algo,
                proto_t *proto, baton_err_t *e);

/* Fit t's scales to the samples not held out; t keeps the fitted values. */
int cal_fit(topo_t *t, const cal_req_t *q, const cal_sample_t *s, int n, cal_fit_t *out, baton_err_t *e);

/* "bw_scale 1.2, lat_scale ..." (or each link class's scale): what was fitted. */
void cal_fit_text(const cal_fit_t *f, char *buf, size_t n);

/* Mean absolute percentage error of t's predictions over the samples with
 * held_out == which (or all when which < 0) and bytes >= min_bytes; -1 if none. */
double cal_mape(topo_t *t, const cal_req_t *q, const cal_sample_t *s, int n, int which, uint64_t min_bytes,
                baton_err_t *e);

#endif
