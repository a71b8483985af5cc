/* test_symmetry.c - the symmetric fast path gives the full simulation's
 * answer wherever sym_find accepts a case, and says why where it does not. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "../sim/answer/run.h"
#include "../sim/engine/symmetry.h"
#include "../topologies/topo_yaml.h"
#include "helpers.h"

/* p ranks on a physical ring: each forwards, links r -> r + 1 only. */
static topo_t *ring_machine(int p) {
    topo_t *t = topo_create("phys-ring");
    th_add_ranks(t, p, "g");
    for (int i = 0; i < p; i++) topo_set_transit(t, i, 1);
    for (int i = 0; i < p && p > 1; i++)
        if (p > 2 || i == 0) topo_add_link(t, i, (i + 1) % p, 25e9, 1e-6, NULL);
    topo_params(t)->ports = 1;
    topo_params(t)->reduce_bw = 60e9;
    if (topo_finalize(t, "test", NULL) < 0) { topo_free(t); return NULL; }
    return t;
}

/* Run a on t both ways; 1 if the fast path applied (and must then agree
 * exactly), 0 if sym_find declined (reason in *why). */
static int compare(topo_t *t, const algo_t *a, uint64_t n, const algo_opts_t *o, int *period, baton_err_t *why) {
    sched_t s;
    baton_err_t e = {0};
    cr_assert_eq(algo_build(a, topo_nranks(t), n, o, &s, &e), 0, "%s: %s", a->name, e.msg);
    sym_t y;
    memset(why, 0, sizeof *why);
    if (sym_find(&s, t, &y, why) < 0) {
        cr_assert_eq(why->code, BATON_EUNSUP, "%s: %s", a->name, why->msg);
        return 0;
    }
    engine_result_t full, fast;
    engine_opts_t so = {.sym = &y};
    cr_assert_eq(engine_run(&s, t, NULL, &full, &e), 0, "%s: %s", a->name, e.msg);
    cr_assert_eq(engine_run(&s, t, &so, &fast, &e), 0, "%s: %s", a->name, e.msg);
    cr_assert(fast.time_s == full.time_s, "%s (%s) on %s, p=%d, n=%llu, G=%d: fast %.17g s, full %.17g s",
              a->name, coll_name(a->coll), topo_name(t), topo_nranks(t), (unsigned long long)n, y.period,
              fast.time_s, full.time_s);
    cr_assert_eq(fast.messages, full.messages, "%s", a->name);
    cr_assert_eq(fast.bytes_moved, full.bytes_moved, "%s", a->name);
    cr_assert_eq(fast.max_rank_msgs, full.max_rank_msgs, "%s", a->name);
    cr_assert_eq(fast.reps, y.period);
    *period = y.period;
    sym_free(&y);
    return 1;
}

static const char *const shiftable[][2] = {
    {"allreduce", "ring"}, {"reducescatter", "ring"}, {"allgather", "ring"}, {"allreduce", "twoshot"},
    {"allreduce", "oneshot"}, {"reducescatter", "pairwise"}, {"allgather", "pairwise"}, {"allgather", "bruck"},
    {"alltoall", "pairwise"},
};

static const algo_t *row(int i) {
    return algo_find((coll_t)coll_parse(shiftable[i][0]), shiftable[i][1]);
}

/* Every shift-invariant algorithm on switches (single- and multi-port) and
 * physical rings of many sizes: wherever the fast path applies it is exact. */
Test(symmetry, equals_the_full_simulation) {
    int ps[] = {2, 3, 5, 7, 8, 16, 100}, applied = 0, declined = 0, period;
    baton_err_t why;
    for (size_t i = 0; i < sizeof ps / sizeof *ps; i++)
        for (int m = 0; m < 3; m++) {
            int p = ps[i];
            topo_t *t = m == 0 ? th_star(p, 50e9, 2e-6, 1, 40e9) : m == 1 ? th_star(p, 50e9, 2e-6, 0, 40e9)
                                                                             : ring_machine(p);
            cr_assert_not_null(t);
            for (size_t k = 0; k < sizeof shiftable / sizeof *shiftable; k++) {
                const algo_t *a = row((int)k);
                if (a == NULL || (strcmp(a->name, "oneshot") == 0 && p > 65)) continue;
                uint64_t n = (uint64_t)p * 2 * 4096 * (a->coll == COLL_ALLTOALL ? p : 1);
                if (compare(t, a, n, NULL, &period, &why)) applied++;
                else declined++;
            }
            topo_free(t);
        }
    cr_expect_geq(applied, 60, "the fast path applied %d times, declined %d", applied, declined);
    cr_log_info("fast path applied %d times, declined %d", applied, declined);
}

/* The cases it is built for: the ring on a switch, one representative, and
 * on a fat-tree, one per host of a leaf. */
Test(symmetry, ring_on_a_switch_and_a_fat_tree) {
    int period;
    baton_err_t why, e = {0};
    topo_t *t = th_star(100, 50e9, 2e-6, 1, 40e9);
    cr_assert(compare(t, algo_find(COLL_ALLREDUCE, "ring"), 100 * 12345, NULL, &period, &why), "%s", why.msg);
    cr_expect_eq(period, 1);
    topo_free(t);
    const char *trees[] = {"tests/data/machines/fattree.yaml", "tests/data/machines/fattree3.yaml"};
    for (int i = 0; i < 2; i++) {
        t = topo_yaml_load(trees[i], NULL, 0, &e);
        cr_assert_not_null(t, "%s", e.msg);
        cr_assert(compare(t, algo_find(COLL_ALLREDUCE, "ring"), 16 * 4096, NULL, &period, &why), "%s: %s", trees[i], why.msg);
        cr_expect(period < 16, "%s: period %d", trees[i], period);
        cr_log_info("%s: ring period %d", trees[i], period);
        topo_free(t);
    }
    /* 8 nodes of 8 GPUs on a rail-optimized fat-tree: one representative node. With 8
     * channels the channels share reduce engines and NVSwitch ports, and the fast path
     * must decline (it once answered 0.4 % slow here) or agree. */
    const char *sets[][2] = {{"nodes=8", "reduce_bw=1100GB/s"}, {"nodes=8", "reduce_bw=0"}, {"nodes=4", "ports=0"}};
    for (int i = 0; i < 3; i++)
        for (int ch = 1; ch <= 8; ch += 7)
            for (int c = 0; c < 2; c++) {
                t = topo_yaml_load("topologies/cluster-h100.yaml", sets[i], 2, &e);
                cr_assert_not_null(t, "%s", e.msg);
                algo_opts_t o = {.channels = ch, .group = 8};
                const algo_t *a = algo_find(c ? COLL_ALLGATHER : COLL_ALLREDUCE, "ring");
                int applied = compare(t, a, (uint64_t)topo_nranks(t) * 8 * 1024, &o, &period, &why);
                if (ch == 1) cr_expect(applied && period == 8, "%s %s: %s", sets[i][0], sets[i][1], why.msg);
                topo_free(t);
            }
}

/* Where it cannot be exact it says why, and the engine refuses what a
 * representative cannot report. */
Test(symmetry, declines_with_a_reason) {
    int period;
    baton_err_t why, e = {0};
    topo_t *t = th_star(8, 50e9, 2e-6, 1, 40e9);
    cr_expect(!compare(t, algo_find(COLL_ALLREDUCE, "rd"), 8 * 4096, NULL, &period, &why));
    cr_expect(strstr(why.msg, "not interchangeable") != NULL, "%s", why.msg);
    cr_expect(!compare(t, algo_find(COLL_ALLREDUCE, "ring"), 8 * 4096 + 3, NULL, &period, &why));
    cr_expect(strstr(why.msg, "equal chunks") != NULL, "%s", why.msg);
    sched_t s;
    sym_t y;
    cr_assert_eq(algo_build(algo_find(COLL_ALLREDUCE, "ring"), 8, 8 * 4096, NULL, &s, &e), 0);
    cr_assert_eq(sym_find(&s, t, &y, &e), 0, "%s", e.msg);
    engine_opts_t o = {.sym = &y, .verify = VERIFY_DATA};
    engine_result_t r;
    cr_expect_eq(engine_run(&s, t, &o, &r, &e), BATON_EUNSUP);
    cr_expect(strstr(e.msg, "representatives only") != NULL, "%s", e.msg);
    sym_free(&y);
    topo_free(t);
    /* two hops on a physical ring: each link carries two ranks' sends */
    t = ring_machine(8);
    cr_expect(!compare(t, algo_find(COLL_ALLREDUCE, "twoshot"), 8 * 4096, NULL, &period, &why));
    cr_expect(strstr(why.msg, "carries sends of rank") != NULL || strstr(why.msg, "receives from ranks") != NULL,
              "%s", why.msg);
    topo_free(t);
}

/* Without --symmetric, run_collective takes the fast path where it is
 * proven on 64 ranks or more and nothing needs every rank: the same time,
 * fewer ranks simulated; with verification, or asked not to, every rank. */
Test(symmetry, taken_unasked_where_proven) {
    topo_t *t = th_load("topologies/cluster-h100.yaml", "nodes=16");
    topo_params(t)->channels = 1;
    static const struct { coll_t c; const char *a; } cases[] = {
        {COLL_ALLREDUCE, "ring"}, {COLL_ALLGATHER, "ring"}, {COLL_REDUCE_SCATTER, "ring"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run_req_t q = {.coll = cases[i].c, .algo = cases[i].a, .bytes = 64u << 20, .proto = PROTO_SIMPLE};
        run_out_t aut, full, ver;
        baton_err_t e = {0};
        cr_assert_eq(run_collective(t, &q, &aut, &e), 0, "%s", e.msg);
        q.symmetric = -1;
        cr_assert_eq(run_collective(t, &q, &full, &e), 0, "%s", e.msg);
        q.symmetric = 0;
        q.verify = 1;
        cr_assert_eq(run_collective(t, &q, &ver, &e), 0, "%s", e.msg);
        cr_assert(aut.eng.reps < aut.ranks, "%s: %d of %d ranks simulated", cases[i].a, aut.eng.reps, aut.ranks);
        cr_assert(full.eng.reps == full.ranks && ver.eng.reps == ver.ranks, "every rank when asked or verifying");
        cr_assert(aut.time_s == full.time_s, "%s %s: %.17g s unasked, %.17g s in full", coll_name(cases[i].c),
                  cases[i].a, aut.time_s, full.time_s);
        engine_result_free(&aut.eng);
        engine_result_free(&full.eng);
        engine_result_free(&ver.eng);
    }
    topo_free(t);
}

/* Channels that share a rank's links and reduce engine (the cluster files'
 * default 8 or 16 rings) no longer keep a run from being symmetric: the
 * engine serves a rank's claims made at one instant in channel order, which
 * is the same on every rank. On every shipped cluster at 16 nodes, with its
 * default channels, where symmetry is proven for a ring collective, the
 * representatives' time is the full simulation's in all digits, and it is
 * proven on cluster-h100 and cluster-a100. */
Test(symmetry, channels_that_share_a_rank_are_symmetric) {
    const char *files[] = {"topologies/cluster-h100.yaml", "topologies/cluster-a100.yaml", "topologies/cluster-mi300x.yaml",
                           "topologies/cluster-pcie.yaml"};
    static const coll_t colls[] = {COLL_ALLREDUCE, COLL_ALLGATHER, COLL_REDUCE_SCATTER};
    int proven[4] = {0};
    for (int f = 0; f < 4; f++) {
        topo_t *t = th_load(files[f], "nodes=16");
        for (int c = 0; c < 3; c++)
            for (uint64_t n = 1 << 20; n <= (64u << 20); n <<= 6) {
                run_req_t q = {.coll = colls[c], .algo = "ring", .bytes = n, .proto = PROTO_SIMPLE, .symmetric = 1};
                run_out_t sym, full;
                baton_err_t e = {0};
                if (run_collective(t, &q, &sym, &e) < 0) continue;      /* not proven here: said why */
                cr_assert(sym.eng.reps < sym.ranks);
                q.symmetric = -1;
                cr_assert_eq(run_collective(t, &q, &full, &e), 0, "%s", e.msg);
                cr_expect(sym.time_s == full.time_s, "%s %s %llu B: %.17g s symmetric, %.17g s in full", files[f],
                          coll_name(colls[c]), (unsigned long long)n, sym.time_s, full.time_s);
                proven[f]++;
                engine_result_free(&sym.eng);
                engine_result_free(&full.eng);
            }
        topo_free(t);
    }
    cr_expect_eq(proven[0], 6, "cluster-h100 (8 channels): %d of 6 proven", proven[0]);
    cr_expect_eq(proven[1], 6, "cluster-a100: %d of 6 proven", proven[1]);
}
