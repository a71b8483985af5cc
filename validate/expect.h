/* expect.h - what a machine should show in nccl-tests, with its band.
 *
 * `baton expect` prints the rows an nccl-tests run on the machine should
 * produce (time, algbw, busbw per size: -a nccl's prediction, as `validate`
 * makes it) and the band a healthy run falls in. The band is the machine's
 * own where it is calibrated (its record: 90 % of held-out errors), else
 * the measured error of baton on that kind of machine (the fidelity table,
 * README "NCCL's plan and the fidelity table", `make fidelity`, 2026-12-02:
 * the largest error among the unmarked logs of that kind, at sizes >= 64
 * MiB and over all sizes, with a floor of EX_BAND_FLOOR). The band's source
 * is always named. `baton doctor` (doctor.h) holds a log to these rows. */
#ifndef BATON_EXPECT_H
#define BATON_EXPECT_H

#include "calsample.h"

#define EX_LARGE (64ull << 20)      /* "the largest sizes": the fidelity table's >= 64 MiB column */
#define EX_BAND_FLOOR 5.0           /* % : no band narrower (a healthy run's run-to-run spread) */

typedef struct ex_band {
    double lo_pct, hi_pct;          /* error = (predicted - measured) / measured lies in [lo, hi] % */
    double large_lo_pct, large_hi_pct;   /* the same at sizes >= EX_LARGE */
    char kind[64];                  /* "calibrated", or the kind of machine */
    char source[640];               /* where the band comes from, for a person */
} ex_band_t;

typedef struct ex_row {
    uint64_t bytes;
    double time_s;                  /* predicted */
    double fast_s, slow_s;          /* the band's times: a healthy run's time lies between (holding
                                       sim_s's band too, where there is one) */
    double sim_s;                   /* the simulator's time where predict prints it beside the formula
                                       (beyond its band on this machine, the run cheap); 0: none */
    double algbw_GBps, busbw_GBps;  /* of time_s */
    double busbw_lo, busbw_hi;      /* the band's busbw */
    const char *algo;               /* the row -a nccl picked (static) */
    proto_t proto;
} ex_row_t;

/* t's band for coll: its calibration record's where it has one (and the
 * caller's rule is the record's: other_rule 0), else its file's measured
 * error on its own logs (`fidelity:`) where that names coll, else its kind's. */
void ex_band(const topo_t *t, coll_t coll, int other_rule, ex_band_t *b);

/* The band at one size, in % ([lo, hi] of the error). */
void ex_band_at(const ex_band_t *b, uint64_t bytes, double *lo, double *hi);

/* Row of coll at `bytes` on t under q (the sample s: coll, bytes, -g, masks), with the band. */
int ex_row(topo_t *t, const cal_req_t *q, const cal_sample_t *s, const ex_band_t *b, ex_row_t *out, baton_err_t *e);

/* The rows as an nccl-tests log: log's rows and header fields (coll, ranks,
 * type) filled, rows malloc'd (nt_free frees them). */
struct nt_log;
int ex_log(const ex_row_t *r, int n, coll_t coll, int ranks, struct nt_log *log, baton_err_t *e);

#endif
