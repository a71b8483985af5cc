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

#include "calsample.h"

#define CAL_MAX_PARAMS 16

typedef enum { CAL_LINK_EFF, CAL_LINK_LAT, CAL_REDUCE, CAL_PROTO_LAT, CAL_PROTO_EFF, CAL_STAGE, CAL_STAGE_LAT, CAL_LIB_CAP,
               CAL_LL_SCAN, CAL_SOCKET, CAL_RDZV } cal_kind_t;

typedef struct cal_param {
    cal_kind_t kind;
    int which;                /* the protocol, for CAL_PROTO_*; the library's rule, for CAL_LIB_CAP */
    char cls[24], cls2[24];   /* the link class(es), for CAL_LINK_EFF: the fabric's
                                 nic-switch and switch-switch links are one parameter
                                 (in series at equal rates, no log tells them apart) */
    char name[48];            /* "gpu-switch efficiency", "LL latency" */
    double value, given;      /* fitted and before (a share, a factor, or B/s for the
                                 reduction, the staging and a library kernel's ceiling) */
    double given2;            /* cls2's own value before: it keeps it where the fit keeps `given` */
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

/* Fit t's scales to the samples not held out; t (and every sample's machine)
 * keeps the fitted values. At most CAL_MAX_MACHINES machines in all. */
#define CAL_MAX_MACHINES 8
int cal_fit(topo_t *t, const cal_req_t *q, const cal_sample_t *s, int n, cal_fit_t *out, baton_err_t *e);

/* K-fold cross-validation over the samples not held out: fold f holds every
 * K-th of them from the f-th (each fold spans small to large sizes) and is
 * predicted by a fit of a fresh machine (from fresh) to the others; K at
 * least the samples is leave-one-out. mape_pct is the mean absolute
 * held-out error, the band where 90 % of the signed errors fell (all of them
 * with fewer than 10); the large band the same over sizes >= 64 MiB alone
 * (CAL_LARGE; both 0 with fewer than CAL_LARGE_MIN of them: fewer give no
 * 90 % quantile, and their extremes are a wider band than all sizes'). At least 3
 * samples. */
#define CAL_LARGE (64ull << 20)
#define CAL_LARGE_MIN 10
typedef struct cal_cv {
    int folds;
    double mape_pct, band_lo_pct, band_hi_pct;
    double large_lo_pct, large_hi_pct;
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

#endif
