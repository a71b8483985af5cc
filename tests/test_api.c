/* test_api.c - libbaton's public interface (include/baton.h) answers as the
 * command line does: the same numbers as `baton predict`, `sim`, `select`
 * and `calibrate` for the same question, a log read as it is written, and
 * every failure a code and a sentence (the test process lives on). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../include/baton.h"
#include "helpers.h"

#define A100_LOG "validate/logs/nccl-tests/a100x8_nvswitch_oci_bmgpu48_allreduce.txt"

static baton_machine *load(const char *name, const char *const *sets, int nsets) {
    baton_error err = {0};
    baton_machine *m = baton_machine_load(name, sets, nsets, &err);
    cr_assert_not_null(m, "%s: %s", name, err.message);
    cr_expect_eq(err.code, 0);
    return m;
}

/* The CLI's --json answer to ARGS against the library's r. */
static void same_as_cli(const char *args, const baton_result *r) {
    char *out;
    int rc = th_cli(args, &out, 1);
    cr_assert_eq(rc, 0, "baton %s: %s", args, out);
    double t = th_json_num(out, "time_s"), bus = th_json_num(out, "busbw_GBps"), alg = th_json_num(out, "algbw_GBps");
    cr_expect(fabs(r->time_s - t) <= 1e-12 * t, "%s: library %.17g s, CLI %.17g s", args, r->time_s, t);
    cr_expect(fabs(r->busbw_GBps - bus) <= 1e-12 * bus, "%s: busbw %.17g vs %.17g", args, r->busbw_GBps, bus);
    cr_expect(fabs(r->algbw_GBps - alg) <= 1e-12 * alg, "%s: algbw %.17g vs %.17g", args, r->algbw_GBps, alg);
    char algo[64];
    snprintf(algo, sizeof algo, "\"algorithm\":\"%s\"", r->algo);
    cr_expect(strstr(out, algo) != NULL, "%s: the library ran %s: %s", args, r->algo, out);
    free(out);
}

Test(api, predict_is_baton_predict) {
    const char *sets[] = {"nodes=4"};
    baton_machine *h = load("hgx-h100", NULL, 0), *c = load("cluster-h100", sets, 1);
    cr_expect_str_eq(baton_machine_name(h), "hgx-h100");
    cr_expect_eq(baton_machine_ranks(h), 8);
    cr_expect_eq(baton_machine_ranks(c), 32, "--set nodes=4 took: 4 nodes of 8");
    const char *algos[] = {"ring", "nccl", "auto"};
    const char *sizes[] = {"4KiB", "1GiB"};
    uint64_t bytes[] = {4096, 1ull << 30};
    for (int a = 0; a < 3; a++)
        for (int s = 0; s < 2; s++) {
            baton_call call = {.coll = "allreduce", .algo = algos[a], .bytes = bytes[s]};
            baton_result r;
            baton_error err;
            char args[256];
            cr_assert_eq(baton_predict(h, &call, &r, &err), 0, "%s", err.message);
            cr_expect_eq(r.simulated, 0);
            cr_expect_eq(r.ranks, 8);
            snprintf(args, sizeof args, "predict -t hgx-h100 -c allreduce -a %s -s %s --json", algos[a], sizes[s]);
            same_as_cli(args, &r);
            cr_assert_eq(baton_predict(c, &call, &r, &err), 0, "%s", err.message);
            snprintf(args, sizeof args, "predict -t cluster-h100 --set nodes=4 -c allreduce -a %s -s %s --json", algos[a],
                     sizes[s]);
            same_as_cli(args, &r);
        }
    baton_call proto = {.coll = "allgather", .algo = "ring", .bytes = 1 << 20, .proto = "LL"};
    baton_result r;
    cr_assert_eq(baton_predict(h, &proto, &r, NULL), 0);
    cr_expect_str_eq(r.proto, "LL");
    same_as_cli("predict -t hgx-h100 -c allgather -a ring --proto LL -s 1MiB --json", &r);
    baton_machine_free(h);
    baton_machine_free(c);
}

Test(api, simulate_is_baton_sim) {
    baton_machine *h = load("topologies/hgx-h100.yaml", NULL, 0);
    baton_call call = {.coll = "allreduce", .algo = "ring", .bytes = 64 << 20};
    baton_result r;
    baton_error err;
    cr_assert_eq(baton_simulate(h, &call, &r, &err), 0, "%s", err.message);
    cr_expect_eq(r.simulated, 1);
    same_as_cli("sim -t hgx-h100 -c allreduce -a ring -s 64MiB --json", &r);
    call.algo = "nccl";
    cr_assert_eq(baton_simulate(h, &call, &r, &err), 0, "%s", err.message);
    same_as_cli("sim -t hgx-h100 -c allreduce -a nccl -s 64MiB --json", &r);
    baton_machine_free(h);
}

/* select's CSV row marked winner, against the library's winner. */
Test(api, select_is_baton_select) {
    baton_machine *h = load("hgx-h100", NULL, 0);
    const char *sizes[] = {"8KiB", "1MiB", "256MiB"};
    uint64_t bytes[] = {8192, 1 << 20, 256 << 20};
    for (int i = 0; i < 3; i++) {
        baton_result r;
        baton_error err;
        cr_assert_eq(baton_select(h, "allreduce", bytes[i], &r, &err), 0, "%s", err.message);
        char args[128], *out, algo[32], proto[16], model[16];
        snprintf(args, sizeof args, "select -t hgx-h100 -c allreduce --sizes %s --format csv", sizes[i]);
        cr_assert_eq(th_cli(args, &out, 1), 0, "%s", out);
        int found = 0;
        for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
            double t;
            int winner;
            if (sscanf(line, "allreduce,%*[0-9],%31[^,],%15[^,],%15[^,],%lf,%*[^,],%*[^,],%d", algo, proto, model, &t,
                       &winner) == 5 && winner == 1) {
                found = 1;
                cr_expect_str_eq(r.algo, algo, "%s", sizes[i]);
                cr_expect_str_eq(r.proto, proto, "%s", sizes[i]);
                cr_expect_eq(r.simulated, strcmp(model, "des") == 0, "%s", sizes[i]);
                cr_expect(fabs(r.time_s - t) <= 1e-8 * t, "%s: %.9g vs %.9g", sizes[i], r.time_s, t);
            }
        }
        cr_expect(found, "no winner in baton %s", args);
        free(out);
    }
    baton_machine_free(h);
}

/* Each row as the file has it: its line's size and two times. */
Test(api, log_read_as_written) {
    baton_error err;
    baton_log *l = baton_log_read(A100_LOG, &err);
    cr_assert_not_null(l, "%s", err.message);
    cr_expect_str_eq(baton_log_coll(l), "allreduce");
    cr_expect_eq(baton_log_ranks(l), 8);
    cr_assert_gt(baton_log_nrows(l), 20);
    char *text = th_slurp(A100_LOG);
    cr_assert_not_null(text);
    for (int i = 0; i < baton_log_nrows(l); i++) {
        baton_log_row row;
        cr_assert_eq(baton_log_row_at(l, i, &row), 0);
        const char *at = text;
        for (int k = 1; k < row.line && at; k++) at = strchr(at, '\n') ? strchr(at, '\n') + 1 : NULL;
        cr_assert_not_null(at, "row %d's line %d", i, row.line);
        unsigned long long size;
        double oop, ip;
        cr_assert_eq(sscanf(at, "%llu %*s %*s %*s %*s %lf %*s %*s %*s %lf", &size, &oop, &ip), 3, "line %d", row.line);
        cr_expect_eq(row.bytes, size, "line %d", row.line);
        cr_expect(fabs(row.oop_s - oop * 1e-6) < 1e-12 && fabs(row.ip_s - ip * 1e-6) < 1e-12, "line %d", row.line);
    }
    baton_log_row row;
    cr_expect_eq(baton_log_row_at(l, baton_log_nrows(l), &row), BATON_E_INVAL);
    cr_expect_eq(baton_log_row_at(l, -1, &row), BATON_E_INVAL);
    free(text);
    baton_log_free(l);
}

/* The library's fit is `baton calibrate`'s: the calibrated file the command
 * line writes answers -a nccl as the library's fitted machine does. */
Test(api, calibrate_is_baton_calibrate) {
    char dir[] = "/tmp/baton-api-XXXXXX", cmd[512], *out;
    cr_assert_not_null(mkdtemp(dir));
    snprintf(cmd, sizeof cmd, "calibrate -t hgx-a100 --nccl-tests " A100_LOG " --cv 0 -o %s/cal.yaml", dir);
    cr_assert_eq(th_cli(cmd, &out, 0), 0, "%s", out);
    free(out);
    baton_machine *m = load("hgx-a100", NULL, 0);
    const char *logs[] = {A100_LOG};
    baton_fit fit;
    baton_error err;
    baton_call call = {.coll = "allreduce", .algo = "nccl", .bytes = 1ull << 30};
    baton_result before, r;
    cr_assert_eq(baton_predict(m, &call, &before, &err), 0, "%s", err.message);
    cr_assert_eq(baton_calibrate(m, logs, 1, &fit, &err), 0, "%s", err.message);
    cr_expect_gt(fit.sizes, 20);
    cr_expect(fit.mape_pct >= 0 && fit.mape_pct < fit.mape_before_pct, "%.2f %% after, %.2f %% before", fit.mape_pct,
              fit.mape_before_pct);
    const char *sizes[] = {"1MiB", "8MiB", "64MiB", "1GiB"};
    uint64_t bytes[] = {1 << 20, 8 << 20, 64 << 20, 1ull << 30};
    for (int i = 0; i < 4; i++) {
        call.bytes = bytes[i];
        cr_assert_eq(baton_predict(m, &call, &r, &err), 0, "%s", err.message);
        snprintf(cmd, sizeof cmd, "predict -t %s/cal.yaml -c allreduce -a nccl -s %s --json", dir, sizes[i]);
        same_as_cli(cmd, &r);
    }
    cr_expect(fabs(r.time_s - before.time_s) > 1e-3 * before.time_s, "the fit moved the 1 GiB time");
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_expect_eq(system(cmd), 0);
    baton_machine_free(m);
}

/* Failures: a code and a sentence naming what is wrong, never an exit. */
Test(api, errors_are_codes_and_sentences) {
    baton_error err;
    cr_expect_null(baton_machine_load("no-such-machine", NULL, 0, &err));
    cr_expect_eq(err.code, BATON_E_IO);
    cr_expect(strstr(err.message, "no-such-machine") != NULL, "%s", err.message);
    cr_expect_null(baton_machine_load("tests/data/bad/duplicate.yaml", NULL, 0, &err));
    cr_expect(err.code < 0);
    cr_expect(strstr(err.message, "duplicate.yaml:6:") != NULL, "file and line: %s", err.message);
    cr_expect_null(baton_machine_load("missing/dir.yaml", NULL, 0, &err));
    cr_expect(err.code < 0 && strstr(err.message, "missing/dir.yaml") != NULL, "%s", err.message);
    const char *bad[] = {"nosuch=3"};
    cr_expect_null(baton_machine_load("hgx-h100", bad, 1, &err));
    cr_expect(strstr(err.message, "nosuch") != NULL, "%s", err.message);

    baton_machine *h = load("hgx-h100", NULL, 0);
    baton_result r;
    baton_call call = {.coll = "allredux", .algo = "ring", .bytes = 1024};
    cr_expect_eq(baton_predict(h, &call, &r, &err), BATON_E_INVAL);
    cr_expect(strstr(err.message, "allredux") != NULL && strstr(err.message, "allreduce") != NULL,
              "names it and suggests: %s", err.message);
    call = (baton_call){.coll = "allreduce", .algo = "nosuch", .bytes = 1024};
    cr_expect_lt(baton_predict(h, &call, &r, &err), 0);
    cr_expect(strstr(err.message, "nosuch") != NULL, "%s", err.message);
    call = (baton_call){.coll = "allreduce", .algo = "ring", .bytes = 1024, .proto = "LL64"};
    cr_expect_eq(baton_simulate(h, &call, &r, &err), BATON_E_INVAL);
    cr_expect(strstr(err.message, "LL64") != NULL, "%s", err.message);
    cr_expect_eq(baton_select(h, "nope", 1024, &r, &err), BATON_E_INVAL);
    cr_expect_eq(baton_predict(NULL, &call, &r, &err), BATON_E_INVAL);

    baton_log *cut = baton_log_read("tests/data/nccl/cut-off.txt", &err);
    cr_expect_null(cut, "a cut-off log is refused");
    baton_log_free(cut);
    cr_expect(strstr(err.message, "cut-off.txt") != NULL, "%s", err.message);
    const char *logs[] = {"validate/logs/nccl-tests/a100x16_2node_oci_roce_allreduce.txt"};
    baton_fit fit;
    cr_expect_eq(baton_calibrate(h, logs, 1, &fit, &err), BATON_E_INVAL);
    cr_expect(strstr(err.message, "16 ranks") != NULL, "another rank count: %s", err.message);
    logs[0] = "tests/data/broken/a100x8_wrong_results.txt";           /* as `baton calibrate`: a broken run is refused */
    cr_expect_eq(baton_calibrate(h, logs, 1, &fit, &err), BATON_E_INVAL);
    cr_expect(strstr(err.message, "a100x8_wrong_results.txt:32: #wrong is not 0 in 14 rows") != NULL &&
              strstr(err.message, "doctor calls this run broken") != NULL, "%s", err.message);
    cr_expect_str_eq(baton_strerror(BATON_E_NOMEM), "out of memory");
    char *out;
    cr_assert_eq(th_cli("--version", &out, 1), 0);
    cr_expect(strncmp(out, "baton ", 6) == 0 && strncmp(out + 6, baton_version(), strlen(baton_version())) == 0,
              "the library is %s, the command line %s", baton_version(), out);
    free(out);
    baton_machine_free(h);
    baton_machine_free(NULL);
    baton_log_free(NULL);
}
