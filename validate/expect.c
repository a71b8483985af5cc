/* expect.c - a machine's expected nccl-tests rows and their band (expect.h). */
#include "expect.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nccltests.h"

/* Per kind of machine, from the shipped logs that ran at their hardware
 * (validate/logs/MANIFEST, not marked "below:"), -a nccl uncalibrated:
 *   large: the largest |error| of the mean busbw over a log's top quarter of
 *     sizes (what doctor's verdict measures; sh scripts/doctor-logs.sh, 2026-12-04),
 *     rounded up to a whole percent:
 *     one node: 8 x A100 0.7, DGX-1 7.1, 8 x MI300X 2.5, GB200 2 trays 6.2 -> 8
 *     cluster: 2 x 8 A100 3.7, p4d 3.6, 2 x 8 H200 0.5 and 1.3, 2 x 2 L40S 0.1, MI355X 5.5 -> 6
 *     host-staged: RTX 2080 Ti 2.6, 11.8, 5.0, 0.9; RTX 4090 26.5, 25.0, 14.0 -> 27
 *   all: the largest MAPE over all sizes in the fidelity table (README, `make
 *     fidelity`, 2026-12-02): one node 13.0 (DGX-1), cluster 19.3 (one-NIC
 *     H200), host-staged 26.3 (RTX 4090).
 * Several machines' link efficiencies were read off these logs' top sizes,
 * so `large` is partly in sample: a band no narrower than baton's own error
 * where it was measured, not a promise elsewhere. */
static const struct {
    const char *kind;
    double large, all;
    const char *logs;
} kinds[] = {
    {"one node on NVLink or xGMI", 8, 13.0, "4 logs: 8 x A100, DGX-1 V100, 8 x MI300X, GB200 2 trays"},
    {"a cluster over RDMA", 6, 19.3, "6 logs: 2 x 8 A100, p4d, 2 x 8 H200 (two), 2 x 2 L40S, 2 x 8 MI355X"},
    {"GPUs staged through host memory (no P2P)", 27, 26.3, "7 logs: RTX 2080 Ti (4), RTX 4090 (3)"},
};

static int kind_of(const topo_t *t) {
    const topo_params_t *p = topo_params_c(t);
    int r = topo_whole_ranks(t);
    if (!p->p2p) return 2;
    return p->group_size > 0 && r > p->group_size ? 1 : 0;
}

static double at_least(double x) { return x < EX_BAND_FLOOR ? EX_BAND_FLOOR : x; }

/* A band of +-all % over all sizes and +-large % at the largest, each at
 * least the floor. */
static void band_even(ex_band_t *b, double large_pct, double all_pct) {
    double large = at_least(large_pct), all = at_least(all_pct);
    *b = (ex_band_t){.lo_pct = -all, .hi_pct = all, .large_lo_pct = -large, .large_hi_pct = large};
}

void ex_band(const topo_t *t, coll_t coll, int other_rule, ex_band_t *b) {
    const topo_calib_t *k = &topo_params_c(t)->calib;
    *b = (ex_band_t){0};
    if (k->present && !other_rule && (k->band_lo_pct != 0 || k->band_hi_pct != 0) && !k->what_if[0]) {
        double lo = k->band_lo_pct < -EX_BAND_FLOOR ? k->band_lo_pct : -EX_BAND_FLOOR;
        double hi = k->band_hi_pct > EX_BAND_FLOOR ? k->band_hi_pct : EX_BAND_FLOOR;
        int large = k->large_lo_pct < k->large_hi_pct;    /* the large sizes' own band (band_large_pct), as predict */
        double llo = !large ? lo : k->large_lo_pct < -EX_BAND_FLOOR ? k->large_lo_pct : -EX_BAND_FLOOR;
        double lhi = !large ? hi : k->large_hi_pct > EX_BAND_FLOOR ? k->large_hi_pct : EX_BAND_FLOOR;
        *b = (ex_band_t){.lo_pct = lo, .hi_pct = hi, .large_lo_pct = llo, .large_hi_pct = lhi};
        snprintf(b->kind, sizeof b->kind, "calibrated");
        int w = snprintf(b->source, sizeof b->source, "%s's calibration: 90 %% of errors on sizes its fit did not see in "
                         "[%+.1f %%, %+.1f %%] (at least +-%.0f %%)", topo_name(t), k->band_lo_pct, k->band_hi_pct,
                         EX_BAND_FLOOR);
        if (large && w > 0 && (size_t)w < sizeof b->source)
            snprintf(b->source + w, sizeof b->source - (size_t)w, ", at sizes >= 64 MiB [%+.1f %%, %+.1f %%]",
                     k->large_lo_pct, k->large_hi_pct);
        return;
    }
    const topo_fidelity_t *f = &topo_params_c(t)->fidelity;
    for (int j = 0; j < f->n; j++) {
        int p = topo_whole_ranks(t);
        if (f->band[j].coll != (int)coll || (f->band[j].socket >= 0 && f->band[j].socket != topo_params_c(t)->socket) ||
            p < f->band[j].min_ranks || (f->band[j].max_ranks && p > f->band[j].max_ranks))
            continue;
        band_even(b, f->band[j].large_pct, f->band[j].all_pct);
        if (f->machine[0] && strncmp(f->machine, topo_name(t), sizeof f->machine - 1)) {   /* inherited (extends); a
                                                                       name past 63 characters compares on its start */
            snprintf(b->kind, sizeof b->kind, "the logs of the machine it extends");
            snprintf(b->source, sizeof b->source, "uncalibrated: baton's measured error on %s's logs (%s; its "
                     "fidelity:, which %s extends): +-%.0f %% at a log's largest sizes, +-%.1f %% over all sizes; no "
                     "log of %s itself was measured, so it can be further off", f->machine, f->logs, topo_name(t),
                     b->large_hi_pct, b->hi_pct, topo_name(t));
            return;
        }
        snprintf(b->kind, sizeof b->kind, "this machine's own logs");
        snprintf(b->source, sizeof b->source, "uncalibrated: baton's measured error on the logs %s's file names "
                 "(%s; its fidelity:): +-%.0f %% at a log's largest sizes, +-%.1f %% over all sizes; a shortfall "
                 "within it may be baton's, not the machine's", topo_name(t), f->logs, b->large_hi_pct, b->hi_pct);
        return;
    }
    int i = kind_of(t);
    band_even(b, kinds[i].large, kinds[i].all);
    snprintf(b->kind, sizeof b->kind, "%s", kinds[i].kind);
    snprintf(b->source, sizeof b->source, "uncalibrated: baton's measured error on %s (shipped logs at their "
             "hardware, %s): +-%.0f %% at a log's largest sizes, +-%.1f %% over all sizes; partly in sample (machine "
             "values were read off some of these logs), so on a machine baton has no logs of it can be further off",
             kinds[i].kind, kinds[i].logs, b->large_hi_pct, b->hi_pct);
}

void ex_band_at(const ex_band_t *b, uint64_t bytes, double *lo, double *hi) {
    int large = bytes >= EX_LARGE;
    *lo = large ? b->large_lo_pct : b->lo_pct;
    *hi = large ? b->large_hi_pct : b->hi_pct;
}

int ex_row(topo_t *t, const cal_req_t *q, const cal_sample_t *s, const ex_band_t *b, ex_row_t *out, baton_err_t *e) {
    double p, lo, hi, sim = 0;
    const char *algo = NULL;
    proto_t pr = PROTO_SIMPLE;
    int rc = cal_predict_checked(t, q, s, &p, &algo, &pr, &sim, e);
    if (rc < 0) return rc;
    int ranks = topo_whole_ranks(s->machine ? s->machine : t);
    double f = run_busbw_factor(s->coll, ranks), alg = p > 0 ? (double)s->bytes / p / 1e9 : 0;   /* one rank: 0 s */
    ex_band_at(b, s->bytes, &lo, &hi);
    double fast = p / (1 + hi / 100), slow = p / (1 + lo / 100);
    if (sim > 0) {                /* predict prints the simulator beside the formula here: the band holds both */
        fast = fmin(fast, sim / (1 + hi / 100));
        slow = fmax(slow, sim / (1 + lo / 100));
    }
    double bytes_GB = (double)s->bytes / 1e9;
    *out = (ex_row_t){.bytes = s->bytes, .time_s = p, .fast_s = fast, .slow_s = slow, .sim_s = sim,
                      .algbw_GBps = alg, .busbw_GBps = alg * f, .busbw_lo = slow > 0 ? bytes_GB / slow * f : 0,
                      .busbw_hi = fast > 0 ? bytes_GB / fast * f : 0, .algo = algo, .proto = pr};
    return 0;
}

int ex_log(const ex_row_t *r, int n, coll_t coll, int ranks, nt_log_t *log, baton_err_t *e) {
    *log = (nt_log_t){.coll = coll, .ranks = ranks, .gpus_per_thread = 1, .agg_iters = 1};
    snprintf(log->type, sizeof log->type, "float");
    log->rows = calloc((size_t)n + 1, sizeof *log->rows);
    if (log->rows == NULL) return err_set(e, BATON_ENOMEM, "out of memory");
    for (int i = 0; i < n; i++) {
        uint64_t elem = coll == COLL_ALLGATHER || coll == COLL_REDUCE_SCATTER || coll == COLL_ALLTOALL ? 4ull * (uint64_t)ranks : 4;
        if (r[i].bytes % elem) continue;            /* nccl-tests runs whole elements on every rank */
        log->rows[log->nrows++] = (nt_row_t){.bytes = r[i].bytes, .count = r[i].bytes / elem, .oop_us = r[i].time_s * 1e6,
                                             .ip_us = r[i].time_s * 1e6, .line = i + 1};
    }
    return 0;
}
