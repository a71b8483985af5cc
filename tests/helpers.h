/* helpers.h - machines built in code, and running the CLI, for the tests. */
#ifndef BATON_TEST_HELPERS_H
#define BATON_TEST_HELPERS_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "../algorithms/algo.h"
#include "../sim/engine/engine.h"
#include "../topologies/topo.h"
#include "../validate/nccltests.h"

/* Add p GPU nodes PREFIX0.. PREFIX(p-1) as ranks 0..p-1 (node ids 0..p-1 on a new topology). */
void th_add_ranks(topo_t *t, int p, const char *prefix);

/* p ranks, every pair with its own link (no contention). */
topo_t *th_full(int p, double bw, double lat, int ports, double reduce_bw);
/* p ranks on one switch: rank links of bandwidth bw and latency lat/2 each
 * way, so a rank-to-rank path has latency lat. */
topo_t *th_star(int p, double bw, double lat, int ports, double reduce_bw);

/* Run algorithm `name` of all-reduce on t with n bytes. */
int th_sim(topo_t *t, const char *name, uint64_t n, verify_mode_t v, engine_result_t *r,
           baton_err_t *e);

/* Run registry row a on t with n bytes and options o (may be NULL). */
int th_run(topo_t *t, const algo_t *a, uint64_t n, const algo_opts_t *o, verify_mode_t v,
           engine_result_t *r, baton_err_t *e);

/* Run `baton ARGS` (the binary from $BATON_BIN, default build/baton);
 * returns the exit status and fills out (malloc'd, stdout+stderr unless
 * stdout_only). */
int th_cli(const char *args, char **out, int stdout_only);

/* Run `baton ARGS` (stdout and stderr): it exits with rc, and its output
 * holds text (present 1) or does not (0); a Criterion expectation each. */
void th_says(const char *args, int rc, const char *text, int present);

/* Split --set values written "a=1,b=2" or "a=1 b=2" (MANIFEST's and the
 * tests' ways) into v[] (at most max), in place in buf; their count. */
int th_sets(char *buf, const char **v, int max);

/* Load a machine file with the --set values in sets (as th_sets reads
 * them; NULL or "-": none); fails the test with the loader's message if it
 * does not load. */
topo_t *th_load(const char *path, const char *sets);

/* Write a machine file's text to path and load it (th_load, no --set). */
topo_t *th_load_text(const char *path, const char *yaml);

/* Run a shell command; returns its exit status, *out is its stdout. */
int th_sh(const char *cmd, char **out);

/* Read a whole file (malloc'd), NULL if it cannot. */
char *th_slurp(const char *path);

/* The number after the first "key": in JSON text s; fails the test if
 * there is none. */
double th_json_num(const char *s, const char *key);

/* The number "key" of `baton ARGS`'s JSON output (asserts exit 0). */
double th_cli_num(const char *args, const char *key);

/* `baton ARGS`'s stdout parsed as JSON (asserts exit 0 and valid JSON); the caller frees. */
cJSON *th_cli_json(const char *args);

/* Number field k of object j (asserts it is there and a number). */
double th_jnum(cJSON *j, const char *k);

/* An nccl-tests log read with nt_parse (ranks as its --ranks; 0: the
 * log's); fails the test with the reader's message if it does not read. */
nt_log_t th_parse_log(const char *path, int ranks);

#endif
