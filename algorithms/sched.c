/* sched.c - chunk layout, names and the GOAL text dump. */
#include "sched.h"

#include "../util/suggest.h"

#include <string.h>

static const char *coll_names[COLL_COUNT] = {
    "allreduce", "reducescatter", "allgather", "broadcast", "reduce", "alltoall"};

const char *coll_name(coll_t c) {
    return (c >= 0 && c < COLL_COUNT) ? coll_names[c] : "?";
}

const char *coll_hint(const char *name) {
    const char *cands[COLL_COUNT + 1];
    for (int i = 0; i < COLL_COUNT; i++) cands[i] = coll_names[i];
    cands[COLL_COUNT] = NULL;
    return suggest_hint(name, cands);
}

int coll_parse(const char *name) {
    for (int i = 0; i < COLL_COUNT; i++)
        if (strcmp(name, coll_names[i]) == 0) return i;
    if (strcmp(name, "reduce_scatter") == 0) return COLL_REDUCE_SCATTER;
    if (strcmp(name, "all_reduce") == 0) return COLL_ALLREDUCE;
    if (strcmp(name, "all_gather") == 0) return COLL_ALLGATHER;
    if (strcmp(name, "bcast") == 0) return COLL_BROADCAST;
    if (strcmp(name, "all_to_all") == 0) return COLL_ALLTOALL;
    return -1;
}

uint64_t coll_whole_bytes(coll_t c, int p, uint64_t bytes, uint64_t *unit) {
    uint64_t u = c == COLL_ALLTOALL ? 4 : c == COLL_ALLGATHER || c == COLL_REDUCE_SCATTER ? 16 : 0;
    u = u && p > 0 ? u * (uint64_t)p : 1;
    if (unit) *unit = u;
    return bytes / u * u;
}

void sched_chunk(uint64_t n, uint32_t k, uint32_t i, uint64_t *off, uint64_t *len) {
    uint64_t q = n / k, r = n % k;
    *len = q + (i < r ? 1 : 0);
    *off = (uint64_t)i * q + (i < r ? i : r);
}

void sched_layout(sched_t *s, uint32_t nblocks, uint32_t per_block) {
    s->nblocks = nblocks;
    s->per_block = per_block;
    s->nchunks = nblocks * per_block;
}

void sched_chunk_at(const sched_t *s, uint32_t c, uint64_t *off, uint64_t *len) {
    uint64_t boff, blen, o;
    if (s->part) {                        /* the part that owns it, moved to its place */
        uint32_t c0;
        uint64_t b0;
        const sched_t *m = s->part(s, c, &c0, &b0);
        sched_chunk_at(m, c - c0, off, len);
        *off += b0;
        return;
    }
    if (s->per_block == 1) { sched_chunk(s->bytes, s->nblocks, c, off, len); return; }
    sched_chunk(s->bytes, s->nblocks, c / s->per_block, &boff, &blen);
    sched_chunk(blen, s->per_block, c % s->per_block, &o, len);
    *off = boff + o;
}

/* Offset where chunk c starts; chunk nchunks starts at the end. */
static uint64_t chunk_start(const sched_t *s, uint32_t c) {
    uint64_t off, len;
    if (c >= s->nchunks) return s->bytes;
    sched_chunk_at(s, c, &off, &len);
    return off;
}

uint64_t sched_range_bytes(const sched_t *s, uint32_t first, uint32_t count) {
    uint64_t end = (uint64_t)first + count, off, len;
    if (s->part) {                        /* a range wraps within its part */
        uint32_t c0;
        uint64_t b0;
        const sched_t *m = s->part(s, first, &c0, &b0);
        return sched_range_bytes(m, first - c0, count);
    }
    if (count == 1) { sched_chunk_at(s, first, &off, &len); return len; }
    if (end <= s->nchunks) return chunk_start(s, (uint32_t)end) - chunk_start(s, first);
    return s->bytes - chunk_start(s, first) + chunk_start(s, (uint32_t)(end - s->nchunks));
}

const char *sched_op_name(const sched_op_t *op) {
    if (op->recv == RECV_NONE) return op->send ? "send" : "nop";
    if (op->recv == RECV_COPY) return op->send ? "recv_copy_send" : "recv_copy";
    return op->send ? "recv_reduce_send" : "recv_reduce";
}

/* GOAL tags identify a message by its chunk range at the receiver: first +
 * nchunks * (count - 1), one-to-one, and just the chunk for one chunk. */
static unsigned tag(const sched_t *s, uint32_t chunk, const sched_op_t *op) {
    return chunk + s->nchunks * (op->nchunk - 1);
}

/* One rank's program as GOAL: labels count up, each op requires the previous
 * blocking one (a receive), sends only the receive they forward. */
static void dump_rank(const sched_t *s, int rank, FILE *out) {
    int label = 0;
    fprintf(out, "rank %d {\n", rank);
    for (int c = 0; c < s->nchannels; c++) {
        int last_block = -1;
        sched_op_t op;
        for (uint32_t pc = 0; sched_op(s, rank, c, pc, &op); pc++) {
            uint64_t b = sched_range_bytes(s, op.chunk, op.nchunk);
            if (op.recv != RECV_NONE) {
                int l = label++;
                fprintf(out, "l%d: recv %llub from %d tag %u cpu %d\n", l,
                        (unsigned long long)b, op.recv_peer, tag(s, op.chunk, &op), c);
                if (last_block >= 0) fprintf(out, "l%d requires l%d\n", l, last_block);
                last_block = l;
                if (op.recv == RECV_REDUCE) {
                    int r = label++;
                    fprintf(out, "l%d: calc %llu cpu %d\n", r, (unsigned long long)b, c);
                    fprintf(out, "l%d requires l%d\n", r, l);
                    last_block = r;
                }
            }
            if (op.send) {
                int l = label++;
                fprintf(out, "l%d: send %llub to %d tag %u cpu %d\n", l,
                        (unsigned long long)b, op.send_peer, tag(s, op.to_chunk, &op), c);
                if (last_block >= 0) fprintf(out, "l%d requires l%d\n", l, last_block);
            }
        }
    }
    fprintf(out, "}\n");
}

int sched_dump_goal(const sched_t *s, FILE *out) {
    fprintf(out, "# baton schedule: %s %s, %d ranks, %d channel(s), %llu bytes, %u chunks\n",
            coll_name(s->coll), s->algo, s->nranks, s->nchannels,
            (unsigned long long)s->bytes, s->nchunks);
    if (s->coll == COLL_BROADCAST || s->coll == COLL_REDUCE) fprintf(out, "# root %d\n", s->root);
    fprintf(out, "num_ranks %d\n", s->nranks);
    for (int r = 0; r < s->nranks; r++) dump_rank(s, r, out);
    return ferror(out) ? BATON_EIO : 0;
}
