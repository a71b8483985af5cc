/* test_nccltests.c - reading nccl-tests logs (validate/nccltests.h): every
 * shipped log, the format variants, NCCL's TUNING and environment lines,
 * and baton's own nccl-tests layout read back. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../algorithms/algo.h"
#include "../validate/nccltests.h"
#include "helpers.h"

#define LOGS "validate/logs"
#define SHARED LOGS "/nccl-tests"

/* Rows counted the plain way: a line (after any launcher prefix) starting
 * with a number then a number then "float" or "half". */
static int count_rows(const char *path, unsigned long long *first, unsigned long long *last) {
    FILE *f = fopen(path, "r");
    char line[1024];
    int n = 0;
    while (f && fgets(line, sizeof line, f)) {
        unsigned long long a, b;
        char type[32];
        const char *row = strstr(line, ">:") ? strstr(line, ">:") + 2 : line;   /* mpirun's "[1,0]<stdout>:" */
        if (sscanf(row, " %llu %llu %31s", &a, &b, type) == 3 && (!strcmp(type, "float") || !strcmp(type, "half"))) {
            if (n == 0) *first = a;
            *last = a;
            n++;
        }
    }
    if (f) fclose(f);
    return n;
}

/* The GPU count a log's file name states: the first "x<digits>_" (a100x16_,
 * mi300x_x8_, rtx4090x2_), the convention of validate/logs/.../SOURCES.md. */
static int ranks_in_name(const char *name) {
    for (const char *c = strchr(name, 'x'); c; c = strchr(c + 1, 'x')) {
        char *end;
        long n = strtol(c + 1, &end, 10);
        if (end > c + 1 && *end == '_') return (int)n;
    }
    return -1;
}

/* The collective a log's file name states, if any (the longest names first). */
static const char *coll_in_name(const char *name) {
    static const char *const names[][2] = {{"reducescatter", "reducescatter"}, {"reduce_scatter", "reducescatter"},
        {"allreduce", "allreduce"}, {"allgather", "allgather"}, {"alltoall", "alltoall"}, {"broadcast", "broadcast"},
        {"reduce", "reduce"}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strstr(name, names[i][0])) return names[i][1];
    return NULL;
}

/* Every log in a directory parses completely: as many rows as the plain
 * count, the collective and the rank count its name states. Logs added
 * later are checked the same way; the count is only a floor. */
static int check_log_dir(const char *dir) {
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "%s is missing", dir);
    int files = 0;
    for (struct dirent *de; (de = readdir(d)) != NULL;) {
        size_t len = strlen(de->d_name);
        if (de->d_name[0] == '.' || len < 4 || strcmp(de->d_name + len - 4, ".txt")) continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        nt_log_t log;
        baton_err_t e = {0};
        cr_assert_eq(nt_parse(path, 0, &log, &e), 0, "%s", e.msg);
        unsigned long long first = 0, last = 0;
        int rows = count_rows(path, &first, &last);
        cr_expect_eq(log.nrows, rows, "%s: %d rows, the file has %d", path, log.nrows, rows);
        cr_expect_eq(log.rows[0].bytes, first);
        cr_expect_eq(log.rows[log.nrows - 1].bytes, last);
        const char *coll = coll_in_name(de->d_name);
        if (coll) cr_expect_str_eq(coll_name(log.coll), coll, "%s", path);
        if (ranks_in_name(de->d_name) > 0) cr_expect_eq(log.ranks, ranks_in_name(de->d_name), "%s: %d ranks", path, log.ranks);
        nt_free(&log);
        files++;
    }
    closedir(d);
    return files;
}

Test(nccltests, every_shipped_log_parses_completely) {
    cr_expect_geq(check_log_dir(LOGS "/nccl-tests"), 6);
    cr_expect_geq(check_log_dir(LOGS "/nccl-tests-extra"), 12);
}

Test(nccltests, format_variants) {
    nt_log_t l = th_parse_log("tests/data/nccl/old-format.txt", 0);
    cr_expect_eq(l.nrows, 4);
    cr_expect_eq(l.ranks, 4);
    cr_expect_eq(l.coll, COLL_ALLREDUCE);
    cr_expect_float_eq(l.rows[3].ip_us, 20.90, 1e-9);
    nt_free(&l);
    l = th_parse_log("tests/data/nccl/launcher.txt", 0);
    cr_expect_eq(l.nrows, 3, "NCCL INFO lines between rows are skipped");
    cr_expect_eq(l.ranks, 2, "from the Rank lines");
    nt_free(&l);
    l = th_parse_log("tests/data/nccl/srun-prefix.txt", 8);
    cr_expect_eq(l.coll, COLL_REDUCE_SCATTER, "from the test's name");
    cr_expect_eq(l.nrows, 2);
    nt_free(&l);
    l = th_parse_log("tests/data/nccl/no-ranks.txt", 4);
    cr_expect_eq(l.coll, COLL_BROADCAST, "rooted and not reducing");
    nt_free(&l);
    baton_err_t e = {0};
    nt_log_t bad;
    cr_expect_neq(nt_parse("tests/data/nccl/no-ranks.txt", 0, &bad, &e), 0);
    cr_expect(strstr(e.msg, "--ranks") != NULL, "%s", e.msg);
    err_clear(&e);
    cr_expect_neq(nt_parse("tests/data/nccl/bad-row.txt", 0, &bad, &e), 0);
    cr_expect(strstr(e.msg, "bad-row.txt:4:") != NULL, "%s", e.msg);
    err_clear(&e);
    /* a log cut off mid-row (a killed job) is an error at that row, not a shorter log */
    cr_expect_neq(nt_parse("tests/data/nccl/cut-off.txt", 0, &bad, &e), 0);
    cr_expect(strstr(e.msg, "cut-off.txt:5:") != NULL && strstr(e.msg, "cut off") != NULL, "%s", e.msg);
    err_clear(&e);
    /* sendrecv_perf's table is an all-reduce's (sum, root -1): it read as one, 108 % off */
    cr_expect_neq(nt_parse("tests/data/nccl/sendrecv.txt", 0, &bad, &e), 0);
    cr_expect(strstr(e.msg, "sendrecv.txt:1: a sendrecv_perf log") != NULL, "%s", e.msg);
    err_clear(&e);
    /* two runs appended in one file: the all-gather's rows read as all-reduce
     * rows, and its Rank lines counted twice (4 ranks) */
    cr_expect_neq(nt_parse("tests/data/nccl/two-runs.txt", 0, &bad, &e), 0);
    cr_expect(strstr(e.msg, "two-runs.txt:9: a second run starts here (the first's header is line 2)") != NULL, "%s",
              e.msg);
    err_clear(&e);
    /* -d all: the same sizes again in another type, read as repeats of one series */
    cr_expect_neq(nt_parse("tests/data/nccl/two-types.txt", 0, &bad, &e), 0);
    cr_expect(strstr(e.msg, "two-types.txt:8: this row is half sum, the rows before it float sum") != NULL, "%s", e.msg);
    /* a row whose #wrong counts wrong elements is read, and counted; the old
     * `error` column (a float's relative error: 2e-07 in a good run) is not a count */
    l = th_parse_log("tests/data/nccl/wrong.txt", 0);
    cr_expect_eq(l.nrows, 2);
    cr_expect_eq(l.wrong_rows, 1);
    cr_expect_eq(l.wrong_line, 7);
    nt_free(&l);
    l = th_parse_log("tests/data/nccl/old-format.txt", 0);
    cr_expect_eq(l.wrong_rows, 0);
    nt_free(&l);
}

/* A log that names no test is read off its columns, where all_gather_perf
 * and alltoall_perf print the same (redop none, root -1, a rank's count):
 * read as an all-gather, with a note; -c says which it was, and a log that
 * names its test keeps it (-c against it is an error). */
/* ...unless its file is named for alltoall_perf (Polaris's logs are): then
 * an all-to-all, with a note, and -c allgather still says otherwise. */
Test(nccltests, a_log_named_alltoall_is_one) {
    char *out;
    cr_assert_eq(th_sh("cp tests/data/nccl/unnamed-gather.txt build/run_alltoall_8gpu.txt", &out), 0, "%s", out);
    free(out);
    cr_assert_eq(th_cli("validate -t topologies/hgx-h100.yaml --json --nccl-tests build/run_alltoall_8gpu.txt", &out, 0), 0,
                 "%s", out);
    cr_expect(strstr(out, "read as an alltoall from its file name") && strstr(out, "\"collective\":\"alltoall\""), "%s", out);
    free(out);
    cr_assert_eq(th_cli("validate -t topologies/hgx-h100.yaml --json -c allgather --nccl-tests build/run_alltoall_8gpu.txt",
                        &out, 0), 0, "%s", out);
    cr_expect(!strstr(out, "note:") && strstr(out, "\"collective\":\"allgather\""), "%s", out);
    free(out);
}

Test(nccltests, a_log_naming_no_test_takes_c) {
    char *out;
    cr_assert_eq(th_cli("validate -t topologies/hgx-h100.yaml --json --nccl-tests tests/data/nccl/unnamed-gather.txt", &out, 0),
                 0, "%s", out);
    cr_expect(strstr(out, "note: tests/data/nccl/unnamed-gather.txt names no test") && strstr(out, "\"collective\":\"allgather\""),
              "%s", out);
    free(out);
    cr_assert_eq(th_cli("validate -t topologies/hgx-h100.yaml --json -c alltoall --nccl-tests tests/data/nccl/unnamed-gather.txt",
                        &out, 0), 0, "%s", out);
    cr_expect(!strstr(out, "note:") && strstr(out, "\"collective\":\"alltoall\"") && !strstr(out, "\"allgather\""), "%s", out);
    free(out);
    cr_expect_eq(th_cli("validate -t topologies/hgx-a100.yaml -c alltoall --nccl-tests "
                        "validate/logs/nccl-tests/a100x8_nvswitch_oci_bmgpu48_allreduce.txt", &out, 0), 1);
    cr_expect(strstr(out, "is a log of allreduce (it names its test); -c says alltoall") != NULL, "%s", out);
    free(out);
}

/* NCCL's TUNING lines (NCCL_DEBUG_SUBSYS=TUNING) say what each call ran on:
 * the row whose count x element is the line's nBytes (a rank's part for an
 * all-gather), the first line where later ones for the same call disagree.
 * A real run prints them between a row's columns, even on its line: the
 * row is put back together;
 * Send lines are not a collective's; a line baton cannot follow (a newer
 * NCCL's algorithm) is counted for a warning, its size left to -a nccl. */
Test(nccltests, tuning_lines_say_what_nccl_ran) {
    nt_log_t l = th_parse_log("tests/data/nccl/tuning-allreduce.txt", 0);
    cr_expect_eq(l.nrows, 31);
    cr_expect_eq(l.nplan, 7, "one a call: 128 MiB-8 GiB");
    for (int i = 0; i < l.nrows; i++) {
        const nt_plan_t *p = nt_row_plan(&l, i);
        uint64_t b = l.rows[i].bytes;
        if (b < (128ull << 20)) { cr_expect_null(p, "%llu B has no line", (unsigned long long)b); continue; }
        cr_assert_not_null(p, "%llu B", (unsigned long long)b);
        cr_expect_str_eq(p->algo, b >= (1ull << 30) ? "tree" : "ring", "%llu B", (unsigned long long)b);
        cr_expect_eq(p->proto, PROTO_SIMPLE);
        cr_expect_eq(p->channels, b >= (1ull << 30) ? 4 : 8, "channel{Lo..Hi}={0..3} or {0..7}");
        cr_expect_eq(p->disagree, b == (8ull << 30), "%llu B", (unsigned long long)b);
    }
    nt_free(&l);
    l = th_parse_log("tests/data/nccl/tuning-allgather.txt", 0);
    cr_expect_eq(l.coll, COLL_ALLGATHER);
    cr_expect_eq(l.nplan, 3, "the Send line is not an all-gather's");
    const nt_plan_t *p = nt_row_plan(&l, 2);
    cr_assert_not_null(p);
    cr_expect_eq(p->bytes, 524288, "the 1 MiB row: a rank's 131072 floats");
    cr_expect_str_eq(p->algo, "ring");
    cr_expect_eq(p->proto, PROTO_SIMPLE);
    cr_expect_eq(p->channels, 2);
    cr_expect_eq(nt_row_plan(&l, 1)->proto, PROTO_LL128);
    cr_expect_str_eq(nt_row_plan(&l, 0)->algo, "ring", "the comment quoting a TREE line is not one");
    cr_expect_eq(nt_row_plan(&l, 0)->disagree, 0);
    nt_free(&l);
    l = th_parse_log("tests/data/nccl/tuning-interleaved.txt", 0);  /* as a run prints it: rows cut apart */
    cr_expect_eq(l.nrows, 3);
    cr_expect_eq(l.ranks, 8);
    cr_expect_eq(l.rows[0].bytes, 256);
    cr_expect_float_eq(l.rows[0].oop_us, 62.40, 1e-9);
    cr_expect_float_eq(l.rows[0].ip_us, 62.05, 1e-9);
    cr_expect_eq(l.rows[0].line, 7, "the line the row starts on");
    cr_expect_float_eq(l.rows[2].ip_us, 63.80, 1e-9);
    cr_expect_str_eq(nt_row_plan(&l, 0)->algo, "tree");
    cr_expect_str_eq(nt_row_plan(&l, 2)->algo, "ring");
    cr_expect_eq(nt_row_plan(&l, 2)->proto, PROTO_LL);
    nt_free(&l);
    baton_err_t cut = {0};
    nt_log_t killed;
    cr_expect_neq(nt_parse("tests/data/nccl/tuning-cut.txt", 0, &killed, &cut), 0, "a row cut off for good");
    cr_expect(strstr(cut.msg, "tuning-cut.txt:10:") && strstr(cut.msg, "cut off"), "%s", cut.msg);
    l = th_parse_log("tests/data/nccl/tuning-numbered.txt", 0);     /* NCCL 2.20's: numbers, no collective */
    cr_expect_str_eq(l.nccl_version, "2.20.3", "nccl-tests' nccl-library=22003");
    cr_expect_eq(l.nplan, 3);
    cr_expect_str_eq(nt_row_plan(&l, 0)->algo, "tree");
    cr_expect_eq(nt_row_plan(&l, 0)->proto, PROTO_LL128);
    cr_expect_eq(nt_row_plan(&l, 0)->channels, 0);
    cr_expect_str_eq(nt_row_plan(&l, 2)->algo, "ring");
    cr_expect_eq(nt_row_plan(&l, 2)->proto, PROTO_SIMPLE);
    cr_expect_null(nt_row_plan(&l, 3));
    nt_free(&l);
    l = th_parse_log("tests/data/nccl/tuning-alltoall.txt", 0);     /* sends and receives: no collective's plan */
    cr_expect_eq(l.coll, COLL_ALLTOALL);
    cr_expect_null(nt_row_plan(&l, 0), "NCCL's nBytes 512 is the 1 KiB row's count x 4, yet no plan");
    nt_free(&l);
    l = th_parse_log("tests/data/nccl/tuning-unknown.txt", 0);      /* a newer NCCL's algorithm: counted, not followed */
    cr_expect_eq(l.nplan, 1);
    cr_expect_eq(l.tuning_skipped, 1);
    cr_expect_eq(l.tuning_skipped_line, 7);
    cr_expect(strstr(l.tuning_skipped_why, "'HYPERCUBE'") != NULL, "%s", l.tuning_skipped_why);
    cr_expect_null(nt_row_plan(&l, 1));
    nt_free(&l);
}

/* The NCCL version a log states: NCCL's own line (with its CUDA), which
 * wins over nccl-tests' library number; nothing where neither is printed. */
Test(nccltests, the_nccl_version_a_log_states) {
    const char *cases[][2] = {
        {LOGS "/nccl-tests-extra/a100x16_2node_p4d_efa_awsefaeks_allreduce.txt", "2.9.9+cuda11.2"},
        {LOGS "/nccl-tests-extra/h200x16_2node_singlenic_schmaustech_allreduce.txt", "2.27.3+cuda12.9"},
        {LOGS "/nccl-tests-extra/h200x16_2node_bf3roce8x400_schmaustech_allreduce.txt", "2.30.4+cuda13.2"},
        {SHARED "/a100x8_nvswitch_oci_bmgpu48_allreduce.txt", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        nt_log_t l = th_parse_log(cases[i][0], 0);
        cr_expect_str_eq(l.nccl_version, cases[i][1], "%s", cases[i][0]);
        nt_free(&l);
    }
}


/* Write text to path whole (a test's input). */
static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    cr_assert_eq(fclose(f), 0, "%s", path);
}

/* `baton ARGS --format nccl-tests` written to path and read back. */
static nt_log_t predicted_log(const char *args, const char *path) {
    char cmd[512], *out;
    snprintf(cmd, sizeof cmd, "%s --format nccl-tests", args);
    cr_assert_eq(th_cli(cmd, &out, 1), 0, "%s", out);
    write_text(path, out);
    free(out);
    return th_parse_log(path, 0);
}

/* `baton ARGS -s BYTES --json`'s answer (free it). */
static char *asked_alone(const char *args, uint64_t bytes) {
    char cmd[512], *out;
    snprintf(cmd, sizeof cmd, "%s -s %llu --json", args, (unsigned long long)bytes);
    cr_assert_eq(th_cli(cmd, &out, 1), 0, "%s", out);
    return out;
}

/* sim/predict --sizes --format nccl-tests writes nccl-tests' own layout: it
 * reads back as a log with the rank count and one row per size, and each
 * row's time is what the same question asked alone answers: its time, or
 * where predict names sim's answer (a small call: one_answer.md), that. */
Test(nccltests, predict_sizes_in_nccl_tests_layout) {
    char *out;
    nt_log_t log = predicted_log("predict -t topologies/dgx1-v100.yaml -c allreduce -a nccl --sizes 8:128MiB:x16",
                                 "build/predicted.log");
    cr_expect_eq(log.ranks, 8);
    cr_expect_eq(log.coll, COLL_ALLREDUCE);
    cr_assert_eq(log.nrows, 7);
    for (int i = 0; i < log.nrows; i++) {
        out = asked_alone("predict -t topologies/dgx1-v100.yaml -c allreduce -a nccl", log.rows[i].bytes);
        const char *pick = strstr(out, "\"simulator_pick\":");
        double t = -1;
        sscanf(strstr(pick ? pick : out, "\"time_s\":") + 9, "%lf", &t);
        cr_expect_float_eq(log.rows[i].oop_us, t * 1e6, 1e-4 + 1e-6 * t * 1e6, "%llu B", (unsigned long long)log.rows[i].bytes);
        free(out);
    }
    nt_free(&log);
}

/* Where predict's formula is approximate and its check simulates beyond
 * the band, the table says to quote the simulator; the nccl-tests layout
 * then carries the simulator's time, not the formula's (2 x 8 A100
 * all-gather: 5.13 ms by formula, 5.85 simulated at 1 GiB). */
Test(nccltests, predict_log_quotes_the_simulator_beyond_the_band) {
    char *out;
    nt_log_t log = predicted_log("predict -t cluster-a100 --set nodes=2 -c allgather --sizes 64MiB,1GiB", "build/quoted.log");
    cr_assert_eq(log.nrows, 2);
    for (int i = 0; i < log.nrows; i++) {
        out = asked_alone("predict -t cluster-a100 --set nodes=2 -c allgather", log.rows[i].bytes);
        cr_assert(strstr(out, "\"beyond_band\":true") != NULL, "%s", out);
        double sim = th_json_num(out, "simulated_time_s"), formula = th_json_num(out, "time_s");
        cr_expect_float_eq(log.rows[i].oop_us, sim * 1e6, 1e-4 + 1e-6 * sim * 1e6, "%llu B: formula %g us",
                           (unsigned long long)log.rows[i].bytes, formula * 1e6);
        free(out);
    }
    nt_free(&log);
}

/* predict -g N is nccl-tests' -g N: one host thread starts the call on N
 * GPUs in turn, each after the first adding the machine's launch cost
 * (linear in N - 1, reported as launch_s); its nccl-tests layout says nGpus
 * N, and validate, reading that back, predicts the same times. Read as one
 * GPU a thread, the small sizes are off by the launches. A -g that does not
 * divide the ranks is refused. */
static double predict_g(const char *g, const char *key) {
    char args[160], *out;
    snprintf(args, sizeof args, "predict -t topologies/hgx-a100.yaml -c allreduce -a nccl -s 8 --json %s", g);
    cr_assert_eq(th_cli(args, &out, 1), 0, "%s", out);
    double v = strstr(out, key) ? th_json_num(out, key) : 0;
    free(out);
    return v;
}

Test(nccltests, predict_g_is_nccl_tests_gpus_per_thread) {
    double one = predict_g("", "time_s"), two = predict_g("-g 2", "launch_s"), eight = predict_g("-g 8", "launch_s");
    cr_expect_eq(predict_g("", "launch_s"), 0);
    cr_expect_gt(two, 0);
    cr_expect_float_eq(eight, 7 * two, 1e-12);
    cr_expect_float_eq(predict_g("-g 8", "time_s"), one + eight, 1e-12);
    char *out, *one_gpu;
    cr_assert_eq(th_cli("predict -t topologies/hgx-a100.yaml -c allreduce -a nccl --sizes 8:64MiB:x8 -g 8 --format nccl-tests",
                        &out, 1), 0, "%s", out);
    char *hdr = strstr(out, "nThread 1 nGpus 8 ");
    cr_assert_not_null(hdr, "%.300s", out);
    write_text("build/g8.log", out);
    memcpy(hdr, "nThread 8 nGpus 1 ", 18);                  /* the same times, read as a GPU a thread */
    write_text("build/g1.log", out);
    free(out);
    cr_assert_eq(th_cli("validate -t topologies/hgx-a100.yaml --json --nccl-tests build/g8.log", &out, 1), 0, "%s", out);
    cr_expect_leq(th_json_num(out, "mape_pct"), 0.001, "%.200s", out);     /* the layout's 4 decimals of a us */
    free(out);
    cr_assert_eq(th_cli("validate -t topologies/hgx-a100.yaml --json --nccl-tests build/g1.log", &one_gpu, 1), 0, "%s", one_gpu);
    cr_expect_gt(th_json_num(one_gpu, "mape_pct"), 5, "%.200s", one_gpu);
    free(one_gpu);
    cr_expect_eq(th_cli("predict -t topologies/hgx-a100.yaml -c allreduce -s 8 -g 3", &out, 0), 2, "%s", out);
    cr_expect(strstr(out, "-g 3 does not divide the 8 ranks") != NULL, "%s", out);
    free(out);
}

/* `baton ARGS` (its stdout) written to path; the header line, malloc'd. */
static char *written_header(const char *args, const char *path) {
    char *out;
    cr_assert_eq(th_cli(args, &out, 1), 0, "%s", out);
    write_text(path, out);
    char *h = strstr(out, "# nThread");
    cr_assert_not_null(h, "%.300s", out);
    char *line = strndup(h, strcspn(h, "\n"));
    free(out);
    return line;
}

/* A log baton writes says the run its rows are: the step the sizes take
 * (x32, an even step, else nccl-tests' default), the host backend's
 * repetitions and its one warm-up, and mpirun -np's split: a process a
 * rank, Rank lines on the machine's nodes, read back at the rank count and
 * hosts it had. Before, every header said step: 2(factor) and iters: 20,
 * and 2 x 8 H100 was "nThread 16 nGpus 1" (16 threads of one process). */
Test(nccltests, a_written_header_says_the_run_its_rows_are) {
    char *h = written_header("expect -t cluster-h100 --sizes 1KiB:1GiB:x32 --format nccl-tests", "build/hdr-expect.log");
    cr_expect(strstr(h, "# nThread 1 nGpus 1 minBytes 1024 maxBytes 1073741824 step: 32(factor) ") != NULL, "%s", h);
    free(h);
    nt_log_t log = th_parse_log("build/hdr-expect.log", 0);
    cr_expect_eq(log.ranks, 16);
    cr_expect_eq(log.hosts, 2);
    cr_expect_eq(log.per_host, 8);
    cr_expect_eq(log.threads, 1);
    cr_expect_eq(log.gpus_per_thread, 1);
    cr_expect(log.step == 32 && log.step_factor, "step %llu", (unsigned long long)log.step);
    nt_free(&log);
    char *out;       /* read back as the machine it was written for: no word of other hosts */
    cr_assert_eq(th_cli("validate -t cluster-h100 --nccl-tests build/hdr-expect.log", &out, 0), 0, "%s", out);
    cr_expect(strstr(out, "16 ranks") && !strstr(out, "is this the machine it ran on"), "%s", out);
    free(out);
    cr_assert_eq(th_cli("doctor -t cluster-h100 --nccl-tests build/hdr-expect.log", &out, 0), 0, "%s", out);
    cr_expect(strstr(out, "(16 ranks)") != NULL, "%s", out);
    free(out);
    cr_assert_eq(th_cli("validate --backend host --ranks 4 --sizes 1KiB:1MiB:x32 --reps 3 --log build/hdr-host.log", &out, 0),
                 0, "%s", out);
    free(out);
    char *text = th_slurp("build/hdr-host.log");
    cr_assert_not_null(text);
    cr_expect(strstr(text, "# nThread 4 nGpus 1 minBytes 1024 maxBytes 1048576 step: 32(factor) warmup iters: 1 iters: 3 ") !=
              NULL, "%.300s", text);
    free(text);
    log = th_parse_log("build/hdr-host.log", 0);
    cr_expect(log.ranks == 4 && log.hosts == 1 && log.iters == 3 && log.warmup_iters == 1, "%d ranks, %d hosts, %d iters",
              log.ranks, log.hosts, log.iters);
    nt_free(&log);
    h = written_header("predict -t hgx-a100 -c allreduce -a nccl --sizes 1MiB,3MiB,5MiB --format nccl-tests", "build/hdr-even.log");
    cr_expect(strstr(h, " step: 2097152(bytes) ") != NULL, "%s", h);
    free(h);
    h = written_header("predict -t hgx-a100 -c allreduce -a nccl --sizes 1MiB,3MiB,1GiB -g 8 --format nccl-tests",
                       "build/hdr-list.log");
    cr_expect(strstr(h, "# nThread 1 nGpus 8 ") && strstr(h, " step: 1048576(bytes) "), "%s", h);
    free(h);
    log = th_parse_log("build/hdr-list.log", 0);
    cr_expect(log.ranks == 8 && log.hosts == 1 && log.gpus_per_thread == 8, "%d ranks, %d hosts", log.ranks, log.hosts);
    nt_free(&log);
}


/* NCCL_ALGO / NCCL_PROTO as NCCL says they were set: NCCL ran only what they
 * leave it, so -a nccl (and --proto auto) pick only among that; the
 * per-function form and exclusions read as NCCL reads them. */
static unsigned env_mask_of(const char *algo, const char *proto, int want_algo, int *unread) {
    char path[] = "/tmp/baton-env-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fprintf(f, "$ ./build/all_reduce_perf -g 2\n# nThread 1 nGpus 2 minBytes 8 maxBytes 8 step: 2(factor)\n");
    if (algo) fprintf(f, "h:1:1 [0] NCCL INFO NCCL_ALGO set by environment to %s\n", algo);
    if (proto) fprintf(f, "h:1:1 [0] NCCL INFO NCCL_PROTO set by environment to %s\n", proto);
    fprintf(f, "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
               "           8             2     float     sum      -1    10.20    0.00    0.00      0    10.10    0.00    0.00      0\n");
    fclose(f);
    nt_log_t l;
    baton_err_t e = {0};
    cr_assert_eq(nt_parse(path, 0, &l, &e), 0, "%s", e.msg);
    unlink(path);
    const nt_env_t *x = want_algo ? &l.env_algo : &l.env_proto;
    unsigned m = x->mask;
    *unread = x->unread;
    nt_free(&l);
    return m;
}

Test(nccltests, environment_lists) {
    int unread;
    cr_expect_eq(env_mask_of("Ring", NULL, 1, &unread), 1u << algo_nccl_index("ring"));
    cr_expect_eq(env_mask_of("tree,NVLSTree", NULL, 1, &unread),
                 (1u << algo_nccl_index("tree")) | (1u << algo_nccl_index("nvls_tree")));
    cr_expect_eq(env_mask_of("allgather:ring;allreduce:nvls", NULL, 1, &unread), 1u << algo_nccl_index("nvls"));
    cr_expect_eq(env_mask_of("allgather:ring", NULL, 1, &unread), 0u, "another collective's: all left");
    cr_expect_eq(env_mask_of(NULL, "^LL128", 0, &unread), (1u << PROTO_LL) | (1u << PROTO_SIMPLE));
    cr_expect_eq(env_mask_of(NULL, "Simple", 0, &unread), 1u << PROTO_SIMPLE);
    cr_expect_eq(env_mask_of("Ring,Hypercube", NULL, 1, &unread), 0u);
    cr_expect_eq(unread, 1, "a name baton does not know: unread, nothing restricted");
}

/* An excerpt that keeps only the last Rank line ("Rank 71 ...") ran on at
 * least 72 ranks: it reads as 72, not 1 (CoreWeave's GB200 rack table). */
Test(nccltests, the_last_rank_line_says_the_rank_count) {
    th_says("validate -t gb200-nvl72 --nccl-tests "
            "validate/logs/nccl-tests-2026/GB200x72_1rack-MNNVL_coreweave-nccl-tests-README_all_reduce.txt", 0,
            "(allreduce on 72 ranks)", 1);
}

/* A time no run gives (not a number, infinite, 0 for bytes moved, beyond
 * 10^12 us) is an error at its row, where it had passed: doctor called a
 * log of NaNs healthy, validate printed "MAPE nan %", and a 0 was dropped
 * unsaid. */
Test(nccltests, times_no_run_gives_are_refused_at_their_row) {
    static const char *bad[] = {"nan", "inf", "-nan", "1e300", "0"};
    for (int i = 0; i < 5; i++) {
        char text[1024], path[64];
        snprintf(path, sizeof path, "/tmp/baton-badtime-%d-%d.txt", (int)getpid(), i);
        snprintf(text, sizeof text,
                 "# nThread 1 nGpus 4 minBytes 8 maxBytes 16 step: 2(factor) warmup iters: 5 iters: 20 validation: 1\n"
                 "       size         count    type   redop     time   algbw   busbw  error     time   algbw   busbw  error\n"
                 "           8             2   float     sum    20.11    0.00    0.00  0e+00    20.05    0.00    0.00  0e+00\n"
                 "          16             4   float     sum    %5s    0.00    0.00  0e+00    20.12    0.00    0.00  0e+00\n", bad[i]);
        write_text(path, text);
        nt_log_t l;
        baton_err_t e = {0};
        char want[160];
        snprintf(want, sizeof want, "%s:4: the time '%s' is not one a run gives", path, bad[i]);
        cr_expect_neq(nt_parse(path, 0, &l, &e), 0, "time %s read", bad[i]);
        cr_expect(strstr(e.msg, want) != NULL, "%s", e.msg);
        remove(path);
    }
}

/* A log whose sizes go back (a second run pasted without its header, a
 * rerun of some sizes appended) or repeat was read whole: validate's MAPE
 * counted those sizes twice and calibrate fitted them twice; a last row cut
 * after its out-of-place columns (9 where the rows before have 13) read as
 * a whole row. Each is an error at its line now, the text log's and the
 * JSON's, in validate and calibrate alike; what nccl-tests itself repeats
 * (0 bytes: a rank's count rounded to none; a size again under a step in
 * bytes, -i) still reads. */
Test(nccltests, sizes_that_go_back_and_rows_cut_short_are_refused_at_their_line) {
    char *out;
    nt_log_t l;
    cr_assert_eq(th_sh("L=validate/logs/nccl-tests/a100x8_nvswitch_oci_bmgpu48_allreduce.txt; "
                       "(head -36 $L; sed -n 30,33p $L; tail -3 $L) > build/nt-back.txt && "
                       "(head -36 $L; sed -n 36p $L) > build/nt-again.txt && "
                       "(head -36 $L; sed -n 37p $L | cut -c1-88) > build/nt-half.txt && "
                       "(head -36 $L; sed -n 37p $L | cut -c1-88; sed -n 38p $L) > build/nt-half-more.txt && "
                       "(head -36 $L; sed -n 18,21p $L; tail -3 $L) > build/nt-cycles.txt && "
                       "sed 's/\"size\":2048,/\"size\":1024,/' tests/data/ntjson/h200x2_all_reduce.json > build/nt-again.json",
                       &out), 0, "%s", out);
    free(out);
    th_says("validate -t hgx-a100 --nccl-tests build/nt-back.txt", 1,
            "build/nt-back.txt:37: the size 262144 bytes is below the row before it's (16777216 bytes, line 36)", 1);
    th_says("calibrate -t hgx-a100 -o build/nt-back.yaml --nccl-tests build/nt-back.txt", 1,
            "build/nt-back.txt:37: the size 262144 bytes is below", 1);
    th_says("validate -t hgx-a100 --nccl-tests build/nt-again.txt", 1,
            "build/nt-again.txt:37: the size 16777216 bytes again (line 36 has it)", 1);
    th_says("validate -t cluster-h200 --set gpus=1 --nccl-tests build/nt-again.json", 1,
            "build/nt-again.json:1: results[1]: the size 1024 bytes again (results[0] has it)", 1);
    /* The last row cut after its out-of-place columns (an NCCL failure on the in-place call prints its
     * words on the next line): left out and said, the rows before it read; with rows after it, refused. */
    th_says("validate -t hgx-a100 --nccl-tests build/nt-half.txt", 0,
            "build/nt-half.txt:37: the last row stops after its out-of-place columns (the run was cut off there): left out", 1);
    th_says("validate -t hgx-a100 --nccl-tests build/nt-half.txt", 0, "32 MiB", 0);
    th_says("validate -t hgx-a100 --nccl-tests build/nt-half-more.txt", 1,
            "build/nt-half-more.txt:37: this row has 9 columns, the rows before it 13, and rows follow it", 1);
    th_says("calibrate -t hgx-a100 -o build/nt-half.yaml --nccl-tests build/nt-half-more.txt", 1,
            "build/nt-half-more.txt:37: this row has 9 columns", 1);
    /* Back at the first row's size: a second sweep (nccl-tests -N; -r -1's next root), the first read. */
    th_says("validate -t hgx-a100 --nccl-tests build/nt-cycles.txt", 0,
            "build/nt-cycles.txt:37: the sizes start again here: a second sweep (nccl-tests -N", 1);
    l = th_parse_log("build/nt-cycles.txt", 0);
    cr_expect_eq(l.nrows, 19, "the first sweep, 64 B to 16 MiB, once");
    cr_expect_eq(l.cycle_line, 37);
    nt_free(&l);
    l = th_parse_log(LOGS "/nccl-tests-scale/polaris_nccl_2_21_n8_alltoall_setup5.txt", 0);
    cr_expect_eq(l.rows[0].bytes, 0u, "0 bytes five times running, as nccl-tests prints them");
    nt_free(&l);
    write_text("build/nt-step-bytes.txt",
               "# nThread 1 nGpus 8 minBytes 32 maxBytes 64 step: 16(bytes) warmup iters: 5 iters: 20 validation: 1\n"
               "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
               "          32             1     float    none      -1    10.00    0.00    0.00      0    10.00    0.00    0.00      0\n"
               "          32             1     float    none      -1    10.10    0.00    0.00      0    10.10    0.00    0.00      0\n"
               "          64             2     float    none      -1    10.20    0.00    0.00      0    10.20    0.00    0.00      0\n");
    l = th_parse_log("build/nt-step-bytes.txt", 0);
    cr_expect_eq(l.nrows, 3, "-i 16 on 8 ranks: 32 and 48 bytes both round to 32");
    nt_free(&l);
}

/* A log with no Rank lines whose header says nThread 1 nGpus 1 is one
 * process of an MPI job (one a GPU): it read as 1 rank, every prediction
 * 0 s, MAPE 100 %, exit 0; JSON without `devices` the same. Its rank count
 * is unknown now: the machine's, with the warning validate --help promises,
 * in validate, calibrate and doctor alike; the reader alone asks for one. */
Test(nccltests, a_one_process_header_without_rank_lines_says_no_rank_count) {
    char *out;
    cr_assert_eq(th_sh("grep -v 'Rank ' validate/logs/nccl-tests-2026/"
                       "H200x2_2nodes-1GPU-1NIC-GKE-gIB_dranet-mpi-operator-doc_all_reduce.txt > build/nt-norank.txt && "
                       "sed 's/,\"devices\":\\[[^]]*\\]//' tests/data/ntjson/h200x2_all_reduce.json > build/nt-nodev.json",
                       &out), 0, "%s", out);
    free(out);
    const char *m = "-t cluster-h200 --set gpus=1";
    const char *said = "does not say how many ranks ran (no Rank lines, and its header's nThread 1 nGpus 1 is one "
                       "process's";
    char cmd[256];
    snprintf(cmd, sizeof cmd, "validate %s --nccl-tests build/nt-norank.txt", m);
    th_says(cmd, 0, said, 1);
    th_says(cmd, 0, "(allreduce on 2 ranks)", 1);
    th_says(cmd, 0, "-100.0%", 0);
    snprintf(cmd, sizeof cmd, "validate %s --nccl-tests build/nt-nodev.json", m);
    th_says(cmd, 0, "does not say how many ranks ran (no config.devices, and its nthreads 1 x ngpus 1", 1);
    th_says(cmd, 0, "(allreduce on 2 ranks)", 1);
    snprintf(cmd, sizeof cmd, "calibrate %s -o build/nt-norank.yaml --nccl-tests build/nt-norank.txt", m);
    th_says(cmd, 0, said, 1);
    snprintf(cmd, sizeof cmd, "doctor %s --nccl-tests build/nt-norank.txt", m);
    cr_expect_neq(th_cli(cmd, &out, 0), 1, "%s", out);
    cr_expect(strstr(out, said) != NULL && strstr(out, "taken as cluster-h200's 2") != NULL, "%s", out);
    free(out);
    nt_log_t l;
    baton_err_t e = {0};
    cr_expect_neq(nt_parse("build/nt-norank.txt", 0, &l, &e), 0, "read as 1 rank");
    cr_expect(strstr(e.msg, "does not say how many ranks ran") != NULL, "%s", e.msg);
    l = th_parse_log("tests/data/nccl/old-format.txt", 0);
    cr_expect_eq(l.ranks, 4, "nThread 1 nGpus 4 without Rank lines: one process of 4 GPUs, as before");
    nt_free(&l);
}
