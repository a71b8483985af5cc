/* xfer.c - the engine's link side: how a matched message crosses the
 * machine (engine.h's model, its ports, links and contention rules).
 *
 * Apart from the streams (stream.c) because this is where the machine's
 * resources are: the time a route and a link take, FIFO bookings of links
 * and ports with their holes (book.h), the ports counted under FAIR and
 * store and forward, max-min fair flows (models/share.h) and hop-by-hop
 * forwarding. It starts transfers and queues their arrival; the streams
 * decide when a message is matched and what its arrival does. */
#include "engine_internal.h"

#include <math.h>
#include <stdlib.h>

#include "../../algorithms/group.h"

/* How long the links of a route carry `bytes`: the bottleneck sets the pace. */
double xfer_wire(const topo_route_t *rt, uint64_t bytes, double eff) {
    return rt->nlinks ? (double)bytes / (rt->bw * eff) : 0;
}

double xfer_link_time(const topo_t *t, int32_t l, uint64_t bytes, double eff) {
    return (double)bytes / (topo_dlink(t, l)->bw * topo_params_c(t)->bw_scale * eff);
}

/* The share of a link's bandwidth a message gets: the protocol's, less to
 * and from a reducing switch. */
static int nvls_rank(const engine_t *g, int r) { return r >= g->s->nranks && r < g->nvls_end; }

/* The protocol stream si's messages use: the run's, or its member's. */
static const proto_cost_t *stream_proto(const engine_t *g, int si) {
    if (g->o->member_proto == NULL) return g->o->proto;
    int k = g->s->group->own[si];
    return k >= 0 ? g->o->member_proto[k] : NULL;
}

/* A transfer to or from an NVLS switch: the switch's share for the run
 * stream si belongs to, its member's in a group (topo_nvls_share: a
 * 4-rank group on one node's switch is a domain of 4). */
static double nvls_share(const engine_t *g, int si) {
    const sched_t *s = g->s;
    int k = s->group ? s->group->own[si] : -1;
    if (k >= 0) s = &s->group->m[k].s;
    return topo_nvls_share(g->t, s->nranks, s->helpers);
}

double xfer_eff(const engine_t *g, int si, int src, int dst) {
    const proto_cost_t *pc = stream_proto(g, si);
    double eff = pc ? pc->efficiency : 1;
    return nvls_rank(g, src) || nvls_rank(g, dst) ? eff * nvls_share(g, si) : eff;
}

/* The latency a message of `bytes` on route rt pays beyond its route's:
 * the protocol's, between ranks only (a reducing switch's own cost is paid
 * once per call, topo_params_t.nvls_lat), and across the network the
 * host's tag match where it matches in software (topo_match_lat) and the
 * rendezvous where the message on the wire (the protocol's flags and all)
 * is longer than the transport sends eagerly (topo_rdzv_lat). */
static double msg_extra(const engine_t *g, int si, int src, int dst, const topo_route_t *rt, uint64_t bytes) {
    if (src == dst || src >= g->s->nranks || dst >= g->s->nranks) return 0;
    const proto_cost_t *pc = stream_proto(g, si);
    double extra = pc ? pc->msg_latency : 0, wire = (double)bytes / (pc ? pc->efficiency : 1), rdzv = topo_rdzv_lat(g->t);
    double match = topo_match_lat(g->t);
    if ((rdzv > 0 || match > 0) && topo_route_crosses_nic(g->t, rt))
        extra += match + (rdzv > 0 && wire > topo_params_c(g->t)->rdzv_above ? rdzv : 0);
    return extra;
}

/* Where link l's state lives: itself, or the representative's link. */
static int32_t lk(const engine_t *g, int32_t l) { return g->lmap ? g->lmap[l] : l; }

/* How long FIFO holds link l for a message of `bytes` whose route's
 * bottleneck takes `wire`: its own time, a fast link beside the bottleneck
 * not the whole time. Booking and the bound's tally both read it. */
static double link_hold(const engine_t *g, int32_t l, uint64_t bytes, double eff, double wire) {
    double own = xfer_link_time(g->t, l, bytes, eff);
    return own < wire ? own : wire;
}

/* A booking on the bound's link takes its hold off what is left to book. */
static void bound_take(engine_t *g, int32_t l, double hold) {
    if (l == g->bound_link) g->bound_left -= hold;
}

/* Room for n resources in the booking scratch. */
static int book_room(engine_t *g, int n) {
    if (n <= g->capb) return 0;
    int cap = n < 64 ? 64 : n;
    int32_t *l = realloc(g->bl, (size_t)cap * sizeof *l);
    if (l) g->bl = l;
    double *o = realloc(g->bown, (size_t)cap * sizeof *o);
    if (o) g->bown = o;
    if (l == NULL || o == NULL) return engine_fail(g, err_set(g->e, BATON_ENOMEM, "out of memory for link bookings"));
    g->capb = cap;
    return 0;
}

/* FIFO: the route's links (where their state lives) and how long each is
 * held, into the scratch: its own share, a fast one beside the bottleneck
 * is not held the whole time. */
static void book_route(engine_t *g, const topo_route_t *rt, uint64_t bytes, double eff, double wire) {
    for (int i = 0; i < rt->nlinks; i++) {
        g->bl[i] = lk(g, rt->links[i]);
        g->bown[i] = link_hold(g, rt->links[i], bytes, eff, wire);
        bound_take(g, rt->links[i], g->bown[i]);                 /* reserve() books them all */
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
    int32_t sp = ports ? send_port(g, src, 0) : 0, rp = ports ? recv_port(g, engine_rep(g, dst), 0) : 0;
    double t = g->now;
    int plain = !ports || (book_plain(&g->book, sp, &t) & book_plain(&g->book, rp, &t));
    for (int i = 0; i < n; i++) plain &= book_plain(&g->book, lk(g, rt->links[i]), &t);
    if (!plain) return 1;
    for (int i = 0; i < n; i++) {
        double hold_l = link_hold(g, rt->links[i], bytes, eff, wire);
        if (book_take1(&g->book, lk(g, rt->links[i]), hold_l, t, g->now) < 0) return -1;
        bound_take(g, rt->links[i], hold_l);
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
    double eff = xfer_eff(g, si, src, dst), wire = xfer_wire(rt, bytes, eff);
    double hold = rt->lat + wire + msg_extra(g, si, src, dst, rt, bytes), start = g->now;
    if (ports <= 1) {
        int rc = reserve_plain(g, src, dst, rt, bytes, eff, wire, hold, n, ports, &start);
        if (rc < 0) return engine_fail(g, err_set(g->e, BATON_ENOMEM, "out of memory for link bookings"));
        if (rc == 0) return *began = start, start + hold;
    }
    if (book_room(g, n + 2) < 0) return -1;
    if (fifo) book_route(g, rt, bytes, eff, wire);
    if (ports == 1) {                          /* one port each: nothing to choose */
        g->bl[n] = send_port(g, src, 0), g->bl[n + 1] = recv_port(g, engine_rep(g, dst), 0);
        g->bown[n] = g->bown[n + 1] = hold;
        n += 2;
        start = book_fit(&g->book, g->bl, g->bown, n, start, g->now);
    } else if (ports) {
        g->bown[n] = g->bown[n + 1] = hold;
        pick_port(g, n, send_port, src, g->now);
        start = pick_port(g, n + 1, recv_port, engine_rep(g, dst), g->now);
        n += 2;
    } else if (n)
        start = book_fit(&g->book, g->bl, g->bown, n, start, g->now);
    if (n && book_take(&g->book, g->bl, g->bown, n, start, g->now) < 0)
        return engine_fail(g, err_set(g->e, BATON_ENOMEM, "out of memory for link bookings"));
    *began = start;
    return start + hold;
}

/* --- The busiest link's bound, for giving up (FIFO) --------------------
 *
 * A run that stops once its clock passes a rival's time (engine_opts_t
 * give_up_after) can know sooner that it cannot win. Under FIFO a link
 * holds one message at a time, each for what reserve() books on it,
 * min(own, wire), and nothing is booked before now; so the run cannot end
 * before now plus the holds still to be booked on any one link. Schedules
 * are pure programs, so every send's holds are tallied before the run
 * starts; the link with the most is kept, and each booking on it takes its
 * hold off (book_route, reserve_plain). The book's slack lets a message run
 * up to the tie past a hole's end, cut short there: at most the tie a
 * message, taken off the bound. On a ring of 2,048 Polaris nodes LL's run
 * then stops at its first steps instead of halfway (speed.md). */

/* The holds of a run of sends from rank r to dst (bytes in all, n of
 * them): linear in the bytes, link_hold's of one byte times them. */
static void tally_run(engine_t *g, const topo_route_t *rt, double bytes, uint32_t n, double eff,
                      double *hold, uint32_t *count) {
    if (n == 0) return;
    for (int i = 0; i < rt->nlinks; i++) {
        hold[rt->links[i]] += bytes * link_hold(g, rt->links[i], 1, eff, xfer_wire(rt, 1, eff));
        count[rt->links[i]] += n;
    }
}

/* Stream (r, c)'s sends tallied, a route per run of one peer; -1 on a
 * route's error. */
static int tally_stream(engine_t *g, int r, int c, double *hold, uint32_t *count) {
    const sched_t *s = g->s;
    topo_route_t rt = {0};
    int peer = -1, si = r * g->C + c;
    double bytes = 0, eff = 1;
    uint32_t n = 0;
    sched_op_t op;
    for (uint32_t pc = 0; sched_op(s, r, c, pc, &op); pc++) {
        if (!op.send || op.send_peer < 0 || op.send_peer >= g->p || op.chunk >= s->nchunks || op.nchunk > s->nchunks)
            continue;                               /* (the run itself says what is wrong) */
        if (op.send_peer != peer) {
            tally_run(g, &rt, bytes, n, eff, hold, count);
            if (topo_route(g->t, r, op.send_peer, &rt, g->e) < 0) return -1;
            peer = op.send_peer, bytes = 0, n = 0, eff = xfer_eff(g, si, r, peer);
        }
        bytes += (double)sched_range_bytes(s, op.chunk, op.nchunk);
        n++;
    }
    tally_run(g, &rt, bytes, n, eff, hold, count);
    return 0;
}

int xfer_bound_setup(engine_t *g) {
    g->bound_link = -1;
    if ((!isfinite(g->give_up) && !g->rivals) || g->o->contention != CONTENTION_FIFO || g->lmap || g->o->store_forward) return 0;
    int nl = topo_nlinks(g->t);
    double *hold = calloc((size_t)nl + 1, sizeof *hold);
    uint32_t *count = calloc((size_t)nl + 1, sizeof *count);
    int rc = hold && count ? 0 : engine_fail(g, err_set(g->e, BATON_ENOMEM, "out of memory for the links' holds"));
    for (int r = 0; rc == 0 && r < g->nr; r++)
        for (int c = 0; rc == 0 && c < g->C; c++)
            if (tally_stream(g, r, c, hold, count) < 0) rc = engine_fail(g, g->e && g->e->code ? g->e->code : BATON_EINVAL);
    for (int l = 0; rc == 0 && l < nl; l++)
        if (hold[l] > 0 && (g->bound_link < 0 || hold[l] > hold[g->bound_link])) g->bound_link = l;
    if (g->bound_link >= 0) {
        g->bound_left = hold[g->bound_link];
        g->bound_slack = count[g->bound_link] * g->tie;
    }
    free(hold);
    free(count);
    return rc;
}

/* FAIR, when an instant that started or ended flows is over: a check at the
 * earliest finishing flow, tagged with the fresh rates' version. */
int xfer_share_check(engine_t *g) {
    double when;
    uint32_t tag;
    int rc = share_next(g->share, &when, &tag);
    g->share_dirty = 0;
    if (rc < 0) return engine_fail(g, err_set(g->e, BATON_ENOMEM, "out of memory for flows"));
    return rc == 0 ? 0 : engine_push(g, when, EV_SHARE, (uint32_t)share_version(g->share));
}

/* FAIR and store and forward count the ports in use and queue what finds
 * them full, rather than book them ahead: a port is held only while its
 * message is on the way. */
int xfer_counts_ports(const engine_t *g) { return g->waiting != NULL; }

/* Take a send port of src and a receive port of dst; 1 if either is full. */
static int take_ports(engine_t *g, int src, int dst) {
    if (src == dst || src >= g->s->nranks || dst >= g->s->nranks) return 0;   /* switches have no port limit */
    int rdst = engine_rep(g, dst);
    if (g->ports > 0 && (g->send_busy[src] >= g->ports || g->recv_busy[rdst] >= g->ports)) return 1;
    g->send_busy[src]++;
    g->recv_busy[rdst]++;
    return 0;
}

void xfer_give_ports(engine_t *g, int src, int dst) {
    if (src == dst || src >= g->s->nranks || dst >= g->s->nranks) return;
    g->send_busy[src]--;
    g->recv_busy[engine_rep(g, dst)]--;
}

/* FAIR: take ports and join the fair shares; 1 if it has to wait. */
static int start_fair(engine_t *g, int src, int dst, uint32_t id, const topo_route_t *rt, uint64_t bytes) {
    if (take_ports(g, src, dst)) return 1;
    if (share_add(g->share, g->now, rt->links, src == dst ? 0 : rt->nlinks, (double)bytes / xfer_eff(g, g->slots[id].src_si, src, dst),
                  id) < 0)
        return engine_fail(g, err_set(g->e, BATON_ENOMEM, "out of memory for flows"));
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
    return engine_push(g, g->now, EV_HOP, id);
}

/* Store and forward: message id has reached the start of its next link; it
 * goes when what reached that link before it has gone (FIFO). */
int xfer_hop(engine_t *g, uint32_t id) {
    slot_t *sl = &g->slots[id];
    int src = stream_rank(g, sl->src_si), dst = sl->dst;
    topo_route_t rt;                      /* its own route: its stream may have moved on to another peer */
    int rc = topo_route(g->t, src, dst, &rt, g->e);
    if (rc < 0) return engine_fail(g, rc);
    if (rt.nlinks == 0) return engine_push(g, g->now, EV_XFER_DONE, id);
    int32_t l = rt.links[sl->hop];
    const topo_params_t *tp = topo_params_c(g->t);
    int fifo = g->o->contention == CONTENTION_FIFO;
    double begin = fifo ? engine_max2(g->now, g->book.l[lk(g, l)].free_at) : g->now;   /* no holes: each hop books at its end */
    double wire = xfer_link_time(g->t, l, sl->bytes, xfer_eff(g, sl->src_si, src, dst));
    if (fifo) g->book.l[lk(g, l)].free_at = begin + wire;
    if (sl->hop == 0) sl->t_start = begin;
    double arrive = begin + wire + topo_dlink(g->t, l)->lat * tp->lat_scale;
    if (++sl->hop < rt.nlinks) return engine_push(g, arrive, EV_HOP, id);
    return engine_push(g, arrive + msg_extra(g, sl->src_si, src, dst, &rt, sl->bytes), EV_XFER_DONE, id);
}

/* Start a matched transfer under FAIR or store and forward; 1 if its ports
 * are full (it waits). */
static int start_counted(engine_t *g, uint32_t id) {
    slot_t *sl = &g->slots[id];
    int src = stream_rank(g, sl->src_si);
    if (g->o->store_forward) return start_hops(g, src, sl->dst, id);
    topo_route_t rt;                      /* its own route: its stream may have moved on to another peer */
    int rc = topo_route(g->t, src, sl->dst, &rt, g->e);
    if (rc < 0) return engine_fail(g, rc);
    return start_fair(g, src, sl->dst, id, &rt, sl->bytes);
}

/* A send leaves now: its stream's route (cached while the peer stays), its
 * start and its latency beyond the links. */
static int departs(engine_t *g, uint32_t id) {
    slot_t *sl = &g->slots[id];
    int src_si = sl->src_si, src = stream_rank(g, src_si), dst = sl->dst;
    stream_t *ss = &g->st[src_si];
    if (ss->rt_peer != dst) {
        int rc = topo_route(g->t, src, dst, &ss->rt, g->e);
        if (rc < 0) return engine_fail(g, rc);
        ss->rt_peer = dst;
    }
    sl->started = 1;
    sl->t_start = g->now;
    sl->lat = dst == src ? 0 : ss->rt.lat + msg_extra(g, src_si, src, dst, &ss->rt, sl->bytes);
    sl->bw = dst == src ? 0 : ss->rt.bw;
    return 0;
}

/* Start the matched message in slot (src_si, k) under fair sharing or store
 * and forward: the receiver's stream waits in S_XFER until it has arrived. */
int xfer_start(engine_t *g, uint32_t id) {
    if (departs(g, id) < 0) return g->err;
    int rc = start_counted(g, id);
    if (rc == 1) g->waiting[g->nwaiting++] = id;           /* ports full: queue, in order */
    return rc < 0 ? rc : 0;
}

/* Cut-through under FIFO and NONE, served at the end of the instant: book
 * its links and ports; it arrives at the end time (an event at place seq). */
int xfer_cut_through(engine_t *g, uint32_t id, uint64_t seq) {
    if (departs(g, id) < 0) return g->err;
    slot_t *sl = &g->slots[id];
    int src_si = sl->src_si;
    stream_t *ss = &g->st[src_si];
    double end = reserve(g, src_si, stream_rank(g, src_si), sl->dst, &ss->rt, sl->bytes, &sl->t_start);
    return g->err ? g->err : engine_push_at(g, end, seq, EV_XFER_DONE, id);
}

/* Ports were freed; start waiting transfers that now fit, in order. */
int xfer_unblock(engine_t *g) {
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
int xfer_share_event(engine_t *g, uint32_t version) {
    uint32_t tag;
    int rc;
    if (version != (uint32_t)share_version(g->share)) return 0;      /* stale rates */
    while ((rc = share_done(g->share, g->now, &tag)) == 1) {
        g->share_dirty = 1;
        if (engine_push(g, g->now + g->slots[tag].lat, EV_XFER_DONE, tag) < 0) return g->err;
    }
    return rc < 0 ? engine_fail(g, err_set(g->e, BATON_ENOMEM, "out of memory for flows")) : 0;
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

/* The link side's part of the engine's setup (after the slot pool: the
 * queue of waiting transfers is sized by it). */
int xfer_setup(engine_t *g) {
    if (g->o->contention == CONTENTION_FAIR && setup_fair(g) < 0)
        return engine_fail(g, err_set(g->e, BATON_ENOMEM, "out of memory for fair sharing"));
    if ((g->o->contention == CONTENTION_FAIR || g->o->store_forward) && setup_ports(g) < 0)
        return engine_fail(g, err_set(g->e, BATON_ENOMEM, "out of memory for ports"));
    return 0;
}
