/* engine.c - the discrete-event simulator.
 *
 * Streams advance until they block (a receive not yet matched, or no free
 * send slot). Matching a posted send with a posted receive reserves ports and
 * links and schedules the transfer's end; every completion goes through the
 * event queue, so advancing one stream never recurses into another. */
#include "engine.h"

#include "../../algorithms/group.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "../../models/share.h"
#include "../../util/progress.h"
#include "book.h"
#include "evq.h"
#include "footprint.h"
#include "symmetry.h"

enum { S_READY, S_RECV, S_XFER, S_RECVD, S_SLOT, S_DONE };
enum { EV_XFER_DONE, EV_REDUCE_DONE, EV_SHARE, EV_HOP, EV_START };

/* How long the links of a route carry `bytes`: the bottleneck sets the pace. */
static double wire_time(const topo_route_t *rt, uint64_t bytes, double eff) {
    return rt->nlinks ? (double)bytes / (rt->bw * eff) : 0;
}

/* How long link l alone takes to carry `bytes`. */
static double link_time(const topo_t *t, int32_t l, uint64_t bytes, double eff) {
    return (double)bytes / (topo_dlink(t, l)->bw * topo_params_c(t)->bw_scale * eff);
}

#define NO_SLOT UINT32_MAX

typedef struct stream {
    sched_op_t op;
    uint32_t head, tail;     /* its posted, unfinished sends, oldest first (slot ids) */
    uint32_t pc;
    uint8_t state;
    uint8_t nout;            /* posted, unfinished sends */
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
    verify_payload_t payload;
} slot_t;

typedef struct engine {
    const sched_t *s;
    topo_t *t;
    const engine_opts_t *o;
    engine_result_t *r;
    baton_err_t *e;
    int p, C, S;             /* ranks, channels, sends in flight per stream */
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
    double nvls_eff;         /* transfers to and from a reducing switch: this share more */
    int nvls_end;            /* helper ranks below this are NVLS switches (multimem: nvls_eff);
                                the fabric's (SHARP) move at the link's rate */
    double gamma;
    double now;
    int ndone;
    uint64_t reccap;         /* records allocated */
    double tie;              /* FIFO: events this close to an instant's first are part of it (setup_tie) */
    double unlike_to;        /* FIFO: unlike events fell in a tie up to here: none is drawn in before it */
    evq_item_t *win;         /* FIFO: an instant's events, in the order pushed */
    uint32_t nwin, capwin;
    evq_t q;
    verify_t *v;
    int *left;               /* a group: streams of each member not yet done */
    double wall0;            /* progress line: when the run began (progress_clock) */
    double msgs_total;       /* progress line: the messages the run will deliver (about); 0: not yet known */
    int err;
} engine_t;

static int fail(engine_t *g, int code) { if (g->err == 0) g->err = code; return code; }

/* (One channel is the common case: no division on the hot path.) */
static int stream_rank(const engine_t *g, int si) { return g->C == 1 ? si : si / g->C; }

/* The simulated rank standing for rank x (itself, or its representative). */
static int rep_of(const engine_t *g, int x) { return g->lmap && x < g->s->nranks ? x % g->G : x; }

/* Where link l's state lives: itself, or the representative's link. */
static int32_t lk(const engine_t *g, int32_t l) { return g->lmap ? g->lmap[l] : l; }

/* How far a message moves: to - from, mod the ranks. */
static int32_t offset(const engine_t *g, int from, int to) {
    int32_t d = to - from;                     /* both in [0, p): one lap at most, no division */
    return d + (g->p & -(d < 0));
}
static int stream_chan(const engine_t *g, int si) { return g->C == 1 ? 0 : si % g->C; }

static double max2(double a, double b) { return a > b ? a : b; }

/* The share of a link's bandwidth a message gets: the protocol's, less to
 * and from a reducing switch. */
static int nvls_rank(const engine_t *g, int r) { return r >= g->s->nranks && r < g->nvls_end; }

/* The protocol stream si's messages use: the run's, or its member's. */
static const proto_cost_t *stream_proto(const engine_t *g, int si) {
    if (g->o->member_proto == NULL) return g->o->proto;
    int k = g->s->group->own[si];
    return k >= 0 ? g->o->member_proto[k] : NULL;
}

static double msg_eff(const engine_t *g, int si, int src, int dst) {
    const proto_cost_t *pc = stream_proto(g, si);
    return (pc ? pc->efficiency : 1) * (nvls_rank(g, src) || nvls_rank(g, dst) ? g->nvls_eff : 1);
}

/* The latency a message pays beyond its route's: the protocol's, between
 * ranks only (a reducing switch's own cost is paid once per call,
 * topo_params_t.nvls_lat). */
static double msg_extra(const engine_t *g, int si, int src, int dst) {
    if (src == dst || src >= g->s->nranks || dst >= g->s->nranks) return 0;
    const proto_cost_t *pc = stream_proto(g, si);
    return pc ? pc->msg_latency : 0;
}

/* Room for n resources in the booking scratch. */
static int book_room(engine_t *g, int n) {
    if (n <= g->capb) return 0;
    int cap = n < 64 ? 64 : n;
    int32_t *l = realloc(g->bl, (size_t)cap * sizeof *l);
    if (l) g->bl = l;
    double *o = realloc(g->bown, (size_t)cap * sizeof *o);
    if (o) g->bown = o;
    if (l == NULL || o == NULL) return fail(g, err_set(g->e, BATON_ENOMEM, "out of memory for link bookings"));
    g->capb = cap;
    return 0;
}

/* FIFO: the route's links (where their state lives) and how long each is
 * held, into the scratch: its own share, a fast one beside the bottleneck
 * is not held the whole time. */
static void book_route(engine_t *g, const topo_route_t *rt, uint64_t bytes, double eff, double wire) {
    for (int i = 0; i < rt->nlinks; i++) {
        double own = link_time(g->t, rt->links[i], bytes, eff);
        g->bl[i] = lk(g, rt->links[i]);
        g->bown[i] = own < wire ? own : wire;
    }
}

/* Ports are booked as links are, after them: rank r's send port k, then
 * its receive ports. */
static int32_t send_port(const engine_t *g, int r, int k) { return g->port0 + r * g->ports + k; }
static int32_t recv_port(const engine_t *g, int r, int k) { return g->port0 + (g->nr + r) * g->ports + k; }

/* The port (of k) with which the n resources in the scratch plus it fit
 * earliest (ties: the lowest); it is left in slot n of the scratch. */
static double pick_port(engine_t *g, int n, int32_t (*port)(const engine_t *, int, int), int r, double t0) {
    double best = -1;
    int32_t at = 0;
    for (int k = 0; k < g->ports; k++) {
        g->bl[n] = port(g, r, k);
        double t = book_fit(&g->book, g->bl, g->bown, n + 1, t0, g->now);
        if (best < 0 || t < best) best = t, at = g->bl[n];
    }
    g->bl[n] = at;
    return best;
}

/* reserve() where no resource of the transfer has a hole and at most one
 * port each way (the common case): the last end, in one pass and without
 * the scratch; 1 if it does not apply. */
static int reserve_plain(engine_t *g, int src, int dst, const topo_route_t *rt, uint64_t bytes, double eff, double wire,
                         double hold, int n, int ports, double *start) {
    int32_t sp = ports ? send_port(g, src, 0) : 0, rp = ports ? recv_port(g, rep_of(g, dst), 0) : 0;
    double t = g->now;
    int plain = !ports || (book_plain(&g->book, sp, &t) & book_plain(&g->book, rp, &t));
    for (int i = 0; i < n; i++) plain &= book_plain(&g->book, lk(g, rt->links[i]), &t);
    if (!plain) return 1;
    for (int i = 0; i < n; i++) {
        double own = link_time(g->t, rt->links[i], bytes, eff);
        if (book_take1(&g->book, lk(g, rt->links[i]), own < wire ? own : wire, t, g->now) < 0) return -1;
    }
    if (ports && (book_take1(&g->book, sp, hold, t, g->now) < 0 || book_take1(&g->book, rp, hold, t, g->now) < 0))
        return -1;
    *start = t;
    return 0;
}

/* Cut-through under FIFO and NONE: reserve ports (and links, FIFO) and
 * return the end time: all links at once, latency plus the bottleneck's time;
 * ports for the whole transfer. Every resource booked from a later start
 * keeps the hole before it for a transfer that fits (sim/engine/book.h). A send
 * port is chosen first, then a receive port, each the one that fits
 * earliest with what is chosen so far. */
static double reserve(engine_t *g, int si, int src, int dst, const topo_route_t *rt, uint64_t bytes, double *began) {
    int fifo = g->o->contention == CONTENTION_FIFO;
    int local = src == dst || src >= g->s->nranks || dst >= g->s->nranks;   /* switches have no port limit */
    int ports = local ? 0 : g->ports, n = fifo ? rt->nlinks : 0;
    double eff = msg_eff(g, si, src, dst), wire = wire_time(rt, bytes, eff);
    double hold = rt->lat + wire + msg_extra(g, si, src, dst), start = g->now;
    if (ports <= 1) {
        int rc = reserve_plain(g, src, dst, rt, bytes, eff, wire, hold, n, ports, &start);
        if (rc < 0) return fail(g, err_set(g->e, BATON_ENOMEM, "out of memory for link bookings"));
        if (rc == 0) return *began = start, start + hold;
    }
    if (book_room(g, n + 2) < 0) return -1;
    if (fifo) book_route(g, rt, bytes, eff, wire);
    if (ports == 1) {                          /* one port each: nothing to choose */
        g->bl[n] = send_port(g, src, 0), g->bl[n + 1] = recv_port(g, rep_of(g, dst), 0);
        g->bown[n] = g->bown[n + 1] = hold;
        n += 2;
        start = book_fit(&g->book, g->bl, g->bown, n, start, g->now);
    } else if (ports) {
        g->bown[n] = g->bown[n + 1] = hold;
        pick_port(g, n, send_port, src, g->now);
        start = pick_port(g, n + 1, recv_port, rep_of(g, dst), g->now);
        n += 2;
    } else if (n)
        start = book_fit(&g->book, g->bl, g->bown, n, start, g->now);
    if (n && book_take(&g->book, g->bl, g->bown, n, start, g->now) < 0)
        return fail(g, err_set(g->e, BATON_ENOMEM, "out of memory for link bookings"));
    *began = start;
    return start + hold;
}

static int push(engine_t *g, double t, uint32_t kind, uint32_t id) {
    if (evq_push(&g->q, t, kind, id) < 0)
        return fail(g, err_set(g->e, BATON_ENOMEM, "out of memory in the event queue"));
    return 0;
}

/* FAIR, when an instant that started or ended flows is over: a check at the
 * earliest finishing flow, tagged with the fresh rates' version. */
static int share_check(engine_t *g) {
    double when;
    uint32_t tag;
    int rc = share_next(g->share, &when, &tag);
    g->share_dirty = 0;
    if (rc < 0) return fail(g, err_set(g->e, BATON_ENOMEM, "out of memory for flows"));
    return rc == 0 ? 0 : push(g, when, EV_SHARE, (uint32_t)share_version(g->share));
}

/* FAIR and store and forward count the ports in use and queue what finds
 * them full, rather than book them ahead: a port is held only while its
 * message is on the way. */
static int counts_ports(const engine_t *g) { return g->waiting != NULL; }

/* Take a send port of src and a receive port of dst; 1 if either is full. */
static int take_ports(engine_t *g, int src, int dst) {
    if (src == dst || src >= g->s->nranks || dst >= g->s->nranks) return 0;   /* switches have no port limit */
    int rdst = rep_of(g, dst);
    if (g->ports > 0 && (g->send_busy[src] >= g->ports || g->recv_busy[rdst] >= g->ports)) return 1;
    g->send_busy[src]++;
    g->recv_busy[rdst]++;
    return 0;
}

static void give_ports(engine_t *g, int src, int dst) {
    if (src == dst || src >= g->s->nranks || dst >= g->s->nranks) return;
    g->send_busy[src]--;
    g->recv_busy[rep_of(g, dst)]--;
}

/* FAIR: take ports and join the fair shares; 1 if it has to wait. */
static int start_fair(engine_t *g, int src, int dst, uint32_t id, const topo_route_t *rt, uint64_t bytes) {
    if (take_ports(g, src, dst)) return 1;
    if (share_add(g->share, g->now, rt->links, src == dst ? 0 : rt->nlinks, (double)bytes / msg_eff(g, g->slots[id].src_si, src, dst),
                  id) < 0)
        return fail(g, err_set(g->e, BATON_ENOMEM, "out of memory for flows"));
    g->share_dirty = 1;
    return 0;
}

/* Store and forward: take ports and queue for the first link now; 1 if it
 * has to wait. Each later hop is booked when the message reaches it
 * (EV_HOP), so every link serves messages in the order they arrive at it
 * and is busy only while it carries one: nothing is booked ahead. */
static int start_hops(engine_t *g, int src, int dst, uint32_t id) {
    if (take_ports(g, src, dst)) return 1;
    g->slots[id].hop = 0;
    return push(g, g->now, EV_HOP, id);
}

/* Store and forward: message id has reached the start of its next link; it
 * goes when what reached that link before it has gone (FIFO). */
static int hop_event(engine_t *g, uint32_t id) {
    slot_t *sl = &g->slots[id];
    int src = stream_rank(g, sl->src_si), dst = sl->dst;
    topo_route_t rt;                      /* its own route: its stream may have moved on to another peer */
    int rc = topo_route(g->t, src, dst, &rt, g->e);
    if (rc < 0) return fail(g, rc);
    if (rt.nlinks == 0) return push(g, g->now, EV_XFER_DONE, id);
    int32_t l = rt.links[sl->hop];
    const topo_params_t *tp = topo_params_c(g->t);
    int fifo = g->o->contention == CONTENTION_FIFO;
    double begin = fifo ? max2(g->now, g->book.l[lk(g, l)].free_at) : g->now;   /* no holes: every hop books at its end */
    double wire = link_time(g->t, l, sl->bytes, msg_eff(g, sl->src_si, src, dst));
    if (fifo) g->book.l[lk(g, l)].free_at = begin + wire;
    if (sl->hop == 0) sl->t_start = begin;
    double arrive = begin + wire + topo_dlink(g->t, l)->lat * tp->lat_scale;
    if (++sl->hop < rt.nlinks) return push(g, arrive, EV_HOP, id);
    return push(g, arrive + msg_extra(g, sl->src_si, src, dst), EV_XFER_DONE, id);
}

/* Start a matched transfer under FAIR or store and forward; 1 if its ports
 * are full (it waits). */
static int start_counted(engine_t *g, uint32_t id) {
    slot_t *sl = &g->slots[id];
    int src = stream_rank(g, sl->src_si);
    if (g->o->store_forward) return start_hops(g, src, sl->dst, id);
    topo_route_t rt;                      /* its own route: its stream may have moved on to another peer */
    int rc = topo_route(g->t, src, sl->dst, &rt, g->e);
    if (rc < 0) return fail(g, rc);
    return start_fair(g, src, sl->dst, id, &rt, sl->bytes);
}

/* Claims on a rank's resources made at one instant (its sends' links and
 * ports, its one reduce engine) are served after every event of that
 * instant, in the order they were made, except that a rank's own claims
 * are served in channel order among the places its claims took. The order
 * of events follows rank numbers, the order of channels is the same on every
 * rank, so ranks that act alike get their resources alike and a
 * representative stands for them (sim/engine/symmetry.c). Each claim's event keeps
 * the place in the queue taken when the claim was made, so where no rank's
 * channels were out of order the run is event for event what serving each
 * claim at once gave. */
static int serve_one(engine_t *g, int si, int reduce, uint64_t x, uint64_t seq);

static int claim(engine_t *g, int si, int reduce, uint64_t x) {
    if (g->C == 1) return serve_one(g, si, reduce, x, evq_take_seq(&g->q));   /* one stream a rank: at once */
    if (g->nrq == g->caprq) {
        uint32_t nc = g->caprq ? 2 * g->caprq : 256;
        struct rq *a = realloc(g->rq, (size_t)nc * sizeof *a);
        uint32_t *pm = a ? realloc(g->rq_perm, 3 * (size_t)nc * sizeof *pm) : NULL;
        if (a) g->rq = a;
        if (pm == NULL) return fail(g, err_set(g->e, BATON_ENOMEM, "out of memory for this instant's claims"));
        g->rq_perm = pm, g->caprq = nc;
    }
    int rank = rep_of(g, stream_rank(g, si));
    uint32_t k = g->nrq++, *at = &g->rq_head[rank];
    if (*at == NO_SLOT) g->rq_rank[g->nrq_rank++] = rank;
    while (*at != NO_SLOT && g->rq[*at].si <= (uint32_t)si) at = &g->rq[*at].next;   /* by channel, stable */
    g->rq[k] = (struct rq){.si = (uint32_t)si, .next = *at, .reduce = (uint32_t)reduce, .x = x,
                           .seq = evq_take_seq(&g->q)};
    *at = k;
    return 0;
}

static int push_at(engine_t *g, double t, uint64_t seq, uint32_t kind, uint32_t id) {
    if (evq_push_at(&g->q, t, seq, kind, id) < 0)
        return fail(g, err_set(g->e, BATON_ENOMEM, "out of memory in the event queue"));
    if (g->nrq && (t < g->first_t || (t == g->first_t && seq < g->first_seq))) g->first_t = t, g->first_seq = seq;
    return 0;
}

static int start_cut_through(engine_t *g, uint32_t id, uint64_t seq);

/* Rank r's claims, by channel, into the places they took (perm[place] =
 * claim; places are claim numbers, so ascending is the order made). */
static void place_rank(engine_t *g, int r) {
    uint32_t n = 0, k, *pos = g->rq_perm + g->caprq;          /* scratch: 2 x caprq after perm */
    for (k = g->rq_head[r]; k != NO_SLOT; k = g->rq[k].next) pos[n++] = k;
    if (n == 1) { g->rq_perm[pos[0]] = pos[0]; return; }
    uint32_t *cl = pos + n;
    memcpy(cl, pos, n * sizeof *cl);                          /* the claims by channel */
    for (uint32_t i = 1; i < n; i++)                          /* their places ascending */
        for (uint32_t j = i; j > 0 && pos[j - 1] > pos[j]; j--) {
            uint32_t t = pos[j];
            pos[j] = pos[j - 1], pos[j - 1] = t;
        }
    for (uint32_t i = 0; i < n; i++) g->rq_perm[pos[i]] = cl[i];
}

static int serve_instant(engine_t *g) {
    g->first_t = DBL_MAX, g->first_seq = UINT64_MAX;
    for (int i = 0; i < g->nrq_rank; i++) {
        place_rank(g, g->rq_rank[i]);
        g->rq_head[g->rq_rank[i]] = NO_SLOT;
    }
    for (uint32_t i = 0; i < g->nrq && g->err == 0; i++) {
        const struct rq *c = &g->rq[g->rq_perm[i]];
        serve_one(g, (int)c->si, (int)c->reduce, c->x, g->rq[i].seq);   /* at the place's seq */
    }
    g->nrq = 0, g->nrq_rank = 0;
    return g->err;
}

/* A claim served: the send starts (x: its slot) or the reduce engine takes
 * x bytes; its event goes to place seq. */
static int serve_one(engine_t *g, int si, int reduce, uint64_t x, uint64_t seq) {
    if (!reduce) return start_cut_through(g, (uint32_t)x, seq);
    double *rf = &g->reduce_free[rep_of(g, stream_rank(g, si))];
    *rf = max2(g->now, *rf) + (double)x * g->gamma;
    return push_at(g, *rf, seq, EV_REDUCE_DONE, (uint32_t)si);
}

/* A send leaves now: its stream's route (cached while the peer stays), its
 * start and its latency beyond the links. */
static int departs(engine_t *g, uint32_t id) {
    slot_t *sl = &g->slots[id];
    int src_si = sl->src_si, src = stream_rank(g, src_si), dst = sl->dst;
    stream_t *ss = &g->st[src_si];
    if (ss->rt_peer != dst) {
        int rc = topo_route(g->t, src, dst, &ss->rt, g->e);
        if (rc < 0) return fail(g, rc);
        ss->rt_peer = dst;
    }
    sl->started = 1;
    sl->t_start = g->now;
    sl->lat = dst == src ? 0 : ss->rt.lat + msg_extra(g, src_si, src, dst);
    sl->bw = dst == src ? 0 : ss->rt.bw;
    return 0;
}

/* Start the matched message in slot (src_si, k) under fair sharing or store
 * and forward: the receiver's stream waits in S_XFER until it has arrived. */
static int start_transfer(engine_t *g, uint32_t id) {
    if (departs(g, id) < 0) return g->err;
    int rc = start_counted(g, id);
    if (rc == 1) g->waiting[g->nwaiting++] = id;           /* ports full: queue, in order */
    return rc < 0 ? rc : 0;
}

/* Cut-through under FIFO and NONE, served at the end of the instant: book
 * its links and ports; it arrives at the end time (an event at place seq). */
static int start_cut_through(engine_t *g, uint32_t id, uint64_t seq) {
    if (departs(g, id) < 0) return g->err;
    slot_t *sl = &g->slots[id];
    int src_si = sl->src_si;
    stream_t *ss = &g->st[src_si];
    double end = reserve(g, src_si, stream_rank(g, src_si), sl->dst, &ss->rt, sl->bytes, &sl->t_start);
    return g->err ? g->err : push_at(g, end, seq, EV_XFER_DONE, id);
}

/* Ports were freed; start waiting transfers that now fit, in order. */
static int unblock(engine_t *g) {
    int kept = 0;
    for (int i = 0; i < g->nwaiting && g->err == 0; i++) {
        uint32_t id = g->waiting[i];
        if (start_counted(g, id) == 1) g->waiting[kept++] = id;
    }
    g->nwaiting = kept;
    return g->err;
}

/* FAIR: flows whose bytes are all sent now; each arrives one latency later.
 * The rates are refilled once the instant is over (engine_loop). */
static int share_event(engine_t *g, uint32_t version) {
    uint32_t tag;
    int rc;
    if (version != (uint32_t)share_version(g->share)) return 0;      /* stale rates */
    while ((rc = share_done(g->share, g->now, &tag)) == 1) {
        g->share_dirty = 1;
        if (push(g, g->now + g->slots[tag].lat, EV_XFER_DONE, tag) < 0) return g->err;
    }
    return rc < 0 ? fail(g, err_set(g->e, BATON_ENOMEM, "out of memory for flows")) : 0;
}

/* A stream's sends leave in program order: start its unstarted sends, oldest
 * first, while they are matched (an unmatched older send holds back younger
 * ones). */
static int pump(engine_t *g, int src_si) {
    for (uint32_t id = g->st[src_si].head; id != NO_SLOT; id = g->slots[id].next) {
        if (g->slots[id].started) continue;
        if (!g->slots[id].matched) return 0;
        if (counts_ports(g)) {                        /* fair sharing, store and forward: now */
            if (start_transfer(g, id) < 0) return g->err;
            continue;
        }
        g->slots[id].started = 1;                     /* at the end of the instant */
        if (claim(g, src_si, 0, id) < 0) return g->err;
    }
    return 0;
}

/* Pair send slot id with the receive its receiver has posted. */
static int match(engine_t *g, uint32_t id, int dst_si) {
    slot_t *sl = &g->slots[id];
    int src_si = sl->src_si;
    stream_t *rs = &g->st[dst_si];
    int bad = rs->op.nchunk != sl->nchunk;
    if (g->lmap)        /* from a shifted copy of the sender: other chunk numbers, the same sizes */
        bad |= sched_range_bytes(g->s, rs->op.chunk, rs->op.nchunk) != sl->bytes;
    else
        bad |= rs->op.chunk != sl->to_chunk ||
               (sl->to_chunk != sl->chunk && sched_range_bytes(g->s, rs->op.chunk, rs->op.nchunk) != sl->bytes);
    if (bad)
        return fail(g, err_set(g->e, BATON_ESCHED,
            "%s: rank %d expects chunks %u+%u from rank %d, which sent chunks %u+%u",
            g->s->algo, stream_rank(g, dst_si), rs->op.chunk, rs->op.nchunk,
            stream_rank(g, src_si), sl->to_chunk, sl->nchunk));
    sl->matched = 1;
    rs->state = S_XFER;
    return pump(g, src_si);
}

/* The peer's stream an op talks to: the peer on my channel, or the named one. */
static int peer_stream(const engine_t *g, int si, int peer, int chan) {
    return peer * g->C + (chan >= 0 ? chan : stream_chan(g, si));
}

/* The oldest unmatched send of stream src_si to stream dst_si over `delta`
 * ranks, or NO_SLOT. */
static uint32_t find_send(const engine_t *g, int src_si, int dst_si, int32_t delta) {
    uint32_t id = g->st[src_si].head;
    while (id != NO_SLOT && (g->slots[id].matched || g->slots[id].dst_si != dst_si || g->slots[id].delta != delta))
        id = g->slots[id].next;
    return id;
}

/* A free slot at the young end of stream si's list; NO_SLOT when memory runs out. */
static uint32_t slot_new(engine_t *g, int si) {
    if (g->free_slot == NO_SLOT) {
        if (g->nslots == g->capslots) {
            uint32_t nc = g->capslots * 2;
            slot_t *a = nc > g->capslots ? realloc(g->slots, (size_t)nc * sizeof *a) : NULL;
            if (a) g->slots = a;
            uint32_t *w = a && g->waiting ? realloc(g->waiting, (size_t)nc * sizeof *w) : NULL;
            if (w) g->waiting = w;
            slot_hist_t *h = a && g->slh ? realloc(g->slh, (size_t)nc * sizeof *h) : NULL;
            if (h) g->slh = h;
            if (a == NULL || (g->waiting && w == NULL) || (g->slh && h == NULL)) return NO_SLOT;
            g->capslots = nc;
        }
        g->slots[g->nslots].next = g->free_slot;
        g->free_slot = g->nslots++;
    }
    uint32_t id = g->free_slot;
    g->free_slot = g->slots[id].next;
    stream_t *s = &g->st[si];
    if (s->tail == NO_SLOT) s->head = id;
    else g->slots[s->tail].next = id;
    s->tail = id;
    return id;
}

/* Take finished send id off stream si's list and back to the pool. */
static void slot_release(engine_t *g, int si, uint32_t id) {
    stream_t *s = &g->st[si];
    uint32_t prev = NO_SLOT, cur = s->head;
    while (cur != id) prev = cur, cur = g->slots[cur].next;
    uint32_t next = g->slots[id].next;
    if (prev == NO_SLOT) s->head = next;
    else g->slots[prev].next = next;
    if (s->tail == id) s->tail = prev;
    g->slots[id].used = 0;
    g->slots[id].next = g->free_slot;
    g->free_slot = id;
}

static int post_recv(engine_t *g, int si) {
    stream_t *s = &g->st[si];
    int peer = s->op.recv_peer;
    if (peer < 0 || peer >= g->p)
        return fail(g, err_set(g->e, BATON_ESCHED, "%s: rank %d receives from invalid rank %d",
                               g->s->algo, stream_rank(g, si), peer));
    if (s->op.recv_chan >= g->C)
        return fail(g, err_set(g->e, BATON_ESCHED, "%s: rank %d receives on channel %d of %d",
                               g->s->algo, stream_rank(g, si), s->op.recv_chan, g->C));
    uint32_t id = find_send(g, peer_stream(g, si, rep_of(g, peer), s->op.recv_chan), si,
                            offset(g, peer, stream_rank(g, si)));
    s->state = S_RECV;
    if (g->sh) g->sh[si].recv_post = g->now, g->sh[si].recv_cause = g->sh[si].last_msg;
    return id == NO_SLOT ? 0 : match(g, id, si);
}

static int post_send(engine_t *g, int si) {
    stream_t *s = &g->st[si];
    int src = stream_rank(g, si), dst = s->op.send_peer;
    if (dst < 0 || dst >= g->p || s->op.send_chan >= g->C)
        return fail(g, err_set(g->e, BATON_ESCHED, "%s: rank %d sends to invalid rank %d (channel %d)",
                               g->s->algo, src, dst, s->op.send_chan));
    if (s->op.chunk >= g->s->nchunks || s->op.to_chunk >= g->s->nchunks || s->op.nchunk > g->s->nchunks)
        return fail(g, err_set(g->e, BATON_ESCHED, "%s: rank %d sends chunks %u+%u of %u",
                               g->s->algo, src, s->op.chunk, s->op.nchunk, g->s->nchunks));
    uint32_t id = slot_new(g, si);
    if (id == NO_SLOT) return fail(g, err_set(g->e, BATON_ENOMEM, "out of memory for sends in flight"));
    slot_t *sl = &g->slots[id];
    int dst_si = peer_stream(g, si, rep_of(g, dst), s->op.send_chan);
    *sl = (slot_t){.next = NO_SLOT, .src_si = si, .delta = offset(g, src, dst), .dst = dst, .dst_si = dst_si,
                   .chunk = s->op.chunk,
                   .nchunk = s->op.nchunk, .to_chunk = s->op.to_chunk, .used = 1,

                   .bytes = sched_range_bytes(g->s, s->op.chunk, s->op.nchunk)};
    if (g->slh) g->slh[id] = (slot_hist_t){.post_time = g->now, .send_cause = g->sh[si].last_msg};
    if (g->v && verify_snapshot(g->v, src, sl->chunk, sl->nchunk, &sl->payload) < 0)
        return fail(g, err_set(g->e, BATON_ENOMEM, "out of memory for a payload"));
    s->nout++;
    g->rank_msgs[src]++;
    stream_t *d = &g->st[dst_si];
    int from = d->op.recv_peer;       /* the receiver's peer: me, or a shifted copy of me */
    if (d->state == S_RECV && rep_of(g, from) == src && offset(g, from, stream_rank(g, dst_si)) == sl->delta &&
        peer_stream(g, dst_si, src, d->op.recv_chan) == si && find_send(g, si, dst_si, sl->delta) == id)
        return match(g, id, dst_si);
    return 0;
}

/* Run stream si's program until it blocks or ends. */
static int advance(engine_t *g, int si);

/* A group's member k has ended (its last stream is done): it ends once its
 * protocol's and switches' fixed costs are paid, and the members waiting
 * for it start their start_s after that. */
static int member_done(engine_t *g, int k) {
    const struct sched_group *gr = g->s->group;
    const proto_cost_t *pc = g->o->member_proto ? g->o->member_proto[k] : g->o->proto;
    double end = g->now + (pc ? pc->base_latency : 0) + (gr->m[k].s.helpers ? topo_params_c(g->t)->nvls_lat : 0);
    g->r->member_end[k] = end;
    for (int j = k + 1; j < gr->n; j++) {
        if (gr->m[j].after != k) continue;
        for (size_t si = 0; si < (size_t)g->nr * g->C; si++)
            if (gr->own[si] == j && push(g, end + gr->m[j].start_s, EV_START, (uint32_t)si) < 0) return g->err;
    }
    return 0;
}

static int stream_done(engine_t *g, int si) {
    g->st[si].state = S_DONE;
    g->ndone++;
    int k = g->left ? g->s->group->own[si] : -1;
    return k >= 0 && --g->left[k] == 0 ? member_done(g, k) : 0;
}

/* Start every stream: at once, or (a group's member that starts later or
 * waits for another) by an event at its time. */
static void start_streams(engine_t *g) {
    const struct sched_group *gr = g->left ? g->s->group : NULL;
    for (int c = 0; c < g->C; c++)
        for (int r = 0; r < g->nr && g->err == 0; r++) {
            int si = r * g->C + c, k = gr ? gr->own[si] : -1;
            if (k >= 0 && gr->m[k].after >= 0) continue;          /* started by member_done */
            if (k >= 0 && gr->m[k].start_s > 0) push(g, gr->m[k].start_s, EV_START, (uint32_t)si);
            else advance(g, si);
        }
}

static int setup_group(engine_t *g) {
    const struct sched_group *gr = g->s->group;
    g->left = calloc((size_t)gr->n, sizeof *g->left);
    g->r->member_end = calloc((size_t)gr->n, sizeof *g->r->member_end);
    if (!g->left || !g->r->member_end) return fail(g, err_set(g->e, BATON_ENOMEM, "out of memory"));
    g->r->nmembers = gr->n;
    for (size_t si = 0; si < (size_t)g->nr * g->C; si++)
        if (gr->own[si] >= 0) g->left[gr->own[si]]++;
    return 0;
}

static int advance(engine_t *g, int si) {
    stream_t *s = &g->st[si];
    int rank = stream_rank(g, si), chan = stream_chan(g, si);
    while (g->err == 0) {
        if (s->state == S_READY) {
            if (!sched_op(g->s, rank, chan, s->pc, &s->op)) return stream_done(g, si);
            if (s->op.recv != RECV_NONE) return post_recv(g, si);
            s->state = S_RECVD;          /* nothing to receive: go straight to the send */
        }
        if (s->state != S_RECVD && s->state != S_SLOT) return 0;
        if (s->op.send) {
            if (s->nout >= g->S) { s->state = S_SLOT; return 0; }
            if (post_send(g, si) < 0) return g->err;
        }
        s->pc++;
        s->state = S_READY;
    }
    return g->err;
}

/* Keep the message's history (opts.record); returns its index or -1. */
static int64_t record(engine_t *g, uint32_t id, int src_si, int dst_si) {
    engine_result_t *r = g->r;
    if (g->sh == NULL || r->recs == NULL) return -1;
    if (r->nrecs == g->reccap) {
        uint64_t nc = g->reccap ? g->reccap * 2 : 4096;
        engine_rec_t *q = nc <= (1u << 24) ? realloc(r->recs, nc * sizeof *q) : NULL;
        if (q == NULL) { free(r->recs); r->recs = NULL; r->nrecs = 0; return -1; }   /* too many: no path */
        r->recs = q;
        g->reccap = nc;
    }
    const stream_hist_t *d = &g->sh[dst_si];
    const slot_hist_t *h = &g->slh[id];
    const slot_t *sl = &g->slots[id];
    r->recs[r->nrecs] = (engine_rec_t){.src = stream_rank(g, src_si), .dst = stream_rank(g, dst_si), .bytes = sl->bytes,
                                       .send_post = h->post_time, .recv_post = d->recv_post, .start = sl->t_start,
                                       .end = g->now, .done = g->now, .send_cause = h->send_cause, .recv_cause = d->recv_cause};
    return (int64_t)r->nrecs++;
}

/* Per-link accounting and observers, once a message has arrived. */
static void notify(engine_t *g, const slot_t *sl, int src_si, int dst_si, int reduce) {
    if (g->r->link_bytes == NULL && g->o->on_msg == NULL) return;
    topo_route_t route = {0}, *rt = &route;        /* the cache's: computed when the transfer started */
    if (topo_route(g->t, stream_rank(g, src_si), sl->dst, rt, NULL) < 0) return;
    int local = stream_rank(g, src_si) == stream_rank(g, dst_si);
    double wire = local ? 0 : wire_time(rt, sl->bytes, msg_eff(g, src_si, stream_rank(g, src_si), stream_rank(g, dst_si)));
    for (int i = 0; g->r->link_bytes && !local && i < rt->nlinks; i++) {
        g->r->link_bytes[rt->links[i]] += sl->bytes;
        g->r->link_busy[rt->links[i]] += wire;
    }
    if (g->o->on_msg == NULL) return;
    engine_msg_t m = {.t_start = sl->t_start, .t_end = g->now, .src = stream_rank(g, src_si),
                      .dst = stream_rank(g, dst_si), .chan = stream_chan(g, src_si),
                      .chunk = sl->to_chunk, .nchunk = sl->nchunk, .bytes = sl->bytes, .reduce = reduce,
                      .links = local ? NULL : rt->links, .nlinks = local ? 0 : rt->nlinks, .wire = wire,
                      .sched = g->s, .verify = g->v};
    uint64_t len;
    sched_chunk_at(g->s, sl->to_chunk, &m.offset, &len);
    const uint64_t *row = g->v ? verify_data(g->v, m.dst) : NULL;
    if (row) {                       /* the first chunk of the range */
        uint64_t off;
        sched_chunk_at(g->s, sl->to_chunk, &off, &m.nvalues);
        m.values = row + off;
    }
    g->o->on_msg(g->o->msg_ctx, &m);
}

/* A receive is complete: note it as the stream's latest, then run on. */
static void receive_done(engine_t *g, int si) {
    stream_hist_t *h = g->sh ? &g->sh[si] : NULL;
    if (h && h->pending_rec >= 0 && g->r->recs) g->r->recs[h->pending_rec].done = g->now;
    if (h) h->last_msg = g->r->recs ? h->pending_rec : -1;
    g->st[si].state = S_RECVD;
}

static int xfer_done(engine_t *g, uint32_t id) {
    slot_t *sl = &g->slots[id];
    int src_si = sl->src_si;
    int dst_si = sl->dst_si;
    stream_t *d = &g->st[dst_si], *s = &g->st[src_si];
    int reduce = d->op.recv == RECV_REDUCE;
    if (g->v) verify_deliver(g->v, sl->dst, sl->to_chunk, sl->nchunk, reduce, &sl->payload);
    notify(g, sl, src_si, dst_si, reduce);
    if (g->sh) g->sh[dst_si].pending_rec = record(g, id, src_si, dst_si);
    g->r->messages++;
    g->r->bytes_moved += sl->bytes;
    uint64_t bytes = sl->bytes;
    int sl_dst = sl->dst;
    slot_release(g, src_si, id);         /* sl is free from here on */
    s->nout--;
    if (counts_ports(g)) {
        give_ports(g, stream_rank(g, src_si), sl_dst);
        if (unblock(g) < 0) return g->err;
    }
    if (s->state == S_SLOT && advance(g, src_si) < 0) return g->err;
    if (reduce && g->gamma > 0 && sl_dst < g->s->nranks)     /* a switch adds at line rate */
        return claim(g, dst_si, 1, bytes);
    receive_done(g, dst_si);
    return advance(g, dst_si);
}

static int setup_fair(engine_t *g) {
    int nl = topo_nlinks(g->t);
    double *cap = malloc(((size_t)nl + 1) * sizeof *cap);
    if (cap == NULL) return -1;
    for (int l = 0; l < nl; l++) cap[l] = topo_dlink(g->t, l)->bw * topo_params_c(g->t)->bw_scale;
    g->share = share_create(nl, cap);
    free(cap);
    return g->share ? 0 : -1;
}

/* FAIR and store and forward: ports counted, a queue for those that wait. */
static int setup_ports(engine_t *g) {
    g->send_busy = calloc((size_t)g->p, sizeof *g->send_busy);
    g->recv_busy = calloc((size_t)g->p, sizeof *g->recv_busy);
    g->waiting = malloc((size_t)g->capslots * sizeof *g->waiting);
    return g->send_busy && g->recv_busy && g->waiting ? 0 : -1;
}

/* FIFO's tie: TIE_BYTES on the slowest link, at most an eighth of the
 * smallest chunk's bytes there (messages queued behind each other on a link
 * are a chunk apart at least: those times stand) and an eighth of the
 * shortest link latency (none on a machine without latency: its times are
 * the bytes' alone, the candy kids' whole seconds). Ranks that act alike
 * drift apart by the bytes their blocks differ in (one a block when p does
 * not divide n), a few to a few tens over a phase (33 ranks under a
 * quarter-speed uplink needed more than 64); a link moves whole packets
 * (NVLink's flits, PCIe's 64-256 B payloads), so arrivals this close are
 * not an order the machine keeps. */
#define TIE_BYTES 128.0
static void setup_tie(engine_t *g) {
    const topo_params_t *tp = topo_params_c(g->t);
    double bw = 0, lat = 0;
    for (int l = 0; l < topo_nlinks(g->t); l++) {
        const topo_dlink_t *d = topo_dlink(g->t, l);
        if (bw == 0 || d->bw < bw) bw = d->bw;
        if (d->lat > 0 && (lat == 0 || d->lat < lat)) lat = d->lat;
    }
    bw *= tp->bw_scale, lat *= tp->lat_scale;
    uint32_t nc = g->s->nchunks;
    uint64_t a = nc ? sched_range_bytes(g->s, 0, 1) : 0, b = nc ? sched_range_bytes(g->s, nc - 1, 1) : 0;
    double bytes = (double)(a < b ? a : b) / 8;
    if (bytes > TIE_BYTES) bytes = TIE_BYTES;
    g->tie = 0;
    if (g->o->contention == CONTENTION_FIFO && bw > 0 && lat > 0)
        g->tie = bytes / bw < lat / 8 ? bytes / bw : lat / 8;
}

static int setup(engine_t *g) {
    setup_tie(g);
    size_t ns = (size_t)g->nr * g->C;
    g->st = calloc(ns, sizeof *g->st);
    g->capslots = ns < 1024 ? 1024 : ns < (1u << 30) ? (uint32_t)ns : (1u << 30);   /* one per stream to start */
    g->slots = malloc((size_t)g->capslots * sizeof *g->slots);
    g->free_slot = NO_SLOT;
    if (g->o->record) {
        g->sh = malloc(ns * sizeof *g->sh);
        g->slh = malloc((size_t)g->capslots * sizeof *g->slh);
        if (g->sh == NULL || g->slh == NULL) return fail(g, err_set(g->e, BATON_ENOMEM, "out of memory for records"));
        for (size_t i = 0; i < ns; i++) g->sh[i] = (stream_hist_t){.last_msg = -1, .recv_cause = -1, .pending_rec = -1};
    }
    g->port0 = topo_nlinks(g->t) + 1;
    if ((int64_t)g->port0 + 2 * (int64_t)g->nr * g->ports > INT32_MAX)
        return fail(g, err_set(g->e, BATON_EINVAL, "%d ranks x %d ports: too many to book", g->nr, g->ports));
    int nobook = book_init(&g->book, g->port0 + 2 * g->nr * g->ports);
    g->book.slack = g->tie;
    g->reduce_free = calloc((size_t)g->nr, sizeof(double));
    g->rq_head = malloc(((size_t)g->nr + 1) * sizeof *g->rq_head);
    g->rq_rank = malloc(((size_t)g->nr + 1) * sizeof *g->rq_rank);
    for (int i = 0; g->rq_head && i < g->nr; i++) g->rq_head[i] = NO_SLOT;
    g->rank_msgs = calloc((size_t)g->nr, sizeof *g->rank_msgs);
    evq_init(&g->q);
    if (g->o->contention == CONTENTION_FAIR && setup_fair(g) < 0)
        return fail(g, err_set(g->e, BATON_ENOMEM, "out of memory for fair sharing"));
    if ((g->o->contention == CONTENTION_FAIR || g->o->store_forward) && setup_ports(g) < 0)
        return fail(g, err_set(g->e, BATON_ENOMEM, "out of memory for ports"));
    for (size_t i = 0; g->st && i < ns; i++) {
        g->st[i].rt_peer = -1;
        g->st[i].head = g->st[i].tail = NO_SLOT;
    }
    if (!g->st || !g->slots || nobook || !g->rank_msgs ||
        !g->reduce_free || !g->rq_head || !g->rq_rank)
        return fail(g, err_set(g->e, BATON_ENOMEM, "out of memory for %d ranks", g->nr));
    return 0;
}

/* Bytes the engine itself holds at the end (its arrays only grow): streams,
 * the slot pool, per-rank and per-link times, the event queue. */
static uint64_t state_bytes(const engine_t *g) {
    uint64_t ns = (uint64_t)g->nr * g->C;
    return ns * sizeof(stream_t) + (uint64_t)g->capslots * sizeof(slot_t) +
           (g->sh ? ns * sizeof(stream_hist_t) + (uint64_t)g->capslots * sizeof(slot_hist_t) : 0) +
           (uint64_t)g->nr * 2 * 8 + book_bytes(&g->book) + (uint64_t)g->capb * 12 +
           evq_bytes(&g->q);
}

uint64_t engine_state_estimate(const sched_t *s, const topo_t *t, int nr, const engine_opts_t *o) {
    uint64_t ns = (uint64_t)nr * (s->nchannels > 0 ? s->nchannels : 1), pool = ns < 1024 ? 1024 : ns;
    uint64_t ports = (uint64_t)(topo_params_c(t)->ports > 0 ? topo_params_c(t)->ports : 0);
    uint64_t b = ns * sizeof(stream_t) + 2 * pool * sizeof(slot_t)   /* the pool (setup's size) may double */
               + (uint64_t)nr * (sizeof(double) + 2 * sizeof(uint32_t) + sizeof(uint64_t))   /* reduce, claims, counts */
               + 2 * ((uint64_t)topo_nlinks(t) + 2 * nr * ports + 1) * sizeof(book_link_t)   /* and as many holes */
               + 2 * pool * sizeof(evq_item_t);                        /* about an event a stream, in blocks */
    if (o && o->record) b += ns * sizeof(stream_hist_t) + 2 * pool * sizeof(slot_hist_t);
    return b;
}

static void teardown(engine_t *g) {
    for (uint32_t i = 0; g->slots && i < g->nslots; i++)
        if (g->slots[i].used) verify_drop(&g->slots[i].payload);
    free(g->st);
    free(g->slots);
    free(g->sh);
    free(g->slh);
    book_free(&g->book);
    free(g->bl);
    free(g->bown);
    free(g->reduce_free);
    free(g->rq);
    free(g->rq_perm);
    free(g->rq_head);
    free(g->rq_rank);
    free(g->win);
    free(g->left);
    free(g->rank_msgs);
    share_free(g->share);
    free(g->send_busy);
    free(g->recv_busy);
    free(g->waiting);
    evq_free(&g->q);
    verify_free(g->v);
}

/* Name the first stuck stream: the programs wait for each other. */
static int deadlock(engine_t *g) {
    for (int si = 0; si < g->nr * g->C; si++) {
        stream_t *s = &g->st[si];
        if (s->state == S_DONE) continue;
        return fail(g, err_set(g->e, BATON_ESCHED,
            "%s: deadlock: rank %d (channel %d) is stuck at op %u (%s, peer %d) at t=%g s",
            g->s->algo, stream_rank(g, si), stream_chan(g, si), s->pc,
            sched_op_name(&s->op), s->op.recv ? s->op.recv_peer : s->op.send_peer, g->now));
    }
    return 0;
}

/* Every ENGINE_TICK events: the progress line (util/progress.h), if on.
 * Out of the loop's way: the loop only tests the event count. */
static void __attribute__((noinline, cold)) tick(engine_t *g) {
    if (!progress_on()) return;
    if (g->msgs_total == 0) {                 /* once, at the first tick: small runs never pay it */
        footprint_t f;
        footprint_sample(g->s, g->nr, &f);
        g->msgs_total = f.messages > 0 ? f.messages : -1;
    }
    progress_engine(g->r->events, g->r->messages, g->msgs_total > 0 ? g->msgs_total : 0, g->now,
                    progress_clock() - g->wall0);
}

static void handle(engine_t *g, const evq_item_t *ev) {
    if ((++g->r->events & (ENGINE_TICK - 1)) == 0) tick(g);
    if (ev->kind == EV_XFER_DONE) xfer_done(g, ev->id);
    else if (ev->kind == EV_SHARE) share_event(g, ev->id);
    else if (ev->kind == EV_HOP) hop_event(g, ev->id);
    else if (ev->kind == EV_START) advance(g, (int)ev->id);
    else { receive_done(g, (int)ev->id); advance(g, (int)ev->id); }
}

static int by_seq(const void *a, const void *b) {
    uint64_t x = ((const evq_item_t *)a)->seq, y = ((const evq_item_t *)b)->seq;
    return (x > y) - (x < y);
}

/* Room in the window for at least `more` events. */
static int win_room(engine_t *g, uint32_t more) {
    if (g->capwin - g->nwin >= more) return 0;
    uint32_t nc = g->capwin ? 2 * g->capwin : 256;
    while (nc - g->nwin < more) nc *= 2;
    evq_item_t *a = realloc(g->win, (size_t)nc * sizeof *a);
    if (a == NULL) return fail(g, err_set(g->e, BATON_ENOMEM, "out of memory for an instant's events"));
    g->win = a, g->capwin = nc;
    return 0;
}

/* FIFO: a new instant begins with event `first`. The events due within
 * g->tie of it, all pushed before it began, are that instant: handled at the
 * latest of their times, in the order they were pushed, as if they had tied
 * exactly. Blocks that differ by a byte make ranks that act alike finish a
 * sub-nanosecond apart; taken one by one, in time order, the first-come
 * bookings of FIFO then lay a rank's sends out whole before its neighbour's,
 * an interleaving that can cost a third more (issue 53: 12 GPUs on a switch,
 * direct all-reduce, 64 MiB against 64 MiB - 16 B). Taken as one instant
 * they book in the order the ranks' equal-sized run takes, and the time
 * changes by the bytes. Nothing is handled before its time (a lower bound
 * stays one); events pushed during the instant are not drawn in (a chain of
 * short transfers keeps its own times), so each instant waits below g->tie.
 * Where unlike events fall in the tie (alike()), none moves: a link off the
 * critical path stays out of the answer. */
/* Events alike enough to have tied but for a few bytes: of one kind and,
 * for messages, over routes of one bottleneck bandwidth (an NVLink arrival
 * and a network one a nanosecond apart are two times, not one). */
static int alike(const engine_t *g, const evq_item_t *a, const evq_item_t *b) {
    if (a->kind != b->kind) return 0;
    if (a->kind != EV_XFER_DONE && a->kind != EV_HOP) return 1;
    return g->slots[a->id].bw == g->slots[b->id].bw;
}

static int alike_all(const engine_t *g) {
    for (uint32_t i = 1; i < g->nwin; i++)
        if (!alike(g, &g->win[0], &g->win[i])) return 0;
    return 1;
}

static int instant(engine_t *g, const evq_item_t *first) {
    g->nwin = 0;
    if (win_room(g, 256) < 0) return g->err;
    g->win[g->nwin++] = *first;
    for (;;) {                                 /* the events due within the tie, in time order */
        uint32_t room = g->capwin - g->nwin;
        int n = evq_pop_until(&g->q, first->t + g->tie, g->win + g->nwin, room);
        if (n < 0) return fail(g, err_set(g->e, BATON_ENOMEM, "out of memory in the event queue"));
        g->nwin += (uint32_t)n;
        if ((uint32_t)n < room) break;
        if (win_room(g, g->capwin) < 0) return g->err;
    }
    g->now = first->t;
    if (g->nwin == 1) { handle(g, first); return g->err; }    /* alone */
    int sorted = 1;
    for (uint32_t i = 1; i < g->nwin; i++) sorted &= g->win[i].seq > g->win[i - 1].seq;
    g->now = g->win[g->nwin - 1].t;            /* the latest */
    if (!alike_all(g)) {                       /* unlike arrivals: their times stand, each its own instant */
        g->unlike_to = first->t + g->tie;
        for (uint32_t i = 1; i < g->nwin; i++)
            if (evq_push_at(&g->q, g->win[i].t, g->win[i].seq, g->win[i].kind, g->win[i].id) < 0)
                return fail(g, err_set(g->e, BATON_ENOMEM, "out of memory in the event queue"));
        g->now = first->t;
        handle(g, first);
        return g->err;
    }
    if (!sorted) qsort(g->win, g->nwin, sizeof *g->win, by_seq);
    for (uint32_t i = 0; i < g->nwin && g->err == 0; i++) handle(g, &g->win[i]);
    return g->err;
}

/* Start channel by channel (all ranks' channel 0 first): a channel's first
 * transfers then reserve ports and links together, before the next
 * channel's, which is the round order a direct algorithm intends. */
static int loop(engine_t *g) {
    if (g->s->group && g->lmap == NULL && setup_group(g) < 0) return g->err;
    if (progress_on()) g->wall0 = progress_clock();
    start_streams(g);
    evq_item_t ev = {0};
    int popped;
    while (g->err == 0) {
        if ((popped = evq_pop(&g->q, &ev)) < 0) return fail(g, err_set(g->e, BATON_ENOMEM, "out of memory in the event queue"));
        if (g->nrq && (popped == 0 || ev.t > g->now)) {     /* the instant is over: serve its claims */
            if (serve_instant(g) < 0) return g->err;
            if (popped && (g->first_t < ev.t || (g->first_t == ev.t && g->first_seq < ev.seq))) {
                if (evq_push_at(&g->q, ev.t, ev.seq, ev.kind, ev.id) < 0)   /* what they start comes first */
                    return fail(g, err_set(g->e, BATON_ENOMEM, "out of memory in the event queue"));
                continue;
            }
            if (popped == 0) continue;
        }
        if (g->share_dirty && (popped == 0 || ev.t > g->now)) {   /* the instant is over: refill the rates */
            if (share_check(g) < 0) return g->err;
            if (popped && evq_push_at(&g->q, ev.t, ev.seq, ev.kind, ev.id) < 0)   /* the check may come first */
                return fail(g, err_set(g->e, BATON_ENOMEM, "out of memory in the event queue"));
            continue;
        }
        if (popped == 0) break;
        if (ev.t > g->now && g->tie > 0 && ev.t > g->unlike_to) instant(g, &ev);
        else g->now = ev.t, handle(g, &ev);
    }
    if (g->err == 0 && g->ndone < g->nr * g->C) deadlock(g);
    return g->err;
}

const char *engine_contention_name(contention_t c) {
    static const char *const names[] = {"fifo", "fair", "none"};
    return c >= CONTENTION_FIFO && c <= CONTENTION_NONE ? names[c] : "?";
}

int engine_run(const sched_t *s, topo_t *t, const engine_opts_t *o,
               engine_result_t *r, baton_err_t *e) {
    static const engine_opts_t none = {0};
    const topo_params_t *tp = topo_params_c(t);
    engine_t g = {.s = s, .t = t, .o = o ? o : &none, .r = r, .e = e, .p = s->nranks + s->helpers,
                  .C = s->nchannels, .S = tp->max_inflight, .ports = tp->ports,
                  .gamma = tp->reduce_bw > 0 ? 1.0 / tp->reduce_bw : 0, .nvls_eff = tp->nvls_eff,
                  .nvls_end = s->nranks + topo_nvls_reducers(t)};
    if (g.o->member_proto && s->group == NULL) return err_set(e, BATON_EINVAL, "protocols per member need a group schedule");
    for (int k = -1; k < (g.o->member_proto ? s->group->n : 0); k++) {      /* the run's, then each member's */
        const proto_cost_t *pc = k < 0 ? g.o->proto : g.o->member_proto[k];
        if (pc && !(pc->efficiency > 0 && pc->efficiency <= 1))
            return err_set(e, BATON_EINVAL, "protocol efficiency must be in (0, 1]");
    }
    memset(r, 0, sizeof *r);
    g.nr = g.G = g.p;
    if (g.o->sym) {
        if (g.o->verify || g.o->on_msg || g.o->link_stats || g.o->record || g.o->contention == CONTENTION_FAIR || s->helpers)
            return err_set(e, BATON_EUNSUP, "the symmetric fast path simulates representatives only: it cannot "
                           "verify, trace, count per link, find the critical path, share fairly or reduce in the network");
        if (g.o->sym->period < 1 || s->nranks % g.o->sym->period || g.o->sym->lmap == NULL)
            return err_set(e, BATON_EINVAL, "symmetric period %d does not divide %d ranks", g.o->sym->period, s->nranks);
        if (s->group) return err_set(e, BATON_EUNSUP, "the symmetric fast path runs one collective");
        g.G = g.nr = g.o->sym->period;
        g.lmap = g.o->sym->lmap;
    }
    if (topo_nranks(t) != s->nranks)
        return err_set(e, BATON_EINVAL, "the schedule has %d ranks but topology '%s' has %d",
                       s->nranks, topo_name(t), topo_nranks(t));
    if (s->helpers > topo_nreducers(t))
        return err_set(e, BATON_EUNSUP, "%s needs a switch that reduces in the network (`reduce: true` in %s)",
                       s->algo, topo_name(t));
    if (g.S < 1 || g.S > 255) return err_set(e, BATON_EINVAL, "max_inflight must be 1..255");
    int rc = footprint_check(s, t, g.nr, g.o, e);      /* refuse what cannot fit, before allocating it */
    if (rc < 0) return rc;
    if (g.o->link_stats) {
        r->link_bytes = calloc((size_t)topo_nlinks(t) + 1, sizeof *r->link_bytes);
        r->link_busy = calloc((size_t)topo_nlinks(t) + 1, sizeof *r->link_busy);
        if (!r->link_bytes || !r->link_busy) { engine_result_free(r); return err_set(e, BATON_ENOMEM, "out of memory"); }
    }
    if (g.o->record && (r->recs = malloc(4096 * sizeof *r->recs)) == NULL) return err_set(e, BATON_ENOMEM, "out of memory");
    g.reccap = g.o->record ? 4096 : 0;
    if (g.o->verify != VERIFY_NONE &&
        !(g.v = verify_create(s, g.o->verify, g.o->fill, g.o->fill_ctx, e)))
        return e && e->code ? e->code : BATON_ENOMEM;
    if (setup(&g) == 0 && loop(&g) == 0) {
        r->time_s = g.now + (g.o->proto && r->messages ? g.o->proto->base_latency : 0) +
                    (s->helpers && r->messages ? topo_params_c(t)->nvls_lat : 0);   /* the switches' synchronisation */
        for (int k = 0; g.o->member_proto && k < s->group->n; k++)     /* each member paid its own */
            r->time_s = k == 0 || r->member_end[k] > r->time_s ? r->member_end[k] : r->time_s;
        for (int i = 0; i < g.nr; i++)
            if (g.rank_msgs[i] > r->max_rank_msgs) r->max_rank_msgs = g.rank_msgs[i];
        if (g.lmap) {                            /* every representative stands for p / G ranks */
            r->messages *= (uint64_t)(s->nranks / g.G);
            r->bytes_moved *= (uint64_t)(s->nranks / g.G);
        }
        r->reps = g.nr;
        r->state_bytes = state_bytes(&g);
        if (g.v && verify_check(g.v, e) < 0) fail(&g, BATON_EVERIFY);
        r->verified = g.v != NULL && g.err == 0;
    }
    teardown(&g);
    return g.err;
}

void engine_result_free(engine_result_t *r) {
    free(r->link_bytes);
    free(r->link_busy);
    free(r->recs);
    free(r->member_end);
    r->member_end = NULL;
    r->nmembers = 0;
    r->link_bytes = NULL;
    r->link_busy = NULL;
    r->recs = NULL;
    r->nrecs = 0;
}

int engine_critical_path(const engine_result_t *r, engine_path_t *out) {
    memset(out, 0, sizeof *out);
    out->first = out->last = -1;
    if (r->recs == NULL || r->nrecs == 0) return -1;
    int64_t m = 0;
    for (uint64_t i = 1; i < r->nrecs; i++)
        if (r->recs[i].done > r->recs[m].done) m = (int64_t)i;
    out->last = (int)m;
    double t = r->recs[m].done;
    while (m >= 0 && out->steps < (1 << 26)) {
        const engine_rec_t *x = &r->recs[m];
        double posted = x->send_post > x->recv_post ? x->send_post : x->recv_post;
        out->reduce_s += x->done - x->end;
        out->transfer_s += x->end - x->start;
        out->wait_s += x->start - posted;
        out->idle_s += t - x->done;          /* between this step and the next one up the path */
        t = posted;
        out->first = (int)m;
        out->steps++;
        m = x->send_post >= x->recv_post ? x->send_cause : x->recv_cause;
        if (m >= 0) out->idle_s += posted - r->recs[m].done, t = r->recs[m].done;
    }
    out->idle_s += t;                        /* before the first step */
    return 0;
}
