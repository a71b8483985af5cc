/* chakra_gen.h - a small Chakra trace of a training step, made by baton
 * (`baton export --chakra`), for tests and as an example of what replay
 * reads. Rank r's nodes, each depending on the one before:
 *
 *   0 host       COMP, is_cpu_op, host_us             (the step's launch)
 *   1 forward    COMP, compute_us + r x skew_us       (ranks arrive apart)
 *   2 COLL       comm_type, comm_size bytes           (starts at the last arrival)
 *   3 backward   COMP, compute_us
 *   4 send       to r+1 mod p, bytes / p, tag 0       (ranks > 1 only)
 *   5 recv       from r-1 mod p, bytes / p, tag 0     (ranks > 1 only)
 *   6 optimizer  COMP, compute_us / 2 (ctrl dep on the send, data dep on the recv)
 *
 * With `overlap`, the send and receive follow the forward pass instead of
 * the backward (a pipeline stage's activations beside the data-parallel
 * collective), so they run while the collective does, and the optimizer
 * waits for the backward pass too (a control dependency).
 *
 * On a machine where the collective takes C and a message of bytes / p
 * takes M, every rank ends at host + compute + (p-1) skew + C + compute + M
 * + compute / 2: the sum tests/test_replay.c holds replay to. */
#ifndef BATON_CHAKRA_GEN_H
#define BATON_CHAKRA_GEN_H

#include "chakra.h"

typedef struct chakra_gen {
    int ranks;
    int64_t comm_type;         /* CHAKRA_ALL_REDUCE, ... */
    uint64_t bytes;
    uint64_t compute_us, skew_us, host_us;
    int overlap;               /* the send and receive after the forward pass, beside the collective */
} chakra_gen_t;

/* Rank r's trace (out is freed with chakra_free). */
int chakra_gen_rank(const chakra_gen_t *g, int r, chakra_et_t *out, baton_err_t *e);

#endif
