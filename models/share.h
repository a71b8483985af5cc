/* share.h - max-min fair sharing of link bandwidth among concurrent flows.
 *
 * Flows cross links; at any moment every flow gets the max-min fair rate
 * (progressive filling: raise all rates together; when a link is full,
 * freeze the flows on it; repeat). Rates are recomputed whenever a flow
 * starts or ends, as SimGrid does, and each flow's remaining bytes advance
 * at its rate in between. A flow over no links finishes at once.
 *
 * The owner (the engine) asks for the earliest finishing flow once the
 * changes of an instant are in; `version` changes with every recomputation
 * so that an owner can drop completion events computed from stale rates. */
#ifndef BATON_SHARE_H
#define BATON_SHARE_H

#include <stdint.h>

typedef struct share share_t;

/* nlinks links with the given capacities (bytes/s, copied). NULL on OOM. */
share_t *share_create(int nlinks, const double *capacity);
void share_free(share_t *s);

/* Start a flow of `bytes` over `links` at time now; tag is returned when it
 * finishes. 0, or -1 on OOM. The links array must outlive the flow. Rates
 * are refilled when next asked for (share_next, share_rate): the starts and
 * ends of one instant cost one filling. */
int share_add(share_t *s, double now, const int32_t *links, int nlinks, double bytes, uint32_t tag);

/* The flow finishing first at fresh rates: its time and tag; 0 if there are
 * no flows, -1 on OOM. */
int share_next(share_t *s, double *when, uint32_t *tag);

/* Take out a flow whose bytes were all sent by time now: 1 and its tag, 0 if
 * none is done, -1 on OOM. Call until 0 to collect an instant's. */
int share_done(share_t *s, double now, uint32_t *tag);

/* Remove the flow with this tag at time now. 0, or -1 on OOM. */
int share_remove(share_t *s, double now, uint32_t tag);

/* A counter that changes whenever rates are refilled. */
uint64_t share_version(const share_t *s);

/* The current rate of the flow with this tag (bytes/s), for tests; -1 on OOM. */
double share_rate(share_t *s, uint32_t tag);

#endif
