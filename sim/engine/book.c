/* book.c - FIFO links booked ahead, with backfilling into their holes. */
#include "book.h"

#include <stdlib.h>
#include <string.h>

int book_init(book_t *b, int nlinks) {
    memset(b, 0, sizeof *b);
    b->nlinks = nlinks;
    b->free_hole = BOOK_NONE;
    b->l = malloc(((size_t)nlinks + 1) * sizeof *b->l);
    if (b->l == NULL) return -1;
    for (int i = 0; i <= nlinks; i++) b->l[i] = (book_link_t){0, BOOK_NONE};
    return 0;
}

void book_free(book_t *b) {
    free(b->l);
    free(b->pool);
    memset(b, 0, sizeof *b);
}

uint64_t book_bytes(const book_t *b) {
    return ((uint64_t)b->nlinks + 1) * sizeof *b->l + (uint64_t)b->cappool * sizeof *b->pool;
}

static uint32_t hole_new(book_t *b, double lo, double hi, uint32_t next) {
    uint32_t i = b->free_hole;
    if (i != BOOK_NONE) b->free_hole = b->pool[i].next;
    else {
        if (b->npool == b->cappool) {
            uint32_t cap = b->cappool ? 2 * b->cappool : 64;
            book_hole_t *q = realloc(b->pool, (size_t)cap * sizeof *q);
            if (q == NULL) return BOOK_NONE;
            b->pool = q, b->cappool = cap;
        }
        i = b->npool++;
    }
    b->pool[i] = (book_hole_t){lo, hi, next};
    return i;
}

static void hole_drop(book_t *b, uint32_t *at) {
    uint32_t i = *at;
    *at = b->pool[i].next;
    b->pool[i].next = b->free_hole;
    b->free_hole = i;
}

/* The earliest s >= t at which link l is free for own seconds: in a hole
 * it fits in, else after its last booking. Holes over by now go. */
static double link_fit(book_t *b, int32_t l, double own, double t, double now) {
    uint32_t *at = &b->l[l].head;
    while (*at != BOOK_NONE) {
        book_hole_t *h = &b->pool[*at];
        if (h->b <= now) { hole_drop(b, at); continue; }
        double s = t > h->a ? t : h->a;
        if (s + own <= h->b + b->slack) return s;
        at = &h->next;
    }
    return t > b->l[l].free_at ? t : b->l[l].free_at;
}

double book_fit_holes(book_t *b, const int32_t *link, const double *own, int n, double t0, double now) {
    double t = t0;
    for (int moved = 1; moved;) {              /* a later start on one link: check the others again */
        moved = 0;
        for (int i = 0; i < n; i++) {
            double s = link_fit(b, link[i], own[i], t, now);
            if (s > t) t = s, moved = 1;
        }
    }
    return t;
}

/* Book [t, t + own) on link l inside the hole that holds it. */
static int take_hole(book_t *b, int32_t l, double t, double own) {
    for (uint32_t *at = &b->l[l].head; *at != BOOK_NONE; at = &b->pool[*at].next) {
        book_hole_t *h = &b->pool[*at];
        if (t < h->a || t + own > h->b + b->slack) continue;
        double lo = h->a, hi = h->b;
        if (t + own > hi) own = hi - t;        /* past the end, within the slack: to its end */
        if (t > lo && t + own < hi) {          /* split in two */
            uint32_t self = *at;                /* by index: a new hole may move the pool (and at) */
            uint32_t r = hole_new(b, t + own, hi, h->next);
            if (r == BOOK_NONE) return -1;
            b->pool[self].b = t;
            b->pool[self].next = r;
        } else if (t > lo) h->b = t;
        else if (t + own < hi) h->a = t + own;
        else hole_drop(b, at);
        return 0;
    }
    return 1;                                  /* in no hole: after the last booking */
}

int book_take_one(book_t *b, int32_t l, double own, double t, double now) {
    if (t < b->l[l].free_at) {
        int rc = take_hole(b, l, t, own);
        if (rc <= 0) return rc;
        b->l[l].free_at += own;                /* in no hole (a caller that did not fit first): behind the last */
        return 0;
    }
    double from = b->l[l].free_at > now ? b->l[l].free_at : now;
    if (t > from) {                            /* the link idles until t: a hole, last in time order */
        uint32_t last = BOOK_NONE;              /* by index: a new hole may move the pool */
        for (uint32_t k = b->l[l].head; k != BOOK_NONE; k = b->pool[k].next) last = k;
        uint32_t h = hole_new(b, from, t, BOOK_NONE);
        if (h == BOOK_NONE) return -1;
        *(last == BOOK_NONE ? &b->l[l].head : &b->pool[last].next) = h;
    }
    b->l[l].free_at = t + own;
    return 0;
}
