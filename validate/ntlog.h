/* ntlog.h - what a read nccl-tests log holds (nt_log_t): its rows, what
 * its header and Rank lines said, and NCCL's own word on the run (the plan
 * its TUNING lines name, the NCCL_ALGO / NCCL_PROTO it was told).
 *
 * Types only, apart from the reader (nccltests.h) so that the pieces the
 * reader hands lines to (tuninglines.h fills the plan and the environment)
 * write into a log without including the reader that calls them: the
 * reader sits on top, its line source (ntlines.h) and its TUNING-line
 * reader below it, all three on this. */
#ifndef BATON_NTLOG_H
#define BATON_NTLOG_H

#include <stdint.h>

#include "../algorithms/sched.h"

/* A row's per-iteration summary (nccl-tests -I 1, 2.19.2 on: CUDA events
 * around each timed iteration, the slowest GPU's; src/util.cu
 * writePerIterReport): i_min i_max i_p99 i_cv%. */
typedef struct nt_iter {
    double min_us, max_us, p99_us;
    double cv_pct;           /* standard deviation / mean of the iterations, % */
} nt_iter_t;

typedef struct nt_row {
    uint64_t bytes;          /* the size column (nccl-tests' S: the whole buffer) */
    uint64_t count;
    double oop_us, ip_us;    /* out-of-place and in-place time; < 0 if absent */
    nt_iter_t iter[2];       /* per-iteration: out-of-place, in-place; min_us < 0 where absent */
    int line;
    int wrong;               /* 1: #wrong counts wrong elements in either group (nt_log_t.wrong_rows) */
} nt_row_t;

/* What NCCL says it ran a call on, from its NCCL_DEBUG=INFO
 * NCCL_DEBUG_SUBSYS=TUNING lines (rank 0, one per call: "AllReduce: 8388608
 * Bytes -> Algo RING proto LL128 channel{Lo..Hi}={0..15}"; from 2.20 to the
 * named form, "8388608 Bytes -> Algo 1 proto 1 time 41.2", numbered and
 * without the collective or the channels). */
#define NT_PLAN_THE_LOGS (-2)        /* nt_plan_t.coll of a numbered line: the log's collective */
typedef struct nt_plan {
    int coll;                /* coll_t, or NT_PLAN_THE_LOGS */
    uint64_t bytes;          /* NCCL's nBytes: count x element, the row's count column */
    char algo[16];           /* NCCL's name in lower case: tree, ring, nvls, nvls_tree, pat, ... */
    int proto;               /* proto_t */
    int channels;            /* channel{Lo..Hi}: Hi - Lo + 1; 0 where the line has none */
    int line;
    int disagree;            /* a later line for the same call named another algorithm,
                                protocol or channel count: the first is kept */
} nt_plan_t;

/* NCCL_ALGO or NCCL_PROTO as NCCL said it was set ("NCCL INFO NCCL_ALGO set
 * by environment to Ring"): NCCL ran only what it allows. */
typedef struct nt_env {
    char list[64];           /* as set: "Ring,Tree", "^LL128", "allreduce:tree;allgather:ring" */
    int line;                /* 0: the log does not say */
    unsigned mask;           /* for the log's collective: bits algo_nccl_index / proto_t; 0: all */
    int unread;              /* 1: a name baton does not know (mask 0) */
} nt_env_t;

typedef struct nt_log {
    coll_t coll;
    int coll_guessed;        /* the log names no test (all_reduce_perf, ...): coll is read off its
                                columns (redop, root, count per size), where all_gather_perf and
                                alltoall_perf look alike */
    int coll_named;          /* ...and alltoall is read off its file name (alltoall_perf's columns
                                are all_gather_perf's) */
    int ranks;
    int stated_ranks;        /* what the log itself says (Rank lines, NCCL's nranks, nThread x nGpus
                                above 1); 0: nothing. A header's 1 x 1 without Rank lines is one
                                process of an MPI job, of many or of one: unknown */
    int header_ranks;        /* the header's nThread x nGpus: one process's ranks; 0 unsaid */
    int gpus_per_thread;     /* the header's nGpus (-g): GPUs one thread launches on in turn */
    int agg_iters;           /* the header's "agg iters" (-m): calls grouped per timed iteration,
                                whose time nccl-tests divides among them; 1 unsaid */
    int graph;               /* the header's "graph" (-G): CUDA graph launches, no host launch per
                                call; 0 unsaid */
    int threads;             /* the header's nThread (-t): threads one process runs; 0 unsaid */
    int iters, warmup_iters; /* the header's "iters" (-n) and "warmup iters" (-w); 0 unsaid
                                (warmup_none says -w 0) */
    uint64_t step;           /* the header's "step: N(factor)" (-f N, step_factor 1) or
                                "step: N(bytes)" (-i N); 0 unsaid */
    int step_factor;
    int warmup_none;         /* the header's "warmup iters: 0" (-w 0): the timed calls include the
                                first ones, which pay NCCL's connection setup */
    int header_line;         /* the "# nThread" line; 0 where none */
    int per_iter;            /* the rows carry per-iteration times (-I 1: i_min i_max i_p99 i_cv%) */
    int json;                /* read from nccl-tests' JSON (-J FILE.json), not its text */
    char type[24];
    char device[64];         /* the first Rank line's GPU ("NVIDIA H200"); "" where none says */
    int hosts;               /* the hosts the Rank lines name ("on HOST device"); 0: unknown */
    int per_host;            /* ranks on each, where every host has as many; 0 otherwise (nt_write:
                                the ranks a host it names in the Rank lines; 0: one host) */
    int nccl_nodes;          /* NCCL's own count ("comm 0x.. rank 0 nRanks 16 nNodes 2 localRanks 8",
                                2.2x INIT lines; by host hash, so pods per GPU count as one); 0 unsaid */
    nt_row_t *rows;
    int nrows;
    nt_plan_t *plan;         /* one per (collective, nBytes) NCCL's TUNING lines name */
    int nplan;
    char nccl_version[32];   /* "2.27.3+cuda12.9" (NCCL's "NCCL version" line, or nccl-tests'
                                "nccl-library=22703"); "" where the log does not say */
    int wrong_rows;          /* rows whose #wrong column counts wrong elements (nccl-tests FAILED):
                                timed, but a broken collective's time; wrong_line the first */
    int wrong_line;
    nt_env_t env_algo, env_proto;   /* NCCL_ALGO, NCCL_PROTO (tuninglines_env) */
    int tuning_skipped;      /* TUNING lines baton cannot follow (an unknown algorithm or form) */
    int tuning_skipped_line; /* the first of them, and what it was */
    char tuning_skipped_why[96];
    int closed;              /* nccl-tests' closing lines are there ("# Out of bounds values",
                                "# Avg bus bandwidth"): the run got to its end */
    int stray;               /* lines among the rows, before the closing lines, that are no row,
                                comment or NCCL line ("srun: error: ..."): skipped; stray_line
                                the first, stray_text its start */
    int stray_line;
    char stray_text[48];
    int failed_line;         /* the first line where nccl-tests says the run failed ("Test NCCL
                                failure", "Test CUDA failure": common.h's NCCLCHECK, CUDACHECK);
                                0: none; failed_text its text from "Test" on */
    char failed_text[96];
    int cut_line;            /* the last row stopped after its out-of-place columns (a run cut off,
                                as by an NCCL failure on the in-place call): dropped; 0: none */
    int cycle_line;          /* a second sweep of the sizes starts here (nccl-tests -N, a rooted
                                test's -r -1 next root): its rows skipped, the first sweep read */
} nt_log_t;

#endif
