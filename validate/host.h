/* host.h - the CPU backend: run a schedule for real, one thread per rank,
 * bytes copied and reduced in shared memory, and time it.
 *
 * The programs are the ones the simulator runs (sched.h). Each rank's
 * thread steps all of the rank's streams, whichever can move: a send copies
 * the chunk range into a message (its payload as posted, as in the engine)
 * and queues it at the receiving stream; a receive takes the oldest message
 * from its sender's stream and copies or adds it in. Reductions add bytes
 * modulo 256, so any chunk boundary is fine and the result is exact. After
 * the timed runs the buffers are checked against the collective's
 * postcondition. */
#ifndef BATON_HOST_H
#define BATON_HOST_H

#include "../algorithms/algo.h"

typedef struct host_result {
    double median_s;          /* of the timed repetitions */
    double min_s, max_s;
    int verified;
} host_result_t;

/* Run a (built for p ranks, n bytes) `reps` times after one warm-up. */
#define HOST_MAX_RANKS 256

int host_run(const algo_t *a, int p, uint64_t n, const algo_opts_t *o, int reps, host_result_t *out, baton_err_t *e);

#endif
