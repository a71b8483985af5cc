/* share.c - max-min fair rates by progressive filling.
 *
 * Max-min rates split over the connected parts of the flows-and-links graph
 * (flows that share no link, even through others, do not affect each
 * other), so a change refills only the part it touches: from the links of
 * the flows that came or went, the flows on them, their links, and so on.
 * Inside that part the links wait in a binary heap by fair share (room /
 * unfrozen users); the tightest one's flows are frozen at its share, and
 * the other links they cross get their new shares. Rates are refilled
 * lazily, once for all the changes of an instant.
 *
 * Cost of a refill: O(flows x path x log links) of the part touched. The
 * first version scanned every flow for every bottleneck level after every
 * single change: a 64-GPU cluster's all-reduce under fair sharing took 405 s
 * (docs/decisions/fifo-default.md, "Fair sharing's cost"). */
#include "share.h"

#include <stdlib.h>

typedef struct {
    const int32_t *links;
    int nlinks;
    double left;          /* bytes still to send */
    double rate;          /* bytes/s */
    uint32_t tag;
    uint32_t seen;        /* the refill that last took it in */
    int live, frozen;
} flow_t;

typedef struct {
    double key;           /* the link's fair share when pushed */
    int link;
    uint32_t stamp;       /* the link's stamp then: older entries are stale */
} heap_ent_t;

typedef struct {
    int *v, n, cap;
} ivec_t;

struct share {
    int nlinks;
    double *cap;          /* per link */
    double *room;         /* per link, while filling: capacity not yet handed out */
    int *users;           /* per link, while filling: unfrozen flows crossing it */
    uint32_t *mark;       /* per link: the refill (or change) that last took it in */
    uint32_t *stamp;      /* per link: the filling round that last changed its share */
    uint32_t round;       /* filling rounds so far (wraps: only equality matters) */
    ivec_t touched;       /* scratch: links whose shares this round changed */
    ivec_t *on;           /* per link: the flows crossing it (slots) */
    ivec_t seeds;         /* links of the flows that came or went */
    ivec_t part;          /* scratch: the links of the part to refill */
    ivec_t free_slots;
    heap_ent_t *heap;
    int nheap, cap_heap;
    flow_t *f;
    int hi, capf;         /* slots 0 .. hi-1 used so far, live or free */
    uint32_t epoch;       /* the current refill's number (marks and seen) */
    double last;          /* when remaining bytes were last advanced */
    uint64_t version;
    int dirty;            /* flows came or went since the rates were filled */
};

/* Room for n + 1 elements of size elem in *p (capacity *cap, doubling). */
static int grow(void **p, int *cap, int n, size_t elem) {
    if (n < *cap) return 0;
    int nc = *cap ? *cap * 2 : 16;
    void *q = realloc(*p, (size_t)nc * elem);
    if (q == NULL) return -1;
    *p = q, *cap = nc;
    return 0;
}

static int ivec_push(ivec_t *a, int x) {
    if (grow((void **)&a->v, &a->cap, a->n, sizeof *a->v) < 0) return -1;
    a->v[a->n++] = x;
    return 0;
}

static void ivec_drop(ivec_t *a, int x) {     /* order does not matter to the rates */
    for (int i = 0; i < a->n; i++)
        if (a->v[i] == x) { a->v[i] = a->v[--a->n]; return; }
}

share_t *share_create(int nlinks, const double *capacity) {
    share_t *s = calloc(1, sizeof *s);
    if (s == NULL) return NULL;
    size_t n = (size_t)nlinks + 1;
    s->nlinks = nlinks;
    s->cap = malloc(n * sizeof *s->cap);
    s->room = malloc(n * sizeof *s->room);
    s->users = calloc(n, sizeof *s->users);
    s->mark = calloc(n, sizeof *s->mark);
    s->stamp = calloc(n, sizeof *s->stamp);
    s->on = calloc(n, sizeof *s->on);
    if (!s->cap || !s->room || !s->users || !s->mark || !s->stamp || !s->on) {
        share_free(s);
        return NULL;
    }
    for (int i = 0; i < nlinks; i++) s->cap[i] = capacity[i];
    return s;
}

void share_free(share_t *s) {
    if (s == NULL) return;
    for (int i = 0; s->on && i < s->nlinks; i++) free(s->on[i].v);
    free(s->on);
    free(s->cap);
    free(s->room);
    free(s->users);
    free(s->mark);
    free(s->stamp);
    free(s->seeds.v);
    free(s->part.v);
    free(s->touched.v);
    free(s->free_slots.v);
    free(s->heap);
    free(s->f);
    free(s);
}

/* Move every flow's remaining bytes forward to time now at its rate. */
static void advance(share_t *s, double now) {
    double dt = now - s->last;
    for (int i = 0; dt > 0 && i < s->hi; i++) {
        if (!s->f[i].live) continue;
        s->f[i].left -= s->f[i].rate * dt;
        if (s->f[i].left < 0) s->f[i].left = 0;
    }
    s->last = now;
}

/* ---- a min-heap of links by share (ties: the lower link id) ---------------- */

static int heap_less(const heap_ent_t *a, const heap_ent_t *b) {
    return a->key < b->key || (a->key == b->key && a->link < b->link);
}

static int heap_push(share_t *s, int l) {
    if (grow((void **)&s->heap, &s->cap_heap, s->nheap, sizeof *s->heap) < 0) return -1;
    heap_ent_t e = {.key = s->room[l] / s->users[l], .link = l, .stamp = s->stamp[l]};
    int i = s->nheap++;
    while (i > 0 && heap_less(&e, &s->heap[(i - 1) / 2])) { s->heap[i] = s->heap[(i - 1) / 2]; i = (i - 1) / 2; }
    s->heap[i] = e;
    return 0;
}

static heap_ent_t heap_pop(share_t *s) {
    heap_ent_t top = s->heap[0], last = s->heap[--s->nheap];
    int i = 0, n = s->nheap;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && heap_less(&s->heap[c + 1], &s->heap[c])) c++;
        if (!heap_less(&s->heap[c], &last)) break;
        s->heap[i] = s->heap[c];
        i = c;
    }
    if (n > 0) s->heap[i] = last;
    return top;
}

/* ---- progressive filling of the part a change touched ---------------------- */

/* The links reachable from the seeds through shared flows, into s->part,
 * each reset to its full room with all its flows unfrozen. */
static int gather_part(share_t *s) {
    s->part.n = 0;
    for (int i = 0; i < s->seeds.n; i++) {
        int l = s->seeds.v[i];
        if (s->mark[l] != s->epoch && (s->mark[l] = s->epoch, ivec_push(&s->part, l) < 0)) return -1;
    }
    s->seeds.n = 0;
    for (int i = 0; i < s->part.n; i++) {            /* part grows as it is walked */
        const ivec_t *on = &s->on[s->part.v[i]];
        for (int j = 0; j < on->n; j++) {
            flow_t *f = &s->f[on->v[j]];
            if (f->seen == s->epoch) continue;
            f->seen = s->epoch, f->frozen = 0, f->rate = 0;
            for (int k = 0; k < f->nlinks; k++) {
                int l = f->links[k];
                if (s->mark[l] != s->epoch && (s->mark[l] = s->epoch, ivec_push(&s->part, l) < 0)) return -1;
            }
        }
    }
    return 0;
}

/* Freeze flow f at rate x and take x from every link it crosses; their
 * shares change, so each is listed in s->touched (once a round) to go back
 * into the heap with its new share when the round's flows are frozen. */
static int freeze(share_t *s, flow_t *f, double x) {
    f->frozen = 1;
    f->rate = x > 0 ? x : 0;
    for (int k = 0; k < f->nlinks; k++) {
        int l = f->links[k];
        s->room[l] = s->room[l] > x ? s->room[l] - x : 0;     /* no negative rounding dust */
        s->users[l]--;
        if (s->stamp[l] != s->round && (s->stamp[l] = s->round, ivec_push(&s->touched, l) < 0)) return -1;
    }
    return 0;
}

/* The tightest link's fair share goes to every unfrozen flow on it; repeat
 * until every flow of the part is frozen. */
static int refill(share_t *s) {
    if (++s->epoch == 0) {                            /* 2^32 refills: restart the marks */
        for (int l = 0; l < s->nlinks; l++) s->mark[l] = 0;
        for (int i = 0; i < s->hi; i++) s->f[i].seen = 0;
        s->epoch = 1;
    }
    if (gather_part(s) < 0) return -1;
    s->nheap = 0;
    s->round++;
    for (int i = 0; i < s->part.n; i++) {
        int l = s->part.v[i];
        s->room[l] = s->cap[l], s->users[l] = s->on[l].n, s->stamp[l] = s->round;
        if (s->users[l] > 0 && heap_push(s, l) < 0) return -1;
    }
    while (s->nheap > 0) {
        heap_ent_t e = heap_pop(s);
        int l = e.link;
        if (e.stamp != s->stamp[l] || s->users[l] == 0) continue;      /* stale, or its flows are frozen */
        s->round++, s->touched.n = 0;
        for (int j = 0; j < s->on[l].n; j++) {
            flow_t *f = &s->f[s->on[l].v[j]];
            if (!f->frozen && freeze(s, f, e.key) < 0) return -1;
        }
        for (int i = 0; i < s->touched.n; i++) {
            int k = s->touched.v[i];
            if (s->users[k] > 0 && heap_push(s, k) < 0) return -1;
        }
    }
    s->version++;
    return 0;
}

/* Changes mark the rates stale; they are refilled when next asked for.
 * Time must not pass over stale rates: catch up first. */
static int fresh(share_t *s) {
    if (!s->dirty) return 0;
    s->dirty = 0;
    return refill(s);
}

static int move_to(share_t *s, double now) {
    if (now > s->last && fresh(s) < 0) return -1;
    advance(s, now);
    return 0;
}

/* The links of slot i become seeds of the next refill. */
static int seed_links(share_t *s, int i) {
    for (int k = 0; k < s->f[i].nlinks; k++)
        if (ivec_push(&s->seeds, s->f[i].links[k]) < 0) return -1;
    s->dirty = 1;
    return 0;
}

static int new_slot(share_t *s) {
    if (s->free_slots.n > 0) return s->free_slots.v[--s->free_slots.n];
    if (grow((void **)&s->f, &s->capf, s->hi, sizeof *s->f) < 0) return -1;
    return s->hi++;
}

int share_add(share_t *s, double now, const int32_t *links, int nlinks, double bytes, uint32_t tag) {
    if (move_to(s, now) < 0) return -1;
    int i = new_slot(s);
    if (i < 0) return -1;
    s->f[i] = (flow_t){.links = links, .nlinks = nlinks, .left = bytes, .tag = tag, .live = 1,
                       .frozen = nlinks == 0, .rate = nlinks == 0 ? 1e300 : 0};   /* no links: done at once */
    for (int k = 0; k < nlinks; k++)
        if (ivec_push(&s->on[links[k]], i) < 0) return -1;
    return seed_links(s, i);
}

static int drop_slot(share_t *s, int i) {
    for (int k = 0; k < s->f[i].nlinks; k++) ivec_drop(&s->on[s->f[i].links[k]], i);
    s->f[i].live = 0;
    if (seed_links(s, i) < 0) return -1;
    return ivec_push(&s->free_slots, i);
}

/* The live flow finishing first at the rates in force (ties: the lowest
 * slot), its finish time in *when; -1 if none. */
static int first_done(const share_t *s, double *when) {
    int best = -1;
    double t = 0;
    for (int i = 0; i < s->hi; i++) {
        const flow_t *f = &s->f[i];
        if (!f->live) continue;
        double fin = f->left <= 0 ? 0 : f->rate > 0 ? f->left / f->rate : 1e300;
        if (best < 0 || fin < t) { best = i; t = fin; }
    }
    *when = s->last + t;
    return best;
}

int share_next(share_t *s, double *when, uint32_t *tag) {
    if (fresh(s) < 0) return -1;
    int best = first_done(s, when);
    if (best < 0) return 0;
    *tag = s->f[best].tag;
    return 1;
}

int share_done(share_t *s, double now, uint32_t *tag) {
    double when;
    if (move_to(s, now) < 0) return -1;
    int best = first_done(s, &when);
    if (best < 0 || when > now * (1 + 1e-12) + 1e-18) return 0;
    *tag = s->f[best].tag;
    return drop_slot(s, best) < 0 ? -1 : 1;
}

int share_remove(share_t *s, double now, uint32_t tag) {
    if (move_to(s, now) < 0) return -1;
    for (int i = 0; i < s->hi; i++)
        if (s->f[i].live && s->f[i].tag == tag) return drop_slot(s, i);
    return 0;
}

uint64_t share_version(const share_t *s) { return s->version; }

double share_rate(share_t *s, uint32_t tag) {
    if (fresh(s) < 0) return -1;
    for (int i = 0; i < s->hi; i++)
        if (s->f[i].live && s->f[i].tag == tag) return s->f[i].rate;
    return 0;
}
