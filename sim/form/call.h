/* call.h - a call: what is asked of one collective on one machine
 * (run_req_t) and what is answered (run_out_t).
 *
 * Data only, below everything that plans or answers a call: the closed forms
 * (form.h) read it, NCCL's plan (sim/nccl/) fills in what NCCL would run, and
 * the answer (sim/answer/run.h: run_collective) builds and times it. */
#ifndef BATON_CALL_H
#define BATON_CALL_H

#include <string.h>

#include "../../algorithms/algo.h"
#include "../engine/engine.h"

/* How a row NCCL runs is cut into steps and channels (nccl-sizing.md):
 * one policy a call, which nccl_cut_of (sim/nccl/nccl.h) reads. */
typedef enum {
    RUN_CUT_ALGO = 0,   /* as the algorithm word says: -a nccl SIZED, -a auto LOWER, a named row OWN */
    RUN_CUT_OWN,        /* the row's own steps and fill (and --pipeline K where asked) */
    RUN_CUT_NCCL,       /* NCCL's channels for the size (none asked), its steps and LL fill:
                           the cut -a auto picked, run again (run_same_row) */
    RUN_CUT_LOWER,      /* the lower closed form (predict) or faster run (sim) of OWN and NCCL:
                           -a auto, select's cells; under a pinned --pipeline K, NCCL's
                           channels alone (not its steps or LL fill) */
    RUN_CUT_SIZED,      /* RUN_CUT_NCCL with a log's TUNING rule's channels and the library's
                           kernel: -a nccl, a fit pinned to NCCL's plan, a log's TUNING row */
} run_cut_t;

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
    run_cut_t cut;           /* how a row NCCL runs is cut (RUN_CUT_ALGO: as the algorithm
                                word says; nccl_cut_of) */
    int unsaid;              /* 1: plan as if the machine's library had no rules read off
                                NCCL's TUNING lines (validate's own guess beside NCCL's word) */
    const char *nccl_algo;   /* -a nccl among baton's rows of this NCCL algorithm only (algo_t.nccl;
                                set by run_collective from a library rule's nccl_algo); NULL: all */
    const char *nccl_row;    /* -a nccl runs this row only (set by run_collective where the machine's
                                nccl_tuner lets NCCL's own model pick, or for the symmetric kernel
                                nccl_kernel); NULL: any of NCCL's */
    const char *nccl_kernel; /* the symmetric kernel NCCL's own model picks (registered buffers,
                                ncclrule_sym_kernel), which nccl_row moves the data of; NULL: none */
    unsigned nccl_algos;     /* -a nccl among NCCL's algorithms of these bits only (algo_nccl_index;
                                a log's NCCL_ALGO); 0: all */
    unsigned protos;         /* --proto auto among these protocols only (bits 1 << proto_t; a log's
                                NCCL_PROTO); 0: all */
    int gpus_per_thread;     /* GPUs one host thread launches on in turn (nccl-tests -g);
                                each beyond the first adds the topology's `launch` */
    double give_up_s;        /* the simulator stops a run whose clock passes this: it would end
                                later than a rival run_collective already has (0: never) */
    const struct par_min *give_up_shared;   /* rivals running beside this run (util/par.h; set by
                                run_collective for its workers): it stops once its clock passes
                                the fastest finished one's time; NULL: none */
    int jobs;                /* a named row's protocols under --proto auto, where the run is large,
                                simulated side by side in this many worker processes (<= 1: one
                                after the other, here; the library never forks) */
    double rivals_work;      /* how large: ranks x max(ranks, chunks) x 8 at least this (0:
                                RUN_RIVALS_WORK, 4,096 ranks; the tests ask smaller runs) */
} run_req_t;

typedef struct run_out {
    const algo_t *algo;
    int auto_picked;         /* 1 if "auto" chose algo, 2 if "nccl" did */
    int ranks;
    uint64_t bytes;
    double time_s;
    double time_lo_s, time_hi_s;   /* a calibrated machine's error bars (90 %), set by
                                      run_error_bars; both 0 when it has none */
    int band_large;          /* 1: the band is the large sizes' own (band_large_pct: >= 64 MiB) */
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
    const char *kernel;      /* -a nccl ran the row of this symmetric kernel (run_req_t.nccl_kernel) */
    contention_t contention; /* the model the engine used */
    proto_t proto;           /* the protocol used */
    int proto_auto;          /* 1 if --proto auto chose it */
    int channels;            /* the channels it ran on (-a nccl: fewer for a small call, as NCCL);
                                a row NCCL does not have: its schedule's streams per rank
                                (direct: one per peer) */
    int nccl_steps;          /* the steps -a nccl cut a pipelined row into as NCCL does (NVLSTree's
                                loops, nccl_size_pipeline); 0: the row's own */
    run_cut_t cut;           /* the request's cut as it ran (try_row); under -a auto RUN_CUT_OWN or
                                RUN_CUT_NCCL, the one size_row chose (run_same_row reruns it) */
    const topo_lib_rule_t *rule;   /* -a nccl followed this rule of the machine's library
                                      (in the topology's parameters); NULL: none */
    verify_mode_t verify_mode;
    engine_result_t eng;     /* when simulated */
    cost_model_t model;      /* the machine the closed form used (form_model) */
    algo_opts_t opts;        /* the options the row ran with: the machine's rings and groups, and
                                NCCL's channels and pipeline under -a nccl (run_parts reads them) */
    double links_s;          /* of time_s, the links' (closed form, or the engine's run) */
    double proxy_s;          /* of time_s, NCCL's proxy thread's own work: reading LL lines
                                (proxy_scan), copying inline sends out of GPU memory
                                (proxy_inline) */
    double socket_s;         /* of time_s, the proxy thread handling the network messages and
                                operations one by one (the socket transport's TCP stack;
                                RDMA's operations, software tag matching), beyond the
                                links' time and the ceilings (ncclrule.c proxy_floor) */
    double once_s, sync_s;   /* of links_s, the protocol's base latency and the reducing
                                switches' synchronisation (topo_params_t.nvls_lat) */
} run_out_t;

#define RUN_PROTO_AUTO PROTO_COUNT
#define RUN_BAND_OTHER_RULE 2

/* "auto" or "nccl": a choice the run makes, not a registry row. */
static inline int run_is_auto(const char *algo) { return strcmp(algo, "auto") == 0 || strcmp(algo, "nccl") == 0; }

/* nccl-tests' busbw factor: algbw x factor = busbw (one rank: 0 for the
 * collectives whose factor has p - 1 in it, as nccl-tests prints). */
static inline double run_busbw_factor(coll_t c, int p) {
    if (p <= 1) return c == COLL_BROADCAST || c == COLL_REDUCE ? 1 : 0;
    switch (c) {
    case COLL_ALLREDUCE: return 2.0 * (p - 1) / p;
    case COLL_REDUCE_SCATTER:
    case COLL_ALLGATHER:
    case COLL_ALLTOALL: return (double)(p - 1) / p;
    default: return 1.0;
    }
}

#endif
