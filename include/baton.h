/* baton.h - libbaton's public interface: the one header a program that
 * links the library includes (installed as PREFIX/include/baton.h;
 * `pkg-config --cflags --libs baton`, README "Setup").
 *
 * What it answers, as the command line does: load a machine (a shipped
 * name or a YAML file, with `--set`-style parameters), then time one
 * collective on it by its closed form (`baton predict`) or by simulating
 * its schedule (`baton sim`), pick the fastest algorithm for a size
 * (`baton select`), read an nccl-tests log, and fit the machine to such
 * logs (`baton calibrate`).
 *
 *     baton_error err;
 *     const char *sets[] = {"nodes=4"};
 *     baton_machine *m = baton_machine_load("cluster-h100", sets, 1, &err);
 *     baton_call call = {.coll = "allreduce", .algo = "nccl", .bytes = 1 << 30};
 *     baton_result r;
 *     if (m == NULL || baton_predict(m, &call, &r, &err) < 0) fprintf(stderr, "%s\n", err.message);
 *
 * Conventions: a function returns 0 (or a handle) on success and a
 * negative baton_status (or NULL) on failure, with the reason in *err
 * when err is not NULL ("file:line:col: what is wrong"); the library never
 * prints and never exits. Handles are opaque; each _free accepts NULL.
 * Strings in results point into the library's static tables (no free).
 * Call it from one thread at a time (the did-you-mean hints in error
 * messages share a buffer). Times are seconds, sizes bytes, bandwidths GB/s (1e9 B/s)
 * with nccl-tests' algbw and busbw. */
#ifndef BATON_PUBLIC_H
#define BATON_PUBLIC_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define BATON_API __attribute__((visibility("default")))
#else
#define BATON_API
#endif

/* Status codes: 0 or one of these (negative). */
typedef enum baton_status {
    BATON_SUCCESS = 0,
    BATON_E_NOMEM = -1,      /* out of memory */
    BATON_E_INVAL = -2,      /* an argument is wrong (an unknown collective, algorithm, size) */
    BATON_E_PARSE = -3,      /* a file could not be read as what it should be */
    BATON_E_UNSUP = -4,      /* this algorithm cannot run this case */
    BATON_E_IO = -5,         /* a file could not be found or opened */
    BATON_E_SCHED = -6,      /* an inconsistent schedule (a bug: please report it) */
    BATON_E_VERIFY = -7,     /* the simulated result was wrong (a bug: please report it) */
    BATON_E_WHOLE = -8       /* needs the whole machine (internal; not returned here) */
} baton_status;

/* Why a call failed: its status and a sentence a user can act on. */
typedef struct baton_error {
    int code;
    char message[512];
} baton_error;

/* The sentence for a status code ("out of memory"). */
BATON_API const char *baton_strerror(int code);

/* The library's version, "MAJOR.MINOR.PATCH". */
BATON_API const char *baton_version(void);

/* ---- machines ------------------------------------------------------------ */

typedef struct baton_machine baton_machine;

/* A machine by path (a YAML file) or by name ("hgx-h100": NAME or NAME.yaml
 * in the current directory, topologies/, each directory of $BATON_PATH,
 * then the installed machines, PREFIX/share/baton/topologies beside the
 * library). sets: nsets "name=value" strings, as `--set` (nodes=4). */
BATON_API baton_machine *baton_machine_load(const char *name, const char *const *sets, int nsets, baton_error *err);
BATON_API void baton_machine_free(baton_machine *m);
BATON_API const char *baton_machine_name(const baton_machine *m);
BATON_API int baton_machine_ranks(const baton_machine *m);

/* ---- one collective -------------------------------------------------------- */

typedef struct baton_call {
    const char *coll;        /* allreduce, reducescatter, allgather, broadcast, reduce, alltoall */
    const char *algo;        /* an algorithm (`baton algos`), "auto" (the lowest closed form),
                                "nccl" (what NCCL would run, with its protocol rules); NULL:
                                as the command line (a calibrated machine's fitted one, else auto) */
    uint64_t bytes;          /* the whole buffer, as nccl-tests' size column */
    const char *proto;       /* "auto", "LL", "LL128", "Simple" or "none"; NULL: as the command line */
    int root;                /* broadcast's and reduce's root */
} baton_call;

typedef struct baton_result {
    double time_s;
    double algbw_GBps, busbw_GBps;
    double time_lo_s, time_hi_s;   /* a calibrated machine's 90 % interval; both 0 when none */
    const char *algo;        /* the algorithm that ran (what "auto" or "nccl" chose) */
    const char *proto;       /* its protocol ("Simple", ...; "none" for plain alpha-beta) */
    int ranks;
    int channels;
    int simulated;           /* 1: by the simulator, 0: by the closed form */
} baton_result;

/* The closed form's time (`baton predict`). */
BATON_API int baton_predict(baton_machine *m, const baton_call *call, baton_result *out, baton_error *err);

/* The simulator's time, event by event (`baton sim`). */
BATON_API int baton_simulate(baton_machine *m, const baton_call *call, baton_result *out, baton_error *err);

/* The fastest algorithm and protocol for coll at bytes, as `baton select`
 * times them by default (the closed form where it is exact, else the
 * simulator where the run is small); out is the winner's row. */
BATON_API int baton_select(baton_machine *m, const char *coll, uint64_t bytes, baton_result *out, baton_error *err);

/* NCCL's tuner table for the machine, as `baton select --format nccl-tuner
 * -c COLLS --sizes SIZES` writes it (NCCL's example tuner plugin's CSV:
 * collective,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks,
 * numPipeOps,regBuff; only NCCL's algorithms, each with a protocol NCCL runs
 * it with). colls: a comma-separated list, NULL: allreduce, allgather,
 * reducescatter, broadcast, reduce; sizes: as --sizes, NULL: 8B:1GiB. The
 * text is malloc'd (free() it); NULL on error. build/libnccl-tuner-baton.so
 * (`make tuner-plugin`) answers NCCL from it. */
BATON_API char *baton_tuner_table(baton_machine *m, const char *colls, const char *sizes, baton_error *err);

/* ---- nccl-tests logs ------------------------------------------------------- */

typedef struct baton_log baton_log;

typedef struct baton_log_row {
    uint64_t bytes;          /* the size column */
    double oop_s, ip_s;      /* out-of-place and in-place time; < 0 where the log has none */
    int line;                /* in the file */
} baton_log_row;

/* Read an nccl-tests log (all_reduce_perf and the like; the variants of
 * docs/reference/nccl.md section 2). */
BATON_API baton_log *baton_log_read(const char *path, baton_error *err);
BATON_API void baton_log_free(baton_log *log);
BATON_API const char *baton_log_coll(const baton_log *log);
BATON_API int baton_log_ranks(const baton_log *log);
BATON_API int baton_log_nrows(const baton_log *log);
/* Row i (0 .. nrows-1) into *out; BATON_E_INVAL outside. */
BATON_API int baton_log_row_at(const baton_log *log, int i, baton_log_row *out);

/* ---- calibration ----------------------------------------------------------- */

typedef struct baton_fit {
    int sizes;               /* rows fitted */
    double mape_pct;         /* mean absolute error of -a nccl's closed form over them, after */
    double mape_before_pct;  /* the same before fitting */
} baton_fit;

/* Fit m to nccl-tests logs run on it (`baton calibrate`'s closed-form fit
 * of -a nccl: link efficiencies, latencies, reduction and protocol costs
 * within physical bounds, following NCCL's TUNING lines where a log has
 * them). m keeps the fitted values: later calls answer as the calibrated
 * machine. Every log must have m's rank count (the command line also fits
 * clusters at several node counts and cross-validates). */
BATON_API int baton_calibrate(baton_machine *m, const char *const *logs, int nlogs, baton_fit *out, baton_error *err);

#ifdef __cplusplus
}
#endif

#endif
