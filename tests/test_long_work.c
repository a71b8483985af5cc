/* test_long_work.c - long runs: the progress line (util/progress.h) and the
 * memory estimate that refuses a run which cannot fit (sim/engine/footprint.h).
 * No test here depends on how fast the machine is: the line is forced
 * (BATON_PROGRESS=1, drawn from the first report), and the estimates are
 * compared with what the engine counts, not with a clock. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../algorithms/algo.h"
#include "../sim/engine/engine.h"
#include "../sim/engine/footprint.h"
#include "../util/progress.h"
#include "helpers.h"

/* --- when the line is drawn ------------------------------------------- */

Test(long, progress_is_shown_on_a_terminal_only_and_never_beside_json) {
    /*                    tty json no_env force_env */
    cr_expect_eq(progress_wanted(1, 0, NULL, NULL), 1, "a terminal: after a while");
    cr_expect_eq(progress_wanted(0, 0, NULL, NULL), 0, "a pipe or a file: never");
    cr_expect_eq(progress_wanted(1, 1, NULL, NULL), 0, "--json: never");
    cr_expect_eq(progress_wanted(1, 0, "1", NULL), 0, "BATON_NO_PROGRESS=1: never");
    cr_expect_eq(progress_wanted(1, 0, "0", NULL), 1, "BATON_NO_PROGRESS=0 is not set");
    cr_expect_eq(progress_wanted(1, 0, "", NULL), 1, "BATON_NO_PROGRESS= is not set");
    cr_expect_eq(progress_wanted(0, 0, NULL, "1"), 2, "BATON_PROGRESS=1 forces it, from the start");
    cr_expect_eq(progress_wanted(0, 0, NULL, "0"), 0, "BATON_PROGRESS=0 does not");
    cr_expect_eq(progress_wanted(0, 1, NULL, "1"), 0, "not even forced beside --json");
    cr_expect_eq(progress_wanted(1, 0, "1", "1"), 0, "BATON_NO_PROGRESS wins");
}

/* The line's figures from what it is told: 25 of 100 messages after 2 s of
 * the first of three runs is a run of 8 s, so 6 s of it and 16 s of the
 * two runs to come are left. */
Test(long, progress_line_says_how_far_and_how_long_is_left) {
    FILE *f = tmpfile();
    char buf[256];
    cr_assert(f);
    progress_begin(f, 2);
    cr_assert(progress_on());
    progress_run("ring LL", 1, 3);
    progress_engine(131072, 25, 100, 1.5e-3, 2.0);
    progress_format(buf, sizeof buf);
    cr_expect(strstr(buf, "ring LL (1/3)"), "%s", buf);
    cr_expect(strstr(buf, "131 k events"), "%s", buf);
    cr_expect(strstr(buf, "25 of ~100 messages (25 %)"), "%s", buf);
    cr_expect(strstr(buf, "1.5 ms simulated"), "%s", buf);
    cr_expect(strstr(buf, "~22 s left"), "%s", buf);
    progress_stage("row", 1, 4);                 /* an outer loop: its item, and a fresh run */
    progress_format(buf, sizeof buf);
    cr_expect(strstr(buf, "row 2/4"), "%s", buf);
    cr_expect(strstr(buf, "events") == NULL && strstr(buf, "ring LL") == NULL, "%s", buf);
    progress_end();
    cr_expect_not(progress_on());
    long n = ftell(f);
    char *text = calloc((size_t)n + 1, 1);
    rewind(f);
    cr_assert_eq(fread(text, 1, (size_t)n, f), (size_t)n);
    const char *first = "\rbaton: ring LL (1/3), 25 of ~100 messages (25 %), ~22 s left, 131 k events, 1.5 ms "
                        "simulated\033[K";
    cr_expect_eq(strncmp(text, first, strlen(first)), 0, "drawn at once when forced: %s", text);
    cr_expect(n >= 4 && strcmp(text + n - 4, "\r\033[K") == 0, "cleared at the end");
    free(text);
    fclose(f);
}

Test(long, progress_off_draws_nothing) {
    FILE *f = tmpfile();
    cr_assert(f);
    progress_begin(f, 0);
    cr_expect_not(progress_on());
    progress_stage("row", 0, 4);
    progress_engine(65536, 10, 100, 1e-3, 1.0);
    progress_end();
    cr_expect_eq(ftell(f), 0);
    fclose(f);
}

/* --- the CLI: the line on stderr, stdout unchanged ---------------------- */

/* `baton ARGS` with environment ENV: stdout (returned) and stderr (*err). */
static char *run(const char *env, const char *args, char **err, int *rc) {
    const char *bin = getenv("BATON_BIN") ? getenv("BATON_BIN") : "build/baton";
    char cmd[2048], path[] = "/tmp/baton-long-XXXXXX", *out;
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    close(fd);
    snprintf(cmd, sizeof cmd, "env -u BATON_PROGRESS -u BATON_NO_PROGRESS -u BATON_MEM_LIMIT %s %s %s 2>%s",
             env, bin, args, path);
    *rc = th_sh(cmd, &out);
    *err = th_slurp(path);
    unlink(path);
    cr_assert(out && *err);
    return out;
}

/* A run of 390,144 events: the engine reports five times. */
#define LONG_SIM "sim -t cluster-h100 --set nodes=16 -c allreduce -a ring -s 1GiB --no-symmetric --proto Simple"

Test(long, forced_progress_goes_to_stderr_and_leaves_stdout_as_it_was) {
    char *err0, *err1, *err2, *err3;
    int rc;
    char *plain = run("", LONG_SIM, &err0, &rc);
    cr_assert_eq(rc, 0, "%s", err0);
    cr_expect_str_eq(err0, "", "not a terminal: no line");
    char *forced = run("BATON_PROGRESS=1", LONG_SIM, &err1, &rc);
    cr_assert_eq(rc, 0, "%s", err1);
    cr_expect_str_eq(forced, plain, "stdout is the same byte for byte");
    cr_expect_eq(strncmp(err1, "\rbaton: ring Simple, ", 21), 0, "%s", err1);
    cr_expect(strstr(err1, " of ~260 k messages ("), "the schedule's messages, estimated before: %s", err1);
    cr_expect(strstr(err1, " left, 65.5 k events, ") && strstr(err1, " simulated\033[K"), "the first tick: %s", err1);
    size_t n = strlen(err1);
    cr_expect(n >= 4 && strcmp(err1 + n - 4, "\r\033[K") == 0, "the line is cleared at the end");
    char *quiet = run("BATON_PROGRESS=1 BATON_NO_PROGRESS=1", LONG_SIM, &err2, &rc);
    cr_expect_str_eq(err2, "", "BATON_NO_PROGRESS=1");
    cr_expect_str_eq(quiet, plain);
    char *json = run("BATON_PROGRESS=1", LONG_SIM " --json", &err3, &rc);
    cr_expect_eq(rc, 0);
    cr_expect_str_eq(err3, "", "never beside --json");
    cr_expect_eq(json[0], '{');
    free(plain), free(forced), free(quiet), free(json);
    free(err0), free(err1), free(err2), free(err3);
}

/* select says which row it is on; sweep which point (over worker processes
 * too); neither changes what they print. */
Test(long, select_and_sweep_say_their_row_and_point) {
    static const char *const cases[][2] = {
        {"select -t hgx-h100 -c allreduce --sizes 1KiB,1MiB,1GiB", "\rbaton: row 1/3"},
        {"sweep -t hgx-h100 -c allreduce --set nvlink_gbps=300,450 --sizes 1MiB,1GiB --model des", "\rbaton: point 1/4"},
    };
    const char *jobs[] = {"BATON_JOBS=1", "BATON_JOBS=2"};
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            char *e0, *e1, env[64];
            int rc0, rc1;
            snprintf(env, sizeof env, "%s BATON_PROGRESS=1", jobs[j]);
            char *plain = run(jobs[j], cases[i][0], &e0, &rc0), *forced = run(env, cases[i][0], &e1, &rc1);
            cr_expect_eq(rc0, 0, "%s", e0);
            cr_expect_eq(rc1, 0, "%s", e1);
            cr_expect_str_eq(forced, plain, "%s, %s: stdout", cases[i][0], jobs[j]);
            cr_expect_str_eq(e0, "", "%s: not a terminal", cases[i][0]);
            cr_expect(strstr(e1, cases[i][1]), "%s, %s: %s", cases[i][0], jobs[j], e1);
            free(plain), free(forced), free(e0), free(e1);
        }
}

/* --- what a run will take ------------------------------------------------ */

static int *seen_pairs;                     /* p x p: a message went from src to dst */
static int seen_p;
static void mark(void *ctx, const engine_msg_t *m) {
    (void)ctx;
    seen_pairs[m->src * seen_p + m->dst] = 1;
}

/* Up to FOOTPRINT_SAMPLE ranks every program is read: the messages and the
 * distinct (sender, receiver) pairs are exactly the engine's. */
Test(long, footprint_counts_the_engines_messages_and_pairs) {
    static const char *const algos[] = {"ring", "rd", "tree", "rabenseifner", "dbtree", "direct"};
    const int ps[] = {8, 12, 16};
    for (int k = 0; k < 3; k++)
        for (size_t i = 0; i < sizeof algos / sizeof *algos; i++) {
            int p = ps[k];
            const algo_t *a = algo_find(COLL_ALLREDUCE, algos[i]);
            topo_t *t = th_star(p, 100e9, 1e-6, 1, 1e12);
            sched_t s;
            baton_err_t e = {0};
            cr_assert(a && t);
            if (algo_build(a, p, 1 << 20, NULL, &s, &e) < 0) { topo_free(t); continue; }   /* not for p */
            seen_p = p;
            seen_pairs = calloc((size_t)p * p, sizeof *seen_pairs);
            engine_opts_t o = {.on_msg = mark};
            engine_result_t r;
            cr_assert_eq(engine_run(&s, t, &o, &r, &e), 0, "%s: %s", algos[i], e.msg);
            int pairs = 0;
            for (int x = 0; x < p * p; x++) pairs += seen_pairs[x];
            footprint_t f;
            footprint_sample(&s, p, &f);
            cr_expect_eq(f.messages, (double)r.messages, "%s on %d: %g messages, the engine %llu", algos[i], p,
                         f.messages, (unsigned long long)r.messages);
            cr_expect_eq(f.pairs, (double)pairs, "%s on %d: %g pairs, the engine %d", algos[i], p, f.pairs, pairs);
            free(seen_pairs);
            engine_result_free(&r);
            topo_free(t);
        }
}

/* Beyond the sample, a ring's ranks are alike: the estimate is exact. */
Test(long, footprint_samples_a_large_ring) {
    sched_t s;
    baton_err_t e = {0};
    cr_assert_eq(algo_build(algo_find(COLL_ALLREDUCE, "ring"), 4096, 1 << 30, NULL, &s, &e), 0, "%s", e.msg);
    footprint_t f;
    footprint_sample(&s, 4096, &f);
    cr_expect_eq(f.messages, 2.0 * 4095 * 4096);
    cr_expect_eq(f.pairs, 4096.0, "each rank sends to its one successor");
}

/* The engine's state as estimated before the run is at least what it held
 * (engine_result_t.state_bytes), and not wildly more. */
Test(long, engine_state_estimate_covers_what_the_engine_held) {
    static const char *const algos[] = {"ring", "rd", "tree", "rabenseifner", "direct"};
    for (size_t i = 0; i < sizeof algos / sizeof *algos; i++) {
        int p = 256;
        topo_t *t = th_star(p, 100e9, 1e-6, 1, 1e12);
        sched_t s;
        baton_err_t e = {0};
        cr_assert_eq(algo_build(algo_find(COLL_ALLREDUCE, algos[i]), p, 1 << 26, NULL, &s, &e), 0, "%s", e.msg);
        engine_result_t r;
        cr_assert_eq(engine_run(&s, t, NULL, &r, &e), 0, "%s", e.msg);
        uint64_t est = engine_state_estimate(&s, t, p, NULL);
        cr_expect_geq(est, r.state_bytes, "%s: estimated %llu, held %llu", algos[i], (unsigned long long)est,
                      (unsigned long long)r.state_bytes);
        cr_expect_leq(est, 8 * r.state_bytes, "%s: estimated %llu, held %llu", algos[i], (unsigned long long)est,
                      (unsigned long long)r.state_bytes);
        topo_free(t);
    }
}

Test(long, a_run_over_the_memory_limit_is_refused_before_it_starts) {
    topo_t *t = th_star(64, 100e9, 1e-6, 1, 1e12);
    sched_t s;
    baton_err_t e = {0};
    cr_assert_eq(algo_build(algo_find(COLL_ALLREDUCE, "rd"), 64, 1 << 20, NULL, &s, &e), 0, "%s", e.msg);
    footprint_t f;
    footprint_need_t n = {.state = engine_state_estimate(&s, t, 64, NULL)};   /* what engine_run passes, no options */
    footprint_of(&s, t, 64, &n, &f);
    cr_assert_gt(f.bytes, 0);
    char lim[32];
    snprintf(lim, sizeof lim, "%.0f", f.bytes / 2);
    setenv("BATON_MEM_LIMIT", lim, 1);              /* this process only (Criterion runs each test in its own) */
    cr_expect_eq(footprint_available(), (uint64_t)(f.bytes / 2));
    engine_result_t r;
    cr_expect_eq(engine_run(&s, t, NULL, &r, &e), BATON_ENOMEM);
    cr_expect(strstr(e.msg, "rd on 64 ranks needs about ") && strstr(e.msg, " available (BATON_MEM_LIMIT); use "
                                                                           "--symmetric or fewer ranks"), "%s", e.msg);
    snprintf(lim, sizeof lim, "%.0f", f.bytes * 2);
    setenv("BATON_MEM_LIMIT", lim, 1);
    e = (baton_err_t){0};
    cr_expect_eq(engine_run(&s, t, NULL, &r, &e), 0, "twice the estimate is room enough: %s", e.msg);
    unsetenv("BATON_MEM_LIMIT");
    cr_expect_gt(footprint_available(), 0, "the machine's MemAvailable");
    cr_expect_eq(engine_run(&s, t, NULL, &r, &e), 0, "a normal run is not refused: %s", e.msg);
    topo_free(t);
}

Test(long, the_cli_refuses_with_the_estimate_and_exits_non_zero) {
    char *err, *out;
    int rc;
    const char *args = "sim -t cluster-h100 --set nodes=16 -c allreduce -a rd -s 1GiB --no-symmetric";
    out = run("BATON_MEM_LIMIT=100000", args, &err, &rc);
    cr_expect_neq(rc, 0);
    cr_expect_str_eq(out, "");
    cr_expect(strstr(err, "baton sim: rd on 128 ranks needs about ") &&
              strstr(err, "97.7 KiB available (BATON_MEM_LIMIT); use --symmetric or fewer ranks"), "%s", err);
    free(out), free(err);
    out = run("", args, &err, &rc);
    cr_expect_eq(rc, 0, "not refused on this machine: %s", err);
    cr_expect(strstr(out, "time "), "%s", out);
    free(out), free(err);
}
