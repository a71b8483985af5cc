/* bench_evq.c - the event queue against a plain 4-ary heap, in one process.
 *
 * The classic "hold" model: N events pending; each step pops the earliest
 * and pushes one a random increment later, so the queue stays at N. The
 * reference heap orders by the double alone (no tie-breaking sequence, no
 * payload beyond an id): the ratio says what determinism and the engine's
 * item layout cost, and survives a noisy machine where absolute rates do
 * not. Prints Mops/s (one pop + one push) for both, their ratio, bytes per
 * pending event and peak RSS.
 * usage: bench_evq [PENDING...]  (default 65536 1048576) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "../sim/engine/evq.h"
#include "bench_clock.h"

typedef struct { double t; uint32_t id; } ref_item_t;
typedef struct { ref_item_t *a; uint32_t n; } ref_heap_t;

static void ref_push(ref_heap_t *h, double t, uint32_t id) {
    uint32_t i = h->n++;
    while (i > 0 && h->a[(i - 1) / 4].t > t) { h->a[i] = h->a[(i - 1) / 4]; i = (i - 1) / 4; }
    h->a[i] = (ref_item_t){t, id};
}

static ref_item_t ref_pop(ref_heap_t *h) {
    ref_item_t top = h->a[0], last = h->a[--h->n];
    uint32_t i = 0, n = h->n;
    for (uint32_t c; (c = 4 * i + 1) < n;) {
        uint32_t best = c, end = c + 4 < n ? c + 4 : n;
        for (uint32_t j = c + 1; j < end; j++) if (h->a[j].t < h->a[best].t) best = j;
        if (h->a[best].t >= last.t) break;
        h->a[i] = h->a[best];
        i = best;
    }
    if (n > 0) h->a[i] = last;
    return top;
}

/* A fixed pseudo-random increment sequence (xorshift), the same for both. */
static double step(uint64_t *s) {
    *s ^= *s << 13; *s ^= *s >> 7; *s ^= *s << 17;
    return (double)(*s >> 11) * 0x1.0p-53 * 1e-6;
}

static double hold_evq(uint32_t pending, uint64_t ops, double *bytes_per_event) {
    evq_t q;
    evq_item_t it;
    uint64_t s = 88172645463325252ull;
    evq_init(&q);
    for (uint32_t i = 0; i < pending; i++) evq_push(&q, step(&s), 0, i);
    double t0 = now();
    for (uint64_t i = 0; i < ops; i++) { if (evq_pop(&q, &it) <= 0) break; evq_push(&q, it.t + step(&s), it.kind, it.id); }
    double wall = now() - t0;
    *bytes_per_event = (double)evq_bytes(&q) / pending;
    evq_free(&q);
    return ops / wall / 1e6;
}

static double hold_ref(uint32_t pending, uint64_t ops) {
    ref_heap_t h = {malloc((size_t)pending * sizeof *h.a), 0};
    uint64_t s = 88172645463325252ull;
    if (h.a == NULL) return 0;
    for (uint32_t i = 0; i < pending; i++) ref_push(&h, step(&s), i);
    double t0 = now();
    for (uint64_t i = 0; i < ops; i++) { ref_item_t it = ref_pop(&h); ref_push(&h, it.t + step(&s), it.id); }
    double wall = now() - t0;
    free(h.a);
    return ops / wall / 1e6;
}

int main(int argc, char **argv) {
    uint32_t sizes[8] = {65536, 1048576};
    int n = argc > 1 ? argc - 1 : 2;
    for (int i = 1; i < argc && i <= 8; i++) sizes[i - 1] = (uint32_t)strtoul(argv[i], NULL, 10);
    for (int i = 0; i < n && i < 8; i++) {
        uint64_t ops = 10000000;
        double per, ours = hold_evq(sizes[i], ops, &per), ref = hold_ref(sizes[i], ops);
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        printf("hold pending=%-8u evq %6.2f M ops/s  plain 4-ary heap %6.2f M ops/s  ratio %.2f  "
               "%.1f B per pending event (%zu B each, the rest spare room)  peak RSS %.1f MiB\n",
               sizes[i], ours, ref, ours / ref, per, sizeof(evq_item_t), ru.ru_maxrss / 1024.0);
    }
    return 0;
}
