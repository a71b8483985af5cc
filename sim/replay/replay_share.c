/* replay_share.c - overlapping communications run together (replay_share.h). */
#include "replay_share.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../answer/concurrent.h"

/* Kind k as a member of a joint run, starting at start_s: its own row,
 * protocol and channels, as the replay timed it alone. */
static conc_coll_t member(const replay_comm_t *k, double start_s) {
    conc_coll_t m = {.coll = k->coll, .bytes = k->bytes, .nranks = k->nranks, .ranks = k->ranks,
                     .channels = k->channels > 0 ? k->channels : 1, .start_s = start_s, .after = -1,
                     .own_proto = 1, .proto = (proto_t)k->proto, .own_algo = 1};
    snprintf(m.algo, sizeof m.algo, "%s", k->algo);
    return m;
}

/* Kind k alone in the same kind of run (conc_s), once: the ratio's
 * denominator. A kind conc_run cannot run (an MSCCL file's row, a group of
 * one) is marked -1 and never shared; so is one whose joint-run form takes
 * more than REPLAY_SHARE_FORM apart from the replay's time for it (a
 * whole-machine collective NCCL's plan runs on searched rings, which the
 * joint run builds in rank order): the walk's starts would fall elsewhere
 * in it than where the others overlap it. */
static void alone(topo_t *t, const replay_req_t *q, replay_comm_t *k) {
    if (k->conc_s != 0) return;
    k->conc_s = -1;
    if (k->nranks < 2 || k->each_s <= 0) return;
    conc_coll_t m = member(k, 0);
    conc_opts_t o = {.proto = (proto_t)k->proto, .contention = q->contention};
    engine_result_t r;
    baton_err_t why = {0};
    if (conc_run(t, &m, 1, &o, &r, &why) == 0 && m.end_s > 0 && m.end_s <= k->each_s * (1 + REPLAY_SHARE_FORM) &&
        m.end_s >= k->each_s / (1 + REPLAY_SHARE_FORM))
        k->conc_s = m.end_s;
    engine_result_free(&r);
}

static int span_cmp(const void *x, const void *y) {
    const replay_span_t *a = x, *b = y;
    if (a->start_s != b->start_s) return a->start_s < b->start_s ? -1 : 1;
    return (a->inst > b->inst) - (a->inst < b->inst);
}

/* The chain v[0 .. n) in one engine run; where it cannot run together, each
 * keeps its time alone (counted in st->apart). */
static int together(topo_t *t, const replay_req_t *q, replay_comm_t *comm, replay_span_t *v, uint32_t n,
                    replay_share_stats_t *st, baton_err_t *e) {
    conc_coll_t *m = malloc((size_t)n * sizeof *m);
    if (m == NULL) return err_set(e, BATON_ENOMEM, "out of memory");
    for (uint32_t i = 0; i < n; i++) m[i] = member(&comm[v[i].comm], v[i].start_s - v[0].start_s);
    conc_opts_t o = {.proto = PROTO_SIMPLE, .contention = q->contention};   /* every member names its own */
    engine_result_t r;
    baton_err_t why = {0};
    int ok = conc_run(t, m, (int)n, &o, &r, &why) == 0;
    engine_result_free(&r);
    for (uint32_t i = 0; i < n; i++) {
        const replay_comm_t *k = &comm[v[i].comm];
        double ratio = ok ? (m[i].end_s - m[i].start_s) / k->conc_s : 1;
        v[i].shared_s = ratio > 1 + 1e-9 ? k->each_s * ratio : k->each_s;   /* not slowed: its time alone, to the digit */
    }
    if (ok) st->chains++;
    else st->apart += n;
    free(m);
    return 0;
}

int replay_share(topo_t *t, const replay_req_t *q, replay_comm_t *comm, replay_span_t *v, uint32_t n,
                 replay_share_stats_t *st, baton_err_t *e) {
    memset(st, 0, sizeof *st);
    qsort(v, n, sizeof *v, span_cmp);
    for (uint32_t i = 0; i < n; i++) v[i].shared_s = comm[v[i].comm].each_s;
    for (uint32_t i = 0, j; i < n; i = j) {                 /* chains: each starts before the latest end so far */
        double end = v[i].end_s;
        for (j = i + 1; j < n && v[j].start_s < end; j++)
            if (v[j].end_s > end) end = v[j].end_s;
        if (j - i < 2) continue;
        uint32_t k = i, w = i;                              /* those conc_run can run to the front */
        for (; k < j; k++) {
            alone(t, q, &comm[v[k].comm]);
            if (comm[v[k].comm].conc_s > 0) { replay_span_t x = v[w]; v[w++] = v[k]; v[k] = x; }
        }
        st->apart += j - w;
        if (w - i >= 2) {
            qsort(v + i, w - i, sizeof *v, span_cmp);
            int rc = together(t, q, comm, v + i, w - i, st, e);
            if (rc < 0) return rc;
        } else if (w - i == 1) st->apart++;
    }
    return 0;
}
