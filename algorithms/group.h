/* group.h - several collectives at once on one machine, as one schedule.
 *
 * A training or serving step runs collectives side by side: the tensor-
 * parallel all-reduces of every TP group at once, a data-parallel reduce-
 * scatter crossing the NICs while they run. A group schedule holds members,
 * each a schedule built for its own ranks 0..n-1 and a list of the machine's
 * ranks it runs on, and presents them to the engine as one schedule:
 *
 *   machine rank:   0    1    2    3    4    5    6    7
 *   channels 0-1:   [ TP all-reduce A ]  [ TP all-reduce B ]    disjoint ranks
 *   channels 2-3:   [DP]           [DP]                         share channels
 *
 * Members on disjoint ranks share channel numbers; a rank in two members
 * (its TP group and its DP group) runs them on different channels, so their
 * streams go side by side and meet only where the machine makes them meet
 * (ports, links, the rank's reduce engine). Chunks and bytes are numbered
 * member after member, so every consumer sees one layout: sched_chunk_at and
 * sched_range_bytes ask the member that owns a chunk (sched_t.part). A
 * member may start at a time, or a time after another member has finished
 * (the engine keeps both, and each member's end). Members share the run's
 * protocol. */
#ifndef BATON_GROUP_H
#define BATON_GROUP_H

#include "sched.h"

/* A rank's channels in a group at most (sched_op_t's channel numbers are
 * 16-bit); past it sched_group_init fails with BATON_EUNSUP, its message
 * starting SCHED_GROUP_LIMIT_SAYS. */
#define SCHED_GROUP_MAX_CHANNELS 32767
#define SCHED_GROUP_LIMIT_SAYS "a group of"

typedef struct sched_member {
    sched_t s;               /* built for ranks 0..n-1 (and its helpers n, n+1, ...) */
    const int32_t *ranks;    /* member rank i runs on machine rank ranks[i], distinct */
    double start_s;          /* starts this long after 0, or after `after` has ended */
    int after;               /* the member it waits for (a lower index), -1: none */
    int helper0;             /* its helpers run on the machine's reducing switches helper0,
                                helper0 + 1, ...: those its ranks reach (0: the first) */
} sched_member_t;

struct sched_group {
    int n;                   /* members */
    const sched_member_t *m;
    int P, H;                /* machine ranks, helper ranks (the most any member uses) */
    uint32_t *chunk0;        /* [n + 1]: member k's first chunk in the group's numbering */
    uint64_t *byte0;         /* [n + 1]: its first byte */
    int *chan0;              /* [n]: its first channel */
    int32_t *own, *loc;      /* [(P + H) x channels]: the member a stream runs and its rank
                                there, -1: none (the stream has nothing to do) */
    int32_t *inv;            /* [n x (P + H)]: member k's rank of machine rank r, -1 */
};

/* Build the group of n members on a machine of P ranks into *out (which
 * points at g; both live until sched_group_free). Members must not have
 * machine orders that name ranks outside them. */
int sched_group_init(struct sched_group *g, const sched_member_t *m, int n, int P, sched_t *out, baton_err_t *e);
void sched_group_free(struct sched_group *g);

/* The member that owns chunk c of group g. */
int sched_group_member(const struct sched_group *g, uint32_t c);

#endif
