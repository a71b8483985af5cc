/* report.h - machine-readable output. The only place cJSON is used. */
#ifndef BATON_REPORT_H
#define BATON_REPORT_H

#include "run.h"

/* One JSON object for a run (malloc'd string; the caller frees it), or NULL
 * when memory runs out. `verify_asked` adds the `verified` field; parts
 * (--explain) an "explain" object whose parts add up to its total_s; check
 * (predict) the formula's claim and the simulator's time beside it. */
char *report_run_json(const run_out_t *o, const char *topo_name, coll_t coll, int verify_asked, const run_parts_t *parts,
                      const run_check_t *check);

#include "../nccl/nccl.h"

/* plan's two answers per size, by the same names in its text and JSON. */
#define REPORT_PLAN_EXPECTS "what baton expects NCCL to run, and its time"
#define REPORT_PLAN_BELIEVES "what NCCL's own cost model believes"

/* `baton plan --json` (malloc'd): the machine as NCCL's model sees it (m),
 * the columns' names (REPORT_PLAN_EXPECTS: a size's own fields;
 * REPORT_PLAN_BELIEVES: its nccl_model), then per size what baton expects
 * NCCL to run (ours[i], -a nccl) beside NCCL's own model's
 * (nccls[i]; its algo NULL where that model has no such collective: null). */
/* The channels a plan's size ran on, as its table says them: NVLS's and
 * NVLSTree's CTAs (NCCL's INFO line), not the schedule's groups; else the
 * row's (run_out_t.channels). */
int report_plan_channels(const run_out_t *r, const tuning_machine_t *m);
char *report_plan_json(const char *topo_name, int ranks, int per_node, coll_t coll, const tuning_machine_t *m, int n,
                       const run_out_t *ours, const run_out_t *nccls);

/* `baton gpus --json` (malloc'd): {"gpus": [...], "models": [...]}, the
 * built-in GPUs' datasheet numbers and the models' shapes. */
char *report_gpus_json(void);

/* s as the inside of a JSON string (quotes, backslashes and control
 * characters escaped) into buf, for the commands that print JSON a field
 * at a time; cut short at a whole character if it does not fit. buf. */
const char *report_json_escape(const char *s, char *buf, size_t n);

/* The registry as a JSON array of objects (malloc'd). */
char *report_algos_json(int coll_filter);

#include "select.h"

/* Selection tables as text (malloc'd strings; NULL when memory runs out). */
char *report_select_table(const select_table_t *tab, int wide, int vs_nccl);
char *report_select_csv(const select_table_t *tab);
char *report_select_json(const select_table_t *tab);
/* NCCL's example tuner CSV: one line per size range with one decision
 * (collective,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks,
 * numPipeOps,regBuff). The table should hold NCCL-runnable algorithms only.
 * channels is -1 (NCCL's own count): baton's channel count is its model's
 * view (hgx-h100's one aggregate channel), and a count in the file binds
 * NCCL to it; the header names the count the times assumed. bind > 0
 * writes that count in every row (select --tuner-channels: NCCL's example
 * plugin runs a row of -1 on one channel). */
char *report_select_tuner(const select_table_t *tab, int nnodes, int channels, int wildcards, int bind);

/* Reading JSON, for the formats baton reads (nccl-tests' -J output): a
 * parsed document as an opaque tree, walked with the accessors below. */
typedef struct report_jv report_jv_t;
/* text parsed whole (malloc'd tree; report_jv_free), or NULL with the byte
 * offset where it stopped reading in *at (-1: out of memory). */
report_jv_t *report_jv_parse(const char *text, long *at);
void report_jv_free(report_jv_t *doc);
/* An object's member by name, or NULL (also where v is not an object). */
const report_jv_t *report_jv_get(const report_jv_t *v, const char *key);
/* An array's length (-1: v is not an array) and its i-th element. */
int report_jv_len(const report_jv_t *v);
const report_jv_t *report_jv_at(const report_jv_t *v, int i);
/* A number into *x: 0, or -1 where v is not one. */
int report_jv_num(const report_jv_t *v, double *x);
/* A string's text, or NULL where v is not a string. */
const char *report_jv_str(const report_jv_t *v);
/* 1 where v is JSON's null or missing (NULL). */
int report_jv_null(const report_jv_t *v);

#endif
