/* replay_share.h - a replay's communications that overlap in time, run
 * together so that they share the machine (docs/decisions/chakra.md,
 * "Communications that overlap share the machine").
 *
 * replay.c walks the trace with each communication's time alone, hands
 * this file what ran when, and walks again with what it gives back, until
 * nothing changes (REPLAY_ROUNDS at most): a start depends on the times
 * before it, so sharing is a fixed point, not one pass.
 *
 * One round: the spans sorted by start are cut into chains, each span
 * starting before the chain's latest end so far. A chain of two or more is
 * one engine run (conc_run), each member from its own start, under its own
 * row, protocol and channels. What the run gives a member over what the
 * same kind of run gives it alone is the slowdown sharing costs it, and the
 * replay's time for it alone (as `baton sim` gives it) is stretched by that
 * ratio: a member nothing slows keeps its time to the digit. */
#ifndef BATON_REPLAY_SHARE_H
#define BATON_REPLAY_SHARE_H

#include <stdint.h>

#include "../../topologies/topo.h"
#include "../../util/err.h"
#include "replay_comm.h"

#define REPLAY_ROUNDS 8
#define REPLAY_SHARE_FORM 0.10   /* a kind whose joint-run form is further than this from its time alone
                                    is timed alone (replay_share.c, alone) */

/* One communication as the last walk ran it. */
typedef struct replay_span {
    int64_t inst;              /* which (replay_node_t.inst) */
    int comm;                  /* its kind: an index into the replay's replay_comm_t list */
    double start_s, end_s;
    double shared_s;           /* out: its time shared with its chain; its kind's each_s where it overlaps
                                  nothing, or its chain cannot run together */
} replay_span_t;

/* What a round did, for the replay's summary. */
typedef struct replay_share_stats {
    uint32_t chains;           /* chains of two or more run together */
    uint32_t apart;            /* of the spans that overlapped others, those timed alone all the same: a
                                  kind conc_run cannot run or runs more than REPLAY_SHARE_FORM apart from
                                  its time alone, or a chain whose joint run failed */
} replay_share_stats_t;

/* Fill v[i].shared_s for the n spans of v (sorted here by start, then inst).
 * comm[] is the replay's list of kinds; each kind's conc_s is filled the
 * first time it is needed. 0, or a negative error code (out of memory:
 * a chain that cannot run together is not an error). */
int replay_share(topo_t *t, const replay_req_t *q, replay_comm_t *comm, replay_span_t *v, uint32_t n,
                 replay_share_stats_t *st, baton_err_t *e);

#endif
