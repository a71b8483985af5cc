/* bench_clock.h - the benchmarks' one clock: monotonic wall time in seconds. */
#ifndef BATON_BENCH_CLOCK_H
#define BATON_BENCH_CLOCK_H

#include <time.h>

static inline double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

#endif
