/* book.c - FIFO links booked ahead, with backfilling into their holes. */
#include "book.h"

#include <stdlib.h>
#include <string.h>

int book_init(book_t *b, int nlinks) {
    memset(b, 0, sizeof *b);
    b->nlinks = nlinks;
    b->l = calloc((size_t)nlinks + 1, sizeof *b->l);
    b->hs = calloc((size_t)nlinks + 1, sizeof *b->hs);
    if (b->l == NULL || b->hs == NULL) {
        book_free(b);
        return -1;
    }
    return 0;
}

void book_free(book_t *b) {
    if (b->hs != NULL)
        for (int i = 0; i <= b->nlinks; i++) free(b->hs[i].h);
    free(b->l);
    free(b->hs);
    memset(b, 0, sizeof *b);
}

uint64_t book_bytes(const book_t *b) {
    uint64_t n = ((uint64_t)b->nlinks + 1) * (sizeof *b->l + sizeof *b->hs);
    for (int i = 0; i <= b->nlinks; i++) n += (uint64_t)b->hs[i].cap * sizeof(book_hole_t);
    return n;
}

/* Room for one hole more at link l's end; 0, or -1 out of memory. */
static int holes_room(book_holes_t *s) {
    if (s->hi < s->cap) return 0;
    if (s->lo > 0) {                           /* the past's room first */
        memmove(s->h, s->h + s->lo, (size_t)(s->hi - s->lo) * sizeof *s->h);
        s->hi -= s->lo, s->lo = 0;
        return 0;
    }
    uint32_t cap = s->cap ? 2 * s->cap : 8;
    book_hole_t *q = realloc(s->h, (size_t)cap * sizeof *q);
    if (q == NULL) return -1;
    s->h = q, s->cap = cap;
    return 0;
}

/* Insert hole [lo, hi) at index i of link l's holes. */
static int hole_insert(book_t *b, int32_t l, uint32_t i, double lo, double hi) {
    book_holes_t *s = &b->hs[l];
    uint32_t off = i - s->lo;                  /* room may move the holes down */
    if (holes_room(s) < 0) return -1;
    i = s->lo + off;
    memmove(s->h + i + 1, s->h + i, (size_t)(s->hi - i) * sizeof *s->h);
    s->h[i] = (book_hole_t){lo, hi};
    s->hi++;
    b->l[l].holes++;
    return 0;
}

static void hole_remove(book_t *b, int32_t l, uint32_t i) {
    book_holes_t *s = &b->hs[l];
    if (i == s->lo) s->lo++;
    else {
        memmove(s->h + i, s->h + i + 1, (size_t)(s->hi - i - 1) * sizeof *s->h);
        s->hi--;
    }
    if (s->lo == s->hi) s->lo = s->hi = 0;
    b->l[l].holes--;
}

/* Holes that end by now go: they are the first ones. */
static void holes_drop_past(book_t *b, int32_t l, double now) {
    book_holes_t *s = &b->hs[l];
    while (s->lo < s->hi && s->h[s->lo].b <= now) hole_remove(b, l, s->lo);
}

/* The first of link l's holes that a message from t could use: those
 * before it end earlier than t - slack, so s + own > b + slack there for
 * any start s >= t (rounding keeps the order: s + own >= t > b + slack). */
static uint32_t holes_from(const book_t *b, int32_t l, double t) {
    const book_holes_t *s = &b->hs[l];
    uint32_t lo = s->lo, hi = s->hi;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (s->h[mid].b + b->slack < t) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* The earliest s >= t at which link l is free for own seconds: in a hole
 * it fits in, else after its last booking. Holes over by now go. */
static double link_fit(book_t *b, int32_t l, double own, double t, double now) {
    holes_drop_past(b, l, now);
    const book_holes_t *s = &b->hs[l];
    for (uint32_t i = holes_from(b, l, t); i < s->hi; i++) {
        double start = t > s->h[i].a ? t : s->h[i].a;
        if (start + own <= s->h[i].b + b->slack) return start;
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
    book_holes_t *s = &b->hs[l];
    for (uint32_t i = holes_from(b, l, t); i < s->hi; i++) {
        book_hole_t *h = &s->h[i];
        if (t < h->a || t + own > h->b + b->slack) continue;
        double lo = h->a, hi = h->b;
        if (t + own > hi) own = hi - t;        /* past the end, within the slack: to its end */
        if (t > lo && t + own < hi) {          /* split in two */
            h->b = t;
            return hole_insert(b, l, i + 1, t + own, hi);
        }
        if (t > lo) h->b = t;
        else if (t + own < hi) h->a = t + own;
        else hole_remove(b, l, i);
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
    if (t > from && hole_insert(b, l, b->hs[l].hi, from, t) < 0)   /* the link idles until t: a hole, last in time order */
        return -1;
    b->l[l].free_at = t + own;
    return 0;
}
