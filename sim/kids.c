/* kids.c - run and tell the candy kids' story with the real engine. */
#include "kids.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"

static const char *colours[KIDS_MAX] = {"RED", "BLUE", "GREEN", "YELLOW", "ORANGE",
                                        "PURPLE", "PINK", "BROWN", "WHITE"};

uint64_t kids_count(int kid, int colour) {
    uint64_t v = (uint64_t)colour + 1;
    for (int i = 0; i < kid; i++) v *= 10;
    return v;
}

static uint64_t fill(void *ctx, int rank, uint64_t elem) {
    (void)ctx;
    return kids_count(rank, (int)elem);
}

static void on_msg(void *ctx, const engine_msg_t *m) {
    kids_run_t *k = ctx;
    if (k->nmsgs == k->cap) {
        int nc = k->cap ? k->cap * 2 : 64;
        kids_msg_t *q = realloc(k->msgs, (size_t)nc * sizeof *q);
        if (q == NULL) return;          /* the table is shorter; kids_run notices */
        k->msgs = q;
        k->cap = nc;
    }
    kids_msg_t *x = &k->msgs[k->nmsgs++];
    *x = (kids_msg_t){.t = m->t_end, .src = m->src, .dst = m->dst, .chunk = m->chunk,
                      .reduce = m->reduce, .nvalues = (int)m->nvalues};
    for (uint64_t i = 0; i < m->nvalues && i < KIDS_MAX; i++) x->value[i] = m->values[i];
    k->said[m->src] += m->bytes;
    k->heard[m->dst] += m->bytes;
}

/* Replay the hand-offs over the starting counts to get the final holdings. */
static void replay(kids_run_t *k) {
    int n = k->p;
    for (int r = 0; r < n; r++)
        for (int c = 0; c < n; c++) k->hold[r][c] = kids_count(r, c);
    int per = k->nmsgs ? k->msgs[0].nvalues : 0;
    for (int i = 0; i < k->nmsgs; i++) {
        const kids_msg_t *m = &k->msgs[i];
        int off = per == n ? 0 : (int)m->chunk;   /* whole buffer or one colour */
        for (int j = 0; j < m->nvalues; j++) k->hold[m->dst][off + j] = m->value[j];
    }
}

int kids_run(topo_t *t, const char *method, kids_run_t *out, baton_err_t *e) {
    memset(out, 0, sizeof *out);
    out->p = topo_nranks(t);
    out->method = method;
    if (out->p > KIDS_MAX)
        return err_set(e, BATON_EINVAL, "the candy story has at most %d kids, this topology has %d",
                       KIDS_MAX, out->p);
    engine_opts_t eo = {.fill = fill, .on_msg = on_msg, .msg_ctx = out};
    run_req_t q = {.coll = COLL_ALLREDUCE, .algo = method, .bytes = (uint64_t)out->p,
                   .verify = 1, .engine = &eo};
    run_out_t r;
    int rc = run_collective(t, &q, &r, e);
    if (rc < 0) return rc;
    if (out->nmsgs != (int)r.eng.messages)
        return err_set(e, BATON_ENOMEM, "out of memory recording the hand-offs");
    out->time_s = r.time_s;
    replay(out);
    return 0;
}

void kids_run_free(kids_run_t *k) {
    free(k->msgs);
    k->msgs = NULL;
}

static void values(FILE *f, const uint64_t *v, int n) {
    for (int i = 0; i < n; i++) fprintf(f, "%s%llu", i ? " " : "", (unsigned long long)v[i]);
}

/* The relay-baton table: one column per colour, one row per pass. */
static void baton_table(FILE *f, const kids_run_t *k, const topo_t *t) {
    int n = k->p;
    fprintf(f, "%-7s", "");
    for (int c = 0; c < n; c++) fprintf(f, " %-13s", colours[c]);
    fprintf(f, "\n%-7s", "start");
    for (int c = 0; c < n; c++) {
        char cell[64];
        snprintf(cell, sizeof cell, "%s %llu", topo_rank_name(t, c), (unsigned long long)kids_count(c, c));
        fprintf(f, " %-13s", cell);
    }
    for (int i = 0; i < k->nmsgs;) {
        double now = k->msgs[i].t;
        char label[32];
        snprintf(label, sizeof label, "pass %g", now);
        fprintf(f, "\n%-7s", label);
        char cells[KIDS_MAX][64] = {{0}};
        for (; i < k->nmsgs && k->msgs[i].t == now; i++)
            snprintf(cells[k->msgs[i].chunk % KIDS_MAX], 64, "%s %llu", topo_rank_name(t, k->msgs[i].dst),
                     (unsigned long long)k->msgs[i].value[0]);
        for (int c = 0; c < n; c++) fprintf(f, " %-13s", cells[c]);
        if (now == n - 1) fprintf(f, "   <- every total is finished, each at one kid");
    }
    fprintf(f, "\n");
}

static void handoff_log(FILE *f, const kids_run_t *k, const topo_t *t) {
    for (int i = 0; i < k->nmsgs; i++) {
        const kids_msg_t *m = &k->msgs[i];
        fprintf(f, "  t=%3g s  %-5s -> %-5s %s, %s now holds ", m->t, topo_rank_name(t, m->src),
                topo_rank_name(t, m->dst), m->reduce ? "adds" : "copies", topo_rank_name(t, m->dst));
        values(f, m->value, m->nvalues);
        fprintf(f, "\n");
    }
}

char *kids_format(const kids_run_t *k, const topo_t *t) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (f == NULL) return NULL;
    fprintf(f, "Method %s: %g s\n", k->method, k->time_s);
    if (strcmp(k->method, "ring") == 0) baton_table(f, k, t);
    else handoff_log(f, k, t);
    for (int r = 0; r < k->p; r++) {
        fprintf(f, "  %-5s said %2llu, heard %2llu numbers; holds ", topo_rank_name(t, r),
                (unsigned long long)k->said[r], (unsigned long long)k->heard[r]);
        values(f, k->hold[r], k->p);
        fprintf(f, "\n");
    }
    fclose(f);
    return buf;
}
