/* test_closed.c - simulated time equals the closed form where the formula's
 * assumptions hold: a uniform, contention-free machine. */
#include <criterion/criterion.h>
#include <math.h>

#include "helpers.h"

static const char *algos[] = {"ring", "tree", "naive"};

static void expect_close(double sim, double closed, const char *what, int p, uint64_t n) {
    double rel = fabs(sim - closed) / (closed > 0 ? closed : 1);
    cr_expect_leq(rel, 1e-9, "%s p=%d n=%llu: simulated %.17g, closed form %.17g",
                  what, p, (unsigned long long)n, sim, closed);
}

/* alpha 1.5 us, 12.5 GB/s links, reductions at 40 GB/s. */
static void sim_equals_closed(int ports, topo_t *(*make)(int, double, double, int, double)) {
    for (int p = 2; p <= 16; p++) {
        topo_t *t = make(p, 12.5e9, 1.5e-6, ports, 40e9);
        cr_assert_not_null(t);
        topo_params(t)->max_inflight = 32;   /* naive's multi-port form posts p-1 sends at once */
        cost_model_t m;
        cr_assert_eq(topo_cost_model(t, &m, NULL), 0);
        cr_assert_eq(m.ports, ports);
        uint64_t ns[] = {0, (uint64_t)p * 1, (uint64_t)p * 1000, (uint64_t)p * 65536, (uint64_t)p * 3000017};
        for (int a = 0; a < 3; a++)
            for (int k = 0; k < 5; k++) {
                engine_result_t r;
                baton_err_t e = {0};
                cr_assert_eq(th_sim(t, algos[a], ns[k], VERIFY_NONE, &r, &e), 0, "%s", e.msg);
                double closed = algo_find(COLL_ALLREDUCE, algos[a])->cost(&m, p, ns[k], NULL);
                expect_close(r.time_s, closed, algos[a], p, ns[k]);
            }
        topo_free(t);
    }
}

Test(closed_form, single_port_full_mesh) { sim_equals_closed(1, th_full); }
Test(closed_form, multi_port_star) { sim_equals_closed(0, th_star); }

/* The two port models really differ for naive: rank 0's p-1 sends overlap
 * their latencies on a multi-port star, not on a single-port machine. */
Test(closed_form, port_models_differ) {
    cost_model_t one = {.alpha = 1e-6, .beta = 1e-9, .ports = 1}, many = {.alpha = 1e-6, .beta = 1e-9, .ports = 0};
    double a = algo_allreduce_naive.cost(&one, 8, 1000, NULL), b = algo_allreduce_naive.cost(&many, 8, 1000, NULL);
    cr_expect_float_eq(a - b, 6e-6, 1e-15, "six alphas overlapped");
    /* binomial broadcast: equal for powers of two, one alpha less at p = 15 */
    a = algo_allreduce_binomial.cost(&one, 16, 1000, NULL);
    b = algo_allreduce_binomial.cost(&many, 16, 1000, NULL);
    cr_expect_float_eq(a, b, 1e-15);
    a = algo_allreduce_binomial.cost(&one, 15, 1000, NULL);
    b = algo_allreduce_binomial.cost(&many, 15, 1000, NULL);
    cr_expect_float_eq(a - b, 1e-6, 1e-15);
}

/* With fewer send slots than naive's p-1 broadcasts the sends go in waves:
 * the bounded in-flight rule is real, and slower than the formula. */
Test(closed_form, few_slots_are_slower_than_the_multiport_formula) {
    topo_t *t = th_star(16, 12.5e9, 1.5e-6, 0, 0);
    topo_params(t)->max_inflight = 4;
    cost_model_t m;
    cr_assert_eq(topo_cost_model(t, &m, NULL), 0);
    engine_result_t r;
    cr_assert_eq(th_sim(t, "naive", 0, VERIFY_NONE, &r, NULL), 0);
    cr_expect_gt(r.time_s, algo_allreduce_naive.cost(&m, 16, 0, NULL) * (1 + 1e-9));
    topo_free(t);
}

/* When p does not divide n the ring's chunks differ by a byte; the formula
 * with ceil(n/p) is an upper bound and floor(n/p) a lower one. */
Test(closed_form, ring_uneven_chunks_are_bounded) {
    for (int p = 2; p <= 17; p++) {
        topo_t *t = th_full(p, 12.5e9, 1.5e-6, 1, 40e9);
        cost_model_t m;
        cr_assert_eq(topo_cost_model(t, &m, NULL), 0);
        uint64_t ns[] = {1, (uint64_t)p - 1, (uint64_t)p + 1, 1000003};
        for (int k = 0; k < 4; k++) {
            engine_result_t r;
            cr_assert_eq(th_sim(t, "ring", ns[k], VERIFY_NONE, &r, NULL), 0);
            double hi = algo_allreduce_ring.cost(&m, p, ns[k], NULL);
            double lo = algo_allreduce_ring.cost(&m, p, ns[k] / p * p, NULL);
            cr_expect_leq(r.time_s, hi * (1 + 1e-12), "p=%d n=%llu", p, (unsigned long long)ns[k]);
            cr_expect_geq(r.time_s, lo * (1 - 1e-12), "p=%d n=%llu", p, (unsigned long long)ns[k]);
        }
        topo_free(t);
    }
}

Test(closed_form, one_rank_costs_nothing) {
    topo_t *t = th_full(1, 1e9, 1e-6, 1, 0);
    cost_model_t m;
    cr_assert_eq(topo_cost_model(t, &m, NULL), 0);
    for (int a = 0; a < 3; a++) {
        engine_result_t r;
        cr_assert_eq(th_sim(t, algos[a], 12345, VERIFY_SIGNATURE, &r, NULL), 0);
        cr_expect_eq(r.time_s, 0.0);
        cr_expect_eq(r.messages, 0u);
        cr_expect_eq(algo_find(COLL_ALLREDUCE, algos[a])->cost(&m, 1, 12345, NULL), 0.0);
    }
    topo_free(t);
}

/* The story's regimes: tree wins small messages (few rounds), ring wins
 * large ones (little data per rank), on a realistic uniform machine. */
Test(closed_form, tree_wins_small_ring_wins_large) {
    topo_t *t = th_full(64, 25e9, 5e-6, 1, 0);
    engine_result_t rs, ts;
    cr_assert_eq(th_sim(t, "ring", 1024, VERIFY_NONE, &rs, NULL), 0);
    cr_assert_eq(th_sim(t, "tree", 1024, VERIFY_NONE, &ts, NULL), 0);
    cr_expect_lt(ts.time_s, rs.time_s, "1 KiB: tree %g vs ring %g", ts.time_s, rs.time_s);
    cr_assert_eq(th_sim(t, "ring", 256 << 20, VERIFY_NONE, &rs, NULL), 0);
    cr_assert_eq(th_sim(t, "tree", 256 << 20, VERIFY_NONE, &ts, NULL), 0);
    cr_expect_lt(rs.time_s, ts.time_s, "256 MiB: ring %g vs tree %g", rs.time_s, ts.time_s);
    topo_free(t);
}

/* The split trees' O(1) shape (height ceil(lg p), busiest rank 3 or 4 sends
 * from p = 4) is what walking every rank gives, for every p up to 1024 (and
 * the session's one-off run to 40,000 and spot checks to 2^21). */
Test(closed_form, split_tree_shape_formula_equals_the_walk) {
    cr_expect_eq(algo_split_shape_check(1024), 0, "first p where they differ");
}
