/* tape.c - record a small data-mode run, move by move and step by step. */
#include "tape.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint64_t tape_fill(int rank, uint64_t place, int p) {
    uint64_t v = place % 9 + 1;
    for (int i = 0; i < rank && p <= TAPE_DIGITS; i++) v *= 10;
    return v;
}

static uint64_t fill(void *ctx, int rank, uint64_t place) {
    return tape_fill(rank, place, ((const tape_t *)ctx)->p);
}

static void *grow(void *p, size_t n, size_t size, tape_t *tp) {
    void *q = realloc(p, n * size);
    if (q == NULL) tp->err = BATON_ENOMEM;
    return q;
}

/* Snapshot k (allocated up to k) from the verifier's rows. */
static void take(tape_t *tp, int k, const verify_t *v) {
    for (int r = 0; r < tp->rows; r++)
        memcpy(tp->snap + ((size_t)k * (size_t)tp->rows + (size_t)r) * tp->width, verify_data(v, r),
               tp->width * sizeof *tp->snap);
}

/* Allocate rows x width: the ranks' start values, the snapshot of the start,
 * and a contract that keeps them (begin states the real one). */
static int shape(tape_t *tp, int rows, uint64_t width) {
    free(tp->start), free(tp->want), free(tp->fixed), free(tp->snap);
    size_t cells = (size_t)rows * width;
    tp->rows = rows;
    tp->width = width;
    tp->start = calloc(cells, sizeof *tp->start);
    tp->want = calloc(cells, sizeof *tp->want);
    tp->fixed = calloc(cells, 1);
    tp->snap = calloc(cells, sizeof *tp->snap);
    if (!tp->start || !tp->want || !tp->fixed || !tp->snap) return tp->err = BATON_ENOMEM;
    for (size_t i = 0; i < (size_t)tp->p * width; i++) {
        tp->start[i] = tp->want[i] = tp->snap[i] = fill(tp, (int)(i / width), i % width);
        tp->fixed[i] = 1;
    }
    return 0;
}

/* The first message: now the schedule's buffer and rows are known
 * (reducing switches start from zero below the ranks) and the verifier can
 * state the contract. */
static int begin(tape_t *tp, const engine_msg_t *m) {
    if (m->verify == NULL || verify_data(m->verify, 0) == NULL) return tp->err = BATON_EUNSUP;
    if (shape(tp, m->sched->nranks + m->sched->helpers, m->sched->bytes) < 0) return -1;
    for (int r = 0; r < tp->p; r++)
        for (uint64_t i = 0; i < tp->width; i++) {
            uint64_t w;
            tp->fixed[(uint64_t)r * tp->width + i] = (uint8_t)verify_want(m->verify, r, i, &w);
            tp->want[(uint64_t)r * tp->width + i] = w;
        }
    return 0;
}

/* A new step when m arrives later than the last one (equal up to rounding). */
static int step_for(tape_t *tp, const engine_msg_t *m) {
    double last = tp->nsteps ? tp->steps[tp->nsteps - 1].t : 0;
    if (m->t_end < last * (1 - 1e-9)) return tp->err = BATON_ESCHED;    /* a second run: not one tape */
    if (tp->nsteps && m->t_end <= last * (1 + 1e-12)) return 0;
    tape_step_t *s = grow(tp->steps, (size_t)tp->nsteps + 1, sizeof *s, tp);
    if (s == NULL) return -1;
    tp->steps = s;
    uint64_t cells = (uint64_t)tp->rows * tp->width;
    uint64_t *snap = grow(tp->snap, (size_t)(tp->nsteps + 2) * cells, sizeof *snap, tp);
    if (snap == NULL) return -1;
    tp->snap = snap;
    tp->steps[tp->nsteps++] = (tape_step_t){.t = m->t_end, .first = tp->nmoves};
    return 0;
}

/* The places the message wrote (its chunk range, wrapping) and their values now. */
static int add_places(tape_t *tp, const engine_msg_t *m, tape_move_t *mv) {
    const sched_t *s = m->sched;
    const uint64_t *row = verify_data(m->verify, m->dst);
    mv->first = tp->nplace;
    for (uint32_t k = 0; k < m->nchunk; k++) {
        uint64_t off, len;
        sched_chunk_at(s, (uint32_t)(((uint64_t)m->chunk + k) % s->nchunks), &off, &len);
        for (uint64_t i = off; i < off + len; i++) {
            if (tp->nplace == tp->pcap) {
                uint32_t nc = tp->pcap ? 2 * tp->pcap : 256;
                uint32_t *pl = grow(tp->place, nc, sizeof *pl, tp);
                if (pl) tp->place = pl;
                uint64_t *vl = pl ? grow(tp->value, nc, sizeof *vl, tp) : NULL;
                if (vl == NULL) return -1;
                tp->value = vl;
                tp->pcap = nc;
            }
            tp->place[tp->nplace] = (uint32_t)i;
            tp->value[tp->nplace++] = row[i];
        }
    }
    mv->n = tp->nplace - mv->first;
    return 0;
}

static void on_msg(void *ctx, const engine_msg_t *m) {
    tape_t *tp = ctx;
    /* An empty share (more ranks than places: 4 numbers in a 5-kid ring)
     * moves nothing; shown, it would be an arrow and a step that change no
     * number. */
    if (tp->err || m->bytes == 0) return;
    if (tp->nmoves == TAPE_MAX_MOVES) { tp->err = BATON_EUNSUP; return; }
    if ((tp->nmoves == 0 && begin(tp, m) < 0) || step_for(tp, m) < 0) return;
    if (tp->nmoves == tp->cap) {
        int nc = tp->cap ? 2 * tp->cap : 64;
        tape_move_t *mv = grow(tp->moves, (size_t)nc, sizeof *mv, tp);
        if (mv == NULL) return;
        tp->moves = mv;
        tp->cap = nc;
    }
    tape_move_t *mv = &tp->moves[tp->nmoves];
    *mv = (tape_move_t){.t0 = m->t_start, .t1 = m->t_end, .src = m->src, .dst = m->dst, .reduce = m->reduce};
    if (add_places(tp, m, mv) < 0) return;
    tp->nmoves++;
    tp->steps[tp->nsteps - 1].n++;
    take(tp, tp->nsteps, m->verify);
}

/* The places per rank: the buffer, which for all-to-all is its send and
 * receive halves (algorithms/alltoall.c). */
static uint64_t width_of(const run_req_t *q) {
    return q->coll == COLL_ALLTOALL ? 2 * q->bytes : q->bytes;
}

static int fits(const topo_t *t, const run_req_t *q, baton_err_t *e) {
    int p = topo_nranks(t);
    if (p > TAPE_MAX_RANKS || width_of(q) > TAPE_MAX_PLACES || q->bytes == 0)
        return err_set(e, BATON_EINVAL,
                       "a page shows every byte of every rank: 1 to %d ranks and 1 to %d bytes fit (this run: %d ranks, "
                       "%llu bytes)", TAPE_MAX_RANKS, TAPE_MAX_PLACES, p, (unsigned long long)width_of(q));
    return 0;
}

int tape_record(topo_t *t, const run_req_t *q, tape_t *out, baton_err_t *e) {
    memset(out, 0, sizeof *out);
    if (fits(t, q, e) < 0) return BATON_EINVAL;
    out->p = topo_nranks(t);
    out->coll = q->coll;
    out->root = q->opts.root;
    if (shape(out, out->p, width_of(q)) < 0) return err_set(e, BATON_ENOMEM, "out of memory");
    run_req_t rq = *q;
    rq.predict = 0;
    rq.symmetric = 0;
    run_out_t r;
    /* "auto" and --proto auto may simulate several runs: choose first, then
     * record exactly the chosen one. */
    int rc = run_collective(t, &rq, &r, e);
    if (rc < 0) return rc;
    engine_result_free(&r.eng);
    engine_opts_t eo = {.fill = fill, .fill_ctx = out, .on_msg = on_msg, .msg_ctx = out};
    run_same_row(&rq, &r, 0, &rq);                /* the row, protocol and cut chosen */
    rq.verify = 1;
    rq.engine = &eo;
    if ((rc = run_collective(t, &rq, &r, e)) < 0) return rc;
    engine_result_free(&r.eng);
    if (out->err == BATON_ENOMEM) return err_set(e, BATON_ENOMEM, "out of memory recording the run");
    if (out->err == BATON_ESCHED) return err_set(e, BATON_ESCHED, "%s %s: messages arrived out of time order",
                                                 coll_name(q->coll), r.algo->name);
    if (out->err) return err_set(e, BATON_EUNSUP, "%s %s: more than %d messages do not fit on a page", coll_name(q->coll),
                                 r.algo->name, TAPE_MAX_MOVES);
    if (r.verify_mode != VERIFY_DATA) return err_set(e, BATON_EUNSUP, "%s %s: not verified in data mode",
                                                      coll_name(q->coll), r.algo->name);
    snprintf(out->title, sizeof out->title, "%s", r.algo->name);
    out->time_s = r.time_s;
    return 0;
}

void tape_free(tape_t *tp) {
    free(tp->start);
    free(tp->want);
    free(tp->fixed);
    free(tp->moves);
    free(tp->place);
    free(tp->value);
    free(tp->steps);
    free(tp->snap);
    memset(tp, 0, sizeof *tp);
}

const uint64_t *tape_row(const tape_t *tp, int k, int r) {
    return tp->snap + ((size_t)k * (size_t)tp->rows + (size_t)r) * tp->width;
}

void tape_load(const tape_t *tp, int r, uint64_t *said, uint64_t *heard) {
    *said = *heard = 0;
    for (int i = 0; i < tp->nmoves; i++) {
        if (tp->moves[i].src == r) *said += tp->moves[i].n;
        if (tp->moves[i].dst == r) *heard += tp->moves[i].n;
    }
}
