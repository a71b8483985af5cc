/* shim.c - the C side of the CUDA backend: schedules as plain structs. */
#include "shim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../algorithms/algo.h"
#include "../nccltests.h"

struct bc_sched { sched_t s; };

bc_sched_t *bc_build(const char *coll, const char *algo, int ranks, unsigned long long bytes, char *err, int errlen) {
    int c = coll_parse(coll);
    const algo_t *a = c < 0 ? NULL : algo_find((coll_t)c, algo);
    baton_err_t e = {0};
    bc_sched_t *s = a ? malloc(sizeof *s) : NULL;
    if (a == NULL) snprintf(err, (size_t)errlen, "no algorithm '%s' for '%s'", algo, coll);
    else if (s && algo_build(a, ranks, bytes, NULL, &s->s, &e) < 0) {
        snprintf(err, (size_t)errlen, "%s", e.msg);
        free(s);
        s = NULL;
    }
    return s;
}

void bc_free(bc_sched_t *s) { free(s); }
int bc_channels(const bc_sched_t *s) { return s->s.nchannels; }
unsigned long long bc_buffer_bytes(const bc_sched_t *s) { return s->s.bytes; }

/* The byte spans of a chunk range (it wraps at most once). */
static int spans(const sched_t *s, uint32_t first, uint32_t count, bc_span_t *out) {
    int n = 0;
    uint64_t off, len;
    uint32_t end = first + count;
    uint32_t upto = end > s->nchunks ? s->nchunks : end;
    sched_chunk_at(s, first, &off, &len);
    out[n++] = (bc_span_t){off, sched_range_bytes(s, first, upto - first)};
    if (end > s->nchunks) out[n++] = (bc_span_t){0, sched_range_bytes(s, 0, end - s->nchunks)};
    return n;
}

int bc_op(const bc_sched_t *bs, int stream, unsigned pc, bc_op_t *out) {
    const sched_t *s = &bs->s;
    int C = s->nchannels, r = stream / C, c = stream % C;
    sched_op_t op;
    if (!sched_op(s, r, c, pc, &op)) return 0;
    memset(out, 0, sizeof *out);
    out->recv = op.recv;
    out->send = op.send;
    out->from_stream = op.recv ? op.recv_peer * C + (op.recv_chan >= 0 ? op.recv_chan : c) : -1;
    out->to_stream = op.send ? op.send_peer * C + (op.send_chan >= 0 ? op.send_chan : c) : -1;
    out->nsrc = spans(s, op.chunk, op.nchunk, out->src);
    out->ndst = spans(s, op.recv ? op.chunk : op.to_chunk, op.nchunk, out->dst);
    out->bytes = sched_range_bytes(s, op.chunk, op.nchunk);
    return 1;
}

unsigned char bc_fill(int r, unsigned long long i) { return (unsigned char)(r * 31 + i * 7 + 1); }

int bc_expect(const bc_sched_t *bs, int r, unsigned long long i) {
    const sched_t *s = &bs->s;
    int sum = 0, owner = 0;
    for (int k = 0; k < s->nranks; k++) sum += bc_fill(k, i);
    for (uint32_t c = 0; c < s->nchunks; c++) {
        uint64_t off, len;
        sched_chunk_at(s, c, &off, &len);
        if (i >= off && i < off + len) owner = (int)(c / s->per_block);
    }
    switch (s->coll) {
    case COLL_ALLREDUCE: return sum & 0xff;
    case COLL_REDUCE_SCATTER: return owner == r ? sum & 0xff : -1;
    case COLL_ALLGATHER: return bc_fill(owner, i);
    case COLL_BROADCAST: return bc_fill(s->root, i);
    case COLL_REDUCE: return r == s->root ? sum & 0xff : -1;
    default: return -1;
    }
}

int bc_write_log(const char *path, const char *coll, int ranks, const unsigned long long *bytes, const double *us, int n) {
    int c = coll_parse(coll);
    nt_log_t log = {.coll = c < 0 ? COLL_ALLREDUCE : (coll_t)c, .ranks = ranks, .type = "int8"};
    log.rows = calloc((size_t)n + 1, sizeof *log.rows);
    if (log.rows == NULL) return -1;
    for (int i = 0; i < n; i++) log.rows[log.nrows++] = (nt_row_t){.bytes = bytes[i], .count = bytes[i], .oop_us = us[i], .ip_us = -1};
    FILE *f = path ? fopen(path, "w") : stdout;
    int rc = f && nt_write(&log, f) == 0 ? 0 : -1;
    if (f && path) fclose(f);
    free(log.rows);
    return rc;
}
