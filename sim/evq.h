/* evq.h - the event queue: a 4-ary min-heap ordered by (time, sequence).
 *
 * Ties in time break by insertion order, so a run is bit-reproducible: the
 * same schedule on the same machine pops the same events in the same order. */
#ifndef BATON_EVQ_H
#define BATON_EVQ_H

#include <stdint.h>

typedef struct evq_item {
    double t;
    uint64_t seq;
    uint32_t kind;
    uint32_t id;
} evq_item_t;

typedef struct evq {
    evq_item_t *a;
    uint32_t n, cap;
    uint64_t next_seq;
} evq_t;

void evq_init(evq_t *q);
void evq_free(evq_t *q);
/* 0, or -1 when memory runs out. */
int evq_push(evq_t *q, double t, uint32_t kind, uint32_t id);
/* Remove the earliest event into *out; 0 if the queue was empty. */
int evq_pop(evq_t *q, evq_item_t *out);

static inline uint32_t evq_size(const evq_t *q) { return q->n; }

#endif
