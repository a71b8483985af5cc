/* engine.h - run a schedule on a topology: the discrete-event simulator.
 *
 * Model (each rule is one place in engine.c, stream.c or xfer.c):
 *  - every (rank, channel) stream runs its program in order (sched.h);
 *  - a message can move once its send is posted and its receive is posted
 *    (rendezvous: a receive is posted when its stream reaches it), except
 *    eagerly: a message to or from a reducing switch (NVLS, SHARP: hardware
 *    that adds and fans out, not a stream posting receives), or any message
 *    on a machine with `eager: true`, moves once its send is posted and
 *    lands in the receiver's slot, its sender's held until its receive is
 *    posted (stream.c match);
 *  - a stream's sends start in program order (a matched send waits for the
 *    older sends of its stream to start);
 *  - a transfer then waits, first come first served, for a send port of the
 *    sender and a receive port of the receiver (topology `ports`; 0 means
 *    unlimited) and, under FIFO contention, for every directed link on its
 *    route (reserved in the order transfers become ready, from the earliest
 *    time all of them are free: a port or link idle before a later booking
 *    keeps that hole for a transfer that fits in it, sim/engine/book.h);
 *  - it takes latency(route) + bytes / bottleneck bandwidth (cut-through; the
 *    store-and-forward option adds every hop's time instead); each link is
 *    busy for the bytes' serialisation time, the ports for the whole
 *    transfer. Under FAIR contention the bytes flow at max-min fair rates
 *    (models/share.c) and the latency follows the last byte;
 *  - a reducing receive then costs bytes / reduce_bw on the rank's one reduce
 *    engine (FIFO: channels of one rank share it), and its stream waits;
 *  - at most max_inflight sends per rank's stream are posted and unfinished
 *    (a reducing switch's streams: up to 65,535, as its multicast is one
 *    operation the hardware fans out, not a GPU's NCCL_STEPS slots);
 *  - a message from a rank to itself is a local copy: no ports, links or time;
 *  - a protocol adds its latency to every message, divides link bandwidth by
 *    its efficiency, and adds its base latency once to the collective.
 * State is O(ranks x channels x max_inflight) plus the route cache. */
#ifndef BATON_ENGINE_H
#define BATON_ENGINE_H

#include <stdint.h>

#include "../../algorithms/sched.h"
#include "../../topologies/topo.h"
#include "verify.h"

struct sym;

/* One completed message, for observers such as the candy-kids tables. In
 * data mode `values` is the receiver's chunk after the receive. */
typedef struct engine_msg {
    double t_start, t_end;    /* t_end: delivered, when its receive took it (an eager message may
                                 have landed earlier: engine_rec_t.end) */
    int src, dst, chan;
    uint32_t chunk, nchunk;   /* the chunk range */
    uint64_t offset;          /* the range's first byte in the buffer */
    uint64_t bytes;
    int reduce;
    const uint64_t *values;   /* data mode only, else NULL: the first chunk's values */
    uint64_t nvalues;
    const int32_t *links;     /* the route's directed links (none for a local copy) */
    int nlinks;
    double wire;              /* how long it took on its route: bytes / (bottleneck x efficiency) */
    double eff;               /* that efficiency: link l itself is busy bytes / (its rate x eff) of it */
    const sched_t *sched;     /* the run's schedule (its chunk layout) */
    const verify_t *verify;   /* the verifier after this receive, NULL when not verifying */
} engine_msg_t;

/* How transfers share a link:
 *   FIFO  reserved whole, in the order they become ready (fast, default);
 *   FAIR  max-min fair shares, recomputed when a transfer starts or ends;
 *   NONE  links never queue (only ports limit). */
typedef enum { CONTENTION_FIFO = 0, CONTENTION_FAIR, CONTENTION_NONE } contention_t;

/* "fifo", "fair" or "none": the name the command line, JSON and a
 * calibration record use. */
const char *engine_contention_name(contention_t c);

typedef struct engine_opts {
    verify_mode_t verify;
    contention_t contention;
    int store_forward;        /* each hop receives the whole message before sending it on
                                 (FIFO and NONE; default cut-through) */
    const proto_cost_t *proto; /* protocol costs (models/proto.h); NULL: none */
    const proto_cost_t *const *member_proto;   /* a group's (algorithms/group.h): member k's
                                 protocol, NULL for none; NULL: `proto` for every member */
    const double *member_floor;  /* a group's: member k takes at least member_floor[k] from its
                                 start, and member_tail[k] more after (what its GPUs and hosts
                                 add: sim/nccl/ncclrule.h ncclrule_host_terms); NULL: nothing */
    const double *member_tail;
    verify_fill_fn fill;      /* data-mode start values; NULL: hashed */
    void *fill_ctx;
    void (*on_msg)(void *ctx, const engine_msg_t *m);
    void *msg_ctx;
    int link_stats;           /* fill engine_result_t's per-link arrays */
    int record;               /* keep a record per message (for the critical path) */
    const struct sym *sym;    /* the symmetric fast path (sim/engine/symmetry.h); NULL: every rank */
    double give_up_after;     /* > 0: stop once the clock passes this (the run then ends later
                                 than a rival's time, so it cannot be the fastest): gave_up, time_s
                                 infinite; 0: run to the end */
    const struct par_min *give_up_shared;   /* rivals running beside this one (util/par.h): the
                                 fastest finished one's time, read every ENGINE_TICK events, is
                                 give_up_after from then on where lower; NULL: none */
} engine_opts_t;

/* One message's history, for critical-path analysis. */
typedef struct engine_rec {
    int32_t src, dst;
    uint64_t bytes;
    double send_post, recv_post;   /* when each side had posted */
    double start, end, done;       /* transfer start, arrival, receive complete (after any add) */
    int64_t send_cause, recv_cause;/* the message each side last received before posting, -1 none */
} engine_rec_t;

typedef struct engine_result {
    double time_s;            /* when the last stream finished */
    uint64_t events;          /* events popped from the queue */
    uint64_t messages;
    uint64_t bytes_moved;     /* sum of message sizes */
    uint64_t max_rank_msgs;   /* most messages sent by one rank (not by a reducing switch) */
    uint64_t switch_msgs;     /* of `messages`, those the reducing switches sent */
    int reps;                 /* ranks simulated: all, or one per class of interchangeable ranks */
    uint64_t state_bytes;     /* memory the engine held (streams, sends in flight, queue, per-rank
                                 and per-link times), not the topology's or the route cache's */
    int verified;             /* 1 if verification ran and passed */
    uint64_t *link_bytes;     /* with opts.link_stats: bytes per directed link (malloc'd; */
    double *link_busy;        /* the caller frees both): seconds each link carried data at its own
                                 rate (bytes / (rate x efficiency)), so at most the run's time */
    double *member_end;       /* a group (algorithms/group.h): when each member ended, with its
                                 protocol's base latency and its floor and tail (engine_opts_t
                                 member_floor) (malloc'd; engine_result_free frees it) */
    int nmembers;
    engine_rec_t *recs;       /* with opts.record: one per message, in arrival order (malloc'd) */
    uint64_t nrecs;
    int gave_up;              /* 1: stopped past opts.give_up_after (time_s infinite, the rest partial) */
} engine_result_t;

/* The chain of messages that set the total time, walked back from the last
 * receive to complete: each step's predecessor is the receive that let the
 * later of its two sides post (an eager message that landed before its
 * receive was posted: the receiver's side). */
typedef struct engine_path {
    int steps;
    double transfer_s;        /* on the path: moving bytes (start to arrival) */
    double wait_s;            /* posted on both sides but waiting for a port or link */
    double reduce_s;          /* adding after arrival */
    double idle_s;            /* the rest: waiting for a post that is not on the path */
    int first, last;          /* record indices at the two ends */
} engine_path_t;

/* 0, or -1 without records. */
int engine_critical_path(const engine_result_t *r, engine_path_t *out);

/* Run s on t. The topology must have exactly s->nranks ranks. Returns 0, or
 * BATON_ESCHED (mismatched or deadlocked programs), BATON_EVERIFY, ... */
int engine_run(const sched_t *s, topo_t *t, const engine_opts_t *o,
               engine_result_t *r, baton_err_t *e);

/* The engine reports to the progress line (util/progress.h) every this
 * many events (a power of two): one test per event, a clock read per tick. */
#define ENGINE_TICK 65536

/* Bytes the engine's own state will take to run s with nr ranks simulated
 * (all, or the symmetric path's representatives) on t: its streams, slot
 * pool, bookings, queue and per-rank arrays, by their structures' sizes
 * (what engine_result_t.state_bytes reports after the run), before any is
 * allocated. Not the route cache, records or verifier (sim/engine/footprint.h). */
uint64_t engine_state_estimate(const sched_t *s, const topo_t *t, int nr, const engine_opts_t *o);

/* Release the per-link arrays and records of a result (safe on one without them). */
void engine_result_free(engine_result_t *r);

#endif
