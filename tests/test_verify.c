/* test_verify.c - every algorithm computes an all-reduce, for many rank
 * counts and byte counts (signature mode), and real values (data mode). */
#include <criterion/criterion.h>

#include "helpers.h"

static const int ps[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 32, 100};
#define NP (int)(sizeof ps / sizeof ps[0])

static void verify_all(const char *algo, verify_mode_t mode, int pmax) {
    for (int i = 0; i < NP && ps[i] <= pmax; i++) {
        int p = ps[i];
        topo_t *t = th_full(p, 10e9, 1e-6, 1, 20e9);
        cr_assert_not_null(t);
        uint64_t ns[] = {0, 1, (uint64_t)p - 1, (uint64_t)p, (uint64_t)p + 1,
                         mode == VERIFY_DATA ? 1003 : 1000003};
        for (int k = 0; k < 6; k++) {
            engine_result_t r;
            baton_err_t e = {0};
            int rc = th_sim(t, algo, ns[k], mode, &r, &e);
            cr_assert_eq(rc, 0, "%s p=%d n=%llu: %s", algo, p, (unsigned long long)ns[k], e.msg);
            cr_assert_eq(r.verified, 1);
        }
        topo_free(t);
    }
}

Test(verify, ring_signature) { verify_all("ring", VERIFY_SIGNATURE, 100); }
Test(verify, tree_signature) { verify_all("tree", VERIFY_SIGNATURE, 100); }
Test(verify, naive_signature) { verify_all("naive", VERIFY_SIGNATURE, 100); }
Test(verify, ring_data) { verify_all("ring", VERIFY_DATA, 17); }
Test(verify, tree_data) { verify_all("tree", VERIFY_DATA, 17); }
Test(verify, naive_data) { verify_all("naive", VERIFY_DATA, 17); }

Test(verify, multiport_star_too) {
    for (int p = 1; p <= 17; p++) {
        topo_t *t = th_star(p, 10e9, 1e-6, 0, 0);
        const char *algos[] = {"ring", "tree", "naive"};
        for (int a = 0; a < 3; a++) {
            engine_result_t r;
            baton_err_t e = {0};
            cr_assert_eq(th_sim(t, algos[a], 1000003, VERIFY_SIGNATURE, &r, &e), 0, "%s", e.msg);
            cr_assert_eq(r.verified, 1);
        }
        topo_free(t);
    }
}

/* A schedule that forgets one contribution must be caught: the ring with
 * rank 1's first reduce turned into a copy. */
static int broken_ring(const sched_t *s, int r, int c, uint32_t pc, sched_op_t *op) {
    if (!s->param[3]) return 0;
    sched_prog_fn real = (sched_prog_fn)(intptr_t)s->param[3];
    int ok = real(s, r, c, pc, op);
    if (ok && r == 1 && pc == 1) op->recv = RECV_COPY;
    return ok;
}

static void run_broken(verify_mode_t mode) {
    topo_t *t = th_full(5, 1e9, 0, 1, 0);
    sched_t s;
    cr_assert_eq(algo_build(&algo_allreduce_ring, 5, 50, NULL, &s, NULL), 0);
    s.param[3] = (int64_t)(intptr_t)s.prog;   /* a slot the ring does not use */
    s.prog = broken_ring;
    engine_opts_t o = {.verify = mode};
    engine_result_t r;
    baton_err_t e = {0};
    cr_expect_eq(engine_run(&s, t, &o, &r, &e), BATON_EVERIFY, "got %d: %s", e.code, e.msg);
    cr_expect_eq(r.verified, 0);
    topo_free(t);
}

Test(verify, catches_a_lost_contribution_signature) { run_broken(VERIFY_SIGNATURE); }
Test(verify, catches_a_lost_contribution_data) { run_broken(VERIFY_DATA); }
