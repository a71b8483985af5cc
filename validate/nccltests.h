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
 * each size ran on (nt_plan_t). The log read is an nt_log_t (ntlog.h). */
#ifndef BATON_NCCLTESTS_H
#define BATON_NCCLTESTS_H

#include <stdio.h>

#include "ntlog.h"

/* The plan NCCL's lines give row i of log, or NULL (always for all-to-all,
 * which NCCL runs as sends and receives). */
const nt_plan_t *nt_row_plan(const nt_log_t *log, int i);

/* Parse path (the text log or nccl-tests' JSON, -J: validate/ntlines.h);
 * ranks > 0 overrides the log's rank count. 0 or an error naming
 * file:line and what could not be read: a row cut off, a size below the
 * row before it or the same again (a second run or a rerun pasted in;
 * 0 bytes, and sizes under a step in bytes, nccl-tests repeats itself). */
int nt_parse(const char *path, int ranks, nt_log_t *out, baton_err_t *e);

/* Could a log whose collective was read off its columns (coll_guessed) have
 * run c? Its redop says whether it reduces, its root whether it is rooted:
 * an all-gather's columns (none, -1) are an all-to-all's too, never an
 * all-reduce's. 1 where the log names its test. */
int nt_columns_allow(const nt_log_t *log, coll_t c);
void nt_free(nt_log_t *log);

/* nccl-tests' step as its header says it, set in log from the sizes asked
 * (before any rounding to whole elements): N(factor) where each size is the
 * one before times N (-f N), N(bytes) where each adds N (-i N); else (one
 * size, or a list no run of nccl-tests gives) its default, -i 1M. */
#define NT_STEP_BYTES 1048576ull
void nt_set_step(nt_log_t *log, const uint64_t *sizes, int n);

/* Write log in the current nccl-tests format (header, Rank lines, rows with
 * out-of-place and in-place columns, footer), times with 4 decimals of a
 * microsecond. The header says what log does: nThread threads (1 when 0)
 * of nGpus gpus_per_thread (1 when 0) a process, as many processes as the
 * ranks need (mpirun -np), per_host ranks a host (one host when 0); step
 * (nt_set_step; -i 1M when 0), warmup_iters (5) and iters (20). */
int nt_write(const nt_log_t *log, FILE *out);

/* The row whose iterations spread most (the larger i_cv% of its two
 * groups), or -1 where the log has no per-iteration times; its i_cv% in *cv. */
int nt_noisiest(const nt_log_t *log, double *cv);
/* The sentence validate and doctor say of it ("PATH:LINE: per-iteration
 * times (nccl-tests -I 1): ..."), 1; or 0 where the log has none. */
int nt_noise_text(const nt_log_t *log, const char *path, char *buf, size_t n);
/* Why a log with stated_ranks 0 does not say its rank count, as validate
 * and doctor word it ("no Rank lines, no nThread x nGpus", or its header's
 * 1 x 1, one process's). */
const char *nt_ranks_unsaid(const nt_log_t *log);
/* What makes a run one doctor calls broken: rows whose #wrong counts wrong
 * elements (which = 0: how many, their sizes and lines), or nccl-tests'
 * own failure line (which = 1: "Test NCCL failure ..."). 1 and the
 * sentence ("PATH:LINE: ..."), or 0 where there is none of that kind.
 * calibrate refuses such a run; validate scores its rows without #wrong. */
int nt_broken_text(const nt_log_t *log, const char *path, int which, char *buf, size_t n);
/* Remove the rows whose #wrong is not 0 (nt_row_t.wrong); how many. */
int nt_drop_wrong(nt_log_t *log);
/* What the reader left out, for a warning (which 0: a last row cut after
 * its out-of-place columns; 1: a second sweep of the sizes): 1 and buf
 * filled, or 0. */
int nt_skipped_text(const nt_log_t *log, const char *path, int which, char *buf, size_t n);
/* What validate and doctor say of a log that is not whole: lines among its
 * rows that are none ("srun: error: ..."), which is which = 0, or a text log
 * that ends without nccl-tests' closing lines (a run cut off after its last
 * row), which = 1. 1 and the sentence, or 0 where there is nothing to say. */
int nt_whole_text(const nt_log_t *log, const char *path, int which, char *buf, size_t n);
/* The log's timing caveats validate and doctor warn of, one a call (k = 0,
 * 1, ...): agg iters > 1 (grouped calls), warmup iters 0. 1 with the
 * sentence in buf, 0 when there is no k-th. */
int nt_timing_text(const nt_log_t *log, const char *path, int k, char *buf, size_t n);

#endif
