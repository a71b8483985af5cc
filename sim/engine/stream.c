/* stream.c - the engine's stream side: each (rank, channel) runs its
 * program (engine.h's model: rendezvous, program order, sends in flight).
 *
 * Apart from the links (xfer.c) because this is the schedule's side: the
 * pool of send slots, posting a stream's sends and receives, pairing a
 * send with its receive, and what an arrival does (the verifier's delivery,
 * per-link accounting and observers, the critical path's records, freeing
 * the slot and running both streams on). A matched send goes to the link
 * side to start (xfer.c) or to this instant's claims (engine.c). */
#include "engine_internal.h"

#include <stdlib.h>

#include "../../algorithms/group.h"

/* How far a message moves: to - from, mod the ranks. */
static int32_t offset(const engine_t *g, int from, int to) {
    int32_t d = to - from;                     /* both in [0, p): one lap at most, no division */
    return d + (g->p & -(d < 0));
}

/* A stream's sends leave in program order: start its unstarted sends, oldest
 * first, while they are matched (an unmatched older send holds back younger
 * ones). */
static int pump(engine_t *g, int src_si) {
    stream_t *s = &g->st[src_si];
    for (uint32_t id = s->unstarted; id != NO_SLOT; id = s->unstarted) {
        if (!g->slots[id].matched) return 0;
        s->unstarted = g->slots[id].next;
        if (xfer_counts_ports(g)) {                   /* fair sharing, store and forward: now */
            if (xfer_start(g, id) < 0) return g->err;
            continue;
        }
        g->slots[id].started = 1;                     /* at the end of the instant */
        if (engine_claim(g, src_si, 0, id) < 0) return g->err;
    }
    return 0;
}

/* Pair send slot id with the receive its receiver has posted; a send that
 * landed before it (eager) is delivered now, by an event at this time. */
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
        return engine_fail(g, err_set(g->e, BATON_ESCHED,
            "%s: rank %d expects chunks %u+%u from rank %d, which sent chunks %u+%u",
            g->s->algo, stream_rank(g, dst_si), rs->op.chunk, rs->op.nchunk,
            stream_rank(g, src_si), sl->to_chunk, sl->nchunk));
    sl->matched = sl->bound = 1;
    rs->state = S_XFER;
    if (sl->arrived) return engine_push(g, g->now, EV_XFER_DONE, id);
    return pump(g, src_si);
}

/* The peer's stream an op talks to: the peer on my channel, or the named one. */
static int peer_stream(const engine_t *g, int si, int peer, int chan) {
    return peer * g->C + (chan >= 0 ? chan : stream_chan(g, si));
}

/* The oldest send of stream src_si to stream dst_si over `delta` ranks that
 * no receive has taken yet, or NO_SLOT. */
static uint32_t find_send(const engine_t *g, int src_si, int dst_si, int32_t delta) {
    uint32_t id = g->st[src_si].head;
    while (id != NO_SLOT && (g->slots[id].bound || g->slots[id].dst_si != dst_si || g->slots[id].delta != delta))
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
    if (s->unstarted == NO_SLOT) s->unstarted = id;
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
        return engine_fail(g, err_set(g->e, BATON_ESCHED, "%s: rank %d receives from invalid rank %d",
                               g->s->algo, stream_rank(g, si), peer));
    if (s->op.recv_chan >= g->C)
        return engine_fail(g, err_set(g->e, BATON_ESCHED, "%s: rank %d receives on channel %d of %d",
                               g->s->algo, stream_rank(g, si), s->op.recv_chan, g->C));
    uint32_t id = find_send(g, peer_stream(g, si, engine_rep(g, peer), s->op.recv_chan), si,
                            offset(g, peer, stream_rank(g, si)));
    s->state = S_RECV;
    if (g->sh) g->sh[si].recv_post = g->now, g->sh[si].recv_cause = g->sh[si].last_msg;
    return id == NO_SLOT ? 0 : match(g, id, si);
}

static int post_send(engine_t *g, int si) {
    stream_t *s = &g->st[si];
    int src = stream_rank(g, si), dst = s->op.send_peer;
    if (dst < 0 || dst >= g->p || s->op.send_chan >= g->C)
        return engine_fail(g, err_set(g->e, BATON_ESCHED, "%s: rank %d sends to invalid rank %d (channel %d)",
                               g->s->algo, src, dst, s->op.send_chan));
    if (s->op.chunk >= g->s->nchunks || s->op.to_chunk >= g->s->nchunks || s->op.nchunk > g->s->nchunks)
        return engine_fail(g, err_set(g->e, BATON_ESCHED, "%s: rank %d sends chunks %u+%u of %u",
                               g->s->algo, src, s->op.chunk, s->op.nchunk, g->s->nchunks));
    uint32_t id = slot_new(g, si);
    if (id == NO_SLOT) return engine_fail(g, err_set(g->e, BATON_ENOMEM, "out of memory for sends in flight"));
    slot_t *sl = &g->slots[id];
    int dst_si = peer_stream(g, si, engine_rep(g, dst), s->op.send_chan);
    *sl = (slot_t){.next = NO_SLOT, .src_si = si, .delta = offset(g, src, dst), .dst = dst, .dst_si = dst_si,
                   .chunk = s->op.chunk,
                   .nchunk = s->op.nchunk, .to_chunk = s->op.to_chunk, .used = 1,

                   .bytes = sched_range_bytes(g->s, s->op.chunk, s->op.nchunk)};
    if (g->slh) g->slh[id] = (slot_hist_t){.post_time = g->now, .send_cause = g->sh[si].last_msg};
    if (g->v && verify_snapshot(g->v, src, sl->chunk, sl->nchunk, &sl->payload) < 0)
        return engine_fail(g, err_set(g->e, BATON_ENOMEM, "out of memory for a payload"));
    s->nout++;
    g->rank_msgs[src]++;
    stream_t *d = &g->st[dst_si];
    int from = d->op.recv_peer;       /* the receiver's peer: me, or a shifted copy of me */
    if (d->state == S_RECV && engine_rep(g, from) == src && offset(g, from, stream_rank(g, dst_si)) == sl->delta &&
        peer_stream(g, dst_si, src, d->op.recv_chan) == si && find_send(g, si, dst_si, sl->delta) == id)
        return match(g, id, dst_si);
    if (!g->eager && src < g->s->nranks && dst < g->s->nranks) return 0;
    sl->matched = 1;                  /* eager: it goes now, into one of the receiver's slots */
    return pump(g, si);
}

/* A group's member k has ended (its last stream is done): it ends once its
 * protocol's and switches' fixed costs are paid, no sooner than its floor
 * after its start, and its tail after that (engine_opts_t.member_floor: what
 * its GPUs and hosts add, as a call alone pays them); the members waiting
 * for it start their start_s after that. */
static int member_done(engine_t *g, int k) {
    const struct sched_group *gr = g->s->group;
    const proto_cost_t *pc = g->o->member_proto ? g->o->member_proto[k] : g->o->proto;
    double end = g->now + engine_call_cost(g, pc, gr->m[k].s.helpers, gr->m[k].s.nranks > 1);
    if (g->o->member_floor) {
        int after = gr->m[k].after;
        double start = (after >= 0 ? g->r->member_end[after] : 0) + gr->m[k].start_s;
        if (end < start + g->o->member_floor[k]) end = start + g->o->member_floor[k];
        end += g->o->member_tail[k];
    }
    g->r->member_end[k] = end;
    for (int j = k + 1; j < gr->n; j++) {
        if (gr->m[j].after != k) continue;
        for (size_t si = 0; si < (size_t)g->nr * g->C; si++)
            if (gr->own[si] == j && engine_push(g, end + gr->m[j].start_s, EV_START, (uint32_t)si) < 0) return g->err;
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
void stream_start_all(engine_t *g) {
    const struct sched_group *gr = g->left ? g->s->group : NULL;
    for (int c = 0; c < g->C; c++)
        for (int r = 0; r < g->nr && g->err == 0; r++) {
            int si = r * g->C + c, k = gr ? gr->own[si] : -1;
            if (k >= 0 && gr->m[k].after >= 0) continue;          /* started by member_done */
            if (k >= 0 && gr->m[k].start_s > 0) engine_push(g, gr->m[k].start_s, EV_START, (uint32_t)si);
            else stream_advance(g, si);
        }
}

int stream_setup_group(engine_t *g) {
    const struct sched_group *gr = g->s->group;
    g->left = calloc((size_t)gr->n, sizeof *g->left);
    g->r->member_end = calloc((size_t)gr->n, sizeof *g->r->member_end);
    if (!g->left || !g->r->member_end) return engine_fail(g, err_set(g->e, BATON_ENOMEM, "out of memory"));
    g->r->nmembers = gr->n;
    for (size_t si = 0; si < (size_t)g->nr * g->C; si++)
        if (gr->own[si] >= 0) g->left[gr->own[si]]++;
    return 0;
}

/* Run stream si's program until it blocks or ends. */
int stream_advance(engine_t *g, int si) {
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
            if (s->nout >= (rank < g->s->nranks ? g->S : UINT16_MAX)) { s->state = S_SLOT; return 0; }
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
                                       .end = sl->t_end, .done = g->now, .send_cause = h->send_cause, .recv_cause = d->recv_cause};
    return (int64_t)r->nrecs++;
}

/* Per-link accounting and observers, once a message has arrived. */
static void notify(engine_t *g, const slot_t *sl, int src_si, int dst_si, int reduce) {
    if (g->r->link_bytes == NULL && g->o->on_msg == NULL) return;
    topo_route_t route = {0}, *rt = &route;        /* the cache's: computed when the transfer started */
    if (topo_route(g->t, stream_rank(g, src_si), sl->dst, rt, NULL) < 0) return;
    int local = stream_rank(g, src_si) == stream_rank(g, dst_si);
    double eff = xfer_eff(g, src_si, stream_rank(g, src_si), stream_rank(g, dst_si));
    double wire = local ? 0 : xfer_wire(rt, sl->bytes, eff);
    for (int i = 0; g->r->link_bytes && !local && i < rt->nlinks; i++) {   /* each link at its own rate: a fast link */
        g->r->link_bytes[rt->links[i]] += sl->bytes;                      /* under a slow one is not busy all along */
        g->r->link_busy[rt->links[i]] += xfer_link_time(g->t, rt->links[i], sl->bytes, eff);
    }
    if (g->o->on_msg == NULL) return;
    engine_msg_t m = {.t_start = sl->t_start, .t_end = g->now,    /* delivered: observers see time go forward */ .src = stream_rank(g, src_si),
                      .dst = stream_rank(g, dst_si), .chan = stream_chan(g, src_si),
                      .chunk = sl->to_chunk, .nchunk = sl->nchunk, .bytes = sl->bytes, .reduce = reduce,
                      .links = local ? NULL : rt->links, .nlinks = local ? 0 : rt->nlinks, .wire = wire, .eff = eff,
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
void stream_receive_done(engine_t *g, int si) {
    stream_hist_t *h = g->sh ? &g->sh[si] : NULL;
    if (h && h->pending_rec >= 0 && g->r->recs) g->r->recs[h->pending_rec].done = g->now;
    if (h) h->last_msg = g->r->recs ? h->pending_rec : -1;
    g->st[si].state = S_RECVD;
}

/* A send that lands before its receive is posted (eager) waits in the
 * receiver's slot, holding its sender's: its ports are free, and match
 * delivers it once the receive is posted. */
static int landed(engine_t *g, slot_t *sl) {
    if (!xfer_counts_ports(g)) return 0;
    xfer_give_ports(g, stream_rank(g, sl->src_si), sl->dst);
    return xfer_unblock(g);
}

int stream_xfer_done(engine_t *g, uint32_t id) {
    slot_t *sl = &g->slots[id];
    int early = sl->arrived;           /* landed before its receive: its ports are free already */
    if (!early) sl->arrived = 1, sl->t_end = g->now;
    if (!sl->bound) return landed(g, sl);
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
    if (xfer_counts_ports(g) && !early) {
        xfer_give_ports(g, stream_rank(g, src_si), sl_dst);
        if (xfer_unblock(g) < 0) return g->err;
    }
    if (s->state == S_SLOT && stream_advance(g, src_si) < 0) return g->err;
    if (reduce && g->gamma > 0 && sl_dst < g->s->nranks)     /* a switch adds at line rate */
        return engine_claim(g, dst_si, 1, bytes);
    stream_receive_done(g, dst_si);
    return stream_advance(g, dst_si);
}
