/* host.c - threads, per-stream inboxes, a barrier around every repetition. */
#define _GNU_SOURCE
#include "host.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct msg {
    struct msg *next;
    int src_si;
    uint32_t to_chunk, nchunk;
    uint64_t len;
    uint8_t data[];
} msg_t;

typedef struct {
    pthread_mutex_t lock;
    msg_t *head, *tail;       /* FIFO of messages for this stream */
} inbox_t;

typedef struct {
    const sched_t *s;
    int p, C;
    uint8_t **buf;            /* per rank */
    inbox_t *inbox;           /* per stream */
    pthread_barrier_t barrier;
    int reps;
    double *times;            /* per repetition (rank 0 writes) */
    int failed;
} host_t;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Copy (or add) between a rank's buffer and a packed run of chunks. */
static void move(const sched_t *s, uint8_t *buf, uint8_t *packed, uint32_t first, uint32_t count, int dir, int reduce) {
    uint64_t at = 0;
    for (uint32_t k = 0; k < count; k++) {
        uint64_t off, len;
        sched_chunk_at(s, (uint32_t)(((uint64_t)first + k) % s->nchunks), &off, &len);
        if (dir == 0) memcpy(packed + at, buf + off, len);
        else if (!reduce) memcpy(buf + off, packed + at, len);
        else for (uint64_t i = 0; i < len; i++) buf[off + i] = (uint8_t)(buf[off + i] + packed[at + i]);
        at += len;
    }
}

static int post(host_t *h, int r, int si, const sched_op_t *op) {
    int c = si % h->C, dsi = op->send_peer * h->C + (op->send_chan >= 0 ? op->send_chan : c);
    uint64_t len = sched_range_bytes(h->s, op->chunk, op->nchunk);
    if (len > ((uint64_t)1 << 40)) return -1;
    msg_t *m = malloc(sizeof *m + (size_t)len + 1);
    if (m == NULL) return -1;
    *m = (msg_t){.src_si = si, .to_chunk = op->to_chunk, .nchunk = op->nchunk, .len = len};
    move(h->s, h->buf[r], m->data, op->chunk, op->nchunk, 0, 0);
    inbox_t *in = &h->inbox[dsi];
    pthread_mutex_lock(&in->lock);
    if (in->tail) in->tail->next = m; else in->head = m;
    in->tail = m;
    pthread_mutex_unlock(&in->lock);
    return 0;
}

/* Take the oldest message from stream from_si, if it is there. */
static msg_t *take(inbox_t *in, int from_si) {
    pthread_mutex_lock(&in->lock);
    msg_t *prev = NULL, *m = in->head;
    while (m && m->src_si != from_si) { prev = m; m = m->next; }
    if (m) {
        if (prev) prev->next = m->next; else in->head = m->next;
        if (in->tail == m) in->tail = prev;
    }
    pthread_mutex_unlock(&in->lock);
    return m;
}

/* Advance stream si as far as it goes; 1 if it moved, 0 if blocked, 2 done. */
static int step(host_t *h, int r, int si, uint32_t *pc, int *got) {
    sched_op_t op;
    int moved = 0;
    while (sched_op(h->s, r, si % h->C, *pc, &op)) {
        if (op.recv && !*got) {
            int from = op.recv_peer * h->C + (op.recv_chan >= 0 ? op.recv_chan : si % h->C);
            msg_t *m = take(&h->inbox[si], from);
            if (m == NULL) return moved;
            move(h->s, h->buf[r], m->data, m->to_chunk, m->nchunk, 1, op.recv == RECV_REDUCE);
            free(m);
            *got = 1;
        }
        if (op.send && post(h, r, si, &op) < 0) { h->failed = 1; return 2; }
        (*pc)++;
        *got = 0;
        moved = 1;
    }
    return 2;
}

/* As in the engine, every channel posts its leading sends before anything
 * arrives (a one-shot all-reduce sends its own data on every channel). */
static void leading_sends(host_t *h, int r, uint32_t *pc) {
    for (int c = 0; c < h->C; c++) {
        sched_op_t op;
        while (sched_op(h->s, r, c, pc[c], &op) && !op.recv) {
            if (op.send && post(h, r, r * h->C + c, &op) < 0) { h->failed = 1; return; }
            pc[c]++;
        }
    }
}

static void run_once(host_t *h, int r, uint32_t *pc, int *got) {
    int left = h->C;
    for (int c = 0; c < h->C; c++) { pc[c] = 0; got[c] = 0; }
    leading_sends(h, r, pc);
    int done[128] = {0};                 /* host_run allows at most 128 channels */
    while (left > 0 && !h->failed) {
        int any = 0;
        for (int c = 0; c < h->C; c++) {
            if (done[c]) continue;
            int st = step(h, r, r * h->C + c, &pc[c], &got[c]);
            if (st == 2) { done[c] = 1; left--; }
            any |= st != 0;
        }
        if (!any) sched_yield();
    }
}

static void fill(const host_t *h, int r) {
    for (uint64_t i = 0; i < h->s->bytes; i++) h->buf[r][i] = (uint8_t)(r * 31 + i * 7 + 1);
}

typedef struct { host_t *h; int r; } arg_t;

static void *thread(void *v) {
    arg_t *a = v;
    host_t *h = a->h;
    uint32_t pc[128];
    int got[128];
    for (int rep = 0; rep <= h->reps; rep++) {
        fill(h, a->r);
        pthread_barrier_wait(&h->barrier);
        double t0 = now();
        run_once(h, a->r, pc, got);
        pthread_barrier_wait(&h->barrier);
        if (a->r == 0 && rep > 0) h->times[rep - 1] = now() - t0;      /* rep 0 warms up */
    }
    return NULL;
}

/* The value byte i of rank r must end with, or -1 for "anything". */
static int want(const host_t *h, int r, uint64_t i, const uint8_t *owner_of) {
    const sched_t *s = h->s;
    int p = h->p, sum = 0;
    for (int k = 0; k < p; k++) sum += (uint8_t)(k * 31 + i * 7 + 1);
    switch (s->coll) {
    case COLL_ALLREDUCE: return sum & 0xff;
    case COLL_REDUCE_SCATTER: return owner_of[i] == r ? sum & 0xff : -1;
    case COLL_ALLGATHER: return (uint8_t)(owner_of[i] * 31 + i * 7 + 1);
    case COLL_BROADCAST: return (uint8_t)(s->root * 31 + i * 7 + 1);
    case COLL_REDUCE: return r == s->root ? sum & 0xff : -1;
    default: return -1;
    }
}

static int check(const host_t *h) {
    const sched_t *s = h->s;
    uint8_t *owner = malloc(s->bytes + 1);
    if (owner == NULL) return 0;
    for (uint32_t c = 0; c < s->nchunks; c++) {
        uint64_t off, len;
        sched_chunk_at(s, c, &off, &len);
        memset(owner + off, (int)(c / s->per_block), len);
    }
    int ok = 1;
    for (int r = 0; r < h->p && ok; r++)
        for (uint64_t i = 0; i < s->bytes && ok; i++) {
            int w = want(h, r, i, owner);
            ok = w < 0 || h->buf[r][i] == w;
        }
    free(owner);
    return ok;
}

static int cmpd(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int host_run(const algo_t *a, int p, uint64_t n, const algo_opts_t *o, int reps, host_result_t *out, baton_err_t *e) {
    sched_t s;
    if (p > HOST_MAX_RANKS)                  /* a thread per rank, spinning: more would only thrash */
        return err_set(e, BATON_EINVAL, "the host backend runs at most %d ranks (a thread each), not %d", HOST_MAX_RANKS, p);
    int rc = algo_build(a, p, n, o, &s, e);
    if (rc < 0) return rc;
    if (s.nchannels > 128) return err_set(e, BATON_EUNSUP, "the host backend runs at most 128 channels");
    if (s.coll == COLL_ALLTOALL) return err_set(e, BATON_EUNSUP, "the host backend does not check all-to-all yet");
    if (s.helpers) return err_set(e, BATON_EUNSUP, "%s needs a reducing switch, which threads do not have", a->name);
    host_t h = {.s = &s, .p = p, .C = s.nchannels, .reps = reps < 1 ? 1 : reps};
    h.buf = calloc((size_t)p, sizeof *h.buf);
    h.inbox = calloc((size_t)p * h.C, sizeof *h.inbox);
    h.times = calloc((size_t)h.reps, sizeof *h.times);
    pthread_t *th = calloc((size_t)p, sizeof *th);
    arg_t *args = calloc((size_t)p, sizeof *args);
    int ok = h.buf && h.inbox && h.times && th && args;
    for (int r = 0; ok && r < p; r++) ok = (h.buf[r] = malloc(s.bytes + 1)) != NULL;
    for (int i = 0; ok && i < p * h.C; i++) pthread_mutex_init(&h.inbox[i].lock, NULL);
    if (ok) pthread_barrier_init(&h.barrier, NULL, (unsigned)p);
    int started = 0;
    for (int r = 0; ok && r < p; r++, started++) {
        args[r] = (arg_t){&h, r};
        ok = pthread_create(&th[r], NULL, thread, &args[r]) == 0;
    }
    for (int r = 0; r < started; r++) pthread_join(th[r], NULL);
    if (ok && !h.failed) {
        qsort(h.times, (size_t)h.reps, sizeof *h.times, cmpd);
        *out = (host_result_t){h.times[h.reps / 2], h.times[0], h.times[h.reps - 1], check(&h)};
        if (!out->verified) rc = err_set(e, BATON_EVERIFY, "host backend: %s %s gave a wrong result", coll_name(s.coll), a->name);
    } else {
        rc = err_set(e, BATON_ENOMEM, "host backend: could not start %d threads", p);
    }
    if (ok || started) pthread_barrier_destroy(&h.barrier);
    for (int i = 0; h.inbox && i < p * h.C; i++) {
        for (msg_t *m = h.inbox[i].head, *nx; m; m = nx) { nx = m->next; free(m); }
        pthread_mutex_destroy(&h.inbox[i].lock);
    }
    for (int r = 0; h.buf && r < p; r++) free(h.buf[r]);
    free(h.buf);
    free(h.inbox);
    free(h.times);
    free(th);
    free(args);
    return rc;
}
