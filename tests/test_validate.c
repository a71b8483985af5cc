/* test_validate.c - nccl-tests logs, validation and calibration. */
#include <criterion/criterion.h>
#include <ctype.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../topologies/topo_yaml.h"
#include "../validate/calibrate.h"
#include "../validate/host.h"
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

static nt_log_t parse_ok(const char *path, int ranks) {
    nt_log_t log;
    baton_err_t e = {0};
    cr_assert_eq(nt_parse(path, ranks, &log, &e), 0, "%s", e.msg);
    return log;
}

Test(nccltests, format_variants) {
    nt_log_t l = parse_ok("tests/data/nccl/old-format.txt", 0);
    cr_expect_eq(l.nrows, 4);
    cr_expect_eq(l.ranks, 4);
    cr_expect_eq(l.coll, COLL_ALLREDUCE);
    cr_expect_float_eq(l.rows[3].ip_us, 20.90, 1e-9);
    nt_free(&l);
    l = parse_ok("tests/data/nccl/launcher.txt", 0);
    cr_expect_eq(l.nrows, 3, "NCCL INFO lines between rows are skipped");
    cr_expect_eq(l.ranks, 2, "from the Rank lines");
    nt_free(&l);
    l = parse_ok("tests/data/nccl/srun-prefix.txt", 8);
    cr_expect_eq(l.coll, COLL_REDUCE_SCATTER, "from the test's name");
    cr_expect_eq(l.nrows, 2);
    nt_free(&l);
    l = parse_ok("tests/data/nccl/no-ranks.txt", 4);
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
}

/* A log written by our own model with known scales: calibration finds them
 * (each protocol's own only where that protocol wins some size). */
Test(calibrate, recovers_known_parameters_from_a_synthetic_log) {
    const double truth[5] = {0.8, 1.7, 2.0, 1.5, 0.9};     /* bw, lat, message latency, base, LL128 efficiency */
    baton_err_t e = {0};
    topo_t *t = topo_yaml_load("topologies/hgx-a100.yaml", NULL, 0, &e);
    cr_assert_not_null(t, "%s", e.msg);
    topo_params_t *p = topo_params(t);
    p->bw_scale = truth[0];
    p->lat_scale = truth[1];
    for (int i = 0; i < PROTO_COUNT; i++) { p->proto[i].msg_latency *= truth[2]; p->proto[i].base_latency *= truth[3]; }
    p->proto[PROTO_LL128].efficiency *= truth[4];
    nt_log_t log = {.coll = COLL_ALLREDUCE, .ranks = 8, .type = "float"};
    log.rows = calloc(30, sizeof *log.rows);
    cal_req_t q = {.algo = "ring", .proto = RUN_PROTO_AUTO};
    for (int i = 0; i < 30; i++) {
        cal_sample_t s = {.coll = COLL_ALLREDUCE, .bytes = 8ull << i};
        double time;
        cr_assert_eq(cal_predict(t, &q, &s, &time, NULL, NULL, &e), 0, "%s", e.msg);
        log.rows[log.nrows++] = (nt_row_t){.bytes = s.bytes, .count = s.bytes / 4, .oop_us = time * 1e6, .ip_us = time * 1e6};
    }
    topo_free(t);
    FILE *f = fopen("build/synthetic.log", "w");
    cr_assert_not_null(f);
    cr_assert_eq(nt_write(&log, f), 0);
    fclose(f);
    free(log.rows);
    nt_log_t back = parse_ok("build/synthetic.log", 0);
    cr_expect_eq(back.nrows, 30);
    cal_sample_t *s;
    int n;
    cr_assert_eq(cal_samples(&back, &s, &n, &e), 0);
    t = topo_yaml_load("topologies/hgx-a100.yaml", NULL, 0, &e);
    cal_fit_t fit;
    q.fit_efficiency = 1;
    cr_assert_eq(cal_fit(t, &q, s, n, &fit, &e), 0, "%s", e.msg);
    double got[4] = {fit.bw_scale, fit.lat_scale, fit.msg_lat_scale, fit.base_scale};
    for (int i = 0; i < 4; i++) cr_expect_float_eq(got[i], truth[i], 0.01 * truth[i], "parameter %d: %g, want %g", i, got[i], truth[i]);
    int used[PROTO_COUNT] = {0};
    for (int i = 0; i < n; i++) {
        proto_t pr;
        double time;
        cr_assert_eq(cal_predict(t, &q, &s[i], &time, NULL, &pr, &e), 0, "%s", e.msg);
        used[pr] = 1;
    }
    cr_expect(used[PROTO_LL] && used[PROTO_SIMPLE], "the log spans the protocols");
    if (used[PROTO_LL128]) cr_expect_float_eq(fit.eff_scale[PROTO_LL128], truth[4], 0.01, "LL128 efficiency x %g", fit.eff_scale[PROTO_LL128]);
    cr_expect_float_eq(fit.eff_scale[PROTO_LL], 1, 0.01, "LL efficiency x %g", fit.eff_scale[PROTO_LL]);
    cr_expect_leq(cal_mape(t, &q, s, n, -1, 0, &e), 0.1);
    free(s);
    nt_free(&back);
    topo_free(t);
}

/* On the real 8 x A100 log the fit is good in sample, and a fit on the small
 * and large sizes predicts the middle ones (numbers measured, see the notes). */
Test(calibrate, real_a100_log_fits_and_predicts_held_out_sizes) {
    char *out;
    cr_assert_eq(th_cli("calibrate -t topologies/hgx-a100.yaml --nccl-tests " SHARED "/a100x8_nvswitch_oci_bmgpu48_allreduce.txt "
                        "-o build/cal-test.yaml --json", &out, 1), 0, "%s", out);
    double mape = -1;
    char *m = strstr(out, "\"mape_pct\":");
    cr_assert_not_null(m, "%s", out);
    sscanf(m, "\"mape_pct\":%lf", &mape);
    cr_expect_leq(mape, 5.0, "in-sample MAPE %.2f %%", mape);
    free(out);
    /* the calibrated file is a topology like any other */
    cr_assert_eq(th_cli("sim -t build/cal-test.yaml -c allreduce -a ring -s 1GiB --verify", &out, 1), 0, "%s", out);
    cr_expect(strstr(out, "verified yes") != NULL);
    free(out);
    cr_assert_eq(th_cli("calibrate -t topologies/hgx-a100.yaml --nccl-tests " SHARED "/a100x8_nvswitch_oci_bmgpu48_allreduce.txt "
                        "-o build/cal-test2.yaml --hold-out 1MiB:64MiB --json", &out, 1), 0, "%s", out);
    m = strstr(out, "\"mape_held_out_pct\":");
    cr_assert_not_null(m, "%s", out);
    sscanf(m, "\"mape_held_out_pct\":%lf", &mape);
    cr_expect_leq(mape, 15.0, "held-out MAPE %.2f %%", mape);
    free(out);
}

Test(calibrate, validate_reports_mape_and_refuses_rank_mismatch) {
    char *out;
    cr_assert_eq(th_cli("validate -t topologies/hgx-a100.yaml --nccl-tests " SHARED "/a100x8_nvswitch_oci_bmgpu48_allreduce.txt --json",
                        &out, 1), 0, "%s", out);
    cr_expect(strstr(out, "\"mape_pct\":") && strstr(out, "\"mape_large_pct\":") && strstr(out, "\"predicted_s\":"), "%s", out);
    free(out);
    cr_assert_eq(th_cli("validate -t topologies/hgx-h100.yaml --nccl-tests " SHARED "/a100x16_2node_oci_roce_allreduce.txt", &out, 0), 1);
    cr_expect(strstr(out, "ran on 16 ranks but hgx-h100 has 8") != NULL, "%s", out);
    free(out);
    /* --ranks disagreeing with what a log says is an error, unless forced */
    cr_assert_eq(th_cli("validate -t topologies/hgx-h100.yaml --ranks 8 --nccl-tests " SHARED "/a100x16_2node_oci_roce_allreduce.txt",
                        &out, 0), 1);
    cr_expect(strstr(out, "says it ran on 16 ranks; --ranks 8 disagrees") != NULL, "%s", out);
    free(out);
    cr_assert_eq(th_cli("validate -t topologies/hgx-h100.yaml --ranks 8 --force-ranks --nccl-tests "
                        SHARED "/a100x16_2node_oci_roce_allreduce.txt", &out, 1), 0, "%s", out);
    free(out);
}

/* The CPU backend closes the loop on this machine: real threads move and add
 * real bytes (every result checked, else the command fails), the timings are
 * fitted, and the fit predicts the sizes it did not see. How well it predicts
 * depends on the machine's load, so the figure is a benchmark's
 * (bench/bench_host.sh), never asserted here: this checks the pipeline. */
static void host_loop(int ranks) {
    char args[256], *out;
    snprintf(args, sizeof args, "validate --backend host --ranks %d --sizes 4KiB:4MiB:x2 --reps 5 --hold-out 64KiB:1MiB "
                                "--log build/host-%d.log --json", ranks, ranks);
    cr_assert_eq(th_cli(args, &out, 0), 0, "%s", out);
    double held = -1;
    char *m = strstr(out, "\"mape_held_out_pct\":");
    cr_assert_not_null(m, "%s", out);
    cr_expect_eq(sscanf(m, "\"mape_held_out_pct\":%lf", &held), 1, "%s", m);
    cr_expect(isfinite(held) && held >= 0, "held-out MAPE %g", held);
    free(out);
    char path[64];
    snprintf(path, sizeof path, "build/host-%d.log", ranks);
    nt_log_t log = parse_ok(path, 0);
    cr_expect_eq(log.ranks, ranks, "the log it wrote reads back");
    cr_expect_eq(log.nrows, 11);
    for (int i = 0; i < log.nrows; i++) {
        cr_expect_eq(log.rows[i].bytes, 4096ull << i, "row %d", i);
        cr_expect(log.rows[i].oop_us > 0, "row %d has a time", i);
    }
    nt_free(&log);
}

Test(host, loop_on_2_threads) { host_loop(2); }
Test(host, loop_on_8_threads) { host_loop(8); }

/* Every algorithm runs correctly on real threads (p = 1, 2, 3, 5). */
Test(host, every_algorithm_computes_its_collective) {
    const algo_t *const *rows = algo_all();
    for (int i = 0; rows[i]; i++)
        for (int p = 1; p <= 5; p += p < 3 ? 1 : 2) {
            host_result_t r;
            baton_err_t e = {0};
            int rc = host_run(rows[i], p, 10007, NULL, 1, &r, &e);
            if (rc == BATON_EUNSUP) continue;
            cr_expect_eq(rc, 0, "%s %s p=%d: %s", coll_name(rows[i]->coll), rows[i]->name, p, e.msg);
        }
}

/* With the simulator, calibrate fits each link class apart, as far as the
 * log pins it: a ring's lockstep shows only its slowest link. A log made by
 * the engine (2-channel rings, 2 nodes) on a cluster whose network runs at
 * 0.8x and NVLink at 0.6x the file's numbers, latency 1.7x: the fit finds
 * the network's 0.8 and the latency within 1 %, and keeps NVLink, which the
 * log cannot show, at the file's value instead of anywhere. */
Test(calibrate, simulator_fit_recovers_each_link_class) {
    const char *sets[] = {"nodes=2"};
    baton_err_t e = {0};
    topo_t *t = topo_yaml_load("topologies/cluster-a100.yaml", sets, 1, &e);
    cr_assert_not_null(t, "%s", e.msg);
    cal_req_t q = {.algo = "ring", .proto = PROTO_NONE, .des = 1, .opts = {.channels = 2, .group = 8}};
    for (int l = 0; l < topo_nlinks(t); l += 2) {
        double bw = topo_dlink(t, l)->bw;
        topo_set_link_bw(t, l, bw * (bw == 300e9 ? 0.6 : bw == 25e9 ? 0.8 : 1), NULL);
    }
    topo_params(t)->lat_scale = 1.7;
    cal_sample_t s[10];
    for (int i = 0; i < 10; i++) {
        s[i] = (cal_sample_t){.coll = COLL_ALLREDUCE, .bytes = 128ull << (2 * i)};
        cr_assert_eq(cal_predict(t, &q, &s[i], &s[i].meas_s, NULL, NULL, &e), 0, "%s", e.msg);
    }
    topo_free(t);
    t = topo_yaml_load("topologies/cluster-a100.yaml", sets, 1, &e);
    cal_fit_t fit;
    cr_assert_eq(cal_fit(t, &q, s, 10, &fit, &e), 0, "%s", e.msg);
    char text[1024];
    cal_fit_text(&fit, text, sizeof text);
    cr_log_info("fitted: %s", text);
    cr_assert_eq(fit.nclasses, 3, "NVLink, PCIe and the network");
    for (int k = 0; k < 3; k++) {
        if (fit.class_bw[k] == 25e9) cr_expect_float_eq(fit.class_scale[k], 0.8, 0.008, "network x %g", fit.class_scale[k]);
        if (fit.class_bw[k] == 300e9) cr_expect_float_eq(fit.class_scale[k], 1, 0.05, "NVLink x %g", fit.class_scale[k]);
    }
    cr_expect_float_eq(fit.lat_scale, 1.7, 0.017, "latency x %g", fit.lat_scale);
    cr_expect_leq(cal_mape(t, &q, s, 10, -1, 0, &e), 0.5);
    topo_free(t);
}

/* sim/predict --sizes --format nccl-tests writes nccl-tests' own layout: it
 * reads back as a log with the rank count and one row per size, and each
 * row's time is what the same question asked alone answers. */
Test(nccltests, predict_sizes_in_nccl_tests_layout) {
    char *out;
    cr_assert_eq(th_cli("predict -t topologies/dgx1-v100.yaml -c allreduce -a nccl --sizes 8:128MiB:x16 --format nccl-tests",
                        &out, 1), 0, "%s", out);
    FILE *f = fopen("build/predicted.log", "w");
    cr_assert_not_null(f);
    fputs(out, f);
    fclose(f);
    free(out);
    nt_log_t log = parse_ok("build/predicted.log", 0);
    cr_expect_eq(log.ranks, 8);
    cr_expect_eq(log.coll, COLL_ALLREDUCE);
    cr_assert_eq(log.nrows, 7);
    for (int i = 0; i < log.nrows; i++) {
        char args[256];
        snprintf(args, sizeof args, "predict -t topologies/dgx1-v100.yaml -c allreduce -a nccl -s %llu --json",
                 (unsigned long long)log.rows[i].bytes);
        cr_assert_eq(th_cli(args, &out, 1), 0);
        double t = -1;
        sscanf(strstr(out, "\"time_s\":") + 9, "%lf", &t);
        cr_expect_float_eq(log.rows[i].oop_us, t * 1e6, 1e-4 + 1e-6 * t * 1e6, "%llu B", (unsigned long long)log.rows[i].bytes);
        free(out);
    }
    nt_free(&log);
}
