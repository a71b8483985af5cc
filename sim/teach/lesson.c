/* lesson.c - the kids', the operations' and one run's teaching pages. */
#include "lesson.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kids.h"
#include "page.h"

#define LESSON_MAX_TAPES 64
#define NAME_LEN 40

/* What a page is made of while it is built: its runs and its names. */
typedef struct lesson {
    tape_t tapes[LESSON_MAX_TAPES];
    const tape_t *tp[LESSON_MAX_TAPES];
    int ntapes;
    char (*names)[NAME_LEN];
    const char **name_v;
    int rows;
    char cols[3 * TAPE_MAX_RANKS][NAME_LEN];
    const char *col_v[3 * TAPE_MAX_RANKS];
} lesson_t;

static void lesson_release(lesson_t *L) {
    for (int i = 0; i < L->ntapes; i++) tape_free(&L->tapes[i]);
    free(L->names);
    free(L->name_v);
    free(L);
}

/* Row names for every row any run has: ranks by `fmt` ("GPU%d") or by the
 * machine's names (fmt NULL), then the reducing switches by name. */
static int name_rows(lesson_t *L, const topo_t *t, const char *fmt) {
    int p = topo_nranks(t);
    L->rows = p;
    for (int i = 0; i < L->ntapes; i++) if (L->tapes[i].rows > L->rows) L->rows = L->tapes[i].rows;
    L->names = calloc((size_t)L->rows, sizeof *L->names);
    L->name_v = calloc((size_t)L->rows, sizeof *L->name_v);
    if (L->names == NULL || L->name_v == NULL) return -1;
    for (int r = 0; r < L->rows; r++) {
        if (r >= p) snprintf(L->names[r], NAME_LEN, "%s", topo_reducer_name(t, r - p));
        else if (fmt) snprintf(L->names[r], NAME_LEN, fmt, r);
        else snprintf(L->names[r], NAME_LEN, "%s", topo_rank_name(t, r));
        L->name_v[r] = L->names[r];
    }
    return 0;
}

static int record(lesson_t *L, topo_t *t, const run_req_t *q, baton_err_t *e) {
    if (L->ntapes == LESSON_MAX_TAPES) return err_set(e, BATON_EINVAL, "more than %d runs on one page", LESSON_MAX_TAPES);
    int rc = tape_record(t, q, &L->tapes[L->ntapes], e);
    if (rc < 0) { tape_free(&L->tapes[L->ntapes]); return rc; }
    L->tp[L->ntapes] = &L->tapes[L->ntapes];
    L->ntapes++;
    return 0;
}

/* The clock's unit for the page's slowest run: s, ms or us. */
static void clock_unit(const lesson_t *L, page_t *pg) {
    double slowest = 0;
    for (int i = 0; i < L->ntapes; i++) if (L->tapes[i].time_s > slowest) slowest = L->tapes[i].time_s;
    pg->scale = slowest >= 1 ? 1 : slowest >= 1e-3 ? 1e3 : 1e6;
    pg->unit = slowest >= 1 ? "s" : slowest >= 1e-3 ? "ms" : "\xc2\xb5s";
}

static int finish(const page_t *pg, const lesson_t *L, lesson_out_t *out, baton_err_t *e) {
    out->html = page_html(pg);
    out->states = page_states(pg);
    out->runs = L->ntapes;
    if (out->html && out->states) return 0;
    lesson_free(out);
    return err_set(e, BATON_ENOMEM, "out of memory writing the page");
}

/* The moves step by step as text: the page's plain-text fallback. */
static void moves_text(FILE *f, const tape_t *tp, const lesson_t *L, double scale, const char *unit) {
    for (int k = 0; k < tp->nsteps; k++) {
        fprintf(f, "  t = %.4g %s\n", tp->steps[k].t * scale, unit);
        for (int i = tp->steps[k].first; i < tp->steps[k].first + tp->steps[k].n; i++) {
            const tape_move_t *m = &tp->moves[i];
            fprintf(f, "    %s -> %s %s %u place%s from %u, now", L->names[m->src], L->names[m->dst],
                    m->reduce ? "adds" : "copies", m->n, m->n == 1 ? "" : "s", tp->place[m->first]);
            for (uint32_t j = 0; j < m->n && j < 8; j++) fprintf(f, " %llu", (unsigned long long)tp->value[m->first + j]);
            fprintf(f, "%s\n", m->n > 8 ? " ..." : "");
        }
    }
}

int lesson_kids(topo_t *t, const char *const *methods, int n, lesson_out_t *out, baton_err_t *e) {
    memset(out, 0, sizeof *out);
    lesson_t *L = calloc(1, sizeof *L);
    char *text = NULL, *premise = kids_premise(t);
    size_t len = 0;
    FILE *f = L && premise ? open_memstream(&text, &len) : NULL;
    int rc = f ? 0 : err_set(e, BATON_ENOMEM, "out of memory");
    for (int i = 0; rc == 0 && i < n; i++) {
        run_req_t q = {.coll = COLL_ALLREDUCE, .algo = methods[i], .bytes = KIDS_COLOURS};
        kids_run_t k = {0};
        if ((rc = record(L, t, &q, e)) == 0 && (rc = kids_run(t, methods[i], &k, e)) == 0) {
            tape_t *tp = &L->tapes[L->ntapes - 1];       /* the story's name first: "tree (binomial)" */
            if (strcmp(tp->title, methods[i]) != 0) {
                char row[sizeof tp->title];
                snprintf(row, sizeof row, "%s", tp->title);
                snprintf(tp->title, sizeof tp->title, "%s (%.40s)", methods[i], row);
            }
            char *story = kids_format(&k, t);
            fprintf(f, "%s%s", i ? "\n" : "", story ? story : "");
            free(story);
        }
        kids_run_free(&k);
    }
    if (f) fclose(f);
    if (rc == 0 && name_rows(L, t, NULL) < 0) rc = err_set(e, BATON_ENOMEM, "out of memory");
    if (rc == 0) {
        static const char *const candy[KIDS_COLOURS] = {"RED", "BLUE", "GREEN", "YELLOW"};
        page_player_t pl = {.title = n > 1 ? "Every method on one clock" : methods[0],
                            .text = "Each table is one method: a row per kid, a column per colour. A highlighted "
                                    "number has just arrived; said and heard count the numbers each kid has "
                                    "spoken and listened to.",
                            .cols = candy, .ncols = KIDS_COLOURS, .tapes = L->tp, .ntapes = L->ntapes};
        page_t pg = {.title = "The candy kids", .intro = premise, .intro_fixed = 1, .text = text, .names = L->name_v, .nnames = L->rows,
                     .candy = 1, .scale = 1, .unit = "s", .players = &pl, .nplayers = 1};
        rc = finish(&pg, L, out, e);
    }
    free(text);
    free(premise);
    if (L) lesson_release(L);
    return rc;
}

static const struct {
    coll_t coll;
    const char *first, *title, *contract;
} ops[] = {
    {COLL_BROADCAST, "binomial", "Broadcast",
     "The root (GPU0) has a buffer; afterwards every GPU holds a copy of it."},
    {COLL_REDUCE, "binomial", "Reduce",
     "Every GPU has a buffer; afterwards the root (GPU0) holds their sum, place by place. The others may hold "
     "anything (a dot)."},
    {COLL_REDUCE_SCATTER, "ring", "Reduce-scatter",
     "Every GPU has a buffer of one chunk per GPU; afterwards GPU r holds chunk r of the sum (a dot: anything)."},
    {COLL_ALLGATHER, "ring", "All-gather",
     "GPU r brings chunk r; afterwards every GPU holds every GPU's chunk."},
    {COLL_ALLREDUCE, "ring", "All-reduce",
     "Every GPU has a buffer; afterwards every GPU holds the sum. The ring does it as a reduce-scatter followed "
     "by an all-gather."},
    {COLL_ALLTOALL, "pairwise", "All-to-all",
     "Each GPU's send buffer has one chunk for each GPU; afterwards GPU j's receive chunk r holds what GPU r's "
     "send chunk j held."},
};
#define NOPS (int)(sizeof ops / sizeof ops[0])

/* Every row of the catalogue for op k that runs on t; the others are named in the text. */
static int record_op(lesson_t *L, topo_t *t, int k, FILE *f, int *chosen) {
    int p = topo_nranks(t), first = L->ntapes;
    *chosen = 0;
    fprintf(f, "%s. %s\n", ops[k].title, ops[k].contract);
    for (const algo_t *const *a = algo_all(); *a; a++) {
        if ((*a)->coll != ops[k].coll) continue;
        baton_err_t why = {0};
        run_req_t q = {.coll = ops[k].coll, .algo = (*a)->name, .bytes = (uint64_t)p};
        if (record(L, t, &q, &why) < 0) {
            if (why.code == BATON_ENOMEM) return -1;
            fprintf(f, "  %s: not on this machine (%s)\n", (*a)->name, why.msg);
            continue;
        }
        const tape_t *tp = &L->tapes[L->ntapes - 1];
        if (strcmp((*a)->name, ops[k].first) == 0) *chosen = L->ntapes - 1 - first;
        fprintf(f, "  %s: %g s, %d messages in %d steps\n", tp->title, tp->time_s, tp->nmoves, tp->nsteps);
    }
    fputc('\n', f);
    return 0;
}

/* Column names: chunk 0..p-1, then for all-to-all send 0..p-1, recv 0..p-1. */
static void op_cols(lesson_t *L, int p) {
    for (int i = 0; i < p; i++) {
        snprintf(L->cols[i], NAME_LEN, "chunk %d", i);
        snprintf(L->cols[p + i], NAME_LEN, "send %d", i);
        snprintf(L->cols[2 * p + i], NAME_LEN, "recv %d", i);
    }
    for (int i = 0; i < 3 * p; i++) L->col_v[i] = L->cols[i];
}

int lesson_ops(topo_t *t, lesson_out_t *out, baton_err_t *e) {
    memset(out, 0, sizeof *out);
    int p = topo_nranks(t);
    if (p < 2 || p > TAPE_MAX_RANKS)
        return err_set(e, BATON_EINVAL, "the operations page draws 2 to %d GPUs; %s has %d", TAPE_MAX_RANKS,
                       topo_name(t), p);
    lesson_t *L = calloc(1, sizeof *L);
    char *text = NULL;
    size_t len = 0;
    FILE *f = L ? open_memstream(&text, &len) : NULL;
    page_player_t pl[NOPS];
    int rc = f ? 0 : err_set(e, BATON_ENOMEM, "out of memory");
    for (int k = 0; rc == 0 && k < NOPS; k++) {
        int first = L->ntapes, chosen;
        if (record_op(L, t, k, f, &chosen) < 0) rc = err_set(e, BATON_ENOMEM, "out of memory");
        pl[k] = (page_player_t){.title = ops[k].title, .text = ops[k].contract, .pick = 1, .chosen = chosen,
                                .contract = 1, .tapes = L->tp + first, .ntapes = L->ntapes - first};
        if (rc == 0 && pl[k].ntapes == 0)
            rc = err_set(e, BATON_EUNSUP, "no algorithm of the catalogue runs %s on %s", coll_name(ops[k].coll),
                         topo_name(t));
    }
    if (f) fclose(f);
    if (rc == 0) {
        op_cols(L, p);
        for (int k = 0; k < NOPS; k++) {
            pl[k].cols = L->col_v + (ops[k].coll == COLL_ALLTOALL ? p : 0);
            pl[k].ncols = ops[k].coll == COLL_ALLTOALL ? 2 * p : p;
        }
        if (name_rows(L, t, "GPU%d") < 0) rc = err_set(e, BATON_ENOMEM, "out of memory");
    }
    if (rc == 0) {
        page_t pg = {.title = "The collective operations, step by step",
                     .intro = "Each GPU holds a buffer of one chunk per GPU; GPU r's chunk i starts as (i+1) x 10^r, so "
                              "a sum's digits show who has added (1111: all four). On the story's machine (the "
                              "default) a number takes a second and each GPU listens to one at a time. First what "
                              "each operation promises, then any algorithm of the catalogue doing it: pick one from "
                              "the list.",
                     .text = text, .names = L->name_v, .nnames = L->rows, .players = pl, .nplayers = NOPS};
        clock_unit(L, &pg);
        rc = finish(&pg, L, out, e);
    }
    free(text);
    if (L) lesson_release(L);
    return rc;
}

int lesson_run(topo_t *t, const run_req_t *q, lesson_out_t *out, baton_err_t *e) {
    memset(out, 0, sizeof *out);
    lesson_t *L = calloc(1, sizeof *L);
    char *text = NULL, title[160];
    size_t len = 0;
    int rc = L ? record(L, t, q, e) : err_set(e, BATON_ENOMEM, "out of memory");
    if (rc == 0 && name_rows(L, t, NULL) < 0) rc = err_set(e, BATON_ENOMEM, "out of memory");
    FILE *f = rc == 0 ? open_memstream(&text, &len) : NULL;
    if (rc == 0 && f == NULL) rc = err_set(e, BATON_ENOMEM, "out of memory");
    if (rc == 0) {
        const tape_t *tp = &L->tapes[0];
        snprintf(title, sizeof title, "%s %s on %s: %d ranks, %llu bytes", coll_name(q->coll), tp->title, topo_name(t),
                 tp->p, (unsigned long long)q->bytes);
        page_t pg = {.title = title, .intro = "Every byte of every rank, as the simulator moved it. Rank r's byte i "
                                              "starts as (i mod 9 + 1) x 10^r (with up to 9 ranks), so a sum's digits "
                                              "show who has added.",
                     .names = L->name_v, .nnames = L->rows, .nplayers = 1};
        clock_unit(L, &pg);
        fprintf(f, "%s: %.4g %s, %d messages in %d steps\n", title, tp->time_s * pg.scale, pg.unit, tp->nmoves,
                tp->nsteps);
        moves_text(f, tp, L, pg.scale, pg.unit);
        fclose(f);
        page_player_t pl = {.title = title, .contract = 1, .tapes = L->tp, .ntapes = 1};
        pg.text = text;
        pg.players = &pl;
        rc = finish(&pg, L, out, e);
    }
    free(text);
    if (L) lesson_release(L);
    return rc;
}

void lesson_free(lesson_out_t *out) {
    free(out->html);
    free(out->states);
    out->html = out->states = NULL;
}
