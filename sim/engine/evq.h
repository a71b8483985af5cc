/* evq.h - the event queue: a radix heap ordered by (time, sequence).
 *
 * Ties in time break by insertion order, so a run is bit-reproducible: the
 * same schedule on the same machine pops the same events in the same order.
 * A simulation never schedules before the event it is handling, which a
 * radix heap exploits (pushes are O(1)); an event earlier than the last one
 * popped is still allowed and still comes out first, in order. */
#ifndef BATON_EVQ_H
#define BATON_EVQ_H

#include <stdint.h>

typedef struct evq_item {
    double t;
    uint64_t seq;
    uint32_t kind;
    uint32_t id;
} evq_item_t;

/* Buckets by the highest digit of (time, seq) differing from the base and
 * that digit's value: 128 / EVQ_DIGIT_BITS levels of EVQ_RADIX, and the base. */
#define EVQ_DIGIT_BITS 8
#define EVQ_RADIX (1 << EVQ_DIGIT_BITS)
#define EVQ_BUCKETS (1 + (128 / EVQ_DIGIT_BITS) * EVQ_RADIX)
#define EVQ_USED_WORDS ((EVQ_BUCKETS + 63) / 64)
#define EVQ_SUMMARY_WORDS ((EVQ_USED_WORDS + 63) / 64)

/* Buckets are lists of fixed blocks from one free list, so memory follows
 * the events pending now (24 B each plus a block per bucket), not the most
 * each bucket ever held. */
typedef struct evq_block evq_block_t;

typedef struct evq_bucket {
    evq_block_t *front, *back;   /* pop at the front, append at the back */
    uint64_t last_t, last_seq;   /* the key appended last */
    uint32_t sorted;         /* its events are in key order: pop from the front */
} evq_bucket_t;

typedef struct evq {
    evq_bucket_t *b;         /* EVQ_BUCKETS of them (164 KB), from the first push: not on a caller's stack */
    uint64_t used[EVQ_USED_WORDS];         /* which buckets hold events */
    uint64_t summary[EVQ_SUMMARY_WORDS];   /* which words of used[] are not zero */
    uint64_t base_t, base_seq;   /* buckets are relative to this key (time's bits, seq) */
    evq_item_t *late;        /* events below the base, latest first (rare) */
    uint32_t nlate, caplate;
    evq_block_t *spare;      /* free blocks */
    uint64_t nblocks;        /* blocks allocated */
    uint32_t n;
    uint64_t next_seq;
} evq_t;

void evq_init(evq_t *q);
void evq_free(evq_t *q);
/* 0, or -1 when memory runs out. */
int evq_push(evq_t *q, double t, uint32_t kind, uint32_t id);
/* Take the next sequence number now, for an event pushed later with
 * evq_push_at: it then sorts among equal times as if pushed now. */
static inline uint64_t evq_take_seq(evq_t *q) { return q->next_seq++; }
int evq_push_at(evq_t *q, double t, uint64_t seq, uint32_t kind, uint32_t id);
/* Remove the earliest event into *out: 1, or 0 if the queue was empty, or
 * -1 when memory runs out (the queue is then only fit for evq_free). */
int evq_pop(evq_t *q, evq_item_t *out);
/* The earliest event, left in the queue (the next pop takes it at no cost
 * more): as evq_pop. */
int evq_peek(evq_t *q, evq_item_t *out);

/* Remove the events due at or before tmax, earliest first, into out (at
 * most max): how many, or -1 when memory runs out. */
int evq_pop_until(evq_t *q, double tmax, evq_item_t *out, uint32_t max);

static inline uint32_t evq_size(const evq_t *q) { return q->n; }

/* Bytes the queue holds now (its arrays' capacity). */
uint64_t evq_bytes(const evq_t *q);

#endif
