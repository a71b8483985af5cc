/* verify.c - signature and data verification of a schedule's result.
 *
 * Every rank starts with its own value in every place (hash(rank, place));
 * the collectives differ only in what must hold at the end:
 *   all-reduce      every rank, every place: the sum over ranks
 *   reduce-scatter  the owner of a place (its block's rank): the sum
 *   all-gather      every rank, every place: the owner's value
 *   broadcast       every rank, every place: the root's value
 *   reduce          the root, every place: the sum
 *   all-to-all      rank r, receive block p+j: what rank j held in block r
 *                   (blocks 0..p-1 are the send buffer, p..2p-1 the receive buffer)
 * A place is a chunk in signature mode and a byte in data mode. A group of
 * collectives (algorithms/group.h) is verified member by member: each has its
 * own state, in its own rank numbers. */
#include "verify.h"

#include "../../algorithms/group.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct verify {
    const sched_t *s;
    verify_mode_t mode;
    uint64_t *state;      /* [rank][place] */
    uint64_t width;       /* places per rank: nchunks or bytes */
    uint64_t *sum;        /* per place: the sum of every rank's start value */
    uint64_t *orig;       /* [rank][place] start values, for owner/root checks */
    int32_t *owner;       /* per place: the rank whose block it is in */
    uint64_t *where;      /* per place: its offset within its block */
    verify_t **sub;       /* a group: one verifier per member (the rest unused) */
};

uint64_t verify_hash(uint64_t rank, uint64_t index) {   /* splitmix64 */
    uint64_t z = rank * 0x9e3779b97f4a7c15ULL + index * 0xbf58476d1ce4e5b9ULL + 0x94d049bb133111ebULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t default_fill(void *ctx, int rank, uint64_t elem) {
    (void)ctx;
    return verify_hash((uint64_t)rank, elem);
}

/* The block (and so the owning rank, when blocks are per rank) of a place. */
static void owners(verify_t *v) {
    const sched_t *s = v->s;
    for (uint32_t c = 0; c < s->nchunks; c++) {
        int32_t b = (int32_t)(c / s->per_block);
        if (v->mode == VERIFY_SIGNATURE) { v->owner[c] = b; v->where[c] = c % s->per_block; continue; }
        uint64_t off, len, boff, blen;
        sched_chunk_at(s, c, &off, &len);
        sched_chunk(s->bytes, s->nblocks, (uint32_t)b, &boff, &blen);
        for (uint64_t i = 0; i < len; i++) { v->owner[off + i] = b; v->where[off + i] = off + i - boff; }
    }
}

static int alloc(verify_t *v) {
    uint64_t cells = v->width * (uint64_t)(v->s->nranks + v->s->helpers) + 1;
    v->state = malloc(cells * sizeof *v->state);
    v->orig = malloc(cells * sizeof *v->orig);
    v->sum = calloc(v->width + 1, sizeof *v->sum);
    v->owner = malloc((v->width + 1) * sizeof *v->owner);
    v->where = malloc((v->width + 1) * sizeof *v->where);
    return v->state && v->orig && v->sum && v->owner && v->where ? 0 : -1;
}

static int too_big(const sched_t *s, verify_mode_t mode, uint64_t width, baton_err_t *e) {
    uint64_t cells = width * (uint64_t)s->nranks;
    if (mode == VERIFY_DATA && cells > VERIFY_DATA_MAX_ELEMS)
        return err_set(e, BATON_EUNSUP, "data verification of %d ranks x %llu bytes needs too much memory; use signature mode",
                       s->nranks, (unsigned long long)s->bytes);
    if (mode == VERIFY_SIGNATURE && cells > VERIFY_SIG_MAX)
        return err_set(e, BATON_EUNSUP, "signature verification of %d ranks x %llu chunks needs more than 512 MiB; run without --verify",
                       s->nranks, (unsigned long long)width);
    if ((s->coll == COLL_REDUCE_SCATTER || s->coll == COLL_ALLGATHER) && s->nblocks != (uint32_t)s->nranks)
        return err_set(e, BATON_ESCHED, "%s %s: the layout has %u blocks, not one per rank",
                       coll_name(s->coll), s->algo, s->nblocks);
    if (s->coll == COLL_ALLTOALL && (s->nblocks != 2u * (uint32_t)s->nranks || s->bytes % s->nblocks))
        return err_set(e, BATON_ESCHED, "alltoall %s: the layout must be 2p equal blocks", s->algo);
    return 0;
}

static verify_t *create_group(const sched_t *s, verify_mode_t mode, baton_err_t *e) {
    verify_t *v = calloc(1, sizeof *v);
    if (v == NULL || !(v->sub = calloc((size_t)s->group->n, sizeof *v->sub))) {
        free(v);
        err_set(e, BATON_ENOMEM, "out of memory for verification state");
        return NULL;
    }
    *v = (verify_t){.s = s, .mode = mode, .sub = v->sub};
    for (int k = 0; k < s->group->n; k++)
        if (!(v->sub[k] = verify_create(&s->group->m[k].s, mode, NULL, NULL, e))) {
            verify_free(v);
            return NULL;
        }
    return v;
}

/* The member verifier for chunk *first of machine rank *rank, both moved to the member's numbers. */
static verify_t *member(const verify_t *v, int *rank, uint32_t *first) {
    const struct sched_group *g = v->s->group;
    int k = sched_group_member(g, *first);
    *rank = g->inv[(size_t)k * (size_t)(g->P + g->H) + (size_t)*rank];
    *first -= g->chunk0[k];
    return v->sub[k];
}

verify_t *verify_create(const sched_t *s, verify_mode_t mode, verify_fill_fn fill,
                        void *fill_ctx, baton_err_t *e) {
    if (s->group) return create_group(s, mode, e);
    uint64_t width = mode == VERIFY_DATA ? s->bytes : s->nchunks;
    if (too_big(s, mode, width, e) < 0) return NULL;
    verify_t *v = calloc(1, sizeof *v);
    if (v == NULL) goto nomem;
    *v = (verify_t){.s = s, .mode = mode, .width = width};
    if (alloc(v) < 0) goto nomem;
    if (fill == NULL || mode == VERIFY_SIGNATURE) fill = default_fill;
    for (int r = 0; r < s->nranks + s->helpers; r++)      /* helpers (switches) start from zero */
        for (uint64_t i = 0; i < width; i++) {
            uint64_t x = r < s->nranks ? fill(fill_ctx, r, i) : 0;
            v->state[(uint64_t)r * width + i] = v->orig[(uint64_t)r * width + i] = x;
            v->sum[i] += x;
        }
    owners(v);
    return v;
nomem:
    verify_free(v);
    err_set(e, BATON_ENOMEM, "out of memory for verification state");
    return NULL;
}

void verify_free(verify_t *v) {
    if (v == NULL) return;
    for (int k = 0; v->sub && k < v->s->group->n; k++) verify_free(v->sub[k]);
    free(v->sub);
    free(v->state);
    free(v->orig);
    free(v->sum);
    free(v->owner);
    free(v->where);
    free(v);
}

/* Run body with i set to each place of the chunk range, in order. */
#define EACH_PLACE(v, first, count, i, body)                                   \
    for (uint32_t k_ = 0; k_ < (count); k_++) {                                \
        uint32_t c_ = (uint32_t)(((uint64_t)(first) + k_) % (v)->s->nchunks);  \
        uint64_t lo_ = c_, n_ = 1;                                             \
        if ((v)->mode == VERIFY_DATA) sched_chunk_at((v)->s, c_, &lo_, &n_);   \
        for (uint64_t i = lo_; i < lo_ + n_; i++) { body; }                    \
    }

static uint64_t places(const verify_t *v, uint32_t first, uint32_t count) {
    return v->mode == VERIFY_DATA ? sched_range_bytes(v->s, first, count) : count;
}

int verify_snapshot(verify_t *v, int rank, uint32_t first, uint32_t count, verify_payload_t *out) {
    if (v->sub) {
        verify_t *m = member(v, &rank, &first);
        return verify_snapshot(m, rank, first, count, out);
    }
    const uint64_t *row = v->state + (uint64_t)rank * v->width;
    uint64_t n = places(v, first, count), j = 0;
    out->data = NULL;
    if (v->mode == VERIFY_SIGNATURE && count == 1) { out->sig = row[first]; return 0; }
    out->data = malloc((n + 1) * sizeof *out->data);
    if (out->data == NULL) return BATON_ENOMEM;
    EACH_PLACE(v, first, count, i, out->data[j++] = row[i]);
    return 0;
}

void verify_deliver(verify_t *v, int rank, uint32_t first, uint32_t count, int reduce,
                    verify_payload_t *pl) {
    if (v->sub) {
        verify_t *m = member(v, &rank, &first);
        verify_deliver(m, rank, first, count, reduce, pl);
        return;
    }
    uint64_t *row = v->state + (uint64_t)rank * v->width, j = 0;
    const uint64_t *in = pl->data ? pl->data : &pl->sig;
    EACH_PLACE(v, first, count, i, {
        row[i] = reduce ? row[i] + in[j] : in[j];
        j++;
    });
    verify_drop(pl);
}

void verify_drop(verify_payload_t *pl) {
    free(pl->data);
    pl->data = NULL;
}

/* The place at the same offset as place i, in block b (blocks are equal). */
static uint64_t place_in_block(const verify_t *v, int b, uint64_t i) {
    const sched_t *s = v->s;
    if (v->mode == VERIFY_SIGNATURE) return (uint64_t)b * s->per_block + v->where[i];
    uint64_t boff, blen;
    sched_chunk(s->bytes, s->nblocks, (uint32_t)b, &boff, &blen);
    return boff + v->where[i];
}

/* What rank r must hold in place i, or 0 in *any if it may hold anything. */
static uint64_t want(const verify_t *v, int r, uint64_t i, int *any) {
    const sched_t *s = v->s;
    *any = 0;
    switch (s->coll) {
    case COLL_ALLREDUCE: return v->sum[i];
    case COLL_REDUCE_SCATTER: *any = v->owner[i] != r; return v->sum[i];
    case COLL_ALLGATHER: return v->orig[(uint64_t)v->owner[i] * v->width + i];
    case COLL_BROADCAST: return v->orig[(uint64_t)s->root * v->width + i];
    case COLL_REDUCE: *any = r != s->root; return v->sum[i];
    case COLL_ALLTOALL:
        *any = v->owner[i] < s->nranks;          /* the send buffer may hold anything */
        return *any ? 0 : v->orig[(uint64_t)(v->owner[i] - s->nranks) * v->width + place_in_block(v, r, i)];
    default: *any = 1; return 0;
    }
}

/* Data mode: " (chunk c)", the schedule's chunk holding byte i, so that a
 * wrong result names the chunk as signature mode does; else "". */
static const char *chunk_note(const verify_t *v, uint64_t i) {
    static _Thread_local char note[48];
    uint64_t off, len;
    note[0] = '\0';
    for (uint32_t c = 0; v->mode == VERIFY_DATA && c < v->s->nchunks; c++) {
        sched_chunk_at(v->s, c, &off, &len);
        if (i >= off && i < off + len) { snprintf(note, sizeof note, " (chunk %u)", c); break; }
    }
    return note;
}

int verify_check(const verify_t *v, baton_err_t *e) {
    for (int k = 0; v->sub && k < v->s->group->n; k++)
        if (verify_check(v->sub[k], e) < 0) return BATON_EVERIFY;
    if (v->sub) return 0;
    const char *what = v->mode == VERIFY_DATA ? "byte" : "chunk";
    for (int r = 0; r < v->s->nranks; r++)
        for (uint64_t i = 0; i < v->width; i++) {
            int any;
            uint64_t w = want(v, r, i, &any), got = v->state[(uint64_t)r * v->width + i];
            if (!any && got != w)
                return err_set(e, BATON_EVERIFY,
                               "%s %s: rank %d holds a wrong result in %s %llu%s (got %llu, want %llu)",
                               coll_name(v->s->coll), v->s->algo, r, what, (unsigned long long)i,
                               chunk_note(v, i), (unsigned long long)got, (unsigned long long)w);
        }
    return 0;
}

const uint64_t *verify_data(const verify_t *v, int rank) {
    return v->mode == VERIFY_DATA && !v->sub ? v->state + (uint64_t)rank * v->width : NULL;
}

int verify_want(const verify_t *v, int rank, uint64_t place, uint64_t *value) {
    int any;
    *value = want(v, rank, place, &any);
    return !any;
}
