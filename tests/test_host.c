/* test_host.c - the CPU backend (validate/host.h): real threads move and
 * add real bytes, and validate closes the loop on them. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../algorithms/algo.h"
#include "../validate/host.h"
#include "helpers.h"

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
    nt_log_t log = th_parse_log(path, 0);
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
