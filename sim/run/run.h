/* run.h - one collective on one machine: simulate it or predict it.
 *
 * The shared path behind `baton sim` and `baton predict` (and the tests):
 * find the registry row, build the schedule, then either run the engine or
 * evaluate the closed form on the topology's uniform cost model. */
#ifndef BATON_RUN_H
#define BATON_RUN_H

#include "../../algorithms/algo.h"
#include "../engine/engine.h"

typedef struct run_req {
    coll_t coll;
    const char *algo;        /* a registry name, "auto": the lowest closed form, or
                                "nccl": the lowest of the rows NCCL has (algo_t.nccl) */
    uint64_t bytes;
    algo_opts_t opts;        /* root, channels, pipeline */
    int verify;              /* 0 none, 1 verify (data mode when small, else signature) */
    int predict;             /* 1: closed form only */
    contention_t contention; /* how transfers share links (sim only) */
    int proto;               /* PROTO_NONE..PROTO_SIMPLE, or RUN_PROTO_AUTO: the fastest */
    int store_forward;       /* hop-by-hop instead of cut-through (sim only) */
    int symmetric;           /* one representative per class of interchangeable ranks
                                (sim/engine/symmetry.h): 1 required (an error where that is not
                                exact), 0 where it is proven and the run has at least
                                RUN_AUTO_SYMMETRY ranks and nothing needs every rank (no
                                verification, observers or fair sharing), -1 never */
    const engine_opts_t *engine;   /* optional observers; its verify mode, contention, store
                                      and forward and protocol come from this request */
    int nccl_rules;          /* a named algorithm only with the protocols NCCL runs it with
                                (ncclrule_runs; -a nccl always follows them) */
    double lib_busbw;        /* the library rule's ceiling on bus bandwidth (bytes/s; 0: none),
                                set by run_collective where a rule runs the call */
    int nccl_sizing;         /* a named algorithm on the channels and pipeline NCCL gives
                                the call (nccl_size_channels, nccl_size_pipeline; -a nccl
                                always does): a fit pinned to NCCL's plan */
    int unsaid;              /* 1: plan as if the machine's library had no rules read off
                                NCCL's TUNING lines (validate's own guess beside NCCL's word) */
    const char *nccl_algo;   /* -a nccl among baton's rows of this NCCL algorithm only (algo_t.nccl;
                                set by run_collective from a library rule's nccl_algo); NULL: all */
    const char *nccl_row;    /* -a nccl runs this row only (set by run_collective where the machine's
                                nccl_tuner lets NCCL's own model pick); NULL: any of NCCL's */
    unsigned nccl_algos;     /* -a nccl among NCCL's algorithms of these bits only (algo_nccl_index;
                                a log's NCCL_ALGO); 0: all */
    unsigned protos;         /* --proto auto among these protocols only (bits 1 << proto_t; a log's
                                NCCL_PROTO); 0: all */
    int gpus_per_thread;     /* GPUs one host thread launches on in turn (nccl-tests -g);
                                each beyond the first adds the topology's `launch` */
} run_req_t;

typedef struct run_out {
    const algo_t *algo;
    int auto_picked;         /* 1 if "auto" chose algo, 2 if "nccl" did */
    int ranks;
    uint64_t bytes;
    double time_s;
    double time_lo_s, time_hi_s;   /* a calibrated machine's error bars (90 %), set by
                                      run_error_bars; both 0 when it has none */
    double band_widen;       /* > 1: the band carried to a rank count the calibration's logs did not
                                run, widened by RUN_BAND_PER_DOUBLING a doubling away from them */
    int band_outside;        /* the machine has a band, but not for this call: 1 outside what its
                                logs ran (run_error_bars), RUN_BAND_OTHER_RULE another -a, --proto
                                or --model than its fit's (set by the command) */
    double algbw_GBps, busbw_GBps;
    double launch_s;         /* of time_s, the launches of the further GPUs one host thread
                                drives (run_req_t.gpus_per_thread); 0 with one */
    int simulated;           /* 1: engine, 0: closed form */
    int tuner;               /* 1: -a nccl ran NCCL's own model's pick (the machine's nccl_tuner) */
    contention_t contention; /* the model the engine used */
    proto_t proto;           /* the protocol used */
    int proto_auto;          /* 1 if --proto auto chose it */
    int channels;            /* the channels it ran on (-a nccl: fewer for a small call, as NCCL);
                                a row NCCL does not have: its schedule's streams per rank
                                (direct: one per peer) */
    int nccl_steps;          /* the steps -a nccl cut a pipelined row into as NCCL does (NVLSTree's
                                loops, nccl_size_pipeline); 0: the row's own */
    const topo_lib_rule_t *rule;   /* -a nccl followed this rule of the machine's library
                                      (in the topology's parameters); NULL: none */
    verify_mode_t verify_mode;
    engine_result_t eng;     /* when simulated */
    cost_model_t model;      /* the machine the closed form used (run_algo_model) */
    algo_opts_t opts;        /* the options the row ran with: the machine's rings and groups, and
                                NCCL's channels and pipeline under -a nccl (run_parts reads them) */
    double links_s;          /* of time_s, the links' (closed form, or the engine's run) */
    double proxy_s;          /* of time_s, NCCL's proxy reading LL lines (proxy_scan) */
    double once_s, sync_s;   /* of links_s, the protocol's base latency and the reducing
                                switches' synchronisation (topo_params_t.nvls_lat) */
} run_out_t;

#define RUN_PROTO_AUTO PROTO_COUNT
#define RUN_BAND_OTHER_RULE 2
/* A calibrated band carried to a rank count its logs did not run widens by
 * this much a doubling away from the nearest they did (docs/decisions/
 * scale.md: Polaris's six 2-node fits predicting 8 nodes erred 1.0-3.3x,
 * median 2.1x their cross-validated errors, over two doublings). */
#define RUN_BAND_PER_DOUBLING 0.55

/* Below this many ranks the full simulation is instant: symmetry is only
 * taken unasked from here on (the answer is the same either way). */
#define RUN_AUTO_SYMMETRY 64

/* Data mode is used for verification up to this many elements (ranks x bytes). */
#define RUN_DATA_VERIFY_MAX (1ULL << 20)

int run_collective(topo_t *t, const run_req_t *q, run_out_t *o, baton_err_t *e);

/* Fill options the user left at 0 from the topology: group size, the
 * machine's rings (unless rank_order), channels (one per ring found, else
 * the topology's). */
void run_opts_from_topo(topo_t *t, algo_opts_t *o);

/* The machine as row a's closed form sees it for its built schedule s: the
 * uniform model m, or for a row with a `peer` (rings, hierarchical rows,
 * nccltree) the links its messages share on t (topologies/linkload.h). t may be
 * NULL (then m). */
int run_algo_model(topo_t *t, const algo_t *a, const sched_t *s, const cost_model_t *m, cost_model_t *out,
                   baton_err_t *e);

/* The applicable algorithm of coll with the lowest closed-form time, each row
 * on its own view of t (t may be NULL: m for all) under protocol pc (NULL:
 * m as given), among NCCL's rows only if nccl_only (and those NCCL runs with
 * protocol pr, ncclrule_runs; PROTO_NONE: any); ties: registry order.
 * NULL if none can run this case. */
const algo_t *run_pick(topo_t *t, coll_t coll, const cost_model_t *m, const proto_cost_t *pc, proto_t pr, int p,
                       uint64_t n, const algo_opts_t *o, int nccl_only);

/* -a nccl in the simulator times every row NCCL has whose closed form is
 * within this factor of the lowest, and keeps the fastest. */
#define RUN_NCCL_SLACK 1.5

/* "auto" or "nccl": a choice the run makes, not a registry row. */
int run_is_auto(const char *algo);

/* Where o's time goes, in parts that add up to o->time_s (total). The
 * links' share: for a closed form the formula's alpha, beta and gamma terms
 * (each with the other two set to zero) and `overlap`, the formula's total
 * less the three (negative where a step is the larger of two terms, as with
 * channels: the terms overlap); for a simulated run (recorded: engine_opts_t
 * record) the critical path's moving, waiting, adding and idle time. Then
 * what every run adds: the protocol's base latency once per call, the
 * reducing switches' synchronisation, the GPU's and host's ceilings on bus
 * bandwidth where they are above the links' time, NCCL's proxy scanning LL
 * lines, the further launches of -g. */
typedef struct run_parts {
    double alpha, beta, gamma, overlap;        /* closed form */
    double transfer, wait, reduce, idle;       /* simulated: the critical path */
    double once, sync, ceiling, proxy, launches;
    double total;
} run_parts_t;
void run_parts(topo_t *t, const run_out_t *o, run_parts_t *x);

/* Is o's closed form only approximate here: an approximate row, a machine
 * whose rank pairs differ, or shared links the formula does not look at? An
 * exact one equals the simulator to rounding (tests/test_closed.c). */
int run_formula_approx(const run_out_t *o);
/* The band within which predict takes an approximate closed form and the
 * simulator to agree (a fraction of the simulated time); beyond it predict
 * prints the simulator's time beside its own. */
#define RUN_FORMULA_BAND 0.05
/* The simulator's check of a closed form is run where about p x max(k, p)
 * x 8 (p ranks, k pipeline steps) stays within this (a second or so; a
 * 64-node H100 cluster's nvlstree at 1 GiB is 2.1e6). */
#define RUN_CHECK_WORK 4e6
/* Would checking closed-form result o with the simulator stay cheap? */
int run_check_cheap(const run_out_t *o);
/* The simulator's check of a closed-form answer (run_check). */
enum { RUN_CHECK_EXACT = 0,   /* the formula is exact here: nothing to check */
       RUN_CHECK_DONE,        /* simulated: sim_s */
       RUN_CHECK_LARGE,       /* approximate, but the run is too large to check unasked */
       RUN_CHECK_FAILED };    /* approximate, and the simulator could not run it (why) */
typedef struct run_check {
    int state;
    double sim_s;             /* the simulator's time for the same row (RUN_CHECK_DONE) */
    int beyond;               /* |sim_s - the formula's| > RUN_FORMULA_BAND x sim_s */
    char why[512];            /* RUN_CHECK_FAILED: the simulator's error */
} run_check_t;
/* Check closed-form answer o to request q with the simulator where the
 * formula is only approximate and the run cheap (run_formula_approx,
 * run_check_cheap): the same row, protocol and sizing (run_same_row), every
 * rank of t (t must not be folded). BATON_ENOMEM only; the rest is in c. */
int run_check(topo_t *t, const run_req_t *q, const run_out_t *o, run_check_t *c);

/* q, asked again for o's answer only: its row and protocol, sized as o was
 * (NCCL's channels and pipeline where -a nccl chose it; where the machine's
 * library rule chose a row of its own, -a nccl again, which follows it),
 * closed form (predict 1) or simulated (0). */
void run_same_row(const run_req_t *q, const run_out_t *o, int predict, run_req_t *out);

/* nccl-tests' busbw factor: algbw x factor = busbw. */
double run_busbw_factor(coll_t c, int p);

/* The interval a calibrated machine's record gives o's time: 90 % of the
 * errors on sizes its fit did not see fell in [lo, hi] % (error = (predicted
 * - measured) / measured), so the measurement lies in time / (1 + hi) ..
 * time / (1 + lo). Nothing when t carries no band, nor (o->band_outside)
 * outside what its logs covered: another collective, rank count or a size
 * beyond the fitted ones (the record's seen:), or a --set its logs did
 * not run (the record's what_if). With another -g than the logs' the band
 * keeps its width in seconds (the launches are known, not errors). Nor
 * (RUN_BAND_OTHER_RULE) where q runs another rule than the fit's
 * (other_rule: the command line's -a, --proto, model or contention differ
 * from the record's, sim/cli cmd_calibrated_rule). */
void run_error_bars(const topo_t *t, const run_req_t *q, int other_rule, run_out_t *o);

#endif
