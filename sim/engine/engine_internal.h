/* engine_internal.h - what the engine's files share (engine.c, xfer.c,
 * stream.c): the run's state and the small helpers each of them uses.
 *
 * The engine is one simulator in three files, each one side of it:
 *   engine.c  the event loop: setup, instants and their claims, the loop,
 *             engine_run, teardown, the critical path
 *   xfer.c    the link side: wire and link times, bookings, ports,
 *             reservation, fair sharing, store and forward, cut-through starts
 *   stream.c  the stream side: slots, posting sends and receives, matching,
 *             completion, per-link accounting and records
 * Private to sim/engine/ (engine.h is the interface). The build links with
 * LTO, so a call across these files costs what a call within one did. */
#ifndef BATON_ENGINE_INTERNAL_H
#define BATON_ENGINE_INTERNAL_H

#include "engine.h"

#include "../../models/share.h"
#include "book.h"
#include "evq.h"

/* A stream's state, and the kinds of event in the queue. */
enum { S_READY, S_RECV, S_XFER, S_RECVD, S_SLOT, S_DONE };
enum { EV_XFER_DONE, EV_REDUCE_DONE, EV_SHARE, EV_HOP, EV_START };

#define NO_SLOT UINT32_MAX

typedef struct stream {
    sched_op_t op;
    uint32_t head, tail;     /* its posted, unfinished sends, oldest first (slot ids) */
    uint32_t unstarted;      /* the oldest of them not started (they start in order), NO_SLOT none */
    uint32_t pc;
    uint8_t state;
    uint16_t nout;           /* posted, unfinished sends */
    int32_t rt_peer;         /* the last receiver this stream sent to, -1 none */
    topo_route_t rt;         /* its route: streams mostly talk to one peer */
} stream_t;

/* What opts.record adds per stream and per send (kept apart, so the hot
 * records stay small when no one asks for the critical path). */
typedef struct stream_hist {
    int64_t last_msg;        /* the record of its last completed receive, -1 none */
    double recv_post;        /* when its current receive was posted */
    int64_t recv_cause;      /* last_msg then */
    int64_t pending_rec;     /* the record of the receive in progress */
} stream_hist_t;

typedef struct slot_hist {
    double post_time;        /* when the send was posted */
    int64_t send_cause;      /* the sender's last completed receive then */
} slot_hist_t;

/* A posted send. Slots come from one pool, sized by the sends in flight at
 * once rather than by ranks x max_inflight; a slot's id names its transfer
 * in the event queue. */
typedef struct slot {
    uint64_t bytes;
    double t_start;
    double t_end;            /* when it arrived (eager: it may wait in the receiver's slot) */
    double lat;              /* the route's latency (fair sharing adds it at the end) */
    double bw;               /* the route's bottleneck (FIFO's tie: which arrivals are alike) */
    int32_t dst;             /* receiving rank */
    int32_t dst_si;          /* receiving stream */
    int32_t src_si;          /* sending stream */
    int32_t delta;           /* dst - src (mod ranks): which shifted copy receives it */
    uint32_t next;           /* the sending stream's next younger send, or the free list */
    uint32_t chunk, nchunk, to_chunk;
    uint16_t hop;            /* store and forward: the link it queues for next */
    uint8_t used, matched, started;
    uint8_t bound, arrived;  /* its receive is posted and paired with it; it has landed */
    verify_payload_t payload;
} slot_t;

typedef struct engine {
    const sched_t *s;
    topo_t *t;
    const engine_opts_t *o;
    engine_result_t *r;
    baton_err_t *e;
    int p, C, S;             /* ranks, channels, sends in flight per stream */
    int eager;               /* sends start before their receives are posted (topo `eager`) */
    int nr;                  /* ranks simulated: p, or the representatives 0..G-1 */
    int G;                   /* symmetric fast path: ranks r and r + G act alike; else p */
    const int32_t *lmap;     /* symmetric fast path: link -> the representative's link */
    stream_t *st;            /* [rank * C + chan] */
    slot_t *slots;           /* the pool */
    stream_hist_t *sh;       /* opts.record: per stream */
    slot_hist_t *slh;        /* opts.record: per slot of the pool */
    uint32_t nslots, capslots, free_slot;
    book_t book;             /* per directed link (FIFO), then per port: bookings and holes (sim/engine/book.h) */
    int32_t port0;           /* the first port's place in the book: past the links */
    int32_t *bl;             /* FIFO: scratch, a route's links (as lk() maps them) */
    double *bown;            /* FIFO: scratch, the time each of them is held */
    int capb;
    double *reduce_free;     /* per rank: its one reduce engine, shared by channels */
    struct rq { uint32_t si, next, reduce; uint64_t x, seq; } *rq;   /* this instant's claims, in the
                                order made: a send's start (x: its slot) or a reduce (x: its
                                bytes); seq: its event's place in the queue, taken then */
    uint32_t *rq_perm;       /* the order they are served in, then scratch (2 x caprq) */
    uint32_t nrq, caprq;
    uint32_t *rq_head;       /* per rank: its claims by channel (NO_SLOT: none) */
    int32_t *rq_rank;        /* the ranks with claims */
    int nrq_rank;
    double first_t;          /* the earliest event serving them pushed (its place: first_seq) */
    uint64_t first_seq;
    uint64_t *rank_msgs;
    share_t *share;          /* FAIR contention */
    int share_dirty;         /* flows started or ended this instant: refill when it is over */
    int *send_busy, *recv_busy;      /* FAIR, store and forward: ports in use per rank */
    uint32_t *waiting;       /* FAIR, store and forward: matched transfers waiting for ports, FIFO (capslots) */
    int nwaiting;
    int ports;
    int nvls_end;            /* helper ranks below this are NVLS switches (multimem: topo_nvls_share);
                                the fabric's (SHARP) move at the link's rate */
    double gamma;
    double now;
    int ndone;
    uint64_t reccap;         /* records allocated */
    double tie;              /* FIFO: events this close to an instant's first are part of it (setup_tie) */
    double unlike_to;        /* FIFO: unlike events fell in a tie up to here: none is drawn in before it */
    double give_up;          /* stop at an event later than this (opts.give_up_after; infinite: never) */
    const struct par_min *rivals;   /* opts.give_up_shared where a run may give up; NULL: none */
    int32_t bound_link;      /* FIFO with give_up: the link with the most hold still to book (-1: none) */
    double bound_left;       /* its holds not booked yet: the run ends no sooner than now + this */
    double bound_slack;      /* what the book's slack may shave off them (its messages x the tie) */
    evq_item_t *win;         /* FIFO: an instant's events, in the order pushed */
    uint32_t nwin, capwin;
    evq_t q;
    verify_t *v;
    int *left;               /* a group: streams of each member not yet done */
    double wall0;            /* progress line: when the run began (progress_clock) */
    double msgs_total;       /* progress line: the messages the run will deliver (about); 0: not yet known */
    int err;
} engine_t;

/* The run's first error is the one it reports; returns code. */
static inline int engine_fail(engine_t *g, int code) { if (g->err == 0) g->err = code; return code; }

/* Stream si's rank and channel. (One channel is the common case: no
 * division on the hot path.) */
static inline int stream_rank(const engine_t *g, int si) { return g->C == 1 ? si : si / g->C; }
static inline int stream_chan(const engine_t *g, int si) { return g->C == 1 ? 0 : si % g->C; }

/* The simulated rank standing for rank x (itself, or its representative). */
static inline int engine_rep(const engine_t *g, int x) { return g->lmap && x < g->s->nranks ? x % g->G : x; }

static inline double engine_max2(double a, double b) { return a > b ? a : b; }

/* --- engine.c: the event loop ------------------------------------------- */
/* Queue event (kind, id) at time t; BATON_ENOMEM (recorded) if it cannot. */
int engine_push(engine_t *g, double t, uint32_t kind, uint32_t id);
/* Queue an event at a place in the queue taken earlier (seq, a claim's). */
int engine_push_at(engine_t *g, double t, uint64_t seq, uint32_t kind, uint32_t id);
/* Claim stream si's rank's resources at this instant: a send's start
 * (reduce 0, x: its slot) or the reduce engine (reduce 1, x: bytes). */
int engine_claim(engine_t *g, int si, int reduce, uint64_t x);
/* What a call costs once beyond its messages: the protocol's base latency
 * and, with reducing switches, their synchronisation; nothing for a call
 * that sends nothing (one rank), as NCCL returns at once there. */
double engine_call_cost(const engine_t *g, const proto_cost_t *pc, int helpers, int sends);

/* --- xfer.c: the link side ---------------------------------------------- */
/* How long the links of a route carry `bytes` at efficiency eff. */
double xfer_wire(const topo_route_t *rt, uint64_t bytes, double eff);
/* How long link l alone takes to carry `bytes` at efficiency eff (its own
 * rate, not the route's bottleneck). */
double xfer_link_time(const topo_t *t, int32_t l, uint64_t bytes, double eff);
/* The share of a link's bandwidth stream si's message from src to dst gets. */
double xfer_eff(const engine_t *g, int si, int src, int dst);
/* FAIR and store and forward only: ports are counted, not booked. */
int xfer_counts_ports(const engine_t *g);
/* Start matched send id under FAIR or store and forward, or queue it. */
int xfer_start(engine_t *g, uint32_t id);
/* Start matched send id cut-through (FIFO, NONE); its arrival at place seq. */
int xfer_cut_through(engine_t *g, uint32_t id, uint64_t seq);
/* Release the ports of a message from src to dst (counted ports). */
void xfer_give_ports(engine_t *g, int src, int dst);
/* Start the waiting transfers that now fit (counted ports). */
int xfer_unblock(engine_t *g);
/* EV_HOP: store and forward, message id at the start of its next link. */
int xfer_hop(engine_t *g, uint32_t id);
/* EV_SHARE: FAIR, flows that have sent their bytes (rates of `version`). */
int xfer_share_event(engine_t *g, uint32_t version);
/* FAIR, at the end of an instant that changed flows: the next check. */
int xfer_share_check(engine_t *g);
/* FAIR's flows and the counted ports, as the options ask; 0 or an error. */
int xfer_setup(engine_t *g);
/* The busiest link's bound on the run's end, for giving up (xfer.c). */
int xfer_bound_setup(engine_t *g);
static inline int xfer_bound_passes(const engine_t *g) {
    return g->bound_link >= 0 && g->now + g->bound_left - g->bound_slack > g->give_up * (1 + 1e-9);
}

/* --- stream.c: the stream side ------------------------------------------ */
/* Run stream si's program until it blocks or ends. */
int stream_advance(engine_t *g, int si);
/* Start every stream (a group's later members by an event). */
void stream_start_all(engine_t *g);
/* A group schedule: count each member's streams, make its end times. */
int stream_setup_group(engine_t *g);
/* EV_XFER_DONE: message id has arrived; deliver it and run both streams on. */
int stream_xfer_done(engine_t *g, uint32_t id);
/* A receive is complete (EV_REDUCE_DONE: after its add). */
void stream_receive_done(engine_t *g, int si);

#endif
