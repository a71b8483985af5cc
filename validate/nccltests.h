/* nccltests.h - read nccl-tests logs (all_reduce_perf and friends).
 *
 * Accepts the variants in docs/reference/nccl.md section 2: old and new
 * headers (with or without the root column, `#wrong` or `error`), `N/A` for
 * unchecked results, launcher prefixes (` 0: `, `[1,0]<stdout>:`), NCCL INFO
 * and other lines between rows, and a missing `# nThread` line. The
 * collective comes from the test's name when the log has it, else from the
 * columns (root, redop, size / count); the rank count from the `# Rank` lines
 * or nThread x nGpus, unless the caller gives it. NCCL's own TUNING lines,
 * where the run printed them, say which algorithm, protocol and channels
 * each size ran on (nt_plan_t). */
#ifndef BATON_NCCLTESTS_H
#define BATON_NCCLTESTS_H

#include <stdint.h>
#include <stdio.h>

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
    int stated_ranks;        /* what the log itself says (Rank lines, nThread x nGpus); 0: nothing */
    int gpus_per_thread;     /* the header's nGpus (-g): GPUs one thread launches on in turn */
    int agg_iters;           /* the header's "agg iters" (-m): calls grouped per timed iteration,
                                whose time nccl-tests divides among them; 1 unsaid */
    int graph;               /* the header's "graph" (-G): CUDA graph launches, no host launch per
                                call; 0 unsaid */
    int warmup_none;         /* the header's "warmup iters: 0" (-w 0): the timed calls include the
                                first ones, which pay NCCL's connection setup */
    int header_line;         /* the "# nThread" line; 0 where none */
    int per_iter;            /* the rows carry per-iteration times (-I 1: i_min i_max i_p99 i_cv%) */
    int json;                /* read from nccl-tests' JSON (-J FILE.json), not its text */
    char type[24];
    char device[64];         /* the first Rank line's GPU ("NVIDIA H200"); "" where none says */
    int hosts;               /* the hosts the Rank lines name ("on HOST device"); 0: unknown */
    int per_host;            /* ranks on each, where every host has as many; 0 otherwise */
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
} nt_log_t;

/* The plan NCCL's lines give row i of log, or NULL (always for all-to-all,
 * which NCCL runs as sends and receives). */
const nt_plan_t *nt_row_plan(const nt_log_t *log, int i);

/* Parse path (the text log or nccl-tests' JSON, -J: validate/ntlines.h);
 * ranks > 0 overrides the log's rank count. 0 or an error naming
 * file:line and what could not be read. */
int nt_parse(const char *path, int ranks, nt_log_t *out, baton_err_t *e);
void nt_free(nt_log_t *log);

/* Write log in the current nccl-tests format (header, rows with out-of-place
 * and in-place columns, footer), times with 4 decimals of a microsecond;
 * the header's nThread x nGpus is ranks / gpus_per_thread x gpus_per_thread
 * (one GPU a thread when 0). */
int nt_write(const nt_log_t *log, FILE *out);

/* The row whose iterations spread most (the larger i_cv% of its two
 * groups), or -1 where the log has no per-iteration times; its i_cv% in *cv. */
int nt_noisiest(const nt_log_t *log, double *cv);
/* The sentence validate and doctor say of it ("PATH:LINE: per-iteration
 * times (nccl-tests -I 1): ..."), 1; or 0 where the log has none. */
int nt_noise_text(const nt_log_t *log, const char *path, char *buf, size_t n);

/* Bytes per element of an nccl-tests type name; 0 if unknown. */
int nt_type_size(const char *type);

#endif
