/* evq.c - binary heap of events; sift with a hole instead of swaps. */
#include "evq.h"

#include <stdlib.h>

static inline int before(const evq_item_t *x, const evq_item_t *y) {
    return x->t < y->t || (x->t == y->t && x->seq < y->seq);
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
    evq_item_t it = {t, q->next_seq++, kind, id};
    uint32_t i = q->n++;
    while (i > 0) {
        uint32_t parent = (i - 1) / 2;
        if (!before(&it, &q->a[parent])) break;
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
    uint32_t i = 0, n = q->n;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && before(&q->a[c + 1], &q->a[c])) c++;
        if (!before(&q->a[c], &last)) break;
        q->a[i] = q->a[c];
        i = c;
    }
    if (n > 0) q->a[i] = last;
    return 1;
}
