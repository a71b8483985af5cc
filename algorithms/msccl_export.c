/* msccl_export.c - a built schedule written as MSCCL XML.
 *
 * The inverse of msccl.c's reading: stream (rank, c) becomes thread block c
 * of GPU rank on MSCCL channel c (a message from (r, c) reaches (q, c), and
 * MSCCL pairs the thread blocks that send and receive between two GPUs by
 * channel). Ops become steps: send s, receive-copy r, receive-add rrc, and
 * the fused forms rcs and rrcs. A dataless message a rank sends itself
 * between its streams (direct's tokens) is a dependency: the receiving
 * block's next step gets depid/deps of the sending block's last step (a nop
 * where none or where two wait at once), so that reading the file back
 * gives the same op sequence, and the same simulated time. The buffer's
 * blocks (sched.h's layout) go in an attribute of <algo> that MSCCL does
 * not read, baton_blocks, so that the chunks read back have the same sizes.
 *
 * What MSCCL cannot say is refused, with the reason: a thread block has one
 * send peer and one receive peer (halving-doubling, Bruck, pairwise and the
 * trees change peers step by step); messages between ranks stay on their
 * channel; no reducing switches (NVLS, CollNet); a chunk range does not wrap;
 * all-reduce, all-gather and reduce-scatter only (broadcast's and reduce's
 * root is not in the format; all-to-all is not read back yet). */
#include "msccl.h"

#include <stdlib.h>
#include <string.h>

#define EXPORT_MAX_OPS (1u << 22)

typedef struct xstep {
    int type, chunk, cnt;
    int depid;                 /* waits on block depid's next dataless message to it (-1: none) */
    int deps, hasdep;          /* that block's step it follows (set by resolve) */
} xstep_t;

typedef struct xtb {
    int send, recv;
    int n, cap;
    xstep_t *st;
    int nsig[64];              /* dataless messages sent to block y so far */
    int *sig_at[64];           /* sig_at[y][k]: the step after which the k-th went */
    int sig_cap[64];
} xtb_t;

static int push(xtb_t *b, xstep_t s) {
    if (b->n == b->cap) {
        int nc = b->cap ? 2 * b->cap : 16;
        xstep_t *a = realloc(b->st, (size_t)nc * sizeof *a);
        if (a == NULL) return BATON_ENOMEM;
        b->st = a, b->cap = nc;
    }
    b->st[b->n++] = s;
    return 0;
}

static int sig(xtb_t *b, int y) {
    if (b->nsig[y] == b->sig_cap[y]) {
        int nc = b->sig_cap[y] ? 2 * b->sig_cap[y] : 8;
        int *a = realloc(b->sig_at[y], (size_t)nc * sizeof *a);
        if (a == NULL) return BATON_ENOMEM;
        b->sig_at[y] = a, b->sig_cap[y] = nc;
    }
    b->sig_at[y][b->nsig[y]++] = b->n - 1;
    return 0;
}

static void xtb_free(xtb_t *b) {
    free(b->st);
    for (int y = 0; y < 64; y++) free(b->sig_at[y]);
}

/* Why stream (r, c)'s op cannot be said, or NULL. */
static const char *unsayable(const sched_t *s, int r, const sched_op_t *op, const xtb_t *b) {
    int self = (op->send && op->send_peer == r) || (op->recv && op->recv_peer == r);
    if (self) {
        if (op->nchunk != 0 || (op->send && op->recv)) return "it moves data from a rank to itself";
        return NULL;
    }
    if (op->send_chan >= 0 || op->recv_chan >= 0) return "a message between ranks changes channel";
    if (op->nchunk == 0) return "a dataless message between ranks (MSCCL sends chunks)";
    if (op->chunk + op->nchunk > s->nchunks || (op->send && op->to_chunk + op->nchunk > s->nchunks))
        return "a chunk range wraps round the buffer";
    if (op->send && b->send >= 0 && op->send_peer != b->send)
        return "a stream sends to more than one peer (an MSCCL thread block has one send peer)";
    if (op->recv && b->recv >= 0 && op->recv_peer != b->recv)
        return "a stream receives from more than one peer (an MSCCL thread block has one receive peer)";
    return NULL;
}

static int step_type(const sched_op_t *op) {
    if (op->send && op->recv) return op->recv == RECV_REDUCE ? MSCCL_RRCS : MSCCL_RCS;
    if (op->send) return MSCCL_S;
    return op->recv == RECV_REDUCE ? MSCCL_RRC : MSCCL_R;
}

/* Stream (r, c) into b: steps, with dependencies as (block, ordinal) for now. */
static int walk(const sched_t *s, int r, int c, xtb_t *b, uint32_t *total, baton_err_t *e) {
    sched_op_t op;
    int pend[64], npend = 0, rc;
    b->send = b->recv = -1;
    for (uint32_t pc = 0; sched_op(s, r, c, pc, &op); pc++) {
        const char *why = unsayable(s, r, &op, b);
        if (why) return err_set(e, BATON_EUNSUP, "%s %s: MSCCL cannot say it: %s (rank %d, channel %d, op %u)",
                                coll_name(s->coll), s->algo, why, r, c, pc);
        if (++*total > EXPORT_MAX_OPS) return err_set(e, BATON_EUNSUP, "%s: more than %u steps", s->algo, EXPORT_MAX_OPS);
        int self = (op.send && op.send_peer == r) || (op.recv && op.recv_peer == r);
        if (self && op.recv) {                            /* a wait on another block */
            int x = op.recv_chan < 0 ? c : op.recv_chan;
            if (npend == 64 || x >= 64) return err_set(e, BATON_EUNSUP, "%s: too many waits at once", s->algo);
            pend[npend++] = x;
            continue;
        }
        if (self) {                                       /* a signal to block y after my last step */
            int y = op.send_chan < 0 ? c : op.send_chan;
            if (y >= 64) return err_set(e, BATON_EUNSUP, "%s: more than 64 channels", s->algo);
            for (int i = 0; i < npend; i++)               /* waits before it: nops, so it follows them */
                if ((rc = push(b, (xstep_t){.type = MSCCL_NOP, .depid = pend[i]})) < 0) return err_set(e, rc, "out of memory");
            npend = 0;
            if (b->n == 0 && (rc = push(b, (xstep_t){.type = MSCCL_NOP, .depid = -1})) < 0)
                return err_set(e, rc, "out of memory");
            if ((rc = sig(b, y)) < 0) return err_set(e, rc, "out of memory");
            continue;
        }
        for (int i = 0; i + 1 < npend; i++)               /* all waits but the last: nops; the last on this step */
            if ((rc = push(b, (xstep_t){.type = MSCCL_NOP, .depid = pend[i]})) < 0) return err_set(e, rc, "out of memory");
        int carry = npend ? pend[npend - 1] : -1;
        npend = 0;
        if (op.send) b->send = op.send_peer;
        if (op.recv) b->recv = op.recv_peer;
        xstep_t st = {.type = step_type(&op), .chunk = (int)op.chunk, .cnt = (int)op.nchunk, .depid = carry};
        if ((rc = push(b, st)) < 0) return err_set(e, rc, "out of memory");
    }
    for (int i = 0; i < npend; i++)                       /* waits at the end: nops */
        if ((rc = push(b, (xstep_t){.type = MSCCL_NOP, .chunk = -1, .depid = pend[i]})) < 0)
            return err_set(e, rc, "out of memory");
    return 0;
}

/* Give each wait its step: the k-th wait of block c on block x is the k-th
 * signal x sent c. */
static int resolve(const sched_t *s, int r, xtb_t *tb, int C, baton_err_t *e) {
    for (int c = 0; c < C; c++) {
        int seen[64] = {0};
        for (int i = 0; i < tb[c].n; i++) {
            xstep_t *st = &tb[c].st[i];
            if (st->depid < 0) continue;
            int x = st->depid, k = seen[x]++;
            if (x >= C || k >= tb[x].nsig[c])
                return err_set(e, BATON_ESCHED, "%s: rank %d's channel %d waits on channel %d more often than it is told",
                               s->algo, r, c, x);
            st->deps = tb[x].sig_at[c][k];
            tb[x].st[st->deps].hasdep = 1;
        }
    }
    return 0;
}

static const char *const type_names[MSCCL_NTYPES] = {"nop", "s", "r", "rcs", "rrc", "rrs", "rrcs", "cpy", "re"};

static void write_step(FILE *out, int i, const xstep_t *st, char buf) {
    int src = st->type == MSCCL_S || st->type == MSCCL_RRC || st->type == MSCCL_RRCS ? st->chunk : -1;
    int dst = st->type == MSCCL_R || st->type == MSCCL_RCS || st->type == MSCCL_RRC || st->type == MSCCL_RRCS ? st->chunk : -1;
    fprintf(out, "      <step s=\"%d\" type=\"%s\" srcbuf=\"%c\" srcoff=\"%d\" dstbuf=\"%c\" dstoff=\"%d\" cnt=\"%d\" "
            "depid=\"%d\" deps=\"%d\" hasdep=\"%d\"/>\n", i, type_names[st->type], buf, src, buf, dst,
            st->type == MSCCL_NOP ? 0 : st->cnt, st->depid, st->depid < 0 ? -1 : st->deps, st->hasdep);
}

static int check_row(const sched_t *s, baton_err_t *e) {
    if (s->coll != COLL_ALLREDUCE && s->coll != COLL_ALLGATHER && s->coll != COLL_REDUCE_SCATTER)
        return err_set(e, BATON_EUNSUP, "%s %s: MSCCL export does %s, not %s", coll_name(s->coll), s->algo,
                       "allreduce, allgather and reducescatter", s->coll == COLL_ALLTOALL
                       ? "all-to-all (baton does not read it back yet)" : "a rooted collective (the file has no root)");
    if (s->helpers || s->group)
        return err_set(e, BATON_EUNSUP, "%s %s: MSCCL cannot say it: %s", coll_name(s->coll), s->algo,
                       s->helpers ? "switches that reduce (NVLS, CollNet) are not GPUs" : "a group of collectives");
    if (s->nchannels > 64) return err_set(e, BATON_EUNSUP, "%s: MSCCL export takes at most 64 channels", s->algo);
    if (s->coll != COLL_ALLREDUCE && (s->nblocks != (uint32_t)s->nranks))
        return err_set(e, BATON_EUNSUP, "%s %s: MSCCL cannot say it: its layout is not a block per rank", coll_name(s->coll), s->algo);
    return 0;
}

int msccl_export(const sched_t *s, const char *proto, FILE *out, int *most, baton_err_t *e) {
    int rc = check_row(s, e), p = s->nranks, C = s->nchannels;
    if (rc < 0) return rc;
    xtb_t *tb = calloc((size_t)p * C, sizeof *tb);
    if (tb == NULL) return err_set(e, BATON_ENOMEM, "out of memory");
    uint32_t total = 0;
    if (most) *most = 0;
    for (int r = 0; r < p && rc == 0; r++)
        for (int c = 0; c < C && rc == 0; c++) rc = walk(s, r, c, &tb[(size_t)r * C + c], &total, e);
    for (int r = 0; r < p && rc == 0; r++) rc = resolve(s, r, &tb[(size_t)r * C], C, e);
    if (rc == 0) {
        const char *coll = s->coll == COLL_ALLREDUCE ? "allreduce" : s->coll == COLL_ALLGATHER ? "allgather" : "reducescatter";
        int W = (int)s->nchunks, per = (int)s->per_block;
        int ic = s->coll == COLL_ALLGATHER ? per : W, oc = s->coll == COLL_REDUCE_SCATTER ? per : W;
        char buf = s->coll == COLL_ALLGATHER ? 'o' : 'i';
        fprintf(out, "<algo name=\"baton %s %s\" proto=\"%s\" nchannels=\"%d\" nchunksperloop=\"%d\" ngpus=\"%d\" "
                "coll=\"%s\" inplace=\"1\" baton_blocks=\"%u\">\n", coll_name(s->coll), s->algo, proto, C, W, p, coll,
                s->nblocks);
        for (int r = 0; r < p; r++) {
            fprintf(out, "  <gpu id=\"%d\" i_chunks=\"%d\" o_chunks=\"%d\" s_chunks=\"0\">\n", r, ic, oc);
            for (int c = 0; c < C; c++) {
                const xtb_t *b = &tb[(size_t)r * C + c];
                if (b->n == 0) continue;
                if (most && b->n > *most) *most = b->n;
                fprintf(out, "    <tb id=\"%d\" send=\"%d\" recv=\"%d\" chan=\"%d\">\n", c, b->send, b->recv, c);
                for (int i = 0; i < b->n; i++) write_step(out, i, &b->st[i], buf);
                fputs("    </tb>\n", out);
            }
            fputs("  </gpu>\n", out);
        }
        fputs("</algo>\n", out);
    }
    for (size_t i = 0; i < (size_t)p * C; i++) xtb_free(&tb[i]);
    free(tb);
    return rc;
}
