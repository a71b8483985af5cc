/* doctor.h - is this nccl-tests log what the machine should give, and if
 * not, what changed?
 *
 * The log's rows against the machine's expected rows (expect.h) and band:
 * a verdict (healthy, below, above) and the shortfall of its bus bandwidth
 * at the largest sizes. Below, the causes: each a structural change to the
 * machine (fewer NICs, NVLink links down, a slower PCIe, GPUDirect RDMA off,
 * the socket transport, a network rate cap, PXN off, an algorithm or a
 * protocol forced, fewer channels, NVLS off, one slow GPU or node), each
 * tried over its values, re-predicted on every size of the log and scored
 * by its MAPE there; the best value is the one the log implies. Causes no
 * better than the healthy machine are dropped; causes within DOC_TIE of the
 * best are a tie (the log's times cannot tell them apart: a ring runs at its
 * slowest link whichever link it is), which the log's NCCL_DEBUG=INFO lines
 * (ncclinfo.h) break where they speak. A cause is `--cause ID=VALUE` to
 * `baton expect`, which prints what the machine so changed gives: the
 * tests make sick logs that way. */
#ifndef BATON_DOCTOR_H
#define BATON_DOCTOR_H

#include "expect.h"
#include "ncclinfo.h"

#define DOC_MAX_CAUSES 16
#define DOC_TIE_PTS 1.0        /* a cause within this many points of MAPE of the best is a tie with it */

/* A structural change to the machine. */
typedef struct doc_change {
    char id[16];               /* the cause: nics, nvlink, pcie, gdr, socket, netcap, pxn, algo, proto,
                                  channels, nvls, slowgpu, slownode */
    char arg[32];              /* its value as --cause takes it ("4", "Ring", "0.5"; "" none) */
    char sets[3][48];          /* --set values it takes */
    int nsets;
    int links;                 /* which links it scales: 0 none, DOC_L_* */
    double factor;             /* their rate x this (or, with rate > 0, set to rate) */
    double rate;               /* bytes/s */
    unsigned algos, protos;    /* NCCL_ALGO / NCCL_PROTO masks (algo_nccl_index bits, 1 << proto_t); 0: all */
    int channels;              /* NCCL_MAX_NCHANNELS; 0: NCCL's */
} doc_change_t;

enum { DOC_L_NONE, DOC_L_GPU_NIC, DOC_L_PCIE, DOC_L_NET, DOC_L_RANK0, DOC_L_NODE0 };

/* The healthy machine with extra --set values (the caller's loader: the
 * file, the user's --set, then these). NULL with e set on failure. */
typedef topo_t *(*doc_load_fn)(void *ctx, const char *const *sets, int nsets, baton_err_t *e);

/* `--cause ID[=VALUE]` on machine t into c (a default value where none is
 * given). 0, or an error saying which causes t has. */
int doc_change_parse(topo_t *t, const char *spec, doc_change_t *c, baton_err_t *e);

/* The machine and request a change makes: *out loaded afresh (the file
 * with c's sets, its links scaled as c says; the caller frees it), q's
 * channels and the samples' masks as c says. */
int doc_change_apply(doc_load_fn load, void *ctx, const doc_change_t *c, topo_t **out, cal_req_t *q,
                     cal_sample_t *s, int n, baton_err_t *e);

/* The cause's name, what to check, and the value as a person reads it. */
const char *doc_cause_name(const char *id);
const char *doc_cause_check(const char *id);
/* What shows cause id and none of the others (a check's one decisive line):
 * printed for a tie, whose causes the times cannot tell apart. */
const char *doc_cause_tell(const char *id);
void doc_change_value(const topo_t *t, const doc_change_t *c, char *buf, size_t n);

typedef struct doc_cause {
    doc_change_t change;       /* at the value the log implies */
    char name[64], value[96], evidence[192];
    const char *check;
    double mape_pct, mape_large_pct;
    int tie;                   /* 1: within DOC_TIE of the first */
    int said;                  /* the log's INFO lines: 1 say it happened, -1 say it did not, 0 nothing */
} doc_cause_t;

typedef struct doc_row {
    uint64_t bytes;
    int line;
    double meas_s, meas_busbw;
    ex_row_t exp;
} doc_row_t;

/* DOC_UNSURE: within a band whose low edge is wider than DOC_WIDEST_BAND:
 * baton's own error on such logs would hide a cause as large as NICs at
 * half rate, so it does not call the run healthy. */
typedef enum { DOC_HEALTHY, DOC_BELOW, DOC_ABOVE, DOC_UNSURE } doc_verdict_t;
#define DOC_WIDEST_BAND 30.0
const char *doc_verdict_name(doc_verdict_t v);

typedef struct doc_report {
    doc_verdict_t verdict;
    double ratio;              /* measured / expected busbw at the largest sizes */
    double sim_ratio;          /* the same against the simulator's time where predict prints it beside
                                  the formula (ex_row_t.sim_s; the formula's elsewhere) */
    int sim_rows;              /* of the largest sizes, those with a simulator's time */
    double shortfall_pct;      /* 100 (1 - ratio) */
    double band_lo_pct;        /* the band's low edge there, % of busbw */
    uint64_t large_from;       /* the largest sizes: from this size up */
    int nlarge;
    ex_band_t band;
    double healthy_mape, healthy_mape_large;
    doc_row_t *rows;
    int nrows;
    doc_cause_t cause[DOC_MAX_CAUSES];
    int ncauses;
    int explained;             /* 1: the first cause brings the largest sizes within the band */
    int tried;                 /* machines tried */
    int ntied;                 /* the first cause and those tied with it: cause[0..ntied) (0: no causes) */
    int pxn_unseen;            /* 1: PXN off moves the log's largest sizes less than the band (it cannot be
                                  seen in this log); 0: it changes them; -1: the machine has no PXN */
    double pxn_change_pct;     /* PXN off's shortfall at the largest sizes against the healthy machine */
} doc_report_t;

/* Examine samples s[0..n) (one log; their masks are what the log's
 * environment set: the expectation ignores them, the causes use them as
 * evidence) against the healthy machine t (load makes its variants), under
 * q, with the log's INFO facts. out->rows malloc'd: doc_free. */
int doc_examine(doc_load_fn load, void *ctx, topo_t *t, const cal_req_t *q, const cal_sample_t *s, int n,
                const ni_info_t *info, doc_report_t *out, baton_err_t *e);
void doc_free(doc_report_t *r);

#endif
