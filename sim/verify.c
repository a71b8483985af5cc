/* verify.c - signature and data verification of a schedule's result. */
#include "verify.h"

#include <stdlib.h>
#include <string.h>

struct verify {
    const sched_t *s;
    verify_mode_t mode;
    uint64_t *state;      /* signature: [rank][chunk]; data: [rank][byte] */
    uint64_t width;       /* nchunks or bytes */
    uint64_t *expect;     /* postcondition per chunk / byte */
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

/* All-reduce: every rank ends with the sum of every rank's start value. */
static void expect_allreduce(verify_t *v, verify_fill_fn fill, void *ctx) {
    int p = v->s->nranks;
    for (uint64_t i = 0; i < v->width; i++) {
        uint64_t sum = 0;
        for (int r = 0; r < p; r++) sum += v->state[(uint64_t)r * v->width + i];
        v->expect[i] = sum;
    }
    (void)fill; (void)ctx;
}

verify_t *verify_create(const sched_t *s, verify_mode_t mode, verify_fill_fn fill,
                        void *fill_ctx, baton_err_t *e) {
    if (s->coll != COLL_ALLREDUCE) {
        err_set(e, BATON_EUNSUP, "verification of %s is not implemented yet", coll_name(s->coll));
        return NULL;
    }
    uint64_t width = mode == VERIFY_DATA ? s->bytes : s->nchunks;
    if (mode == VERIFY_DATA && width * (uint64_t)s->nranks > VERIFY_DATA_MAX_ELEMS) {
        err_set(e, BATON_EUNSUP, "data verification of %d ranks x %llu bytes needs too much memory; use signature mode",
                s->nranks, (unsigned long long)s->bytes);
        return NULL;
    }
    if (mode == VERIFY_SIGNATURE && width * (uint64_t)s->nranks > VERIFY_SIG_MAX) {
        err_set(e, BATON_EUNSUP, "signature verification of %d ranks x %llu chunks needs more than 512 MiB; run without --verify",
                s->nranks, (unsigned long long)width);
        return NULL;
    }
    verify_t *v = calloc(1, sizeof *v);
    if (v == NULL) goto nomem;
    v->s = s;
    v->mode = mode;
    v->width = width;
    v->state = malloc((width * s->nranks + 1) * sizeof *v->state);
    v->expect = malloc((width + 1) * sizeof *v->expect);
    if (!v->state || !v->expect) goto nomem;
    if (fill == NULL || mode == VERIFY_SIGNATURE) fill = default_fill;
    for (int r = 0; r < s->nranks; r++)
        for (uint64_t i = 0; i < width; i++)
            v->state[(uint64_t)r * width + i] = fill(fill_ctx, r, i);
    expect_allreduce(v, fill, fill_ctx);
    return v;
nomem:
    verify_free(v);
    err_set(e, BATON_ENOMEM, "out of memory for verification state");
    return NULL;
}

void verify_free(verify_t *v) {
    if (v == NULL) return;
    free(v->state);
    free(v->expect);
    free(v);
}

int verify_snapshot(verify_t *v, int rank, uint32_t chunk, verify_payload_t *out) {
    uint64_t *row = v->state + (uint64_t)rank * v->width;
    out->data = NULL;
    if (v->mode == VERIFY_SIGNATURE) { out->sig = row[chunk]; return 0; }
    uint64_t off, len;
    sched_chunk(v->s->bytes, v->s->nchunks, chunk, &off, &len);
    out->data = malloc((len + 1) * sizeof *out->data);
    if (out->data == NULL) return BATON_ENOMEM;
    memcpy(out->data, row + off, len * sizeof *out->data);
    return 0;
}

void verify_deliver(verify_t *v, int rank, uint32_t chunk, int reduce, verify_payload_t *pl) {
    uint64_t *row = v->state + (uint64_t)rank * v->width;
    if (v->mode == VERIFY_SIGNATURE) {
        row[chunk] = reduce ? row[chunk] + pl->sig : pl->sig;
        return;
    }
    uint64_t off, len;
    sched_chunk(v->s->bytes, v->s->nchunks, chunk, &off, &len);
    for (uint64_t i = 0; i < len; i++)
        row[off + i] = reduce ? row[off + i] + pl->data[i] : pl->data[i];
    verify_drop(pl);
}

void verify_drop(verify_payload_t *pl) {
    free(pl->data);
    pl->data = NULL;
}

int verify_check(const verify_t *v, baton_err_t *e) {
    const char *what = v->mode == VERIFY_DATA ? "byte" : "chunk";
    for (int r = 0; r < v->s->nranks; r++)
        for (uint64_t i = 0; i < v->width; i++)
            if (v->state[(uint64_t)r * v->width + i] != v->expect[i])
                return err_set(e, BATON_EVERIFY,
                               "%s %s: rank %d holds a wrong result in %s %llu (got %llu, want %llu)",
                               coll_name(v->s->coll), v->s->algo, r, what,
                               (unsigned long long)i,
                               (unsigned long long)v->state[(uint64_t)r * v->width + i],
                               (unsigned long long)v->expect[i]);
    return 0;
}

const uint64_t *verify_data(const verify_t *v, int rank) {
    return v->mode == VERIFY_DATA ? v->state + (uint64_t)rank * v->width : NULL;
}
