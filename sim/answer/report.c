/* report.c - what the commands write: JSON (the only cJSON user), tables,
 * CSV and NCCL tuner files, each built whole in memory first. */
#include "report.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../models/gpu.h"
#include "../../models/llm.h"
#include "../../topologies/units.h"

static const char *verify_name(verify_mode_t m) {
    return m == VERIFY_DATA ? "data" : m == VERIFY_SIGNATURE ? "signature" : "none";
}

const char *report_json_escape(const char *s, char *buf, size_t n) {
    size_t at = 0;
    for (; s && *s && n > 0; s++) {
        unsigned char c = (unsigned char)*s;
        char one[8];
        int len = c == '"' || c == '\\' ? snprintf(one, sizeof one, "\\%c", c)
                  : c < 0x20             ? snprintf(one, sizeof one, "\\u%04x", c)
                                         : snprintf(one, sizeof one, "%c", c);
        if (at + (size_t)len >= n) {                  /* whole escapes, and whole UTF-8 characters */
            while (at > 0 && ((unsigned char)buf[at - 1] & 0xC0) == 0x80) at--;
            if (at > 0 && (unsigned char)buf[at - 1] >= 0xC0) at--;
            break;
        }
        memcpy(buf + at, one, (size_t)len);
        at += (size_t)len;
    }
    if (n > 0) buf[at] = '\0';
    return buf;
}

static char *finish(cJSON *o) {
    char *s = o ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    return s;
}

/* --explain's parts, in seconds; they add up to total_s. */
static cJSON *parts_object(const run_parts_t *x) {
    cJSON *o = cJSON_CreateObject();
    static const char *const keys[] = {"alpha_s", "beta_s", "gamma_s", "overlap_s", "transfer_s", "wait_s", "reduce_s",
                                       "idle_s", "once_s", "sync_s", "ceiling_s", "socket_s", "proxy_s", "launches_s",
                                       "total_s"};
    const double v[] = {x->alpha, x->beta, x->gamma, x->overlap, x->transfer, x->wait, x->reduce, x->idle, x->once,
                        x->sync, x->ceiling, x->socket, x->proxy, x->launches, x->total};
    for (int i = 0; o && i < (int)(sizeof v / sizeof *v); i++) cJSON_AddNumberToObject(o, keys[i], v[i]);
    return o;
}

/* predict's claim for its formula here and the simulator's time beside it. */
static void check_fields(cJSON *o, const run_out_t *r, const run_check_t *c) {
    static const char *const states[] = {"exact", "simulated", "too_large", "failed"};
    cJSON_AddStringToObject(o, "formula", c->state == RUN_CHECK_EXACT ? "exact" : "approximate");
    cJSON_AddStringToObject(o, "check", states[c->state]);
    cJSON_AddNumberToObject(o, "formula_band", RUN_FORMULA_BAND);
    if (c->state == RUN_CHECK_DONE) {
        cJSON_AddNumberToObject(o, "simulated_time_s", c->sim_s);
        cJSON_AddNumberToObject(o, "simulated_vs_formula", r->time_s > 0 ? c->sim_s / r->time_s : 0);
        cJSON_AddBoolToObject(o, "beyond_band", c->beyond);
    }
    if (c->pick == NULL) return;                 /* sim's answer is another row: the one to quote */
    cJSON *p = cJSON_AddObjectToObject(o, "simulator_pick");
    if (p == NULL) return;
    cJSON_AddStringToObject(p, "algorithm", c->pick->name);
    cJSON_AddStringToObject(p, "protocol", proto_name((proto_t)c->pick_proto));
    cJSON_AddNumberToObject(p, "time_s", c->pick_s);
}

char *report_run_json(const run_out_t *r, const char *topo_name, coll_t coll, int verify_asked, const run_parts_t *parts,
                      const run_check_t *check) {
    cJSON *o = cJSON_CreateObject();
    if (o == NULL) return NULL;
    cJSON_AddStringToObject(o, "topology", topo_name);
    cJSON_AddStringToObject(o, "collective", coll_name(coll));
    cJSON_AddStringToObject(o, "algorithm", r->algo->name);
    if (r->auto_picked) cJSON_AddBoolToObject(o, "auto", 1);
    if (r->rule) cJSON_AddBoolToObject(o, "library_rule", 1);     /* -a nccl followed the machine's library */
    if (r->tuner) cJSON_AddBoolToObject(o, "nccl_tuner", 1);      /* -a nccl ran NCCL's own model's pick */
    if (r->kernel) cJSON_AddStringToObject(o, "nccl_kernel", r->kernel);   /* ... the row of this symmetric kernel */
    if (r->rule && r->rule->tuner) cJSON_AddBoolToObject(o, "tuner", 1);   /* ... a tuner file's row (--tuner) */
    cJSON_AddStringToObject(o, "protocol", proto_name(r->proto));
    if (r->proto_auto) cJSON_AddBoolToObject(o, "protocol_auto", 1);
    cJSON_AddNumberToObject(o, "ranks", r->ranks);
    cJSON_AddNumberToObject(o, "bytes", (double)r->bytes);
    cJSON_AddStringToObject(o, "model", r->simulated ? "des" : "closed");
    cJSON_AddNumberToObject(o, "time_s", r->time_s);
    if (r->band_outside) cJSON_AddBoolToObject(o, "outside_calibration", 1);   /* no interval there */
    if (r->band_widen > 1) cJSON_AddNumberToObject(o, "band_widened", r->band_widen);   /* at another scale */
    if (r->time_hi_s > 0) {                          /* a calibrated machine's 90 % interval */
        cJSON_AddNumberToObject(o, "time_low_s", r->time_lo_s);
        cJSON_AddNumberToObject(o, "time_high_s", r->time_hi_s);
    }
    cJSON_AddNumberToObject(o, "algbw_GBps", r->algbw_GBps);
    cJSON_AddNumberToObject(o, "busbw_GBps", r->busbw_GBps);
    if (r->simulated) {
        cJSON_AddStringToObject(o, "contention", engine_contention_name(r->contention));
        cJSON_AddNumberToObject(o, "messages", (double)r->eng.messages);
        cJSON_AddNumberToObject(o, "max_rank_messages", (double)r->eng.max_rank_msgs);
        cJSON_AddNumberToObject(o, "switch_messages", (double)r->eng.switch_msgs);
        cJSON_AddNumberToObject(o, "events", (double)r->eng.events);
        cJSON_AddNumberToObject(o, "ranks_simulated", (double)r->eng.reps);   /* < ranks: --symmetric */
    } else {
        cJSON_AddNumberToObject(o, "alpha_s", r->model.alpha);
        cJSON_AddNumberToObject(o, "beta_s_per_byte", r->model.beta);
        cJSON_AddNumberToObject(o, "gamma_s_per_byte", r->model.gamma);
        cJSON_AddStringToObject(o, "cost", r->algo->cost_text);
        cJSON_AddBoolToObject(o, "shared_links_seen", !r->model.blind);
    }
    cJSON_AddStringToObject(o, "port_model", r->model.ports == 1 ? "single-port" : "multi-port");
    cJSON_AddNumberToObject(o, "channels", r->channels);           /* what ran: asked, the machine's, NCCL's or the row's */
    if (r->nccl_steps > 0) cJSON_AddNumberToObject(o, "pipeline_steps", r->nccl_steps);   /* NCCL's loops */
    if (r->auto_picked == 1 && r->cut == RUN_CUT_NCCL) cJSON_AddStringToObject(o, "cut", "nccl");   /* -a auto took NCCL's cut */
    if (r->launch_s > 0) cJSON_AddNumberToObject(o, "launch_s", r->launch_s);                /* -g's, in time_s */
    if (verify_asked) {
        cJSON_AddBoolToObject(o, "verified", r->eng.verified);
        cJSON_AddStringToObject(o, "verify_mode", verify_name(r->verify_mode));
    }
    if (check) check_fields(o, r, check);
    if (parts) {
        cJSON *x = parts_object(parts);
        if (x == NULL) { cJSON_Delete(o); return NULL; }
        cJSON_AddItemToObject(o, "explain", x);
    }
    return finish(o);
}

int report_plan_channels(const run_out_t *r, const tuning_machine_t *m) {
    int nvls = r->algo->nccl && !strncmp(r->algo->nccl, "nvls", 4) && m->nvls_channels > 0;
    return nvls ? m->nvls_channels : r->channels;
}

/* One size of a plan: its bytes, what ran, on how many channels (m: the
 * plan's view, NULL: none said), how long. */
static cJSON *plan_size(const run_out_t *r, const tuning_machine_t *m) {
    cJSON *o = cJSON_CreateObject();
    if (o == NULL) return NULL;
    cJSON_AddNumberToObject(o, "bytes", (double)r->bytes);
    cJSON_AddStringToObject(o, "algorithm", r->algo->name);
    cJSON_AddStringToObject(o, "protocol", proto_name(r->proto));
    if (m) cJSON_AddNumberToObject(o, "channels", report_plan_channels(r, m));
    if (r->rule) cJSON_AddBoolToObject(o, "library_rule", 1);
    if (r->rule && r->rule->tuner) cJSON_AddBoolToObject(o, "tuner", 1);
    cJSON_AddNumberToObject(o, "time_s", r->time_s);
    cJSON_AddNumberToObject(o, "busbw_GBps", r->busbw_GBps);
    return o;
}

char *report_plan_json(const char *topo_name, int ranks, int per_node, coll_t coll, const tuning_machine_t *m, int n,
                       const run_out_t *ours, const run_out_t *nccls) {
    cJSON *o = cJSON_CreateObject(), *v = cJSON_CreateObject(), *sizes = cJSON_CreateArray();
    if (o == NULL || v == NULL || sizes == NULL) { cJSON_Delete(o); cJSON_Delete(v); cJSON_Delete(sizes); return NULL; }
    cJSON_AddStringToObject(o, "topology", topo_name);
    cJSON_AddNumberToObject(o, "ranks", ranks);
    cJSON_AddNumberToObject(o, "ranks_per_node", per_node);
    cJSON_AddStringToObject(o, "collective", coll_name(coll));
    cJSON_AddStringToObject(o, "model", n > 0 && ours[0].simulated ? "des" : "closed");
    cJSON_AddNumberToObject(v, "nodes", m->nnodes);
    cJSON_AddStringToObject(v, "intra", m->nvlink ? "NVLink" : "PCI");
    cJSON_AddNumberToObject(v, "channels", m->nchannels);
    cJSON_AddNumberToObject(v, "channel_GBps", m->bw);
    cJSON_AddBoolToObject(v, "nvls", m->nvls_channels > 0);
    cJSON_AddBoolToObject(v, "ll128", m->ll128);     /* NCCL's default across nodes (view_ll128) */
    cJSON_AddItemToObject(o, "nccl_view", v);
    cJSON *cols = cJSON_AddObjectToObject(o, "columns");
    if (cols == NULL) { cJSON_Delete(sizes); cJSON_Delete(o); return NULL; }
    cJSON_AddStringToObject(cols, "sizes", REPORT_PLAN_EXPECTS " (-a nccl)");
    cJSON_AddStringToObject(cols, "nccl_model", REPORT_PLAN_BELIEVES " (--model nccl)");
    for (int i = 0; i < n; i++) {
        cJSON *s, *x;
        if (ours[i].algo == NULL) {                  /* an all-to-all below a float a peer: nothing runs */
            s = cJSON_CreateObject(), x = cJSON_CreateNull();
            if (s) cJSON_AddNullToObject(s, "algorithm"), cJSON_AddNumberToObject(s, "runs_from_bytes", (double)ours[i].bytes);
        } else s = plan_size(&ours[i], m), x = nccls[i].algo ? plan_size(&nccls[i], NULL) : cJSON_CreateNull();
        if (s == NULL || x == NULL) {                 /* whole or not at all */
            cJSON_Delete(s), cJSON_Delete(x), cJSON_Delete(sizes), cJSON_Delete(o);
            return NULL;
        }
        cJSON_AddItemToObject(s, "nccl_model", x);
        cJSON_AddItemToArray(sizes, s);
    }
    cJSON_AddItemToObject(o, "sizes", sizes);
    return finish(o);
}

static cJSON *gpu_object(const gpu_spec_t *g) {
    cJSON *o = cJSON_CreateObject();
    if (o == NULL) return NULL;
    cJSON_AddStringToObject(o, "name", g->name);
    cJSON_AddNumberToObject(o, "bf16_flops", g->flops[GPU_BF16]);
    cJSON_AddNumberToObject(o, "fp8_flops", g->flops[GPU_FP8]);
    cJSON_AddNumberToObject(o, "hbm_Bps", g->hbm_bw);
    cJSON_AddNumberToObject(o, "hbm_bytes", g->hbm_bytes);
    cJSON_AddNumberToObject(o, "launch_s", g->launch);
    cJSON_AddNumberToObject(o, "graph_launch_s", g->graph_launch);
    return o;
}

static cJSON *model_object(const llm_t *m) {
    cJSON *o = cJSON_CreateObject();
    if (o == NULL) return NULL;
    cJSON_AddStringToObject(o, "name", m->name);
    const char *keys[] = {"layers", "hidden", "heads", "kv_heads", "head_dim", "ffn", "vocab", "experts", "top_k"};
    const int vals[] = {m->layers, m->hidden, m->heads, m->kv_heads, m->head_dim, m->ffn, m->vocab, m->experts, m->top_k};
    for (int i = 0; i < 9; i++) cJSON_AddNumberToObject(o, keys[i], vals[i]);
    cJSON_AddNumberToObject(o, "params", llm_params(m));
    cJSON_AddNumberToObject(o, "active_params", llm_active_params(m));
    cJSON_AddStringToObject(o, "source", m->source);
    return o;
}

char *report_gpus_json(void) {
    cJSON *o = cJSON_CreateObject(), *gpus = cJSON_AddArrayToObject(o, "gpus"), *models = cJSON_AddArrayToObject(o, "models");
    int ok = o && gpus && models;
    for (int i = 0; ok && gpu_at(i); i++) {
        cJSON *g = gpu_object(gpu_at(i));
        ok = g != NULL && cJSON_AddItemToArray(gpus, g);
    }
    for (int i = 0; ok && llm_at(i); i++) {
        cJSON *m = model_object(llm_at(i));
        ok = m != NULL && cJSON_AddItemToArray(models, m);
    }
    if (!ok) { cJSON_Delete(o); return NULL; }     /* whole or not at all */
    return finish(o);
}

char *report_algos_json(int coll_filter) {
    cJSON *a = cJSON_CreateArray();
    const algo_t *const *rows = algo_all();
    for (int i = 0; a && rows[i]; i++) {
        if (coll_filter >= 0 && (int)rows[i]->coll != coll_filter) continue;
        cJSON *o = cJSON_CreateObject();
        if (o == NULL) break;
        cJSON_AddStringToObject(o, "collective", coll_name(rows[i]->coll));
        cJSON_AddStringToObject(o, "algorithm", rows[i]->name);
        cJSON_AddStringToObject(o, "cost", rows[i]->cost_text);
        cJSON_AddStringToObject(o, "requires", rows[i]->requires);
        cJSON_AddStringToObject(o, "port_model", rows[i]->port_model);
        cJSON_AddStringToObject(o, "idea", rows[i]->idea);
        cJSON_AddItemToArray(a, o);
    }
    return finish(a);
}

/* ---- selection tables ----------------------------------------------------- */

static const char *cell_model(const select_cell_t *c) {
    return c->simulated ? "des" : c->approx ? "approx" : "closed";
}

/* The runner-up's time over the winner's; 1 when both take no time (one rank). */
static double margin(const select_row_t *r) {
    double w = r->cells[r->winner].time_s, u = r->cells[r->runner_up].time_s;
    return w > 0 ? u / w : 1;
}

/* "ring/LL" (or "ring" without a protocol). */
static const char *pick_name(const select_cell_t *c, char *buf, int len) {
    snprintf(buf, len, "%s%s%s", c->algo->name, c->proto ? "/" : "", c->proto ? proto_name(c->proto) : "");
    return buf;
}

static void fmt_time(char *buf, int len, double t) {
    if (t >= 1) snprintf(buf, len, "%.3g s", t);
    else if (t >= 1e-3) snprintf(buf, len, "%.3g ms", t * 1e3);
    else snprintf(buf, len, "%.3g us", t * 1e6);
}

/* What the marks say; the table's notes (simulated_notes) say why. */
#define LEGEND "[s] simulated  [~] approximate formula, not simulated"

/* A row's size as asked ("1 GiB"), where an all-to-all ran it rounded
 * (select.c, a2a_size): a2a_note says so under the table. */
static void row_label(const select_row_t *r, char *sz, size_t n) {
    units_fmt_size(r->asked ? r->asked : r->bytes, sz, n);
}

/* "all-to-all sizes run as nccl-tests runs them: ..." where a row ran
 * another size than its label. */
static void a2a_note(FILE *f, const select_table_t *tab, int first, int last) {
    const select_row_t *x = NULL;
    for (int i = first; i <= last; i++)
        if (tab->rows[i].bytes && tab->rows[i].asked && tab->rows[i].bytes != tab->rows[i].asked) x = &tab->rows[i];
    if (x == NULL) return;
    char sz[32];
    units_fmt_size(x->asked, sz, sizeof sz);
    fprintf(f, "sizes: an all-to-all runs a size as nccl-tests does, rounded down to a whole float a peer (%s: %llu\n"
               "       bytes on %d ranks)\n", sz, (unsigned long long)x->bytes, tab->ranks);
}

static void table_header(FILE *f, const select_table_t *tab, int first) {
    const select_row_t *r = &tab->rows[first];
    fprintf(f, "%s on %s (%d ranks)   %s\n", coll_name(r->coll), tab->topo, tab->ranks, LEGEND);
    fprintf(f, "%10s", "size");
    for (int i = 0; i < r->ncells; i++) fprintf(f, " %12.12s", r->cells[i].algo->name);
    fprintf(f, "   %-14s %s\n", "winner", "x next best");
}

static void table_row(FILE *f, const select_row_t *r) {
    char sz[32], t[32];
    row_label(r, sz, sizeof sz);
    fprintf(f, "%10s", sz);
    for (int i = 0; i < r->ncells; i++) {
        const select_cell_t *c = &r->cells[i];
        if (!c->ok) { fprintf(f, " %12s", "-"); continue; }
        fmt_time(t, sizeof t, c->time_s);
        fprintf(f, " %9s%-3s", t, c->simulated ? "[s]" : c->approx ? "[~]" : "");
    }
    if (r->winner < 0) { fprintf(f, "   (none applies%s%s)\n", r->why[0] ? ": " : "", r->why); return; }
    const select_cell_t *w = &r->cells[r->winner];
    char name[64];
    pick_name(w, name, sizeof name);
    if (r->runner_up >= 0)
        fprintf(f, "   %-14s %.2f (%s)\n", name, margin(r), r->cells[r->runner_up].algo->name);
    else
        fprintf(f, "   %-14s\n", name);
}

/* "crossovers: a -> b at 1 MiB, ..." wrapped under 100 columns. */
static void crossovers(FILE *f, const select_table_t *tab, int first, int last) {
    int any = 0, col = 0, none = 0;
    for (int i = first; i <= last; i++) none += tab->rows[i].winner < 0;
    for (int i = first + 1; i <= last; i++) {
        if (!select_is_crossover(tab, i)) continue;
        const select_row_t *a = &tab->rows[i - 1], *b = &tab->rows[i];
        char sz[32], x[48], y[48], item[160];
        row_label(b, sz, sizeof sz);
        int len = snprintf(item, sizeof item, "%s -> %s at %s", pick_name(&a->cells[a->winner], x, sizeof x),
                           pick_name(&b->cells[b->winner], y, sizeof y), sz);
        if (!any) col = fprintf(f, "crossovers: %s", item);
        else if (col + 2 + len > 98) col = fprintf(f, ",\n            %s", item) - 2;
        else col += fprintf(f, ", %s", item);
        any = 1;
    }
    if (any) fputc('\n', f);
    else if (none > last - first) fprintf(f, "crossovers: none (no algorithm applies at any of these sizes)\n");
    else fprintf(f, none ? "crossovers: none (one winner wherever one applies)\n" : "crossovers: none (one winner at every size)\n");
}

/* Under FIFO the simulation can put an approximate row far above its
 * formula where its flows meet on links, which FIFO's serial booking can
 * overcount (docs/decisions/fifo-default.md); where that
 * formula would have beaten the winner, say so, once a size, with the way
 * to check. */
#define FIFO_DOUBT 1.25

static void fifo_doubts(FILE *f, const select_table_t *tab, int first, int last) {
    if (tab->contention != CONTENTION_FIFO) return;
    for (int i = first; i <= last; i++) {
        const select_row_t *r = &tab->rows[i];
        for (int c = 0; c < r->ncells; c++) {
            const select_cell_t *x = &r->cells[c];
            if (c == r->winner || r->winner < 0 || !x->simulated || !x->algo->approx || x->formula_s <= 0 ||
                x->formula_s >= r->cells[r->winner].time_s || x->time_s <= FIFO_DOUBT * x->formula_s)
                continue;                                  /* only where the formula would have won */
            char sz[32], a[48], ft[32], st[32];
            row_label(r, sz, sizeof sz);
            fmt_time(ft, sizeof ft, x->formula_s);
            fmt_time(st, sizeof st, x->time_s);
            fprintf(f, "caution: at %s %s's formula says %s, its FIFO simulation %s: where flows meet on links FIFO\n"
                       "         overcounts; --contention fair checks it (slower)\n", sz, pick_name(x, a, sizeof a), ft, st);
            break;
        }
    }
}

/* A shown cell whose simulated time is beyond the band from its formula's
 * (what predict quotes): "nvls/Simple at 1 GiB 3.94 ms (+8 %)". */
static int formula_item(const select_row_t *r, const select_cell_t *c, const char *tag, char *item, int len) {
    char sz[32], a[48], ft[32];
    if (!c->ok || !c->simulated || c->formula_s <= 0 || fabs(c->time_s - c->formula_s) <= RUN_FORMULA_BAND * c->time_s)
        return 0;
    row_label(r, sz, sizeof sz);
    fmt_time(ft, sizeof ft, c->formula_s);
    return snprintf(item, len, "%s%s at %s %s (simulated %+.0f %%)", pick_name(c, a, sizeof a), tag, sz, ft,
                    100 * (c->time_s - c->formula_s) / c->formula_s);
}

/* Why a [s] cell is not predict's number: the cells shown simulated (every
 * cell with --wide; else the winner and NCCL's), a line saying when select
 * simulates, then those whose formula predict quotes differs beyond the band,
 * wrapped under 100 columns. */
static void simulated_notes(FILE *f, const select_table_t *tab, int first, int last, int wide, int vs_nccl) {
    int any = 0, col = 0;
    for (int i = first; i <= last; i++) {
        const select_row_t *r = &tab->rows[i];
        for (int k = 0; k < r->ncells; k++) any |= (wide || k == r->winner) && r->cells[k].ok && r->cells[k].simulated;
        any |= vs_nccl && r->nccl.ok && r->nccl.simulated;
    }
    if (!any) return;
    fprintf(f, "[s]: the formula is only approximate on this machine, so the simulator's time (as `sim` gives);\n"
               "     `predict` quotes the formula and prints the simulator's time beside it beyond %.0f %%\n",
            100 * RUN_FORMULA_BAND);
    for (int i = first, n = 0; i <= last; i++) {
        const select_row_t *r = &tab->rows[i];
        for (int k = -1; k < r->ncells; k++) {
            const select_cell_t *c = k < 0 ? &r->nccl : &r->cells[k];
            char item[160];
            if ((k < 0 && !vs_nccl) || (k >= 0 && !wide && k != r->winner)) continue;
            const select_cell_t *w = r->winner >= 0 ? &r->cells[r->winner] : NULL;
            if (k < 0 && w && w->algo == c->algo && w->proto == c->proto && w->time_s == c->time_s &&
                w->formula_s == c->formula_s)
                continue;                                   /* the winner's cell, listed below */
            int len = formula_item(r, c, k < 0 ? " as NCCL runs it" : "", item, sizeof item);
            if (len == 0) continue;
            if (n++ == 0) col = fprintf(f, "     predict's formula: %s", item);
            else if (col + 2 + len > 98) col = fprintf(f, ",\n       %s", item) - 2;
            else col += fprintf(f, ", %s", item);
        }
        if (i == last && n) fputc('\n', f);
    }
}

/* The compact table: the winner, its time and busbw, the next best and (with
 * --vs-nccl) what NCCL runs and how much slower that is; under 100 columns. */
static void compact_header(FILE *f, const select_table_t *tab, int first, int vs_nccl) {
    const select_row_t *r = &tab->rows[first];
    fprintf(f, "%s on %s (%d ranks)   %s\n", coll_name(r->coll), tab->topo, tab->ranks, LEGEND);
    fprintf(f, "%9s  %-19s %12s %13s  %-19s %5s", "size", "winner", "time", "busbw", "next best", "x");
    if (vs_nccl) fprintf(f, "  %-16s %6s", "NCCL runs", "x");
    fputc('\n', f);
}

static void compact_row(FILE *f, const select_row_t *r, int vs_nccl) {
    char sz[32], t[32], a[48], b[48];
    row_label(r, sz, sizeof sz);
    fprintf(f, "%9s  ", sz);
    if (r->winner < 0) { fprintf(f, "(none applies%s%s)\n", r->why[0] ? ": " : "", r->why); return; }
    const select_cell_t *w = &r->cells[r->winner];
    fmt_time(t, sizeof t, w->time_s);
    fprintf(f, "%-19s %9s%-3s %8.3g GB/s  ", pick_name(w, a, sizeof a), t, w->simulated ? "[s]" : w->approx ? "[~]" : "",
            w->busbw_GBps);
    if (r->runner_up >= 0) fprintf(f, "%-19s %5.2f", pick_name(&r->cells[r->runner_up], b, sizeof b), margin(r));
    else fprintf(f, "%-19s %5s", "-", "");
    if (vs_nccl && r->nccl.ok) {
        double x = w->time_s > 0 ? r->nccl.time_s / w->time_s : 1;
        fprintf(f, "  %-16s %5.2f%s", pick_name(&r->nccl, a, sizeof a), x, x > 1.05 ? "*" : "");
    } else if (vs_nccl) {
        fprintf(f, "  %-16s", "(nothing)");
    }
    fputc('\n', f);
}

char *report_select_table(const select_table_t *tab, int wide, int vs_nccl) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (f == NULL) return NULL;
    for (int i = 0; i < tab->nrows;) {
        int j = i;
        while (j + 1 < tab->nrows && tab->rows[j + 1].coll == tab->rows[i].coll) j++;
        if (i) fputc('\n', f);
        if (wide) table_header(f, tab, i);
        else compact_header(f, tab, i, vs_nccl);
        for (int k = i; k <= j; k++) {
            if (wide) table_row(f, &tab->rows[k]);
            else compact_row(f, &tab->rows[k], vs_nccl);
        }
        crossovers(f, tab, i, j);
        a2a_note(f, tab, i, j);
        simulated_notes(f, tab, i, j, wide, vs_nccl);
        fifo_doubts(f, tab, i, j);
        i = j + 1;
    }
    fclose(f);
    return buf;
}

char *report_select_csv(const select_table_t *tab) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (f == NULL) return NULL;
    fprintf(f, "collective,bytes,algorithm,protocol,model,time_s,algbw_GBps,busbw_GBps,winner,formula_time_s\n");
    for (int i = 0; i < tab->nrows; i++) {
        const select_row_t *r = &tab->rows[i];
        for (int k = 0; k < r->ncells; k++) {
            const select_cell_t *c = &r->cells[k];
            if (!c->ok) continue;
            fprintf(f, "%s,%llu,%s,%s,%s,%.9g,%.6g,%.6g,%d,%.9g\n", coll_name(r->coll), (unsigned long long)r->bytes,
                    c->algo->name, proto_name(c->proto), cell_model(c), c->time_s, c->algbw_GBps, c->busbw_GBps, k == r->winner,
                    c->simulated && c->formula_s > 0 ? c->formula_s : c->time_s);   /* predict's number */
        }
    }
    fclose(f);
    return buf;
}

char *report_select_json(const select_table_t *tab) {
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; a && i < tab->nrows; i++) {
        const select_row_t *r = &tab->rows[i];
        cJSON *o = cJSON_CreateObject(), *res = cJSON_CreateArray();
        if (!o || !res) { cJSON_Delete(o); cJSON_Delete(res); break; }
        cJSON_AddStringToObject(o, "collective", coll_name(r->coll));
        cJSON_AddNumberToObject(o, "bytes", (double)r->bytes);
        if (r->asked && r->asked != r->bytes) cJSON_AddNumberToObject(o, "asked_bytes", (double)r->asked);   /* nccl-tests' rounding */
        if (r->winner < 0 && r->why[0]) cJSON_AddStringToObject(o, "why", r->why);
        cJSON_AddNumberToObject(o, "ranks", tab->ranks);
        for (int k = 0; k < r->ncells; k++) {
            const select_cell_t *c = &r->cells[k];
            if (!c->ok) continue;
            cJSON *x = cJSON_CreateObject();
            if (x == NULL) break;
            cJSON_AddStringToObject(x, "algorithm", c->algo->name);
            cJSON_AddStringToObject(x, "protocol", proto_name(c->proto));
            cJSON_AddStringToObject(x, "model", cell_model(c));
            cJSON_AddNumberToObject(x, "time_s", c->time_s);
            if (c->simulated && c->formula_s > 0) cJSON_AddNumberToObject(x, "formula_time_s", c->formula_s);   /* predict's */
            cJSON_AddNumberToObject(x, "algbw_GBps", c->algbw_GBps);
            cJSON_AddNumberToObject(x, "busbw_GBps", c->busbw_GBps);
            cJSON_AddItemToArray(res, x);
        }
        cJSON_AddItemToObject(o, "results", res);
        if (r->winner >= 0) cJSON_AddStringToObject(o, "winner", r->cells[r->winner].algo->name);
        if (r->runner_up >= 0) {
            cJSON_AddStringToObject(o, "runner_up", r->cells[r->runner_up].algo->name);
            cJSON_AddNumberToObject(o, "ratio", margin(r));
        }
        cJSON_AddBoolToObject(o, "crossover", select_is_crossover(tab, i));
        cJSON_AddItemToArray(a, o);
    }
    return finish(a);
}

static const char *tuner_proto(proto_t p) {
    return p == PROTO_LL ? "ll" : p == PROTO_LL128 ? "ll128" : "simple";
}

char *report_select_tuner(const select_table_t *tab, int nnodes, int channels, int wildcards, int bind) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (f == NULL) return NULL;
    fprintf(f, "# NCCL tuner configuration from baton select on %s (%d ranks, %d nodes)%s\n", tab->topo, tab->ranks, nnodes,
            wildcards ? "; any node and rank count (-1)" : "");
    char rings[96] = "";
    if (tab->domain_rings > 0)
        snprintf(rings, sizeof rings, ",\n# ring and tree rows %d: a ring per NIC across the NVLink domains", tab->domain_rings);
    if (bind > 0)
        fprintf(f, "# channels %d (--tuner-channels): every row binds NCCL to %d channels, as NCCL's example plugin\n"
                   "# needs (it runs a row of -1 on one: plugin.c's *nChannels = 1); baton's times assumed %d%s\n",
                bind, bind, channels, rings);
    else
        fprintf(f, "# channels -1: NCCL keeps its own count under baton's plugin (libnccl-tuner-baton.so: it sets a count only\n"
                   "# where a row names one; baton's times assumed %d%s); NCCL's example plugin sets one channel where the\n"
                   "# row says -1 (plugin.c: *nChannels = 1), so with it write counts (--tuner-channels K)\n",
                channels, rings);
    fprintf(f, "# collective,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks,numPipeOps,regBuff\n");
    for (int i = 0; i < tab->nrows;) {
        const select_row_t *r = &tab->rows[i];
        int j = i;
        if (r->winner < 0) { i++; continue; }
        const select_cell_t *w = &r->cells[r->winner];
        while (j + 1 < tab->nrows && tab->rows[j + 1].coll == r->coll && tab->rows[j + 1].winner >= 0 &&
               tab->rows[j + 1].cells[tab->rows[j + 1].winner].algo->nccl == w->algo->nccl &&
               tab->rows[j + 1].cells[tab->rows[j + 1].winner].proto == w->proto)
            j++;
        int first = i == 0 || tab->rows[i - 1].coll != r->coll;
        int last = j + 1 >= tab->nrows || tab->rows[j + 1].coll != r->coll;
        unsigned long long lo = first ? 0 : r->bytes, hi = last ? 18446744073709551615ULL : tab->rows[j + 1].bytes - 1;
        fprintf(f, "%s,%llu,%llu,%s,%s,%d,%d,%d,-1,-1\n", coll_name(r->coll), lo, hi,
                w->algo->nccl ? w->algo->nccl : w->algo->name, tuner_proto(w->proto), bind > 0 ? bind : -1,
                wildcards ? -1 : nnodes,
                wildcards ? -1 : tab->ranks);
        i = j + 1;
    }
    fclose(f);
    return buf;
}

/* Reading: the tree is cJSON's own, behind report_jv_t. */
report_jv_t *report_jv_parse(const char *text, long *at) {
    const char *end = NULL;
    cJSON *doc = cJSON_ParseWithOpts(text, &end, 1);      /* 1: nothing but white space after it */
    if (doc == NULL) *at = end ? (long)(end - text) : -1;
    return (report_jv_t *)doc;
}

void report_jv_free(report_jv_t *doc) { cJSON_Delete((cJSON *)doc); }

const report_jv_t *report_jv_get(const report_jv_t *v, const char *key) {
    return cJSON_IsObject((const cJSON *)v) ? (const report_jv_t *)cJSON_GetObjectItemCaseSensitive((const cJSON *)v, key)
                                            : NULL;
}

int report_jv_len(const report_jv_t *v) { return cJSON_IsArray((const cJSON *)v) ? cJSON_GetArraySize((const cJSON *)v) : -1; }

const report_jv_t *report_jv_at(const report_jv_t *v, int i) {
    return cJSON_IsArray((const cJSON *)v) ? (const report_jv_t *)cJSON_GetArrayItem((const cJSON *)v, i) : NULL;
}

int report_jv_num(const report_jv_t *v, double *x) {
    if (!cJSON_IsNumber((const cJSON *)v)) return -1;
    *x = cJSON_GetNumberValue((const cJSON *)v);
    return 0;
}

const char *report_jv_str(const report_jv_t *v) { return cJSON_GetStringValue((const cJSON *)v); }

int report_jv_null(const report_jv_t *v) { return v == NULL || cJSON_IsNull((const cJSON *)v); }
