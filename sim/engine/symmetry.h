/* symmetry.h - interchangeable ranks: simulate one representative per class.
 *
 * When rank r + G's program is rank r's with every peer moved G ranks on
 * (the schedule's period divides G) and the machine looks the same from
 * rank r + G as from rank r, every rank r + kG does at every moment what
 * rank r does. The engine then runs ranks 0..G-1 only: a message that rank
 * r sends to rank y is received by the representative of y from the copy of
 * r that is shifted as far, and every link holds the state of the
 * representative's link it corresponds to. A 1,048,576-rank ring on one
 * switch is then one rank's 2p - 2 steps.
 *
 * The answer must be the full simulation's, so sym_find proves the machine
 * side before the engine relies on it:
 *  - every chunk has the same size (a shifted copy moves as many bytes);
 *  - for every send offset d of every representative a and every copy
 *    x = a + kG, the route x -> x + d has as many links as a -> a + d, each
 *    with the same bandwidth and latency;
 *  - each link carries the sends of one rank only, standing for one link of
 *    that rank's representative (so no two copies ever wait for each other,
 *    whose order at equal times would depend on rank numbers);
 *  - with limited ports, each rank receives from one offset only (the same
 *    reason, for receive ports).
 * Tested equal to the full simulation in tests/test_symmetry.c. */
#ifndef BATON_SYMMETRY_H
#define BATON_SYMMETRY_H

#include <stdint.h>

#include "../../algorithms/sched.h"
#include "../../topologies/topo.h"

typedef struct sym {
    int period;          /* G: the engine runs ranks 0 .. G-1 */
    int32_t *lmap;       /* per directed link: the representative's link it stands for, -1 unused */
    uint64_t routes;     /* routes checked */
} sym_t;

/* The smallest G (a multiple of s->period that divides the ranks) for which
 * s on t is symmetric as above. BATON_EUNSUP, saying why, if there is none. */
int sym_find(const sched_t *s, topo_t *t, sym_t *out, baton_err_t *e);

void sym_free(sym_t *y);

#endif
