/* footprint.h - what a run will take, known before it runs.
 *
 * A schedule is a program per rank (algorithms/sched.h), so nothing about a
 * run is stored before the engine starts: its messages are made as the
 * programs run. Two things want their count before that: the progress line
 * (how much is left) and the memory check (a run that cannot fit is refused
 * with an estimate, rather than left to swap for an hour). Reading a sample
 * of the ranks' programs gives both: their sends, and the distinct peers
 * they send to (each a route the topology caches for the whole run). */
#ifndef BATON_FOOTPRINT_H
#define BATON_FOOTPRINT_H

#include <stdint.h>

#include "../../algorithms/sched.h"
#include "../../topologies/topo.h"
#include "../../util/err.h"
#include "verify.h"

typedef struct footprint {
    double messages;     /* messages the simulated ranks send (a sample's mean x ranks) */
    double pairs;        /* distinct (sender, receiver) pairs: routes the topology will cache */
    double bytes;        /* the run's memory beyond the machine already loaded (footprint_of) */
} footprint_t;

/* What the run holds beside its routes and distance maps, as the engine
 * says (it passes this in: the engine calls this file, not the other way). */
typedef struct footprint_need {
    uint64_t state;          /* the engine's own state (engine_state_estimate) */
    verify_mode_t verify;    /* the verifier's buffers, VERIFY_NONE for none */
    uint64_t rec_bytes;      /* a message's record for the critical path; 0: none kept */
} footprint_need_t;

/* Ranks whose programs are read: all of them up to this, else this many
 * evenly spaced. */
#define FOOTPRINT_SAMPLE 16

/* Messages and pairs of s with ranks 0..nr-1 simulated (all ranks and helpers,
 * or the symmetric path's representatives). Exact up to FOOTPRINT_SAMPLE ranks. */
void footprint_sample(const sched_t *s, int nr, footprint_t *f);

/* The memory a run of s with nr ranks simulated needs on t: the engine's
 * state (n->state), the route cache, the distance maps routing keeps, the
 * records (n->rec_bytes a message) and the verifier's buffers (n->verify),
 * into f. */
void footprint_of(const sched_t *s, const topo_t *t, int nr, const footprint_need_t *n, footprint_t *f);

/* Bytes a run may take: BATON_MEM_LIMIT (bytes; for the tests) if set, else
 * the kernel's MemAvailable (/proc/meminfo), else the free pages; 0 when
 * none of them can be read (then nothing is refused). */
uint64_t footprint_available(void);

/* 0, or BATON_ENOMEM with "needs about X GiB, Y GiB available; ..." where
 * the run would need more than footprint_available(). Cheap where even
 * every rank sending to every other would fit: the programs are only read
 * when that bound is over. */
int footprint_check(const sched_t *s, topo_t *t, int nr, const footprint_need_t *n, baton_err_t *e);

#endif
