/* engine.c - the discrete-event simulator: its event loop.
 *
 * Streams advance until they block (a receive not yet matched, or no free
 * send slot). Matching a posted send with a posted receive reserves ports and
 * links and schedules the transfer's end; every completion goes through the
 * event queue, so advancing one stream never recurses into another.
 *
 * This file is the loop: setup and teardown, the queue's instants (FIFO's
 * tie) and the claims served when an instant is over, engine_run and the
 * critical path. The stream side is stream.c, the link side xfer.c; what
 * they share is engine_internal.h. */
#include "engine_internal.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../algorithms/group.h"
#include "../../util/par.h"
#include "../../util/progress.h"
#include "footprint.h"
#include "symmetry.h"

int engine_push(engine_t *g, double t, uint32_t kind, uint32_t id) {
    if (evq_push(&g->q, t, kind, id) < 0)
        return engine_fail(g, err_set(g->e, BATON_ENOMEM, "out of memory in the event queue"));
    return 0;
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

int engine_claim(engine_t *g, int si, int reduce, uint64_t x) {
    if (g->C == 1) return serve_one(g, si, reduce, x, evq_take_seq(&g->q));   /* one stream a rank: at once */
    if (g->nrq == g->caprq) {
        uint32_t nc = g->caprq ? 2 * g->caprq : 256;
        struct rq *a = realloc(g->rq, (size_t)nc * sizeof *a);
        uint32_t *pm = a ? realloc(g->rq_perm, 3 * (size_t)nc * sizeof *pm) : NULL;
        if (a) g->rq = a;
        if (pm == NULL) return engine_fail(g, err_set(g->e, BATON_ENOMEM, "out of memory for this instant's claims"));
        g->rq_perm = pm, g->caprq = nc;
    }
    int rank = engine_rep(g, stream_rank(g, si));
    uint32_t k = g->nrq++, *at = &g->rq_head[rank];
    if (*at == NO_SLOT) g->rq_rank[g->nrq_rank++] = rank;
    while (*at != NO_SLOT && g->rq[*at].si <= (uint32_t)si) at = &g->rq[*at].next;   /* by channel, stable */
    g->rq[k] = (struct rq){.si = (uint32_t)si, .next = *at, .reduce = (uint32_t)reduce, .x = x,
                           .seq = evq_take_seq(&g->q)};
    *at = k;
    return 0;
}

int engine_push_at(engine_t *g, double t, uint64_t seq, uint32_t kind, uint32_t id) {
    if (evq_push_at(&g->q, t, seq, kind, id) < 0)
        return engine_fail(g, err_set(g->e, BATON_ENOMEM, "out of memory in the event queue"));
    if (g->nrq && (t < g->first_t || (t == g->first_t && seq < g->first_seq))) g->first_t = t, g->first_seq = seq;
    return 0;
}

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
    if (!reduce) return xfer_cut_through(g, (uint32_t)x, seq);
    double *rf = &g->reduce_free[engine_rep(g, stream_rank(g, si))];
    *rf = engine_max2(g->now, *rf) + (double)x * g->gamma;
    return engine_push_at(g, *rf, seq, EV_REDUCE_DONE, (uint32_t)si);
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
        if (g->sh == NULL || g->slh == NULL)
            return engine_fail(g, err_set(g->e, BATON_ENOMEM, "out of memory for records"));
        for (size_t i = 0; i < ns; i++) g->sh[i] = (stream_hist_t){.last_msg = -1, .recv_cause = -1, .pending_rec = -1};
    }
    g->port0 = topo_nlinks(g->t) + 1;
    if ((int64_t)g->port0 + 2 * (int64_t)g->nr * g->ports > INT32_MAX)
        return engine_fail(g, err_set(g->e, BATON_EINVAL, "%d ranks x %d ports: too many to book", g->nr, g->ports));
    int nobook = book_init(&g->book, g->port0 + 2 * g->nr * g->ports);
    g->book.slack = g->tie;
    g->reduce_free = calloc((size_t)g->nr, sizeof(double));
    g->rq_head = malloc(((size_t)g->nr + 1) * sizeof *g->rq_head);
    g->rq_rank = malloc(((size_t)g->nr + 1) * sizeof *g->rq_rank);
    for (int i = 0; g->rq_head && i < g->nr; i++) g->rq_head[i] = NO_SLOT;
    g->rank_msgs = calloc((size_t)g->nr, sizeof *g->rank_msgs);
    evq_init(&g->q);
    if (xfer_setup(g) < 0) return g->err;
    for (size_t i = 0; g->st && i < ns; i++) {
        g->st[i].rt_peer = -1;
        g->st[i].head = g->st[i].tail = g->st[i].unstarted = NO_SLOT;
    }
    if (!g->st || !g->slots || nobook || !g->rank_msgs ||
        !g->reduce_free || !g->rq_head || !g->rq_rank)
        return engine_fail(g, err_set(g->e, BATON_ENOMEM, "out of memory for %d ranks", g->nr));
    return xfer_bound_setup(g) < 0 ? g->err : 0;
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
               + 2 * pool * sizeof(evq_item_t)                         /* about an event a stream, in blocks */
               + EVQ_BUCKETS * sizeof(evq_bucket_t);                   /* the queue's bucket table */
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
        return engine_fail(g, err_set(g->e, BATON_ESCHED,
            "%s: deadlock: rank %d (channel %d) is stuck at op %u (%s, peer %d) at t=%g s",
            g->s->algo, stream_rank(g, si), stream_chan(g, si), s->pc,
            sched_op_name(&s->op), s->op.recv ? s->op.recv_peer : s->op.send_peer, g->now));
    }
    return 0;
}

/* Every ENGINE_TICK events: a rival's time where one runs beside this run,
 * and the progress line (util/progress.h), if on. Out of the loop's way:
 * the loop only tests the event count. */
static void __attribute__((noinline, cold)) tick(engine_t *g) {
    if (g->rivals) {                          /* a rival beside this run has finished sooner */
        double t = par_min_get(g->rivals);
        if (t < g->give_up) g->give_up = t;
    }
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
    if (ev->kind == EV_XFER_DONE) stream_xfer_done(g, ev->id);
    else if (ev->kind == EV_SHARE) xfer_share_event(g, ev->id);
    else if (ev->kind == EV_HOP) xfer_hop(g, ev->id);
    else if (ev->kind == EV_START) stream_advance(g, (int)ev->id);
    else { stream_receive_done(g, (int)ev->id); stream_advance(g, (int)ev->id); }
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
    if (a == NULL) return engine_fail(g, err_set(g->e, BATON_ENOMEM, "out of memory for an instant's events"));
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
        if (n < 0) return engine_fail(g, err_set(g->e, BATON_ENOMEM, "out of memory in the event queue"));
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
                return engine_fail(g, err_set(g->e, BATON_ENOMEM, "out of memory in the event queue"));
        g->now = first->t;
        handle(g, first);
        return g->err;
    }
    if (!sorted) qsort(g->win, g->nwin, sizeof *g->win, by_seq);
    for (uint32_t i = 0; i < g->nwin && g->err == 0; i++) handle(g, &g->win[i]);
    return g->err;
}

double engine_call_cost(const engine_t *g, const proto_cost_t *pc, int helpers, int sends) {
    if (!sends) return 0;
    return (pc ? pc->base_latency : 0) + (helpers ? topo_params_c(g->t)->nvls_lat : 0);
}

/* Start channel by channel (all ranks' channel 0 first): a channel's first
 * transfers then reserve ports and links together, before the next
 * channel's, which is the round order a direct algorithm intends. */
static int loop(engine_t *g) {
    if (g->s->group && g->lmap == NULL && stream_setup_group(g) < 0) return g->err;
    if (progress_on()) g->wall0 = progress_clock();
    stream_start_all(g);
    evq_item_t ev = {0};
    int popped;
    while (g->err == 0) {
        if ((popped = evq_pop(&g->q, &ev)) < 0)
            return engine_fail(g, err_set(g->e, BATON_ENOMEM, "out of memory in the event queue"));
        if (g->nrq && (popped == 0 || ev.t > g->now)) {     /* the instant is over: serve its claims */
            if (serve_instant(g) < 0) return g->err;
            if (popped && (g->first_t < ev.t || (g->first_t == ev.t && g->first_seq < ev.seq))) {
                if (evq_push_at(&g->q, ev.t, ev.seq, ev.kind, ev.id) < 0)   /* what they start comes first */
                    return engine_fail(g, err_set(g->e, BATON_ENOMEM, "out of memory in the event queue"));
                continue;
            }
            if (popped == 0) continue;
        }
        if (g->share_dirty && (popped == 0 || ev.t > g->now)) {   /* the instant is over: refill the rates */
            if (xfer_share_check(g) < 0) return g->err;
            if (popped && evq_push_at(&g->q, ev.t, ev.seq, ev.kind, ev.id) < 0)   /* the check may come first */
                return engine_fail(g, err_set(g->e, BATON_ENOMEM, "out of memory in the event queue"));
            continue;
        }
        if (popped == 0) break;
        if (ev.t > g->give_up || xfer_bound_passes(g)) { g->r->gave_up = 1; return 0; }   /* it would end later: */
                                                                                          /* cannot win */
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
                  .C = s->nchannels, .S = tp->max_inflight, .eager = tp->eager, .ports = tp->ports,
                  .gamma = tp->reduce_bw > 0 ? 1.0 / tp->reduce_bw : 0, .nvls_end = s->nranks + topo_nvls_reducers(t),
                  .bound_link = -1};
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
    footprint_need_t need = {.state = engine_state_estimate(s, t, g.nr, g.o), .verify = g.o->verify,
                             .rec_bytes = g.o->record ? sizeof(engine_rec_t) : 0};
    int rc = footprint_check(s, t, g.nr, &need, e);      /* refuse what cannot fit, before allocating it */
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
    /* Give up only where the clock never runs back (fair sharing's rounding
     * can schedule just before now) and the time is the clock's (a group's
     * is its members' ends): then the end is at least every event's time. */
    int may_give_up = g.o->contention != CONTENTION_FAIR && !g.o->member_proto;
    g.give_up = may_give_up && g.o->give_up_after > 0 ? g.o->give_up_after : INFINITY;
    g.rivals = may_give_up ? g.o->give_up_shared : NULL;     /* read at every tick */
    int ran = setup(&g) == 0 && loop(&g) == 0;
    if (ran && r->gave_up) r->time_s = INFINITY;       /* stopped: later than a rival, the rest partial */
    else if (ran) {
        r->time_s = g.now + engine_call_cost(&g, g.o->proto, s->helpers, r->messages > 0 && s->nranks > 1);   /* one rank's own copies: no call, as predict */
        for (int k = 0; s->group && k < s->group->n; k++)     /* a group ends with its last member, each paid its own */
            r->time_s = k == 0 || r->member_end[k] > r->time_s ? r->member_end[k] : r->time_s;
        for (int i = 0; i < g.nr; i++)       /* a reducing switch's sends are counted apart from the ranks' */
            if (i >= s->nranks) r->switch_msgs += g.rank_msgs[i];
            else if (g.rank_msgs[i] > r->max_rank_msgs) r->max_rank_msgs = g.rank_msgs[i];
        if (g.lmap) {                            /* every representative stands for p / G ranks */
            r->messages *= (uint64_t)(s->nranks / g.G);
            r->bytes_moved *= (uint64_t)(s->nranks / g.G);
        }
        r->reps = g.nr - s->helpers;             /* the ranks simulated: reducing switches are not ranks */
        r->state_bytes = state_bytes(&g);
        if (g.v && verify_check(g.v, e) < 0) engine_fail(&g, BATON_EVERIFY);
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
        int early = x->start < x->recv_post;              /* eager: it left before its receive was posted */
        int recv_last = early && x->recv_post >= x->end;  /* and landed before it: the receive is the path */
        int send_side = early || x->send_post >= x->recv_post;
        double posted = recv_last ? x->recv_post : send_side ? x->send_post : x->recv_post;
        out->reduce_s += x->done - (recv_last ? x->recv_post : x->end);
        if (!recv_last) out->transfer_s += x->end - x->start, out->wait_s += x->start - posted;
        out->idle_s += t - x->done;          /* between this step and the next one up the path */
        t = posted;
        out->first = (int)m;
        out->steps++;
        m = !recv_last && send_side ? x->send_cause : x->recv_cause;
        if (m >= 0) out->idle_s += posted - r->recs[m].done, t = r->recs[m].done;
    }
    out->idle_s += t;                        /* before the first step */
    return 0;
}
