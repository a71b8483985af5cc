/* peers.h - the destinations of a pattern of peers, kept on the machine.
 *
 * A row's closed form on a whole machine counts the link loads of its
 * pattern of peers (each slot's and rank's destination: topologies/
 * linkload.h). The destinations follow from the schedule alone (its row,
 * shape and ring orders), not from the machine's rates, so they are kept
 * where a bandwidth change does not drop them (topo_set_patterns): a fit
 * that moves a link's efficiency then stops recomputing them at every
 * trial. */
#ifndef BATON_PEERS_H
#define BATON_PEERS_H

#include "../../algorithms/algo.h"
#include "../../topologies/linkload.h"
#include "../../topologies/topo.h"

#include <stdint.h>

typedef int (*peers_fn)(const sched_t *s, int c, int r);

/* peer's destinations for s on t, slot c and rank r at [c x p + r] (p the
 * machine's ranks): from the cache or computed into it. NULL where the table
 * would pass PEERS_MAX entries or memory runs out (ask peer itself then). */
const int32_t *peers_table(topo_t *t, const algo_t *a, peers_fn peer, const sched_t *s, int slots);

/* A table as a linkload_peer_fn's context (peers_at). */
typedef struct { const int32_t *dst; int p; } peers_table_t;

static inline int peers_at(const void *ctx, int c, int r) {
    const peers_table_t *x = ctx;
    return x->dst[(size_t)c * (size_t)x->p + (size_t)r];
}

/* peer's pattern for s (its messages at[ctx]) costed on t as
 * linkload_pattern_cost does, C channels: the link loads its routes decide
 * are kept in the cache of whoever owns t's routes (topo_route_owner), so
 * machines that share routes (topo_share_routes) count them once and each
 * costs them at its own rates. */
int peers_loads_cost(topo_t *t, const algo_t *a, peers_fn peer, const sched_t *s, int slots, int C,
                     linkload_peer_fn at, const void *ctx, cost_model_t *out, baton_err_t *e);
/* The same for row a's steps (linkload_steps_record; send(ctx, k, r)). */
int peers_steps_cost(topo_t *t, const algo_t *a, const sched_t *s, int nsteps, linkload_step_fn send,
                     const void *ctx, cost_model_t *out, baton_err_t *e);

#endif
