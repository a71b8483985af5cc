/* evq.c - a radix heap of events (Ahuja, Mehlhorn, Orlin and Tarjan 1990),
 * with sorted buckets popped from the front.
 *
 * Key: a non-negative double's bit pattern orders like the double, so
 * (time, seq) is one 128-bit unsigned key. Every pending key is at least the
 * base key; a key goes to the bucket of its highest digit (EVQ_DIGIT_BITS
 * bits) differing from the base and that digit's value (bucket 0: the base
 * itself), so every key in a bucket is below every key in a higher bucket
 * and the lowest non-empty bucket holds the minimum. A push is a clz and an
 * append. A pop takes the front of the lowest bucket if that bucket is in
 * key order; otherwise it makes the bucket's minimum the base and deals the
 * bucket out into lower buckets (an event only moves down, at most 16 times
 * with 8-bit digits, in practice once or twice: with a bucket a bit it
 * moved five times on a 4,096-rank ring, docs/decisions/engine.md).
 *
 * Why: the engine's lockstep schedules finish a ring step on every rank at
 * one time, thousands of events in push order. A heap sifts each pop through
 * all its levels; here they are appended to one bucket, which stays in key
 * order, and popped from its front: O(1) each. Random times (the hold
 * benchmark) fall back to dealing. The order is exactly (time, seq), so
 * results are identical to a heap's. Measured in bench/bench_evq.c. */
#include "evq.h"

#include <stdlib.h>
#include <string.h>

#define BLOCK 64

struct evq_block {
    evq_block_t *next;
    uint32_t head, n;        /* events a[head .. n) */
    evq_item_t a[BLOCK];
};

static uint64_t time_bits(double t) {
    uint64_t bits;
    t += 0.0;                                  /* -0.0 becomes 0.0 */
    memcpy(&bits, &t, sizeof bits);
    return bits;
}

/* The key bits of a stored item: evq_push made its time non-negative-zero
 * already, so no addition here (this is the sorting loops' compare). */
static uint64_t stored_bits(const evq_item_t *x) {
    uint64_t bits;
    memcpy(&bits, &x->t, sizeof bits);
    return bits;
}

static int less(const evq_item_t *x, const evq_item_t *y) {
    uint64_t xt = stored_bits(x), yt = stored_bits(y);
    return xt < yt || (xt == yt && x->seq < y->seq);
}

static int below_base(const evq_t *q, uint64_t t, uint64_t seq) {
    return t < q->base_t || (t == q->base_t && seq < q->base_seq);
}

/* Bucket 0 holds the base itself; a key above it goes to its highest digit
 * differing from the base (its level L) and that digit's value d, which is
 * above the base's digit there: 1 + L * EVQ_RADIX + d. Keys in a lower
 * level, or in the same level with a lower digit, are lower keys, so the
 * index orders buckets as keys. */
static int bucket_of(const evq_t *q, uint64_t t, uint64_t seq) {
    uint64_t dt = t ^ q->base_t, ds = seq ^ q->base_seq;
    int bit;
    uint64_t word;
    if (dt) bit = 127 - __builtin_clzll(dt), word = t;
    else if (ds) bit = 63 - __builtin_clzll(ds), word = seq;
    else return 0;
    int level = bit / EVQ_DIGIT_BITS, shift = level * EVQ_DIGIT_BITS - (dt ? 64 : 0);
    return 1 + level * EVQ_RADIX + (int)((word >> shift) & (EVQ_RADIX - 1));
}

/* used[] has a bit a bucket, summary[] a bit a word of used[] that is not
 * zero: the lowest bucket in use is two ctz away. */
static void mark(evq_t *q, int i) {
    q->used[i >> 6] |= 1ull << (i & 63);
    q->summary[i >> 12] |= 1ull << ((i >> 6) & 63);
}

static void unmark(evq_t *q, int i) {
    if ((q->used[i >> 6] &= ~(1ull << (i & 63))) == 0) q->summary[i >> 12] &= ~(1ull << ((i >> 6) & 63));
}

static int lowest_used(const evq_t *q) {
    for (int s = 0; s < EVQ_SUMMARY_WORDS; s++)
        if (q->summary[s]) {
            int w = s * 64 + __builtin_ctzll(q->summary[s]);
            return w * 64 + __builtin_ctzll(q->used[w]);
        }
    return -1;
}

static evq_block_t *block_new(evq_t *q) {
    evq_block_t *k = q->spare;
    if (k) q->spare = k->next;
    else if ((k = malloc(sizeof *k)) != NULL) q->nblocks++;
    if (k) k->next = NULL, k->head = k->n = 0;
    return k;
}

static void block_free(evq_t *q, evq_block_t *k) { k->next = q->spare; q->spare = k; }

/* Append x (key t, x->seq) to bucket i; the bucket remembers its last key,
 * so staying sorted costs a compare of registers, not a look back. */
static int append(evq_t *q, int i, const evq_item_t *x, uint64_t t) {
    evq_bucket_t *b = &q->b[i];
    if (b->back == NULL) {
        if ((b->front = b->back = block_new(q)) == NULL) return -1;
        b->sorted = 1;
        mark(q, i);
    } else {
        if (b->sorted && (t < b->last_t || (t == b->last_t && x->seq < b->last_seq))) b->sorted = 0;
        if (b->back->n == BLOCK) {
            evq_block_t *k = block_new(q);
            if (k == NULL) return -1;
            b->back = b->back->next = k;
        }
    }
    b->last_t = t;
    b->last_seq = x->seq;
    b->back->a[b->back->n++] = *x;
    return 0;
}

static evq_item_t take_front(evq_t *q, int i) {
    evq_bucket_t *b = &q->b[i];
    evq_block_t *k = b->front;
    evq_item_t x = k->a[k->head++];
    if (k->head == k->n) {
        b->front = k->next;
        if (b->front == NULL) b->back = NULL, unmark(q, i);
        block_free(q, k);
    }
    return x;
}

void evq_init(evq_t *q) { memset(q, 0, sizeof *q); }

static void free_list(evq_block_t *k) {
    while (k) { evq_block_t *next = k->next; free(k); k = next; }
}

void evq_free(evq_t *q) {
    for (int i = 0; q->b && i < EVQ_BUCKETS; i++) free_list(q->b[i].front);
    free(q->b);
    free_list(q->spare);
    free(q->late);
    evq_init(q);
}

/* A key below the base (only fair sharing's rounding schedules one before
 * the event being handled): into `late`, kept latest first so the earliest
 * pops off the end; late events come before every bucketed one. */
static int push_late(evq_t *q, const evq_item_t *x) {
    if (q->nlate == q->caplate) {
        uint32_t nc = q->caplate ? q->caplate * 2 : 16;
        evq_item_t *a = nc > q->caplate ? realloc(q->late, (size_t)nc * sizeof *a) : NULL;
        if (a == NULL) return -1;
        q->late = a;
        q->caplate = nc;
    }
    uint32_t i = q->nlate++;
    for (; i > 0 && less(&q->late[i - 1], x); i--) q->late[i] = q->late[i - 1];
    q->late[i] = *x;
    return 0;
}

int evq_push_at(evq_t *q, double t, uint64_t seq, uint32_t kind, uint32_t id) {
    evq_item_t x = {t + 0.0, seq, kind, id};
    uint64_t tb = time_bits(x.t);
    if (q->b == NULL && (q->b = calloc(EVQ_BUCKETS, sizeof *q->b)) == NULL) return -1;
    int rc = below_base(q, tb, x.seq) ? push_late(q, &x) : append(q, bucket_of(q, tb, x.seq), &x, tb);
    if (rc == 0) q->n++;
    return rc;
}

int evq_push(evq_t *q, double t, uint32_t kind, uint32_t id) {
    int rc = evq_push_at(q, t, q->next_seq, kind, id);
    if (rc == 0) q->next_seq++;
    return rc;
}


/* Make the minimum of bucket i the base and deal the bucket out below.
 * -1 when a block cannot be had (the queue is then only fit to free). */
static int redistribute(evq_t *q, int i) {
    evq_bucket_t *b = &q->b[i];
    const evq_item_t *m = &b->front->a[b->front->head];
    for (evq_block_t *k = b->front; k; k = k->next)
        for (uint32_t j = k->head; j < k->n; j++)
            if (less(&k->a[j], m)) m = &k->a[j];
    q->base_t = stored_bits(m);
    q->base_seq = m->seq;
    evq_block_t *k = b->front;
    *b = (evq_bucket_t){0};
    unmark(q, i);
    while (k) {
        for (uint32_t j = k->head; j < k->n; j++) {
            uint64_t t = stored_bits(&k->a[j]);
            if (append(q, bucket_of(q, t, k->a[j].seq), &k->a[j], t) < 0) { free_list(k); return -1; }
        }
        evq_block_t *next = k->next;
        block_free(q, k);
        k = next;
    }
    return 0;
}

/* A bucket of one short block: sort it where it lies (insertion sort) and
 * pop from its front, instead of dealing it out below, where its events
 * would move again. Later pushes keep it sorted while they come in order. */
#define SORT_SMALL BLOCK
static int sort_small(evq_t *q, int i) {
    evq_bucket_t *b = &q->b[i];
    evq_block_t *k = b->front;
    if (k->next || k->n - k->head > SORT_SMALL) return 0;
    for (uint32_t j = k->head + 1; j < k->n; j++) {
        evq_item_t x = k->a[j];
        uint32_t m = j;
        for (; m > k->head && less(&x, &k->a[m - 1]); m--) k->a[m] = k->a[m - 1];
        k->a[m] = x;
    }
    b->sorted = 1;
    b->last_t = stored_bits(&k->a[k->n - 1]);
    b->last_seq = k->a[k->n - 1].seq;
    return 1;
}

/* The bucket whose front is the earliest event (after sorting or dealing
 * it out): its index, -2 for `late`, -1 if the queue is empty, -3 when
 * memory runs out. */
static int earliest(evq_t *q) {
    if (q->nlate) return -2;
    int i = lowest_used(q);
    if (i < 0) return -1;
    if (!q->b[i].sorted && !sort_small(q, i)) {
        if (redistribute(q, i) < 0) return -3;
        i = 0;                                 /* the minimum is now the base */
    }
    return i;
}

int evq_pop(evq_t *q, evq_item_t *out) {
    int i = earliest(q);
    if (i == -1 || i == -3) return i == -1 ? 0 : -1;
    *out = i == -2 ? q->late[--q->nlate] : take_front(q, i);
    q->n--;
    return 1;
}

/* Move the events due at or before tmax into out, earliest first, up to
 * max: a sorted bucket's run is copied in one pass, not peeked and popped
 * one by one (the engine's FIFO instants take thousands of tied events at
 * once). The count, or -1 when memory runs out. */
int evq_pop_until(evq_t *q, double tmax, evq_item_t *out, uint32_t max) {
    uint64_t lim = time_bits(tmax);
    uint32_t n = 0;
    while (n < max) {
        int i = earliest(q);
        if (i == -1 || i == -3) return i == -1 ? (int)n : -1;
        if (i == -2) {
            if (stored_bits(&q->late[q->nlate - 1]) > lim) break;
            out[n++] = q->late[--q->nlate], q->n--;
            continue;
        }
        evq_bucket_t *b = &q->b[i];
        evq_block_t *k = b->front;
        uint32_t j = k->head, end = k->n - k->head > max - n ? k->head + (max - n) : k->n;
        while (j < end && stored_bits(&k->a[j]) <= lim) out[n++] = k->a[j++];
        uint32_t took = j - k->head;
        q->n -= took;
        k->head = j;
        if (k->head == k->n) {
            b->front = k->next;
            if (b->front == NULL) b->back = NULL, unmark(q, i);
            block_free(q, k);
        } else if (took == 0 || j < end) break;      /* the next is later than tmax */
    }
    return (int)n;
}

int evq_peek(evq_t *q, evq_item_t *out) {
    int i = earliest(q);
    if (i == -1 || i == -3) return i == -1 ? 0 : -1;
    const evq_block_t *k = i == -2 ? NULL : q->b[i].front;
    *out = k ? k->a[k->head] : q->late[q->nlate - 1];
    return 1;
}

uint64_t evq_bytes(const evq_t *q) {
    return q->nblocks * sizeof(evq_block_t) + (uint64_t)q->caplate * sizeof(evq_item_t) +
           (q->b ? EVQ_BUCKETS * sizeof(evq_bucket_t) : 0);
}
