/* test_ntjson.c - nccl-tests' newer output: its JSON (-J) and per-iteration
 * timing (-I 1), read as the same rows as the text log. The JSON files are
 * made by tests/data/ntjson/to_json.py from a shipped text log's numbers
 * (no public measured -J file was found: docs/decisions/formats.md). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../validate/nccltests.h"
#include "helpers.h"

#define TEXT "validate/logs/nccl-tests-2026/H200x2_2nodes-1GPU-1NIC-GKE-gIB_dranet-mpi-operator-doc_all_reduce.txt"
#define JSON "tests/data/ntjson/h200x2_all_reduce.json"
#define ITXT "tests/data/ntjson/h200x2_all_reduce_I.txt"
#define IJSON "tests/data/ntjson/h200x2_all_reduce_I.json"
#define ON "-t cluster-h200 --set gpus=1"

static nt_log_t parse_ok(const char *path) {
    nt_log_t log;
    baton_err_t e = {0};
    cr_assert_eq(nt_parse(path, 0, &log, &e), 0, "%s", e.msg);
    return log;
}

/* s with every `from` replaced by "LOG" (malloc'd). */
static char *unnamed(const char *s, const char *from) {
    size_t n = strlen(from);
    char *out = malloc(strlen(s) + 1), *o = out;
    for (const char *p = s; *p;) {
        if (strncmp(p, from, n) == 0) { memcpy(o, "LOG", 3), o += 3, p += n; }
        else *o++ = *p++;
    }
    *o = '\0';
    return out;
}

/* `baton CMD ... PATH`'s stdout with PATH written LOG. */
static char *stdout_of(const char *cmd, const char *path) {
    char args[1024], *out = NULL;
    snprintf(args, sizeof args, cmd, path);
    cr_assert_eq(th_cli(args, &out, 1), 0, "baton %s:\n%s", args, out ? out : "");
    char *u = unnamed(out, path);
    free(out);
    return u;
}

static void same_output(const char *cmd, const char *a, const char *b) {
    char *x = stdout_of(cmd, a), *y = stdout_of(cmd, b);
    cr_expect_str_eq(x, y, "%s on %s and on %s", cmd, a, b);
    cr_expect(strlen(x) > 500, "a table: %s", x);
    free(x);
    free(y);
}

Test(ntjson, the_json_reads_as_its_text_log) {
    nt_log_t t = parse_ok(TEXT), j = parse_ok(JSON);
    cr_expect_eq(j.json, 1);
    cr_expect_eq(t.json, 0);
    cr_assert_eq(j.nrows, t.nrows);
    cr_expect_eq(j.nrows, 24);
    for (int i = 0; i < t.nrows; i++) {
        cr_expect_eq(j.rows[i].bytes, t.rows[i].bytes);
        cr_expect_eq(j.rows[i].count, t.rows[i].count);
        cr_expect_eq(j.rows[i].oop_us, t.rows[i].oop_us, "row %d: the same double", i);
        cr_expect_eq(j.rows[i].ip_us, t.rows[i].ip_us);
        cr_expect_eq(j.rows[i].line, 1, "nccl-tests writes its JSON on one line");
    }
    cr_expect_eq(j.coll, COLL_ALLREDUCE, "from args[0], the program");
    cr_expect_eq(j.coll_guessed, 0);
    cr_expect_eq(j.ranks, 2);
    cr_expect_eq(j.stated_ranks, t.stated_ranks);
    cr_expect_eq(j.hosts, 2, "one devices entry a process, each on its host");
    cr_expect_eq(j.per_host, 1);
    cr_expect_str_eq(j.device, "NVIDIA H200");
    cr_expect_str_eq(j.type, "float");
    cr_expect_eq(j.agg_iters, 1);
    cr_expect_eq(j.header_line, 1);
    cr_expect_str_eq(j.nccl_version, "2.25.1", "nccl_version 22501");
    cr_expect_str_eq(t.nccl_version, "");
    nt_free(&t);
    nt_free(&j);
}

Test(ntjson, validate_and_doctor_print_the_same_for_both) {
    same_output("validate " ON " -a nccl --nccl-tests %s", TEXT, JSON);
    same_output("doctor " ON " %s", TEXT, JSON);
}

Test(ntjson, per_iteration_times_text_and_json) {
    nt_log_t t = parse_ok(ITXT), j = parse_ok(IJSON), plain = parse_ok(TEXT);
    cr_expect_eq(t.per_iter, 1);
    cr_expect_eq(j.per_iter, 1);
    cr_expect_eq(plain.per_iter, 0);
    cr_assert_eq(t.nrows, plain.nrows, "21 columns a row read, not refused");
    for (int i = 0; i < t.nrows; i++) {
        cr_expect_eq(t.rows[i].oop_us, plain.rows[i].oop_us);
        cr_expect_eq(j.rows[i].ip_us, plain.rows[i].ip_us);
        for (int k = 0; k < 2; k++) {
            double time = k ? plain.rows[i].ip_us : plain.rows[i].oop_us;
            cr_expect_float_eq(j.rows[i].iter[k].min_us, 0.9 * time, 1e-6 * time);
            cr_expect_float_eq(j.rows[i].iter[k].max_us, 1.3 * time, 1e-6 * time);
            cr_expect_float_eq(j.rows[i].iter[k].p99_us, 1.2 * time, 1e-6 * time);
            cr_expect_float_eq(t.rows[i].iter[k].max_us, 1.3 * time, 0.005 * time + 0.006, "%7s-rounded");
            cr_expect_float_eq(t.rows[i].iter[k].cv_pct, 4.0, 1e-9);
            cr_expect_float_eq(j.rows[i].iter[k].cv_pct, 4.0, 1e-9);
        }
        cr_expect_lt(plain.rows[i].iter[0].min_us, 0, "absent");
    }
    double cv = 0;
    cr_expect_eq(nt_noisiest(&plain, &cv), -1);
    cr_expect_eq(nt_noisiest(&j, &cv), 0);
    nt_free(&t);
    nt_free(&j);
    nt_free(&plain);
    same_output("validate " ON " -a nccl --nccl-tests %s", TEXT, ITXT);
    same_output("validate " ON " -a nccl --nccl-tests %s", ITXT, IJSON);
    th_says("validate " ON " -a nccl --nccl-tests " IJSON, 0,
            "h200x2_all_reduce_I.json:1: per-iteration times (nccl-tests -I 1): one size's iterations vary by up to 4 %", 1);
    th_says("validate " ON " -a nccl --nccl-tests " TEXT, 0, "per-iteration", 0);
}

/* A file in a fresh directory holding text; its path in path. */
static void write_file(char *dir, const char *name, const char *text, char *path, size_t n) {
    snprintf(path, n, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs(text, f);
    fclose(f);
}

static void refused(const char *path, const char *says) {
    nt_log_t log;
    baton_err_t e = {0};
    cr_expect_neq(nt_parse(path, 0, &log, &e), 0, "%s", path);
    cr_expect(strstr(e.msg, says) != NULL, "%s: %s", says, e.msg);
    char args[512];
    snprintf(args, sizeof args, "validate " ON " --nccl-tests %s", path);
    th_says(args, 1, says, 1);
}

Test(ntjson, bad_json_names_file_and_line) {
    char dir[] = "/tmp/baton-ntjson-XXXXXX", p[512];
    cr_assert(mkdtemp(dir));
    char *full = th_slurp(JSON);
    cr_assert(full);
    full[3000] = '\0';                                   /* a run killed while writing */
    write_file(dir, "cut.json", full, p, sizeof p);
    refused(p, "cut.json:1: not valid JSON here (byte 3001): the file ends inside the document");
    write_file(dir, "bad.json", "{\n  \"version\": 3,\n  \"results\": [\n    {\"size\": 1024, \"count\": 256 \"type\": \"float\"}\n  ]\n}\n",
               p, sizeof p);
    refused(p, "bad.json:4: not valid JSON here");
    write_file(dir, "other.json", "{\"a\": 1}\n", p, sizeof p);
    refused(p, "other.json:1: JSON, but not nccl-tests' output (-J): no \"results\" list");
    write_file(dir, "nowhere.json",
               "{\"results\": [\n{\"size\": 8, \"count\": 2, \"type\": \"float\", \"redop\": \"sum\", \"root\": \"    -1\",\n"
               " \"in_place\": {\"time\": 5.0, \"alg_bw\": 0, \"bus_bw\": 0, \"nwrong\": 0}},\n"
               "{\"size\": 16, \"count\": 4, \"type\": \"float\", \"redop\": \"sum\", \"root\": \"    -1\",\n"
               " \"out_of_place\": {\"time\": \"nan\"}, \"in_place\": {\"time\": 5.0}}\n]}\n", p, sizeof p);
    refused(p, "nowhere.json:4: results[1].out_of_place: no time (a number of microseconds: \"time\" or \"cpu_time\"), "
               "it reads \"nan\"");
    write_file(dir, "norow.json", "{\"results\": [{\"size\": 8, \"type\": \"float\"}]}", p, sizeof p);
    refused(p, "norow.json:1: results[0]: no size or count");
    free(full);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_expect_eq(system(cmd), 0);
}

/* The run's NCCL_* variables become what NCCL's INFO lines would say. */
Test(ntjson, the_environment_says_nccl_algo) {
    char dir[] = "/tmp/baton-ntjson-XXXXXX", p[512];
    cr_assert(mkdtemp(dir));
    char *full = th_slurp(JSON), *at = full ? strstr(full, "\"HOME=/root\"") : NULL;
    cr_assert(at);
    size_t n = strlen(full) + 64;
    char *text = malloc(n);
    snprintf(text, n, "%.*s\"NCCL_ALGO=Ring\",\"NCCL_PROTO=Simple\",%s", (int)(at - full), full, at);
    write_file(dir, "env.json", text, p, sizeof p);
    nt_log_t log = parse_ok(p);
    cr_expect_str_eq(log.env_algo.list, "Ring");
    cr_expect_str_eq(log.env_proto.list, "Simple");
    cr_expect_neq(log.env_algo.mask, 0u);
    nt_free(&log);
    char args[700];
    snprintf(args, sizeof args, "validate " ON " -a nccl --nccl-tests %s", p);
    th_says(args, 0, "NCCL_ALGO=Ring set: -a nccl picks only among what it leaves NCCL", 1);
    free(full);
    free(text);
    unlink(p);
    rmdir(dir);
}

/* -S 1 closes each row with a date and a time: two more columns, read past. */
Test(ntjson, timestamps_closing_rows) {
    char dir[] = "/tmp/baton-ntjson-XXXXXX", p[512];
    cr_assert(mkdtemp(dir));
    write_file(dir, "ts.txt",
               "# Collective test starting: all_reduce_perf\n"
               "# nThread 1 nGpus 2 minBytes 8 maxBytes 16 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 "
               "validation: 1 graph: 0 unalign: 0\n"
               "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw "
               "#wrong           timestamp\n"
               "           8             2     float     sum      -1    10.50    0.00    0.00      0    10.25    0.00    0.00"
               "      0  2026-07-09 16:03:21\n"
               "          16             4     float     sum      -1    11.00    0.00    0.00      0    11.50    0.00    0.00"
               "      0  2026-07-09 16:03:22\n", p, sizeof p);
    nt_log_t log = parse_ok(p);
    cr_expect_eq(log.nrows, 2);
    cr_expect_float_eq(log.rows[0].ip_us, 10.25, 1e-12);
    cr_expect_float_eq(log.rows[1].oop_us, 11.0, 1e-12);
    nt_free(&log);
    unlink(p);
    rmdir(dir);
}
