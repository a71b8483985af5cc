/* group.c - several collectives as one schedule (group.h). */
#include "group.h"

#include <stdlib.h>
#include <string.h>

/* Member k's rank i on the machine: its ranks, then its helpers (reducing
 * switches: machine rank P + j is switch j), from its helper0 on. */
static int32_t to_machine(const struct sched_group *g, int k, int32_t i) {
    const sched_member_t *m = &g->m[k];
    return i < m->s.nranks ? m->ranks[i] : g->P + m->helper0 + (i - m->s.nranks);
}

static int group_prog(const sched_t *s, int rank, int chan, uint32_t pc, sched_op_t *op) {
    const struct sched_group *g = s->group;
    size_t at = (size_t)rank * (size_t)s->nchannels + (size_t)chan;
    int k = g->own[at];
    if (k < 0 || !sched_op(&g->m[k].s, g->loc[at], chan - g->chan0[k], pc, op)) return 0;
    if (op->recv != RECV_NONE) op->recv_peer = to_machine(g, k, op->recv_peer);
    if (op->send) op->send_peer = to_machine(g, k, op->send_peer);
    op->chunk += g->chunk0[k];
    op->to_chunk += g->chunk0[k];
    if (op->send_chan >= 0) op->send_chan = (int16_t)(op->send_chan + g->chan0[k]);
    if (op->recv_chan >= 0) op->recv_chan = (int16_t)(op->recv_chan + g->chan0[k]);
    return 1;
}

int sched_group_member(const struct sched_group *g, uint32_t c) {
    int lo = 0, hi = g->n - 1;                 /* the last member whose first chunk is <= c */
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (g->chunk0[mid] <= c) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

/* sched_t.part: the member that owns chunk c, where its chunks and bytes
 * start in the group's numbering. */
static const sched_t *group_part(const sched_t *s, uint32_t c, uint32_t *chunk0, uint64_t *byte0) {
    const struct sched_group *g = s->group;
    int k = sched_group_member(g, c);
    *chunk0 = g->chunk0[k];
    *byte0 = g->byte0[k];
    return &g->m[k].s;
}

/* Channels: each member takes the lowest channel above every channel its
 * ranks already use, so members on disjoint ranks share numbers. */
static int place_channels(struct sched_group *g, int *used) {
    int C = 0;
    for (int k = 0; k < g->n; k++) {
        const sched_member_t *m = &g->m[k];
        int c0 = 0, all = m->s.nranks + m->s.helpers;
        for (int i = 0; i < all; i++) c0 = used[to_machine(g, k, i)] > c0 ? used[to_machine(g, k, i)] : c0;
        g->chan0[k] = c0;
        for (int i = 0; i < all; i++) used[to_machine(g, k, i)] = c0 + m->s.nchannels;
        if (c0 + m->s.nchannels > C) C = c0 + m->s.nchannels;
    }
    return C;
}

static int check(const sched_member_t *m, int n, int P, baton_err_t *e) {
    if (n < 1) return err_set(e, BATON_EINVAL, "a group needs at least one collective");
    for (int k = 0; k < n; k++) {
        if (m[k].after >= k || m[k].after < -1)
            return err_set(e, BATON_EINVAL, "collective %d waits for %d: it may only wait for an earlier one", k, m[k].after);
        if (!(m[k].start_s >= 0)) return err_set(e, BATON_EINVAL, "collective %d starts at a negative time", k);
        if (m[k].s.group) return err_set(e, BATON_EINVAL, "a group does not nest");
        if (m[k].helper0 < 0) return err_set(e, BATON_EINVAL, "collective %d: helper0 %d", k, m[k].helper0);
        for (int i = 0; i < m[k].s.nranks; i++)
            if (m[k].ranks[i] < 0 || m[k].ranks[i] >= P)
                return err_set(e, BATON_EINVAL, "collective %d names rank %d of a machine with %d", k, m[k].ranks[i], P);
    }
    return 0;
}

static int fill_tables(struct sched_group *g, int C, baton_err_t *e) {
    int W = g->P + g->H;
    for (size_t i = 0; i < (size_t)W * C; i++) g->own[i] = g->loc[i] = -1;
    for (size_t i = 0; i < (size_t)g->n * W; i++) g->inv[i] = -1;
    for (int k = 0; k < g->n; k++) {
        const sched_member_t *m = &g->m[k];
        for (int i = 0; i < m->s.nranks + m->s.helpers; i++) {
            int32_t r = to_machine(g, k, i);
            if (g->inv[(size_t)k * W + r] >= 0 && i < m->s.nranks)
                return err_set(e, BATON_EINVAL, "collective %d names machine rank %d twice", k, r);
            g->inv[(size_t)k * W + r] = i;
            for (int c = 0; c < m->s.nchannels; c++) {
                size_t at = (size_t)r * C + g->chan0[k] + c;
                g->own[at] = k;
                g->loc[at] = i;
            }
        }
    }
    return 0;
}

int sched_group_init(struct sched_group *g, const sched_member_t *m, int n, int P, sched_t *out, baton_err_t *e) {
    memset(g, 0, sizeof *g);
    int rc = check(m, n, P, e);
    if (rc < 0) return rc;
    g->n = n, g->m = m, g->P = P;
    for (int k = 0; k < n; k++) g->H = m[k].helper0 + m[k].s.helpers > g->H ? m[k].helper0 + m[k].s.helpers : g->H;
    int W = P + g->H, *used = calloc((size_t)W, sizeof *used);
    g->chunk0 = calloc((size_t)n + 1, sizeof *g->chunk0);
    g->byte0 = calloc((size_t)n + 1, sizeof *g->byte0);
    g->chan0 = calloc((size_t)n, sizeof *g->chan0);
    g->inv = malloc((size_t)n * W * sizeof *g->inv);
    if (!used || !g->chunk0 || !g->byte0 || !g->chan0 || !g->inv) rc = err_set(e, BATON_ENOMEM, "out of memory");
    int C = rc < 0 ? 0 : place_channels(g, used);
    free(used);
    if (rc == 0 && C > SCHED_GROUP_MAX_CHANNELS)
        rc = err_set(e, BATON_EUNSUP, SCHED_GROUP_LIMIT_SAYS " %d collectives needs %d channels a rank, more than the "
                     "engine's %d: fewer collectives on the same ranks at once", n, C, SCHED_GROUP_MAX_CHANNELS);
    if (rc == 0 && (!(g->own = malloc((size_t)W * C * sizeof *g->own)) || !(g->loc = malloc((size_t)W * C * sizeof *g->loc))))
        rc = err_set(e, BATON_ENOMEM, "out of memory");
    if (rc == 0) rc = fill_tables(g, C, e);
    for (int k = 0; rc == 0 && k < n; k++) {
        if ((uint64_t)g->chunk0[k] + m[k].s.nchunks > UINT32_MAX) rc = err_set(e, BATON_EINVAL, "a group of more than 2^32 chunks");
        g->chunk0[k + 1] = g->chunk0[k] + m[k].s.nchunks;
        g->byte0[k + 1] = g->byte0[k] + m[k].s.bytes;
    }
    if (rc < 0) { sched_group_free(g); return rc; }
    *out = (sched_t){.coll = m[0].s.coll, .algo = "group", .nranks = P, .nchannels = C, .helpers = g->H,
                     .bytes = g->byte0[n], .nblocks = 1, .per_block = g->chunk0[n], .nchunks = g->chunk0[n],
                     .prog = group_prog, .group = g, .part = group_part};
    return 0;
}

void sched_group_free(struct sched_group *g) {
    free(g->chunk0);
    free(g->byte0);
    free(g->chan0);
    free(g->own);
    free(g->loc);
    free(g->inv);
    memset(g, 0, sizeof *g);
}
