/* cmd_validate.h - what `baton validate` and `baton calibrate`
 * (cmd_validate.c) share with the files beside it: their options, the
 * machines and samples the logs give (cmd_validate_logs.c), the table and
 * the fit as printed (cmd_validate_table.c), and a calibration's steps
 * around its fit (cmd_validate_fit.c). */
#ifndef BATON_CMD_VALIDATE_H
#define BATON_CMD_VALIDATE_H

#include <string.h>

#include "../../validate/calibrate.h"
#include "../../validate/tuningplan.h"
#include "../../validate/tunerfile.h"
#include "cmd.h"

#define CMD_VAL_MAX_SAID 64
typedef struct {
    const char *topo, *algo, *out, *hold, *backend, *coll, *sizes, *log_out;
    const char *logs[CMD_MAX_LOGS];
    int nlogs, ranks, proto, json, des, nccl_model, calibrate, reps, channels, fit_eff, force_ranks, cv, contention;
    int standalone;          /* --self-contained: the calibration written whole, no extends: */
    int unphysical_ok;       /* --accept-unphysical: write a fit cal_unphysical flags */
    int algo_given, proto_given, model_given, contention_given;
    cmd_sets_t sets;
    char ranks_set[64];
    topo_lib_rule_t logged[TOPO_MAX_LIB_RULES];   /* the plan the logs' TUNING lines give (tuningplan.h) */
    int nlogged;
    char nccl[64];           /* the NCCL versions the logs state, distinct, ", " between */
    char fitted_algo[CMD_RULE_LEN];   /* a calibrated machine's rule (cmd_calibrated_rule) */
    char env[2][64];         /* NCCL_ALGO, NCCL_PROTO as the logs say they were set, if all say the same */
    int env_logs, env_mixed; /* logs read; 1: they differ (then nothing is recorded) */
    char *said[CMD_VAL_MAX_SAID];      /* what cmd_validate_logs.c said about the logs, for --json's "messages" */
    int nsaid;
    const char *tuner;       /* --tuner FILE (or $NCCL_TUNER_CONFIG_FILE): -a nccl follows its rows */
    int tuner_env;           /* 1: named by the environment, not the command line */
    tuner_table_t tuner_tab;
} cmd_val_args_t;

/* The command's name, for what it says on stderr. */
static inline const char *cmd_val_name(const cmd_val_args_t *a) { return a->calibrate ? "calibrate" : "validate"; }

/* Does the run follow NCCL's word where a log gives it? -a nccl on baton's
 * costs (not NCCL's own model, whose plan is its own). */
static inline int cmd_val_follows_logs(const cmd_val_args_t *a) { return strcmp(a->algo, "nccl") == 0 && !a->nccl_model; }

/* The model's name as a calibration records it: des, nccl or closed. */
static inline const char *cmd_val_model(const cmd_val_args_t *a) { return a->des ? "des" : a->nccl_model ? "nccl" : "closed"; }

/* ---- the logs (cmd_validate_logs.c) ---- */

/* The machines of one run: the topology, and the same file at other node
 * counts for logs that ran on another number of nodes. */
typedef struct {
    topo_t *t;
    topo_t *other[CAL_MAX_MACHINES - 1];
    int nother;
} cmd_val_machines_t;

/* The messages the reading said about the logs (warnings, notes: kept in
 * a->said), as a JSON member. */
void cmd_val_json_said(const cmd_val_args_t *a);
/* Free them. */
void cmd_val_said_free(cmd_val_args_t *a);

/* All logs' samples, each on the machine of its rank count. */
int cmd_val_load(cmd_val_args_t *a, cmd_val_machines_t *ms, cal_sample_t **all, int *n, const char ***file_of,
                 baton_err_t *e);
/* Measure on this computer's threads; the timings become a log (and samples). */
int cmd_val_measure(const cmd_val_args_t *a, topo_t *t, cal_sample_t **all, int *n, const char ***file_of,
                    baton_err_t *e);
/* The samples whose machine follows a plan NCCL's lines gave. */
int cmd_val_logged_samples(const topo_t *t, const cal_sample_t *s, int n);
/* The tuner file's rows that fit machine t put first among its rules
 * (tunerfile.h), where -a nccl follows NCCL's choice; their count (0: no
 * file, or not followed), the rows t cannot run in why; < 0 on error. */
int cmd_val_apply_tuner(const cmd_val_args_t *a, topo_t *t, char *why, size_t n, baton_err_t *e);
/* Machine t follows the logged plan where it can run it (else a warning). */
void cmd_val_apply_logged_plan(const cmd_val_args_t *a, topo_t *t, int quiet);

/* ---- the output (cmd_validate_table.c) ---- */

/* What the calibration adds to the table's JSON and text. */
typedef struct {
    const cal_fit_t *fit;     /* NULL: nothing was fitted */
    double cv_mape;           /* -1: no cross-validation */
    double band_lo, band_hi;  /* % */
    double large_lo, large_hi;    /* %, sizes >= 64 MiB alone (cal_cv_t); both 0: too few of them */
    int folds;
    int logged;               /* sizes whose plan the logs' TUNING lines gave */
    const cmd_val_args_t *args; /* its messages about the logs (a->said), for JSON; NULL: none */
    int forced;               /* sizes whose logs say NCCL_ALGO or NCCL_PROTO was set */
    const cal_pred_t *before; /* each sample's prediction on the file's values (a fit's; NULL: none) */
    const cal_pred_t *after;  /* and on the fitted ones (the table's), once it is printed */
    const char **file_of;     /* each sample's log */
} cmd_val_extra_t;

/* The table of every sample, then the MAPEs; *fitted the MAPE over the
 * samples a fit used (not held out), for the record. */
int cmd_val_table(topo_t *t, const cal_req_t *q, const cal_sample_t *s, int n, const char **file_of, int json,
                  cmd_val_extra_t *x, double *fitted, baton_err_t *e);
/* The fit as text after the table: its values, the sizes whose plan it
 * moved, the cross-validation; warnings on stderr. */
void cmd_val_print_fit(const cmd_val_args_t *a, const cal_fit_t *f, const cmd_val_extra_t *x, const cal_sample_t *s,
                       int n);

/* ---- around the fit (cmd_validate_fit.c) ---- */

/* --hold-out LO:HI, or `middle` (the middle third of the sizes, interpolating)
 * or `top` (the largest quarter: extrapolating), by the sizes' order. */
/* --hold-out's spec is one cmd_val_hold_out reads (checked when parsed, before any log is read): 0, or -1 with e set. */
int cmd_val_hold_spec(const char *spec, baton_err_t *e);
int cmd_val_hold_out(const char *spec, cal_sample_t *s, int n, baton_err_t *e);
/* --cv K: K folds of the sizes, each fitted on a fresh machine without it
 * (cal_cross_validate), into x's cv_mape, band and folds. */
int cmd_val_cross_validate(const cmd_val_args_t *a, const cal_req_t *q, cal_sample_t *s, int n, cmd_val_extra_t *x,
                           baton_err_t *e);
/* A fit that is not physical (cal_unphysical): say which mechanism each
 * such value stands for; with -o, refuse to write one with a link
 * efficiency below the floor unless told to. */
int cmd_val_judge_physical(const cmd_val_args_t *a, const cal_fit_t *f, baton_err_t *e);
/* The calibrated machine: the original file extended (or, --self-contained,
 * written whole), the fit's values, the record. */
int cmd_val_write_calibrated(const cmd_val_args_t *a, const cal_req_t *q, topo_t *t, const cal_fit_t *f,
                             const cmd_val_extra_t *x, const cal_sample_t *s, int n, double mape, baton_err_t *e);

#endif
