/* evq.c - 4-ary min-heap of events, sifted with a hole instead of swaps.
 *
 * Why 4-ary: half the depth of a binary heap, and a node's four children sit
 * in adjacent memory, so a pop touches fewer cache lines; the engine spends
 * most of its time here. Why one key: a non-negative double's bit pattern
 * orders like the double, so (time, seq) compares as one 128-bit integer,
 * which the compiler turns into two compares without unpredictable branches
 * on ties (ring steps finish at identical times). */
#include "evq.h"

#include <stdlib.h>
#include <string.h>

typedef unsigned __int128 key_t128;

static inline key_t128 key(const evq_item_t *x) {
    uint64_t bits;
    memcpy(&bits, &x->t, sizeof bits);
    return ((key_t128)bits << 64) | x->seq;
}

void evq_init(evq_t *q) { q->a = NULL; q->n = q->cap = 0; q->next_seq = 0; }

void evq_free(evq_t *q) { free(q->a); evq_init(q); }

int evq_push(evq_t *q, double t, uint32_t kind, uint32_t id) {
    if (q->n == q->cap) {
        uint32_t nc = q->cap ? q->cap * 2 : 1024;
        evq_item_t *a = realloc(q->a, (size_t)nc * sizeof *a);
        if (a == NULL) return -1;
        q->a = a;
        q->cap = nc;
    }
    evq_item_t it = {t + 0.0, q->next_seq++, kind, id};   /* + 0.0 turns -0.0 into 0.0 */
    key_t128 k = key(&it);
    uint32_t i = q->n++;
    while (i > 0) {
        uint32_t parent = (i - 1) / 4;
        if (key(&q->a[parent]) <= k) break;
        q->a[i] = q->a[parent];
        i = parent;
    }
    q->a[i] = it;
    return 0;
}

int evq_pop(evq_t *q, evq_item_t *out) {
    if (q->n == 0) return 0;
    *out = q->a[0];
    evq_item_t last = q->a[--q->n];
    key_t128 lk = key(&last);
    uint32_t i = 0, n = q->n;
    for (;;) {
        uint32_t c = 4 * i + 1, end = c + 4 < n ? c + 4 : n;
        if (c >= n) break;
        uint32_t best = c;
        key_t128 bk = key(&q->a[c]);
        for (uint32_t j = c + 1; j < end; j++) {
            key_t128 kj = key(&q->a[j]);
            if (kj < bk) { bk = kj; best = j; }
        }
        if (bk >= lk) break;
        q->a[i] = q->a[best];
        i = best;
    }
    if (n > 0) q->a[i] = last;
    return 1;
}
