/* kids.c - run and tell the candy kids' story with the real engine. */
#include "kids.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../answer/run.h"

static const char *colours[KIDS_COLOURS] = {"RED", "BLUE", "GREEN", "YELLOW"};
static const char *names[] = {"Anna", "Ben", "Cara", "Dan", "Eve", "Finn", "Gus", "Hana", "Ivan"};

uint64_t kids_count(int kid, int colour, int p) {
    uint64_t v = (uint64_t)colour + 1;
    for (int i = 0; i < kid && p <= KIDS_DIGITS; i++) v *= 10;
    return v;
}

static uint64_t fill(void *ctx, int rank, uint64_t elem) {
    return kids_count(rank, (int)elem, ((const kids_run_t *)ctx)->p);
}

topo_t *kids_machine(int n, baton_err_t *e) {
    if (n < 2 || n > KIDS_MAX) { err_set(e, BATON_EINVAL, "--kids %d: from 2 to %d kids", n, KIDS_MAX); return NULL; }
    topo_t *t = topo_create("candy-kids");
    int rc = t ? 0 : err_set(e, BATON_ENOMEM, "out of memory");
    for (int i = 0; rc >= 0 && i < n; i++) {
        char name[16];
        snprintf(name, sizeof name, "%s", i < 9 ? names[i] : "");
        if (i >= 9) snprintf(name, sizeof name, "kid%d", i + 1);
        if ((rc = topo_add_node(t, name, NODE_GPU, 0, 0, e)) >= 0) rc = topo_set_rank(t, rc, i, e);
    }
    for (int i = 0; rc >= 0 && i < n; i++)
        for (int j = i + 1; rc >= 0 && j < n; j++) rc = topo_add_link(t, i, j, 1, 0, e);
    if (rc >= 0) {
        topo_params(t)->ports = 1;
        topo_params(t)->no_protocols = 1;
        rc = topo_finalize(t, "--kids", e);
    }
    if (rc < 0) { topo_free(t); return NULL; }
    return t;
}

char *kids_premise(const topo_t *t) {
    char *buf = NULL;
    size_t len = 0;
    int p = topo_nranks(t);
    FILE *f = open_memstream(&buf, &len);
    if (f == NULL) return NULL;
    fprintf(f, "%d kids each counted four colours of candy, and every kid needs the totals.\n"
               "One rule: one number to one person at a time, one second per number.\n", p);
    if (p == 2)
        fprintf(f, "Each kid owns a digit place, so a running total tells its own history\n"
                   "(11: %s and %s have added, and that is everyone).\n", topo_rank_name(t, 0), topo_rank_name(t, 1));
    else if (p <= KIDS_DIGITS)
        fprintf(f, "Each kid owns a digit place, so a running total tells its own history\n"
                   "(11: %s and %s have added; %.*s: everyone has).\n", topo_rank_name(t, 0), topo_rank_name(t, 1),
                p, "111111111");
    else
        fprintf(f, "(With more than %d kids a digit place each no longer fits: every kid counted\n"
                   "1 2 3 4, so the totals are %d %d %d %d.)\n", KIDS_DIGITS, p, 2 * p, 3 * p, 4 * p);
    fprintf(f, "%-7s", "");
    for (int c = 0; c < KIDS_COLOURS; c++) fprintf(f, " %7s", colours[c]);
    fputc('\n', f);
    for (int r = 0; r < p && r < KIDS_DIGITS; r++) {
        fprintf(f, "%-7s", topo_rank_name(t, r));
        for (int c = 0; c < KIDS_COLOURS; c++) fprintf(f, " %7llu", (unsigned long long)kids_count(r, c, p));
        fputc('\n', f);
    }
    if (p > KIDS_DIGITS) fprintf(f, "... (%d more kids alike)\n", p - KIDS_DIGITS);
    fclose(f);
    return buf;
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
                      .reduce = m->reduce, .nvalues = (int)m->nvalues, .colour = (int)m->offset};
    for (uint64_t i = 0; i < m->nvalues && i < KIDS_COLOURS; i++) x->value[i] = m->values[i];
    k->said[m->src] += m->bytes;
    k->heard[m->dst] += m->bytes;
}

/* Replay the hand-offs over the starting counts to get the final holdings:
 * a hand-off of all four numbers starts at colour 0, one of fewer at the
 * colour its chunk names (the ring's one number per pass). */
static void replay(kids_run_t *k) {
    for (int r = 0; r < k->p; r++)
        for (int c = 0; c < KIDS_COLOURS; c++) k->hold[r][c] = kids_count(r, c, k->p);
    for (int i = 0; i < k->nmsgs; i++) {
        const kids_msg_t *m = &k->msgs[i];
        int off = m->nvalues == KIDS_COLOURS ? 0 : (int)m->colour;
        for (int j = 0; j < m->nvalues && off + j < KIDS_COLOURS; j++) k->hold[m->dst][off + j] = m->value[j];
    }
}

int kids_run(topo_t *t, const char *method, kids_run_t *out, baton_err_t *e) {
    memset(out, 0, sizeof *out);
    out->p = topo_nranks(t);
    out->method = method;
    if (out->p > KIDS_MAX)
        return err_set(e, BATON_EINVAL, "the candy story has at most %d kids, this topology has %d",
                       KIDS_MAX, out->p);
    engine_opts_t eo = {.fill = fill, .on_msg = on_msg, .msg_ctx = out, .fill_ctx = out};
    run_req_t q = {.coll = COLL_ALLREDUCE, .algo = method, .bytes = KIDS_COLOURS, .verify = 1, .engine = &eo};
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

/* The relay-baton table: one column per colour, one row per pass (four
 * kids: a baton per colour, each starting at a different kid). */
static void baton_table(FILE *f, const kids_run_t *k, const topo_t *t) {
    int n = KIDS_COLOURS;
    fprintf(f, "%-7s", "");
    for (int c = 0; c < n; c++) fprintf(f, " %-13s", colours[c]);
    fprintf(f, "\n%-7s", "start");
    for (int c = 0; c < n; c++) {
        char cell[64];
        snprintf(cell, sizeof cell, "%s %llu", topo_rank_name(t, c), (unsigned long long)kids_count(c, c, k->p));
        fprintf(f, " %-13s", cell);
    }
    for (int i = 0; i < k->nmsgs;) {
        double now = k->msgs[i].t;
        char label[32];
        snprintf(label, sizeof label, "pass %g", now);
        fprintf(f, "\n%-7s", label);
        char cells[KIDS_COLOURS][64] = {{0}};
        for (; i < k->nmsgs && k->msgs[i].t == now; i++)
            snprintf(cells[k->msgs[i].colour % KIDS_COLOURS], 64, "%s %llu", topo_rank_name(t, k->msgs[i].dst),
                     (unsigned long long)k->msgs[i].value[0]);
        for (int c = 0; c < n; c++) fprintf(f, " %-13s", cells[c]);
        if (now == k->p - 1) fprintf(f, "   <- every total is finished, each at one kid");
    }
    fprintf(f, "\n");
}

/* A hand-off of some of the colours names them ("adds GREEN"); one of all
 * four does not. A hand-off of an empty share (the ring with more kids than
 * numbers) carries nothing and is left out: shares() says why. */
static void handoff_log(FILE *f, const kids_run_t *k, const topo_t *t) {
    for (int i = 0; i < k->nmsgs; i++) {
        const kids_msg_t *m = &k->msgs[i];
        if (m->nvalues == 0) continue;
        fprintf(f, "  t=%3g s  %-5s -> %-5s %s", m->t, topo_rank_name(t, m->src), topo_rank_name(t, m->dst),
                m->reduce ? "adds" : "copies");
        for (int j = 0; m->nvalues < KIDS_COLOURS && j < m->nvalues && m->colour + j < KIDS_COLOURS; j++)
            fprintf(f, "%s%s", j ? "+" : " ", colours[m->colour + j]);
        fprintf(f, ", %s now holds ", topo_rank_name(t, m->dst));
        values(f, m->value, m->nvalues);
        fprintf(f, "\n");
    }
}

/* Each kid's load; past the story's nine, the busiest and the others in one line. */
static void loads(FILE *f, const kids_run_t *k, const topo_t *t) {
    int shown = k->p <= KIDS_DIGITS ? k->p : 1, busiest = 0;
    for (int r = 1; r < k->p; r++) if (k->said[r] + k->heard[r] > k->said[busiest] + k->heard[busiest]) busiest = r;
    for (int i = 0; i < shown; i++) {
        int r = k->p <= KIDS_DIGITS ? i : busiest;
        fprintf(f, "  %-5s said %2llu, heard %2llu numbers; holds ", topo_rank_name(t, r),
                (unsigned long long)k->said[r], (unsigned long long)k->heard[r]);
        values(f, k->hold[r], KIDS_COLOURS);
        fprintf(f, "%s\n", k->p > KIDS_DIGITS ? "   (the busiest kid)" : "");
    }
    if (k->p > KIDS_DIGITS) {
        int all = 1;
        for (int r = 0; r < k->p; r++)
            for (int c = 0; c < KIDS_COLOURS; c++) all &= k->hold[r][c] == (uint64_t)k->p * (c + 1);
        fprintf(f, "  every one of the %d kids %s\n", k->p, all ? "holds the four totals" : "does NOT hold the totals");
    }
}

/* The ring cuts the four numbers into one share per kid (sched_chunk's
 * layout); when they do not split evenly, say how, and that the loads
 * differ because of it, not by a fault of the method. */
static void shares(FILE *f, const kids_run_t *k) {
    if (strcmp(k->method, "ring") != 0 || KIDS_COLOURS % k->p == 0) return;
    fprintf(f, "  %d numbers do not split evenly among %d kids; the ring's shares, one per kid:", KIDS_COLOURS, k->p);
    int empty = 0;
    for (int i = 0; i < k->p; i++) {
        uint64_t off, len;
        sched_chunk(KIDS_COLOURS, (uint32_t)k->p, (uint32_t)i, &off, &len);
        fprintf(f, "%s", i ? " |" : "");
        for (uint64_t j = 0; j < len; j++) fprintf(f, "%s%s", j ? "+" : " ", colours[off + j]);
        if (len == 0) { fprintf(f, " none"); empty = 1; }
    }
    uint64_t lo[2] = {k->said[0], k->heard[0]}, hi[2] = {k->said[0], k->heard[0]};
    for (int r = 1; r < k->p; r++)
        for (int j = 0; j < 2; j++) {
            uint64_t v = j ? k->heard[r] : k->said[r];
            if (v < lo[j]) lo[j] = v;
            if (v > hi[j]) hi[j] = v;
        }
    fprintf(f, ".\n  %s, so the loads differ: each kid says %llu to %llu and hears %llu to %llu numbers.\n",
            empty ? "Passing an empty share carries nothing (those hand-offs are not listed)"
                  : "The shares differ in size", (unsigned long long)lo[0], (unsigned long long)hi[0],
            (unsigned long long)lo[1], (unsigned long long)hi[1]);
}

char *kids_format(const kids_run_t *k, const topo_t *t) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (f == NULL) return NULL;
    fprintf(f, "Method %s: %g s\n", k->method, k->time_s);
    shares(f, k);
    if (strcmp(k->method, "ring") == 0 && k->p == KIDS_COLOURS) baton_table(f, k, t);
    else if (k->p <= KIDS_DIGITS) handoff_log(f, k, t);
    else fprintf(f, "  %d hand-offs (too many to list)\n", k->nmsgs);
    loads(f, k, t);
    fclose(f);
    return buf;
}
