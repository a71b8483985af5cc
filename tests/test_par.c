/* test_par.c - the map over worker processes (util/par.c): the same
 * results whatever the number of workers, the serial loop's error, and a
 * worker's death reported rather than hung on. */
#include <criterion/criterion.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../sim/answer/run.h"
#include "../util/par.h"
#include "helpers.h"

typedef struct { double v; int i, square; } item_t;

typedef struct { pid_t parent; int fail_a, fail_b, die_at; } ctx_t;

static int compute(void *ctx, int i, void *out, baton_err_t *e) {
    const ctx_t *c = ctx;
    if (i == c->fail_a || i == c->fail_b) return err_set(e, BATON_EINVAL, "item %d cannot be computed", i);
    if (i == c->die_at && getpid() != c->parent) raise(SIGKILL);
    item_t *it = out;
    *it = (item_t){.v = sin(i * 0.37) * exp(i * 1e-3), .i = i, .square = i * i};
    return 0;
}

Test(par, the_map_is_the_same_whatever_the_workers) {
    enum { N = 101 };
    ctx_t c = {.parent = getpid(), .fail_a = -1, .fail_b = -1, .die_at = -1};
    item_t want[N], got[N];
    memset(want, 0, sizeof want);
    cr_assert_eq(par_map(N, sizeof *want, want, compute, &c, 1, NULL), 0);
    for (int i = 0; i < N; i++) cr_assert_eq(want[i].square, i * i);
    const int jobs[] = {2, 3, 7, 32, 1000};
    for (size_t k = 0; k < sizeof jobs / sizeof *jobs; k++) {
        memset(got, 0xff, sizeof got);
        baton_err_t e = {0};
        cr_assert_eq(par_map(N, sizeof *got, got, compute, &c, jobs[k], &e), 0, "%d jobs: %s", jobs[k], e.msg);
        cr_expect(memcmp(got, want, sizeof want) == 0, "%d jobs: a result differs from the serial loop's", jobs[k]);
    }
    cr_expect_eq(par_map(0, sizeof *got, got, compute, &c, 4, NULL), 0, "no items: nothing to do");
}

/* The serial loop stops at its first failure; in parallel a later item may
 * fail first in time, and the error is still the lowest item's. */
Test(par, the_error_is_the_lowest_failing_items) {
    enum { N = 80 };
    ctx_t c = {.parent = getpid(), .fail_a = 61, .fail_b = 37, .die_at = -1};
    item_t got[N];
    for (int jobs = 1; jobs <= 6; jobs++) {
        baton_err_t e = {0};
        cr_assert_eq(par_map(N, sizeof *got, got, compute, &c, jobs, &e), BATON_EINVAL, "%d jobs", jobs);
        cr_expect_str_eq(e.msg, "item 37 cannot be computed", "%d jobs", jobs);
    }
}

Test(par, a_worker_that_dies_is_an_error_not_a_hang) {
    enum { N = 20 };
    ctx_t c = {.parent = getpid(), .fail_a = -1, .fail_b = -1, .die_at = 11};
    item_t got[N];
    baton_err_t e = {0};
    cr_assert_lt(par_map(N, sizeof *got, got, compute, &c, 3, &e), 0);
    cr_expect(strstr(e.msg, "died of signal 9") != NULL, "%s", e.msg);
}

/* The simulator's fit and validation with one worker and with three: the
 * same table, the same fitted file (but for its name). */
Test(par, the_simulators_fit_is_the_same_over_workers) {
    char *out[2], *file[2];
    setenv("SOURCE_DATE_EPOCH", "1764547200", 1);             /* the record's date, either side of midnight */
    for (int k = 0; k < 2; k++) {
        char cmd[512], path[64];
        snprintf(path, sizeof path, "build/par-%d.yaml", k);
        setenv("BATON_JOBS", k ? "3" : "1", 1);
        snprintf(cmd, sizeof cmd, "calibrate -t topologies/pcie-2gpu.yaml --set p2p=false --model des --json -o %s "
                 "--nccl-tests validate/logs/nccl-tests/rtx2080ti_x2_pcie3_nop2p_allgather.txt", path);
        cr_assert_eq(th_cli(cmd, &out[k], 1), 0, "%s", out[k]);
        file[k] = th_slurp(path);
        cr_assert_not_null(file[k]);
        char *body = strstr(file[k], "\nextends:");
        cr_assert_not_null(body, "%s", file[k]);
        memmove(file[k], body, strlen(body) + 1);             /* past the header that names the file */
    }
    cr_expect(strstr(out[0], "\"rows\":[{") != NULL, "%s", out[0]);
    cr_expect_str_eq(out[0], out[1]);
    cr_expect_str_eq(file[0], file[1]);
    for (int k = 0; k < 2; k++) free(out[k]), free(file[k]);
    char *v[2];
    for (int k = 0; k < 2; k++) {
        setenv("BATON_JOBS", k ? "2" : "1", 1);
        cr_assert_eq(th_cli("validate -t topologies/hgx-a100.yaml --model des --json --nccl-tests "
                            "validate/logs/nccl-tests/a100x8_nvswitch_oci_bmgpu48_allreduce.txt", &v[k], 1), 0, "%s", v[k]);
    }
    cr_expect_str_eq(v[0], v[1]);
    free(v[0]), free(v[1]);
}

/* The shared minimum (par_min): what a worker offers, the others read, the
 * least offered so far; nothing offered reads infinite; a negative or NaN
 * offer is not taken. Offered in the workers of a map, read after it. */
static int offer(void *ctx, int i, void *out, baton_err_t *e) {
    (void)e;
    par_min_offer(ctx, 1.0 + (i * 37 % 11));              /* 1..11, 1 by item 0 */
    *(double *)out = par_min_get(ctx);
    return 0;
}

Test(par, the_shared_minimum_is_the_least_any_worker_offered) {
    par_min_t *m = par_min_new();
    cr_assert(m);
    cr_expect(isinf(par_min_get(m)));
    par_min_offer(m, -1);
    par_min_offer(m, NAN);
    cr_expect(isinf(par_min_get(m)), "a negative or NaN offer was taken");
    double got[40];
    cr_assert_eq(par_map(40, sizeof got[0], got, offer, m, 3, NULL), 0);
    cr_expect_eq(par_min_get(m), 1.0, "the least offered in the workers: %g", par_min_get(m));
    for (int i = 0; i < 40; i++) cr_expect_leq(got[i], 11.0);
    par_min_offer(m, 0.25);
    cr_expect_eq(par_min_get(m), 0.25);
    par_min_offer(m, 0.5);
    cr_expect_eq(par_min_get(m), 0.25);
    par_min_free(m);
}

/* A named row's protocols under --proto auto side by side in workers
 * (run.c, rivals_run: the CLI's sim does it from 4,096 ranks; asked here of
 * smaller runs) answer what they answer one after another, to the digit
 * and event, the row and protocol the same: Polaris's ring where LL's
 * rival gives up on the fastest's time, 32 H100 nodes' nccltree, and a
 * one-port star's ring. */
static void same_side_by_side(const char *path, const char *sets, coll_t c, const char *algo, uint64_t bytes) {
    topo_t *t = th_load(path, sets);
    run_req_t q = {.coll = c, .algo = algo, .bytes = bytes, .proto = RUN_PROTO_AUTO, .symmetric = -1, .jobs = 1};
    run_out_t one, two;
    baton_err_t e = {0};
    cr_assert_eq(run_collective(t, &q, &one, &e), 0, "%s", e.msg);
    q.jobs = 2, q.rivals_work = 1;
    cr_assert_eq(run_collective(t, &q, &two, &e), 0, "%s", e.msg);
    cr_expect(one.algo == two.algo && one.proto == two.proto, "%s %s: %s/%d and %s/%d", path, algo, one.algo->name, one.proto,
              two.algo->name, two.proto);
    cr_expect(one.time_s == two.time_s, "%s %s: %.17g and %.17g", path, algo, one.time_s, two.time_s);
    cr_expect(one.eng.events == two.eng.events && one.eng.messages == two.eng.messages, "%s %s: the winner's run", path, algo);
    cr_expect(one.simulated && two.simulated);
    engine_result_free(&one.eng);
    engine_result_free(&two.eng);
    topo_free(t);
}

Test(par, protocols_side_by_side_answer_as_one_after_another) {
    same_side_by_side("topologies/polaris.yaml", "nodes=64", COLL_ALLREDUCE, "ring", 1 << 30);
    same_side_by_side("topologies/cluster-h100.yaml", "nodes=32", COLL_ALLREDUCE, "nccltree", 256u << 20);
    same_side_by_side("topologies/cluster-h100.yaml", "nodes=4", COLL_ALLGATHER, "ring", 64u << 20);
}
