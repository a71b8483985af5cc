/* msccl.c - an MSCCL XML algorithm as a registry row and a schedule.
 *
 * A file is read once (msccl_xml.c), checked, and compiled into one op list
 * per stream: stream (rank, c) is thread block c of GPU rank (empty where
 * that GPU has fewer). A step becomes
 *
 *   s            send src                  to the tb's send peer
 *   r            receive into dst          from its receive peer (copy)
 *   rcs          receive into dst, send it on
 *   rrc / rrcs   receive and add into dst (src must be dst), [send it on]
 *   rrs          receive, add into src, send it on (MSCCL does not keep the
 *                sum; baton does, see docs/decisions/formats.md)
 *   cpy / re     a message to itself: src lands in dst (copied / added)
 *   nop          nothing but its dependency
 *
 * A step with depid/deps first receives a dataless message that thread block
 * depid sends right after its step deps: the dependency, at no cost (a
 * message that stays on the GPU takes no time in the engine). A send lands
 * where the receiver's matching step (in order, per pair of thread blocks)
 * says, so the sender's op carries that chunk (sched_op_t.to_chunk).
 *
 * Buffers map onto baton's one buffer per rank (sched.h's layout): all-
 * reduce's input and output are the buffer; all-gather's output is the
 * buffer and its input rank r's block of it (in place, as NCCL's in-place
 * all-gather); reduce-scatter's input is the buffer and its output rank r's
 * block. Scratch buffers have no place there and are refused. */
#include "msccl.h"

#include <stdlib.h>
#include <string.h>

#include "../models/proto.h"

#define MSCCL_MAX_LOADED 256
#define MSCCL_MAX_TB 1024
#define MSCCL_MAX_CHUNKS (1 << 24)

typedef struct mprog {
    int p, C;
    uint32_t *start;           /* [p * C + 1]: stream k's ops are ops[start[k] .. start[k + 1]) */
    sched_op_t *ops;
    uint32_t nops, cap;
} mprog_t;

typedef struct loaded {
    algo_t row;
    char name[320];            /* "msccl:" FILE: the row's name */
    int proto;
    int per;                   /* chunks per block */
    uint32_t nblocks;
    mprog_t prog;
} loaded_t;

static loaded_t *loaded[MSCCL_MAX_LOADED];
static int nloaded;

int msccl_is(const char *name) { return name && strncmp(name, "msccl:", 6) == 0; }

/* ---- checking and compiling ---------------------------------------------- */

typedef struct cctx {
    const msccl_algo_t *a;
    coll_t coll;
    int p, C, per;
    int **tbx;                 /* [gpu][tb id]: index in gpu->tb, -1: none */
    int **send_tb, **recv_tb;  /* [gpu][tb index]: the peer's tb id, -1: none */
    int32_t ***rchunk;         /* [gpu][tb index][k]: where the k-th receive lands */
    int **nrecv;
    baton_err_t *e;
} cctx_t;

static int at(const cctx_t *c, int line, int code, const char *what, const char *more) {
    return err_set(c->e, code, "%s:%d: %s%s", c->a->path, line, what, more ? more : "");
}

static int coll_of(const char *name) {
    if (strcmp(name, "allreduce") == 0) return COLL_ALLREDUCE;
    if (strcmp(name, "allgather") == 0) return COLL_ALLGATHER;
    if (strcmp(name, "reducescatter") == 0 || strcmp(name, "reduce_scatter") == 0) return COLL_REDUCE_SCATTER;
    return -1;
}

/* Baton's chunk for chunk off (of cnt) of buffer buf on rank r, or -1 (e set). */
static int64_t chunk_of(const cctx_t *c, const msccl_step_t *st, char buf, int off, int r) {
    char msg[200];
    int64_t p = c->p, per = c->per, limit, base = 0;
    if (buf == 's')
        return at(c, st->line, BATON_EUNSUP, "a scratch buffer (s): baton's schedules have one buffer per rank, "
                  "so algorithms with scratch chunks are not read yet", NULL), -1;
    if (c->coll == COLL_ALLREDUCE) limit = per;      /* per: the whole buffer's chunks */
    else if (c->coll == COLL_ALLGATHER) limit = buf == 'o' ? p * per : per, base = buf == 'o' ? 0 : (int64_t)r * per;
    else limit = buf == 'i' ? p * per : per, base = buf == 'i' ? 0 : (int64_t)r * per;
    if (off < 0 || st->cnt < 1 || off + st->cnt > limit) {
        snprintf(msg, sizeof msg, "chunks %d..%d of buffer %c: it has %lld chunks on GPU %d", off, off + st->cnt - 1, buf,
                 (long long)limit, r);
        return at(c, st->line, BATON_EPARSE, msg, NULL), -1;
    }
    return base + off;
}

static int has_recv(int t) { return t == MSCCL_R || t == MSCCL_RCS || t == MSCCL_RRC || t == MSCCL_RRS || t == MSCCL_RRCS; }
static int has_send(int t) { return t == MSCCL_S || t == MSCCL_RCS || t == MSCCL_RRS || t == MSCCL_RRCS; }

/* The chunk a step works on: where a receive lands, what a send sends. */
static int64_t step_chunk(const cctx_t *c, const msccl_step_t *st, int r) {
    switch (st->type) {
    case MSCCL_S: case MSCCL_RRS: return chunk_of(c, st, st->srcbuf, st->srcoff, r);
    case MSCCL_R: case MSCCL_RCS: return chunk_of(c, st, st->dstbuf, st->dstoff, r);
    case MSCCL_RRC: case MSCCL_RRCS: {
        int64_t d = chunk_of(c, st, st->dstbuf, st->dstoff, r), s = st->srcoff < 0 ? d : chunk_of(c, st, st->srcbuf, st->srcoff, r);
        if (d < 0 || s < 0) return -1;
        if (s != d) return at(c, st->line, BATON_EUNSUP, "a receive-reduce whose source is not its destination "
                              "(baton adds into the chunk it receives into)", NULL), -1;
        return d;
    }
    default: return 0;
    }
}

static int gpu_index(const cctx_t *c, int id) {
    for (int g = 0; g < c->a->ngpu; g++)
        if (c->a->gpu[g].id == id) return g;
    return -1;
}

/* The thread block of GPU peer that talks to rank r on chan (dir 1: it
 * receives from r, 0: it sends to r); its id, or -1 (e set). */
static int peer_tb(const cctx_t *c, int r, const msccl_tb_t *b, int peer, int dir) {
    char msg[200];
    if (peer < 0 || peer >= c->p || peer == r) {
        snprintf(msg, sizeof msg, "thread block %d of GPU %d %s GPU %d: not another GPU of %d", b->id, r,
                 dir ? "sends to" : "receives from", peer, c->p);
        return at(c, b->line, BATON_EPARSE, msg, NULL);
    }
    const msccl_gpu_t *g = &c->a->gpu[gpu_index(c, peer)];
    int found = -1;
    for (int t = 0; t < g->ntb; t++) {
        if ((dir ? g->tb[t].recv : g->tb[t].send) != r || g->tb[t].chan != b->chan) continue;
        if (found >= 0) {
            snprintf(msg, sizeof msg, "GPU %d has two thread blocks (%d and %d) %s GPU %d on channel %d", peer,
                     g->tb[found].id, g->tb[t].id, dir ? "receiving from" : "sending to", r, b->chan);
            return at(c, g->tb[t].line, BATON_EPARSE, msg, NULL);
        }
        found = t;
    }
    if (found < 0) {
        snprintf(msg, sizeof msg, "thread block %d of GPU %d %s GPU %d on channel %d, but no thread block of GPU %d %s it there",
                 b->id, r, dir ? "sends to" : "receives from", peer, b->chan, peer, dir ? "receives from" : "sends to");
        return at(c, b->line, BATON_ESCHED, msg, NULL);
    }
    return g->tb[found].id;
}

static int check_shape(cctx_t *c) {
    const msccl_algo_t *a = c->a;
    char msg[200];
    int co = coll_of(a->coll);
    if (co < 0) {
        snprintf(msg, sizeof msg, "coll=\"%.32s\": baton reads allreduce, allgather and reducescatter", a->coll);
        return at(c, a->line, BATON_EUNSUP, msg, NULL);
    }
    c->coll = (coll_t)co;
    if (proto_parse(a->proto) <= PROTO_NONE) {
        snprintf(msg, sizeof msg, "proto=\"%.16s\": MSCCL's protocols are Simple, LL and LL128", a->proto);
        return at(c, a->line, BATON_EPARSE, msg, NULL);
    }
    if (a->ngpus < 1 || a->ngpus != a->ngpu) {
        snprintf(msg, sizeof msg, "ngpus=\"%d\" but the file has %d <gpu> elements", a->ngpus, a->ngpu);
        return at(c, a->line, BATON_EPARSE, msg, NULL);
    }
    c->p = a->ngpus;
    for (int g = 0; g < a->ngpu; g++) {
        const msccl_gpu_t *G = &a->gpu[g];
        if (G->id < 0 || G->id >= c->p || gpu_index(c, G->id) != g) {
            snprintf(msg, sizeof msg, "<gpu id=\"%d\">: ids are 0..%d, each once", G->id, c->p - 1);
            return at(c, G->line, BATON_EPARSE, msg, NULL);
        }
        int per = c->coll == COLL_ALLREDUCE ? (G->i_chunks > G->o_chunks ? G->i_chunks : G->o_chunks)
                : c->coll == COLL_ALLGATHER ? G->i_chunks : G->o_chunks;
        if (c->coll == COLL_ALLREDUCE && per == 0) per = a->nchunksperloop;
        if (g == 0) c->per = per;
        if ((int64_t)per * c->p > MSCCL_MAX_CHUNKS) {
            snprintf(msg, sizeof msg, "GPU %d's buffers: more than %d chunks in all", G->id, MSCCL_MAX_CHUNKS);
            return at(c, G->line, BATON_EUNSUP, msg, NULL);
        }
        if (per < 1 || per != c->per) {
            snprintf(msg, sizeof msg, "GPU %d's buffers (i_chunks %d, o_chunks %d) differ from GPU 0's or are empty",
                     G->id, G->i_chunks, G->o_chunks);
            return at(c, G->line, BATON_EPARSE, msg, NULL);
        }
        for (int t = 0; t < G->ntb; t++)
            if (G->tb[t].id < 0 || G->tb[t].id >= MSCCL_MAX_TB) {
                snprintf(msg, sizeof msg, "<tb id=\"%d\">: thread blocks are numbered 0..%d", G->tb[t].id, MSCCL_MAX_TB - 1);
                return at(c, G->tb[t].line, BATON_EPARSE, msg, NULL);
            } else if (G->tb[t].id >= c->C) c->C = G->tb[t].id + 1;
    }
    if (c->C == 0) return at(c, a->line, BATON_EPARSE, "no <tb> in any <gpu>: nothing to run", NULL);
    return 0;
}

/* Allocate the index tables and resolve every thread block's peers. */
static int resolve(cctx_t *c) {
    const msccl_algo_t *a = c->a;
    int p = c->p;
    c->tbx = calloc((size_t)p, sizeof *c->tbx);
    c->send_tb = calloc((size_t)p, sizeof *c->send_tb);
    c->recv_tb = calloc((size_t)p, sizeof *c->recv_tb);
    c->rchunk = calloc((size_t)p, sizeof *c->rchunk);
    c->nrecv = calloc((size_t)p, sizeof *c->nrecv);
    if (!c->tbx || !c->send_tb || !c->recv_tb || !c->rchunk || !c->nrecv) return err_set(c->e, BATON_ENOMEM, "out of memory");
    for (int r = 0; r < p; r++) {
        const msccl_gpu_t *G = &a->gpu[gpu_index(c, r)];
        c->tbx[r] = malloc((size_t)(c->C + 1) * sizeof **c->tbx);
        c->send_tb[r] = calloc((size_t)G->ntb + 1, sizeof **c->send_tb);
        c->recv_tb[r] = calloc((size_t)G->ntb + 1, sizeof **c->recv_tb);
        c->rchunk[r] = calloc((size_t)G->ntb + 1, sizeof **c->rchunk);
        c->nrecv[r] = calloc((size_t)G->ntb + 1, sizeof **c->nrecv);
        if (!c->tbx[r] || !c->send_tb[r] || !c->recv_tb[r] || !c->rchunk[r] || !c->nrecv[r])
            return err_set(c->e, BATON_ENOMEM, "out of memory");
        for (int i = 0; i < c->C; i++) c->tbx[r][i] = -1;
        for (int t = 0; t < G->ntb; t++) {
            if (c->tbx[r][G->tb[t].id] >= 0) {
                char msg[96];
                snprintf(msg, sizeof msg, "GPU %d has two thread blocks with id %d", r, G->tb[t].id);
                return at(c, G->tb[t].line, BATON_EPARSE, msg, NULL);
            }
            c->tbx[r][G->tb[t].id] = t;
        }
    }
    for (int r = 0; r < p; r++) {
        const msccl_gpu_t *G = &a->gpu[gpu_index(c, r)];
        for (int t = 0; t < G->ntb; t++) {
            const msccl_tb_t *b = &G->tb[t];
            int s = -1, v = -1;
            if (b->send >= 0 && (s = peer_tb(c, r, b, b->send, 1)) < 0) return s;
            if (b->recv >= 0 && (v = peer_tb(c, r, b, b->recv, 0)) < 0) return v;
            c->send_tb[r][t] = s, c->recv_tb[r][t] = v;
            c->rchunk[r][t] = calloc((size_t)b->nsteps + 1, sizeof ***c->rchunk);
            if (c->rchunk[r][t] == NULL) return err_set(c->e, BATON_ENOMEM, "out of memory");
            for (int j = 0; j < b->nsteps; j++) {       /* where each receive lands, in order */
                const msccl_step_t *st = &b->steps[j];
                if ((has_recv(st->type) && b->recv < 0) || (has_send(st->type) && b->send < 0))
                    return at(c, st->line, BATON_EPARSE, has_recv(st->type) && b->recv < 0
                              ? "a receiving step in a thread block without a receive peer (recv=\"-1\")"
                              : "a sending step in a thread block without a send peer (send=\"-1\")", NULL);
                int64_t k = step_chunk(c, st, r);
                if (k < 0) return c->e ? c->e->code : BATON_EPARSE;
                if (has_recv(st->type)) c->rchunk[r][t][c->nrecv[r][t]++] = (int32_t)k;
            }
        }
    }
    return 0;
}

static int emit(mprog_t *m, sched_op_t op) {
    if (m->nops == m->cap) {
        uint32_t nc = m->cap ? 2 * m->cap : 256;
        sched_op_t *o = nc > m->cap ? realloc(m->ops, (size_t)nc * sizeof *o) : NULL;
        if (o == NULL) return BATON_ENOMEM;
        m->ops = o, m->cap = nc;
    }
    m->ops[m->nops++] = op;
    return 0;
}

/* The dependencies of GPU r's thread block index t: each step waiting on
 * another block must wait on steps of it in order (the dataless messages
 * between two blocks match in order). */
static int check_deps(const cctx_t *c, int r, const msccl_gpu_t *G, int t) {
    const msccl_tb_t *b = &G->tb[t];
    for (int j = 0; j < b->nsteps; j++) {
        const msccl_step_t *st = &b->steps[j];
        if (st->depid < 0 || st->depid == b->id) continue;
        int x = st->depid < c->C ? c->tbx[r][st->depid] : -1;
        char msg[200];
        if (x < 0 || st->deps < 0 || st->deps >= G->tb[x].nsteps) {
            snprintf(msg, sizeof msg, "depends on step %d of thread block %d, which GPU %d does not have", st->deps,
                     st->depid, r);
            return at(c, st->line, BATON_EPARSE, msg, NULL);
        }
        for (int i = j + 1; i < b->nsteps; i++)
            if (b->steps[i].depid == st->depid && b->steps[i].deps < st->deps) {
                snprintf(msg, sizeof msg, "waits on step %d of thread block %d after an earlier step waited on its step %d: "
                         "baton needs a block's waits on another in that block's order", b->steps[i].deps, st->depid, st->deps);
                return at(c, b->steps[i].line, BATON_EUNSUP, msg, NULL);
            }
    }
    return 0;
}

/* Stream (r, thread block index t)'s ops. */
static int compile_tb(const cctx_t *c, int r, const msccl_gpu_t *G, int t, int *sent, mprog_t *m) {
    const msccl_tb_t *b = &G->tb[t];
    int rc;
    if ((rc = check_deps(c, r, G, t)) < 0) return rc;
    for (int j = 0; j < b->nsteps; j++) {
        const msccl_step_t *st = &b->steps[j];
        if (st->depid >= 0 && st->depid != b->id &&
            (rc = emit(m, op_chan(op_recv(r, 0, 0, RECV_COPY), st->depid, -1))) < 0) return rc;
        int64_t k = step_chunk(c, st, r);
        if (k < 0) return c->e->code;
        sched_op_t op = {0};
        int ty = st->type;
        if (ty == MSCCL_CPY || ty == MSCCL_RE) {                 /* a message to itself */
            int64_t s = chunk_of(c, st, st->srcbuf, st->srcoff, r), d = chunk_of(c, st, st->dstbuf, st->dstoff, r);
            if (s < 0 || d < 0) return c->e->code;
            if ((rc = emit(m, op_send_into(r, (uint32_t)s, (uint32_t)st->cnt, (uint32_t)d))) < 0 ||
                (rc = emit(m, op_recv(r, (uint32_t)d, (uint32_t)st->cnt, ty == MSCCL_RE ? RECV_REDUCE : RECV_COPY))) < 0)
                return rc;
        } else if (ty != MSCCL_NOP) {
            recv_kind_t rk = ty == MSCCL_R || ty == MSCCL_RCS ? RECV_COPY : has_recv(ty) ? RECV_REDUCE : RECV_NONE;
            if (has_send(ty) && rk != RECV_NONE) op = op_fwd(b->recv, b->send, (uint32_t)k, (uint32_t)st->cnt, rk);
            else if (has_send(ty)) op = op_send(b->send, (uint32_t)k, (uint32_t)st->cnt);
            else op = op_recv(b->recv, (uint32_t)k, (uint32_t)st->cnt, rk);
            if (rk != RECV_NONE) op.recv_chan = (int16_t)c->recv_tb[r][t];
            if (has_send(ty)) {                                   /* lands where the receiver's step says */
                int q = b->send, qt = c->tbx[q][c->send_tb[r][t]], n = sent[t]++;
                if (n >= c->nrecv[q][qt]) {
                    char msg[200];
                    snprintf(msg, sizeof msg, "send %d of thread block %d (GPU %d to GPU %d) has no receive: thread block %d "
                             "of GPU %d receives only %d times", n + 1, b->id, r, q, c->send_tb[r][t], q, c->nrecv[q][qt]);
                    return at(c, st->line, BATON_ESCHED, msg, NULL);
                }
                op.send_chan = (int16_t)c->send_tb[r][t];
                op.to_chunk = (uint32_t)c->rchunk[q][qt][n];
            }
            if ((rc = emit(m, op)) < 0) return rc;
        }
        for (int y = 0; y < G->ntb; y++)                          /* then tell whoever waits on this step */
            for (int i = 0; i < G->tb[y].nsteps; i++)
                if (G->tb[y].steps[i].depid == b->id && G->tb[y].steps[i].deps == j && y != t &&
                    (rc = emit(m, op_chan(op_send(r, 0, 0), -1, G->tb[y].id))) < 0)
                    return rc;
    }
    return 0;
}

/* Every receive is matched by a send: counts per pair of thread blocks. */
static int check_counts(const cctx_t *c, int **sent) {
    for (int r = 0; r < c->p; r++) {
        const msccl_gpu_t *G = &c->a->gpu[gpu_index(c, r)];
        for (int t = 0; t < G->ntb; t++) {
            if (G->tb[t].recv < 0) continue;
            int q = G->tb[t].recv, qt = c->tbx[q][c->recv_tb[r][t]];
            if (sent[q][qt] != c->nrecv[r][t]) {
                char msg[200];
                snprintf(msg, sizeof msg, "thread block %d of GPU %d receives %d times from GPU %d, which sends it %d times",
                         G->tb[t].id, r, c->nrecv[r][t], q, sent[q][qt]);
                return at(c, G->tb[t].line, BATON_ESCHED, msg, NULL);
            }
        }
    }
    return 0;
}

static int compile(cctx_t *c, mprog_t *m) {
    int rc, p = c->p, **sent = calloc((size_t)p, sizeof *sent);
    m->p = p, m->C = c->C;
    m->start = calloc((size_t)p * c->C + 1, sizeof *m->start);
    if (sent == NULL || m->start == NULL) { free(sent); return err_set(c->e, BATON_ENOMEM, "out of memory"); }
    rc = 0;
    for (int r = 0; r < p; r++)
        if ((sent[r] = calloc((size_t)c->a->gpu[gpu_index(c, r)].ntb + 1, sizeof **sent)) == NULL) rc = BATON_ENOMEM;
    for (int r = 0; r < p && rc == 0; r++) {
        const msccl_gpu_t *G = &c->a->gpu[gpu_index(c, r)];
        for (int ch = 0; ch < c->C && rc == 0; ch++) {
            m->start[(size_t)r * c->C + ch] = m->nops;
            if (c->tbx[r][ch] >= 0) rc = compile_tb(c, r, G, c->tbx[r][ch], sent[r], m);
        }
    }
    m->start[(size_t)p * c->C] = m->nops;
    if (rc == BATON_ENOMEM) err_set(c->e, rc, "out of memory");
    if (rc == 0) rc = check_counts(c, sent);
    for (int r = 0; r < p; r++) free(sent[r]);
    free(sent);
    return rc;
}

static void cctx_free(cctx_t *c) {
    for (int r = 0; r < c->p; r++) {
        if (c->rchunk && c->rchunk[r]) {
            const msccl_gpu_t *G = &c->a->gpu[gpu_index(c, r)];
            for (int t = 0; t < G->ntb; t++) free(c->rchunk[r][t]);
        }
        if (c->tbx) free(c->tbx[r]);
        if (c->send_tb) free(c->send_tb[r]);
        if (c->recv_tb) free(c->recv_tb[r]);
        if (c->rchunk) free(c->rchunk[r]);
        if (c->nrecv) free(c->nrecv[r]);
    }
    free(c->tbx), free(c->send_tb), free(c->recv_tb), free(c->rchunk), free(c->nrecv);
}

/* ---- the row --------------------------------------------------------------- */

static int prog(const sched_t *s, int rank, int chan, uint32_t pc, sched_op_t *op) {
    const mprog_t *m = &loaded[s->param[0]]->prog;
    size_t k = (size_t)rank * m->C + chan;
    if (pc >= m->start[k + 1] - m->start[k]) return 0;
    *op = m->ops[m->start[k] + pc];
    return 1;
}

static int build(sched_t *s, const algo_opts_t *o, baton_err_t *e) {
    (void)o;
    int i = 0;
    while (i < nloaded && loaded[i]->row.name != s->algo) i++;
    if (i == nloaded) return err_set(e, BATON_EINVAL, "%s: not loaded", s->algo);
    const loaded_t *l = loaded[i];
    if (s->nranks != l->prog.p)
        return err_set(e, BATON_EUNSUP, "%s is written for %d GPUs, not %d", s->algo + 6, l->prog.p, s->nranks);
    s->nchannels = l->prog.C;
    sched_layout(s, l->nblocks, (uint32_t)l->per);
    s->prog = prog;
    s->param[0] = i;
    return 0;
}

static double no_cost(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o) {
    (void)m, (void)p, (void)n, (void)o;
    return 0;        /* never read: an MSCCL row is always simulated (run_collective) */
}

static int load_file(const char *path, loaded_t *l, baton_err_t *e) {
    msccl_algo_t a;
    int rc = msccl_xml_read(path, &a, e);
    if (rc < 0) return rc;
    cctx_t c = {.a = &a, .e = e};
    if ((rc = check_shape(&c)) == 0 && (rc = resolve(&c)) == 0) rc = compile(&c, &l->prog);
    if (rc == 0) {
        l->proto = proto_parse(a.proto);
        l->row.coll = c.coll;
        l->per = c.per;                  /* all-gather, reduce-scatter: a block per rank */
        l->nblocks = (uint32_t)c.p;
        if (c.coll == COLL_ALLREDUCE) {  /* the file's baton_blocks, else p blocks where the chunks divide
                                            (as ring's layout), else one */
            int b = a.blocks > 0 && c.per % a.blocks == 0 ? a.blocks : c.per % c.p ? 1 : c.p;
            l->nblocks = (uint32_t)b, l->per = c.per / b;
        }
    }
    cctx_free(&c);
    msccl_algo_free(&a);
    return rc < 0 ? (e && e->code ? e->code : rc) : 0;
}

int msccl_check_file(const char *path, baton_err_t *e) {
    loaded_t l;
    memset(&l, 0, sizeof l);
    int rc = load_file(path, &l, e);
    free(l.prog.start), free(l.prog.ops);
    return rc;
}

const algo_t *msccl_find(coll_t coll, const char *name) {
    for (int i = 0; i < nloaded; i++)
        if (strcmp(loaded[i]->name, name) == 0) return loaded[i]->row.coll == coll ? &loaded[i]->row : NULL;
    return NULL;
}

const algo_t *msccl_load(const char *spec, baton_err_t *e) {
    for (int i = 0; i < nloaded; i++)
        if (strcmp(loaded[i]->name, spec) == 0) return &loaded[i]->row;
    if (!msccl_is(spec) || spec[6] == '\0')
        return err_set(e, BATON_EINVAL, "'%s': an MSCCL algorithm is named msccl:FILE.xml", spec), NULL;
    if (nloaded == MSCCL_MAX_LOADED)
        return err_set(e, BATON_EUNSUP, "more than %d MSCCL files in one run", MSCCL_MAX_LOADED), NULL;
    loaded_t *l = calloc(1, sizeof *l);
    if (l == NULL) return err_set(e, BATON_ENOMEM, "out of memory"), NULL;
    snprintf(l->name, sizeof l->name, "%s", spec);
    if (load_file(spec + 6, l, e) < 0) {
        free(l->prog.start), free(l->prog.ops), free(l);
        return NULL;
    }
    l->row.name = l->name;
    l->row.build = build;
    l->row.cost = no_cost;
    l->row.cost_text = "(none: an MSCCL file is simulated)";
    l->row.requires = "the file's GPU count";
    l->row.port_model = "the engine's";
    l->row.idea = "an MSCCL XML algorithm";
    l->row.approx = 1;
    loaded[nloaded++] = l;
    algo_find_made(msccl_find);          /* algo_find finds it from now on */
    return &l->row;
}

int msccl_proto(const algo_t *a) {
    for (int i = 0; i < nloaded; i++)
        if (&loaded[i]->row == a) return loaded[i]->proto;
    return -1;
}
