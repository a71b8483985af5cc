/* select.c - selection tables: one run per (collective, size, algorithm). */
#include "select.h"

#include "../../algorithms/msccl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../topologies/units.h"
#include "../../util/par.h"
#include "../../util/progress.h"

int select_parse_sizes(const char *spec, uint64_t **sizes, int *n, const char **why) {
    char buf[256];
    *sizes = NULL;
    *n = 0;
    if (strlen(spec) >= sizeof buf) { *why = "size list too long"; return -1; }
    strcpy(buf, spec);
    uint64_t *v = malloc(4096 * sizeof *v);
    if (v == NULL) { *why = "out of memory"; return -1; }
    char *colon = strchr(buf, ':');
    if (colon == NULL) {                                   /* a list: 1KiB,1MiB */
        for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
            if (*n == 4096 || units_size(tok, &v[*n], why) < 0) { if (*n == 4096) *why = "too many sizes"; free(v); return -1; }
            if (v[*n] == 0) { *why = SELECT_ZERO_WHY; free(v); return -1; }
            (*n)++;
        }
    } else {                                               /* a range: lo:hi[:xF] */
        *colon = '\0';
        char *hi_s = colon + 1, *f_s = strchr(hi_s, ':');
        uint64_t lo, hi, f = 2;
        if (f_s) { *f_s++ = '\0'; if (*f_s != 'x' || (f = strtoull(f_s + 1, NULL, 10)) < 2) { *why = "the step is written x2, x4, ..."; free(v); return -1; } }
        if (units_size(buf, &lo, why) < 0 || units_size(hi_s, &hi, why) < 0) { free(v); return -1; }
        if (lo == 0 || hi < lo) { *why = "a range goes from a positive size up: 8B:16GiB"; free(v); return -1; }
        for (uint64_t s = lo; s <= hi && *n < 4096; s = s > UINT64_MAX / f ? hi + 1 : s * f) v[(*n)++] = s;
    }
    if (*n == 0) { *why = "no sizes"; free(v); return -1; }
    *sizes = v;
    return 0;
}

int select_sizes_note(const char *spec, const uint64_t *sizes, int n, char *buf, size_t len) {
    char hi_s[64], lo_b[32], hi_b[32], last_b[32], next_b[32];
    const char *colon = strchr(spec, ':'), *why;
    buf[0] = '\0';
    if (colon == NULL || n < 1) return 0;
    size_t k = strcspn(colon + 1, ":");
    const char *f_s = colon[1 + k] == ':' ? colon + 2 + k : "x2";
    uint64_t hi, f = strtoull(f_s + 1, NULL, 10), last = sizes[n - 1];
    snprintf(hi_s, sizeof hi_s, "%.*s", (int)k, colon + 1);
    if (units_size(hi_s, &hi, &why) < 0 || last == hi || f < 2) return 0;
    units_fmt_size(sizes[0], lo_b, sizeof lo_b);
    units_fmt_size(hi, hi_b, sizeof hi_b);
    units_fmt_size(last, last_b, sizeof last_b);
    if (last > UINT64_MAX / f) snprintf(next_b, sizeof next_b, "past 2^64 B");
    else units_fmt_size(last * f, next_b, sizeof next_b);
    snprintf(buf, len, "%s is not on the x%llu grid from %s: the sizes end at %s (the next point would be %s; "
             "list the sizes, or pick HI on the grid, to run it)", hi_b, (unsigned long long)f, lo_b, last_b, next_b);
    return 1;
}

static int wanted(const select_req_t *q, const algo_t *a) {
    if (q->nccl_only && a->nccl == NULL) return 0;
    if (q->algos == NULL) return 1;
    for (int i = 0; i < q->nalgos; i++)
        if (algo_find(a->coll, q->algos[i]) == a) return 1;   /* its name or an alias ("tree") */
    return 0;
}

/* Simulate where no formula is exact here (an approximate row, or a machine
 * whose rank pairs differ) while the run stays small: about p * max(p, k)
 * messages, at most a few million. */
static int simulate(const select_req_t *q, const algo_t *a, const cost_model_t *m, int p, uint64_t n) {
    if (q->model != SELECT_AUTO) return q->model == SELECT_DES;
    double k = (double)algo_pipeline_chunks(n, &q->opts), work = (double)p * (k > p ? k : p) * 8;
    return (algo_inexact(a, p, n, &q->opts) || !m->uniform) && work <= 2e6;
}

/* A row whose formula does not see the links it shares (cost_model_t.blind)
 * is simulated too where the run stays small. */
static int blind_simulate(const select_req_t *q, int p, uint64_t n) {
    double k = (double)algo_pipeline_chunks(n, &q->opts), work = (double)p * (k > p ? k : p) * 8;
    return q->model == SELECT_AUTO && work <= 2e6;
}

static int cell(topo_t *t, const select_req_t *q, const cost_model_t *m, coll_t c, uint64_t n, const algo_t *a,
                select_cell_t *out, char *why, size_t whylen, baton_err_t *e) {
    run_req_t r = {.coll = c, .algo = a->name, .bytes = n, .opts = q->opts, .proto = q->proto,
                   .contention = q->contention, .nccl_rules = q->nccl_only, .cut = RUN_CUT_LOWER};   /* as -a auto */
    run_out_t o;
    baton_err_t ce = {0};
    r.predict = !simulate(q, a, m, topo_whole_ranks(t), n);
    *out = (select_cell_t){.algo = a};
    int rc = run_collective(t, &r, &o, &ce);
    if (rc == 0 && r.predict && o.model.blind && blind_simulate(q, topo_whole_ranks(t), n)) {
        r.predict = 0;                                  /* the formula cannot see the links it shares */
        rc = run_collective(t, &r, &o, &ce);
    }
    if (rc == BATON_EUNSUP && why[0] == '\0') snprintf(why, whylen, "%s", ce.msg);
    if (rc == BATON_EUNSUP) return 0;                   /* this case is not for it */
    if (rc < 0) { *e = ce; return rc; }
    *out = (select_cell_t){.algo = a, .proto = o.proto, .ok = 1, .simulated = o.simulated,
                           .approx = !o.simulated && (algo_inexact(a, o.ranks, n, &o.opts) || !m->uniform || o.model.blind),
                           .time_s = o.time_s,
                           .algbw_GBps = o.algbw_GBps, .busbw_GBps = o.busbw_GBps};
    engine_result_free(&o.eng);
    if (o.simulated) {                                  /* what predict says, for report.c's notes */
        r.predict = 1, r.proto = (int)o.proto;
        if (run_collective(t, &r, &o, NULL) == 0) out->formula_s = o.time_s;
    }
    return 0;
}

/* What -a nccl runs for this row (NCCL's pick by closed form), timed as the
 * row's cell of that algorithm is (the simulator where that cell was); the
 * cell stays empty where it cannot run, BATON_EWHOLE where a folded
 * cluster cannot answer (the whole would). */
static int nccl_cell(topo_t *t, const select_req_t *q, const cost_model_t *m, select_row_t *row, baton_err_t *e) {
    run_req_t r = {.coll = row->coll, .algo = "nccl", .bytes = row->bytes, .opts = q->opts, .proto = RUN_PROTO_AUTO,
                   .contention = q->contention, .predict = 1};
    run_out_t o;
    int rc;
    row->nccl = (select_cell_t){0};
    if ((rc = run_collective(t, &r, &o, e)) < 0) return rc == BATON_EWHOLE ? rc : 0;
    double formula = o.time_s;
    const select_cell_t *same = NULL;                  /* the row's cell of NCCL's algorithm */
    for (int i = 0; i < row->ncells && !same; i++) if (row->cells[i].ok && row->cells[i].algo == o.algo) same = &row->cells[i];
    if (simulate(q, o.algo, m, topo_whole_ranks(t), row->bytes) || (same && same->simulated)) {
        run_same_row(&r, &o, 0, &r);                    /* sized as -a nccl sized it: predict's check */
        if ((rc = run_collective(t, &r, &o, e)) < 0) return rc == BATON_EWHOLE ? rc : 0;
    }
    row->nccl = (select_cell_t){.algo = o.algo, .proto = o.proto, .ok = 1, .simulated = o.simulated,
                                .approx = !o.simulated && (algo_inexact(o.algo, o.ranks, row->bytes, &o.opts) ||
                                                           !m->uniform || o.model.blind),
                                .time_s = o.time_s, .formula_s = o.simulated ? formula : 0,
                                .algbw_GBps = o.algbw_GBps, .busbw_GBps = o.busbw_GBps};
    engine_result_free(&o.eng);
    return 0;
}

static void rank_cells(select_row_t *row) {
    row->winner = row->runner_up = -1;
    for (int i = 0; i < row->ncells; i++) {
        if (!row->cells[i].ok) continue;
        if (row->winner < 0 || row->cells[i].time_s < row->cells[row->winner].time_s) {
            row->runner_up = row->winner;
            row->winner = i;
        } else if (row->runner_up < 0 || row->cells[i].time_s < row->cells[row->runner_up].time_s) {
            row->runner_up = i;
        }
    }
}

/* A row's winner by an approximate formula is simulated before it wins (and
 * then the next, until the winner's time is the simulator's), where the run
 * is not huge: a formula may pick what our own simulator contradicts (nvlstree
 * on 32 x 8 H100 at 1 GiB: 6.1 ms by formula, 11.2 ms simulated, where
 * ring/LL128 takes 8.8). At most 4 cells a row. */
#define CONFIRM_WORK 5e7
static int confirm_winner(topo_t *t, const select_req_t *q, select_row_t *row, baton_err_t *e) {
    int p = topo_whole_ranks(t);
    double k = (double)algo_pipeline_chunks(row->bytes, &q->opts), work = (double)p * (k > p ? k : p) * 8;
    for (int tries = 0; tries < 4 && row->winner >= 0; tries++) {
        select_cell_t *w = &row->cells[row->winner];
        if (q->model != SELECT_AUTO || w->simulated || !w->approx || work > CONFIRM_WORK) return 0;
        run_req_t r = {.coll = row->coll, .algo = w->algo->name, .bytes = row->bytes, .opts = q->opts, .proto = w->proto,
                       .contention = q->contention, .nccl_rules = q->nccl_only};
        run_out_t o;
        baton_err_t ce = {0};
        int rc = run_collective(t, &r, &o, &ce);
        if (rc == BATON_ENOMEM || rc == BATON_EWHOLE) { *e = ce; return rc; }   /* EWHOLE: the whole would simulate */
        if (rc < 0) return 0;                           /* keep the formula's answer, marked approximate */
        *w = (select_cell_t){.algo = w->algo, .proto = o.proto, .ok = 1, .simulated = 1, .time_s = o.time_s,
                             .algbw_GBps = o.algbw_GBps, .busbw_GBps = o.busbw_GBps, .formula_s = w->time_s};
        engine_result_free(&o.eng);
        rank_cells(row);
    }
    return 0;
}

/* An all-to-all's row runs the size as nccl-tests does, rounded down to a
 * whole float a peer (coll_whole_bytes; baton's all-to-alls need a whole
 * part a peer): 1 GiB on 1,200 ranks is 1073740800 bytes, where "none
 * applies" at every power of two said nothing useful. 0 below one float a
 * peer, with why. Other collectives keep their size (their schedules cut
 * remainders). */
static uint64_t a2a_size(select_row_t *row, uint64_t bytes, int p) {
    if (row->coll != COLL_ALLTOALL) return bytes;
    uint64_t unit, b = coll_whole_bytes(row->coll, p, bytes, &unit);
    if (b == 0)
        snprintf(row->why, sizeof row->why, "an all-to-all on %d ranks runs nothing below %llu bytes, a float a peer "
                 "(nccl-tests)", p, (unsigned long long)unit);
    return b;
}

#define SELECT_MAX_CELLS 64

/* One row as plain data, to come back from a worker (util/par.h): the
 * cells beside it, row.cells pointing nowhere. */
typedef struct select_item {
    select_row_t row;
    select_cell_t cells[SELECT_MAX_CELLS];
} select_item_t;

typedef struct select_ctx {
    topo_t *t;
    const select_req_t *q;
    const cost_model_t *m;
    int ranks;
} select_ctx_t;

/* Row i (collective i / nsizes, size i % nsizes): every wanted algorithm's
 * cell, the winner confirmed, NCCL's pick beside it if asked. */
static int select_row(void *ctx, int i, void *out, baton_err_t *e) {
    const select_ctx_t *x = ctx;
    const select_req_t *q = x->q;
    const algo_t *const *all = algo_all();
    select_item_t *it = out;
    select_row_t *row = &it->row;
    coll_t c = q->colls[i / q->nsizes];
    memset(it, 0, sizeof *it);
    row->cells = it->cells;
    row->coll = c;
    row->asked = q->sizes[i % q->nsizes];
    row->bytes = a2a_size(row, row->asked, x->ranks);
    int rc = 0;
    for (int k = 0; all[k] && row->ncells < SELECT_MAX_CELLS && rc == 0; k++) {
        if (all[k]->coll != c || !wanted(q, all[k])) continue;
        if (row->bytes == 0) { row->cells[row->ncells++] = (select_cell_t){.algo = all[k]}; continue; }
        rc = cell(x->t, q, x->m, c, row->bytes, all[k], &row->cells[row->ncells++], row->why, sizeof row->why, e);
    }
    for (int k = 0; k < q->nalgos && row->ncells < SELECT_MAX_CELLS && rc == 0; k++) {   /* msccl:FILE, simulated */
        const algo_t *a = msccl_is(q->algos[k]) ? msccl_load(q->algos[k], e) : NULL;   /* loaded already: select_run */
        if (a == NULL || a->coll != c || q->nccl_only || row->bytes == 0) continue;
        rc = cell(x->t, q, x->m, c, row->bytes, a, &row->cells[row->ncells++], row->why, sizeof row->why, e);
    }
    if (rc == 0) {
        rank_cells(row);
        rc = confirm_winner(x->t, q, row, e);
    }
    if (rc == 0 && q->vs_nccl && row->bytes) rc = nccl_cell(x->t, q, x->m, row, e);
    row->cells = NULL;
    return rc;
}

/* The rows run over q->jobs worker processes where asked: each row's cells
 * simulate apart from every other row's (two GB200 racks, 21 sizes of
 * all-reduce: about a minute in one process). A worker is a copy of this
 * process, so the catalogue's rows, and MSCCL files loaded before the
 * fork, are at the same addresses there as here. */
int select_run(topo_t *t, const select_req_t *q, select_table_t *out, baton_err_t *e) {
    cost_model_t m;
    memset(out, 0, sizeof *out);
    int rc = topo_cost_model(t, &m, e);
    if (rc < 0) return rc;
    snprintf(out->topo, sizeof out->topo, "%s", topo_name(t));
    out->ranks = topo_whole_ranks(t);
    out->contention = q->contention;
    algo_opts_t used = q->opts;
    form_opts(t, &used);
    out->domain_rings = used.domain_rings;
    for (int i = 0; i < q->nalgos; i++)
        if (msccl_is(q->algos[i]) && msccl_load(q->algos[i], e) == NULL) return e && e->code ? e->code : BATON_EINVAL;
    int n = q->ncolls * q->nsizes;
    select_item_t *items = malloc((size_t)(n > 0 ? n : 1) * sizeof *items);
    out->rows = calloc((size_t)n + 1, sizeof *out->rows);
    if (items == NULL || out->rows == NULL) {
        free(items);
        return err_set(e, BATON_ENOMEM, "out of memory");
    }
    select_ctx_t x = {.t = t, .q = q, .m = &m, .ranks = out->ranks};
    progress_stage("row", 0, n);
    rc = par_map(n, sizeof *items, items, select_row, &x, q->jobs, e);
    for (int i = 0; i < n && rc == 0; i++) {
        out->rows[i] = items[i].row;
        out->rows[i].cells = malloc(SELECT_MAX_CELLS * sizeof *out->rows[i].cells);
        if (out->rows[i].cells == NULL) {
            rc = err_set(e, BATON_ENOMEM, "out of memory");
            break;
        }
        memcpy(out->rows[i].cells, items[i].cells, sizeof items[i].cells);
        out->nrows = i + 1;
    }
    free(items);
    return rc;
}

void select_free(select_table_t *tab) {
    for (int i = 0; tab->rows && i < tab->nrows; i++) free(tab->rows[i].cells);
    free(tab->rows);
    tab->rows = NULL;
}

int select_is_crossover(const select_table_t *tab, int i) {
    if (i == 0) return 0;
    const select_row_t *a = &tab->rows[i - 1], *b = &tab->rows[i];
    if (a->coll != b->coll || a->winner < 0 || b->winner < 0) return 0;
    return a->cells[a->winner].algo != b->cells[b->winner].algo || a->cells[a->winner].proto != b->cells[b->winner].proto;
}
