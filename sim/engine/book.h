/* book.h - FIFO links booked ahead, with the holes a booking leaves.
 *
 * Under FIFO cut-through a message holds every link of its route from one
 * start time, the latest moment all of them are free. A link that is free
 * now but booked from that later start keeps a hole before it:
 *
 *     link a   |#### msg 1 ####|
 *     link b   .  hole  .  .  .|#### msg 2 (route a, b) ####|
 *                              ^ msg 2 starts when a is free
 *
 * A later message that needs only link b, and fits in the hole, goes in it
 * (backfilling), as a real link would carry whatever reaches it while it
 * is idle. One that runs past the hole's end by no more than `slack` fits
 * too: a hole left by a message a byte shorter is not a reason to wait a
 * whole message more (the overlap is below the engine's tie, engine.c). Without holes a link is one "free at" time (the common case:
 * no list is kept); holes are kept per link in time order and dropped once
 * they end before the present. A link's holes are an array, not a list:
 * an all-to-all books its links far ahead and leaves hundreds of holes a
 * link, and the first that can take a message starting at t is found by
 * bisection (a walk over them had been 80 % of a 512-rank all-to-all's run).
 *
 * Deterministic: the same bookings in the same order give the same times. */
#ifndef BATON_BOOK_H
#define BATON_BOOK_H

#include <stdint.h>

typedef struct book_hole { double a, b; } book_hole_t;

typedef struct book_link {
    double free_at;          /* the end of its last booking */
    uint32_t holes;          /* how many it has (0: plain; beside free_at: one cache line) */
    uint32_t unused;
} book_link_t;

/* A link's holes, in time order, h[lo..hi): apart from book_link_t so that
 * the plain path's array stays 16 bytes a link. */
typedef struct book_holes {
    book_hole_t *h;
    uint32_t lo, hi, cap;
} book_holes_t;

typedef struct book {
    book_link_t *l;          /* per link */
    book_holes_t *hs;        /* per link */
    int nlinks;
    double slack;            /* a booking may run this far past its hole's end (0: none) */
} book_t;

int book_init(book_t *b, int nlinks);      /* 0, or -1 out of memory */
void book_free(book_t *b);

double book_fit_holes(book_t *b, const int32_t *link, const double *own, int n, double t0, double now);

/* Raise *t to link l's last end; 1 if l has no hole (then that is where
 * it is free, whatever the length), 0 if it has. */
static inline int book_plain(const book_t *b, int32_t l, double *t) {
    const book_link_t *k = &b->l[l];
    if (k->free_at > *t) *t = k->free_at;
    return k->holes == 0;
}

/* The earliest t >= t0 at which every link[i] is free for own[i] seconds
 * (holes that end by `now` are dropped on the way). Inline: with no hole on
 * the route (the common case) it is the last end, in one pass. */
static inline double book_fit(book_t *b, const int32_t *link, const double *own, int n, double t0, double now) {
    double t = t0;
    int plain = 1;
    for (int i = 0; i < n; i++) plain &= book_plain(b, link[i], &t);
    return plain ? t : book_fit_holes(b, link, own, n, t0, now);
}

/* Book link[i] for [t, t + own[i]), t from book_fit; 0 or -1 out of memory.
 * Inline where a link is taken at its last end or while idle now. */
int book_take_one(book_t *b, int32_t l, double own, double t, double now);
static inline int book_take1(book_t *b, int32_t l, double own, double t, double now) {
    book_link_t *k = &b->l[l];
    if (t < k->free_at || (t > k->free_at && t > now)) return book_take_one(b, l, own, t, now);
    k->free_at = t + own;
    return 0;
}
static inline int book_take(book_t *b, const int32_t *link, const double *own, int n, double t, double now) {
    for (int i = 0; i < n; i++)
        if (book_take1(b, link[i], own[i], t, now) < 0) return -1;
    return 0;
}

/* Bytes held (the arrays and the hole pool). */
uint64_t book_bytes(const book_t *b);

#endif
