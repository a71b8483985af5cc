/* tp.h - the communication cost of Megatron-style tensor parallelism.
 *
 * Splitting the MLP's first matrix by columns and its second by rows (and
 * attention by heads, then its output projection by rows) leaves one
 * all-reduce after attention and one after the MLP: two per layer in the
 * forward pass, each of tokens x hidden elements (seed story, part 4). */
#ifndef BATON_TP_H
#define BATON_TP_H

#include "run.h"

/* Bytes per element of "bf16", "fp16", "fp32", "fp8"; 0 if unknown. */
int tp_dtype_bytes(const char *dtype);

typedef struct tp_result {
    int allreduces;            /* per forward pass */
    uint64_t bytes;            /* each */
    run_out_t ar;              /* one all-reduce: chosen algorithm, protocol, time */
    double comm_s;             /* per forward pass (= allreduces x ar.time_s) */
} tp_result_t;

/* One forward pass of `layers` layers over `tokens` tokens on t; the
 * all-reduce under algo (NULL: NCCL's, choice.h), the choice step makes. */
int tp_run(topo_t *t, int layers, int hidden, uint64_t tokens, int elem_bytes, const char *algo, int proto,
           tp_result_t *out, baton_err_t *e);

#endif
