/* calibrate.h - measured times in, fitted machine out.
 *
 * The fitted parameters mean something physical and have physical bounds:
 * each link class's efficiency (achieved / the file's rate, in (0.02, 1]),
 * the links' latency (x the file's, 0.1-10; only without protocols, whose
 * latencies carry it otherwise, as in NCCL's model), the reduction rate (x 0.05-20),
 * each protocol's latency (its per-message and base latency together, x
 * 0.1-10), a library kernel's ceiling where the machine's library has one
 * (RCCL's all-pairs: `max_busbw`, x 0.2-5) and, if asked, LL's and LL128's
 * efficiency. They are fitted in a
 * bounded logistic coordinate (so the optimiser cannot leave the bounds and
 * a value that ends at one is reported), to minimise the relative error of
 * the predictions, robustly (Huber), with a weak pull towards the file's
 * values (calibrate.c, PRIOR), by models/fit.c. Each gets a standard error
 * from the data's Jacobian; one the logs do not depend on at all keeps the
 * file's value and is reported as not seen, and a link efficiency the logs
 * cannot tell from the file's (measured) value, within one standard error,
 * keeps it too (`kept`: a calibrated machine carries its links elsewhere). */
#ifndef BATON_CALIBRATE_H
#define BATON_CALIBRATE_H

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
    int nccl_sizing;          /* a named algorithm sized as NCCL runs it (run_req_t) */
    int unsaid;               /* 1: rules read off NCCL's TUNING lines do not count (run_req_t) */
    int jobs;                 /* the simulator's sizes over this many worker processes (util/par.h;
                                 0 or 1: one at a time); the closed forms always run in one */
    void (*progress)(void *ctx, long trials, int sizes);   /* the simulator's fit: after each trial
                                 (every fitted size simulated once more); NULL: nothing */
    void *progress_ctx;
} cal_req_t;

#define CAL_MAX_PARAMS 16

typedef enum { CAL_LINK_EFF, CAL_LINK_LAT, CAL_REDUCE, CAL_PROTO_LAT, CAL_PROTO_EFF, CAL_STAGE, CAL_STAGE_LAT, CAL_LIB_CAP,
               CAL_LL_SCAN } cal_kind_t;

typedef struct cal_param {
    cal_kind_t kind;
    int which;                /* the protocol, for CAL_PROTO_*; the library's rule, for CAL_LIB_CAP */
    char cls[24], cls2[24];   /* the link class(es), for CAL_LINK_EFF: the fabric's
                                 nic-switch and switch-switch links are one parameter
                                 (in series at equal rates, no log tells them apart) */
    char name[48];            /* "gpu-switch efficiency", "LL latency" */
    double value, given;      /* fitted and before (a share, a factor, or B/s for the
                                 reduction, the staging and a library kernel's ceiling) */
    double lo, hi;            /* the physical bounds */
    double rel_se;            /* one standard error relative to the value */
    int seen;                 /* 0: no log depends on it: kept at `given` */
    int kept;                 /* 1: the fit moved it less than KEEP_SE standard errors from `given`:
                                 the data do not tell it from the file's value, which it keeps */
    int at_bound;             /* ended within 1 % of lo or hi (warn: the model lacks something) */
} cal_param_t;

typedef struct cal_fit {
    int k;
    cal_param_t p[CAL_MAX_PARAMS];
    int used;                 /* samples fitted */
    int replanned;            /* 1: the fit that let the plan (algorithm, protocol per size) move
                                 won by more than 1 point over keeping the file's plan */
    int links_kept;           /* 1: fewer than two fitted sizes of 1 MiB or more ran Simple, so the
                                 links kept the file's efficiencies and LL's and LL128's were
                                 fitted instead (links_unpinned) */
    int nread;                /* sizes where the logs show NCCL ran another row than -a nccl
                                 plans: library rules added to the machine (validate/logplan.h) */
    topo_lib_rule_t read[TOPO_MAX_LIB_RULES];
} cal_fit_t;

/* A fit that stays physical (docs/decisions/scale.md): a fitted link
 * efficiency below CAL_MIN_EFFICIENCY is the fit absorbing a mechanism the
 * machine lacks (a transport, host staging, another algorithm), not a
 * measurement of the hardware; so, less surely, is any other fitted
 * parameter at its bound (but an efficiency at 1: the line rate). Says
 * which mechanism each such parameter stands for, one line each ("  NAME
 * VALUE: ...\n"), into why (may be NULL); their count, and in *hard (may
 * be NULL) how many are link efficiencies below the floor: calibrate
 * writes no fit with one unless told to (--accept-unphysical), and names
 * the rest beside the fit it writes. */
#define CAL_MIN_EFFICIENCY 0.5
int cal_unphysical(const cal_fit_t *f, char *why, size_t n, int *hard);

/* The samples of a log (one per row). A row's time is the mean of its two
 * columns, or the smaller where they run the same transfers (all-reduce,
 * broadcast, reduce) and differ by more than a fifth: a disturbed run. */
int cal_samples(const nt_log_t *log, cal_sample_t **out, int *n, baton_err_t *e);

/* The model's time for one sample on t; algo/proto get what was used. */
int cal_predict(topo_t *t, const cal_req_t *q, const cal_sample_t *s, double *time_s, const char **algo,
                proto_t *proto, baton_err_t *e);

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

/* Fit t's scales to the samples not held out; t (and every sample's machine)
 * keeps the fitted values. At most CAL_MAX_MACHINES machines in all. */
#define CAL_MAX_MACHINES 8
int cal_fit(topo_t *t, const cal_req_t *q, const cal_sample_t *s, int n, cal_fit_t *out, baton_err_t *e);

/* K-fold cross-validation over the samples not held out: fold f holds every
 * K-th of them from the f-th (each fold spans small to large sizes) and is
 * predicted by a fit of a fresh machine (from fresh) to the others; K at
 * least the samples is leave-one-out. mape_pct is the mean absolute
 * held-out error, the band where 90 % of the signed errors fell (all of them
 * with fewer than 10). At least 3 samples. */
typedef struct cal_cv {
    int folds;
    double mape_pct, band_lo_pct, band_hi_pct;
} cal_cv_t;
typedef topo_t *(*cal_fresh_fn)(void *ctx, baton_err_t *e);
int cal_cross_validate(cal_fresh_fn fresh, void *ctx, const cal_req_t *q, cal_sample_t *s, int n, int k, cal_cv_t *out,
                       baton_err_t *e);

/* What the fitted samples of s[0..n) (those not held out) covered, into k's
 * `seen:`: per collective, rank count (each sample's machine, else t's) and
 * -g, the runs of sizes without a hole, where the record's band holds. */
void cal_record_seen(topo_calib_t *k, const topo_t *t, const cal_sample_t *s, int n);

/* One line per parameter: value, standard error, what it was, warnings. */
void cal_fit_text(const cal_fit_t *f, char *buf, size_t n);

/* Mean absolute percentage error of t's predictions over the samples with
 * held_out == which (or all when which < 0) and bytes >= min_bytes; -1 if none. */
double cal_mape(topo_t *t, const cal_req_t *q, const cal_sample_t *s, int n, int which, uint64_t min_bytes,
                baton_err_t *e);

#endif
