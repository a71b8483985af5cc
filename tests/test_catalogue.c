/* test_catalogue.c - every (collective, algorithm) in the registry:
 * verification over many rank and byte counts, closed forms, lower bounds,
 * crossovers. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "helpers.h"

static const int ps[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 31, 64, 100, 128};
#define NP (int)(sizeof ps / sizeof ps[0])

/* Every row handles the case or says it cannot; never a wrong answer. */
static void verify_row(const algo_t *a, int pmax, verify_mode_t mode) {
    for (int i = 0; i < NP && ps[i] <= pmax; i++) {
        int p = ps[i];
        topo_t *t = th_full(p, 10e9, 1e-6, 1, 20e9);
        uint64_t ns[] = {0, 1, (uint64_t)p - 1, (uint64_t)p, (uint64_t)p + 1, mode == VERIFY_DATA ? 1003 : 1000003};
        for (int k = 0; k < 6; k++) {
            algo_opts_t o = {.root = p > 2 ? p / 2 + 1 : 0};
            engine_result_t r;
            baton_err_t e = {0};
            int rc = th_run(t, a, ns[k], &o, mode, &r, &e);
            if (rc == BATON_EUNSUP) {
                cr_assert(strstr(e.msg, a->name) != NULL || strstr(e.msg, "rank") != NULL, "unclear refusal: %s", e.msg);
                continue;
            }
            cr_assert_eq(rc, 0, "%s %s p=%d n=%llu: %s", coll_name(a->coll), a->name, p,
                         (unsigned long long)ns[k], e.msg);
            cr_assert_eq(r.verified, 1);
        }
        topo_free(t);
    }
}

Test(catalogue, every_row_verifies_signature_mode) {
    const algo_t *const *rows = algo_all();
    for (int i = 0; rows[i]; i++) verify_row(rows[i], 128, VERIFY_SIGNATURE);
}

Test(catalogue, every_row_verifies_data_mode) {
    const algo_t *const *rows = algo_all();
    for (int i = 0; rows[i]; i++) verify_row(rows[i], 17, VERIFY_DATA);
}

Test(catalogue, power_of_two_rows_refuse_other_counts) {
    topo_t *t = th_full(6, 1e9, 0, 1, 0);
    const algo_t *rows[] = {&algo_reducescatter_halving, &algo_allgather_rd};
    for (int i = 0; i < 2; i++) {
        engine_result_t r;
        baton_err_t e = {0};
        cr_expect_eq(th_run(t, rows[i], 600, NULL, VERIFY_SIGNATURE, &r, &e), BATON_EUNSUP);
        cr_expect(strstr(e.msg, "power-of-two") != NULL, "%s", e.msg);
    }
    topo_free(t);
}

Test(catalogue, channels_split_blocks_and_still_verify) {
    for (int p = 2; p <= 9; p++) {
        topo_t *t = th_star(p, 10e9, 1e-6, 0, 20e9);
        const algo_t *rows[] = {&algo_allreduce_ring, &algo_reducescatter_ring, &algo_allgather_ring};
        for (int i = 0; i < 3; i++)
            for (int c = 1; c <= 4; c++) {
                algo_opts_t o = {.channels = c};
                engine_result_t r;
                baton_err_t e = {0};
                cr_assert_eq(th_run(t, rows[i], 1001, &o, VERIFY_DATA, &r, &e), 0, "%s", e.msg);
                cr_assert_eq(r.messages, (uint64_t)c * p * (p - 1) * (i == 0 ? 2 : 1));
            }
        topo_free(t);
    }
}

/* NCCL's ring broadcast and reduce run a chain per channel on that
 * channel's part of the buffer, each along its ring cut at the root: every
 * rank count, node size, channel count and root computes the collective,
 * C x (p - 1) x k messages (k = 3 chunks a part), the sizes odd so the
 * parts and chunks differ by a byte (1001) or some are empty (7). */
Test(catalogue, chains_per_channel_verify) {
    const int ranks[] = {1, 2, 3, 5, 7, 8, 16, 100};
    const uint64_t sizes[] = {1001, 7};
    const algo_t *rows[] = {&algo_broadcast_chain, &algo_reduce_chain};
    for (size_t i = 0; i < sizeof ranks / sizeof *ranks; i++) {
        int p = ranks[i];
        topo_t *t = th_star(p, 12.5e9, 1.5e-6, 0, 40e9);
        for (int g = 1; g <= p; g++)
            for (int C = 1; C <= 4 && p % g == 0 && (g <= 2 || g == p || g == 4); C++)
                for (int j = 0; j < 2; j++)
                    for (int root = 0; root < p; root += p > 2 ? p / 2 + 1 : 1) {
                        algo_opts_t o = {.group = g, .pipeline = 3, .channels = C, .root = root};
                        engine_result_t r;
                        baton_err_t e = {0};
                        int rc = th_run(t, rows[j], sizes[root % 2], &o, VERIFY_DATA, &r, &e);
                        cr_assert_eq(rc, 0, "%s p=%d g=%d C=%d root=%d: %s", rows[j]->name, p, g, C, root, e.msg);
                        cr_expect(r.verified, "%s p=%d g=%d C=%d root=%d", coll_name(rows[j]->coll), p, g, C, root);
                        cr_expect_eq(r.messages, (uint64_t)C * (p - 1) * 3, "p=%d C=%d", p, C);
                        engine_result_free(&r);
                    }
        topo_free(t);
    }
}

/* ---- closed forms -------------------------------------------------- */

/* How the formula relates to the simulation. APPROX: within the measured
 * band [0.5, 1.75] x the formula (see docs/decisions/closed-forms.md; 2.5 before FIFO
 * backfilled its links and ports, sim/engine/book.h). */
enum { EXACT, UPPER, LOWER, APPROX };

static int complete_tree(int p) { return algo_pof2(p + 1); }

typedef struct {
    const algo_t *a;
    int single, star;          /* relation on a single-port mesh / multi-port star */
    int (*exact_if)(int p);    /* where EXACT holds; elsewhere UPPER (NULL: everywhere) */
} claim_t;

static const claim_t claims[] = {
    {&algo_allreduce_ring, EXACT, EXACT, NULL},      {&algo_allreduce_binomial, EXACT, EXACT, NULL},
    {&algo_allreduce_naive, EXACT, EXACT, NULL},     {&algo_allreduce_rd, EXACT, EXACT, NULL},
    {&algo_allreduce_rabenseifner, EXACT, EXACT, NULL}, {&algo_allreduce_rabenseifner_far, EXACT, EXACT, NULL},
    {&algo_allreduce_twoshot, EXACT, EXACT, NULL},   {&algo_allreduce_direct, EXACT, EXACT, NULL},
    {&algo_reducescatter_direct, EXACT, EXACT, NULL}, {&algo_allgather_direct, EXACT, EXACT, NULL},
    {&algo_allreduce_oneshot, LOWER, EXACT, NULL},
    {&algo_allreduce_bintree, APPROX, APPROX, NULL}, {&algo_allreduce_dbtree, APPROX, APPROX, NULL},
    {&algo_allreduce_chain, APPROX, APPROX, NULL},   {&algo_allreduce_nvls, APPROX, APPROX, NULL},
    {&algo_allreduce_nccltree, APPROX, APPROX, NULL}, {&algo_allreduce_nvlstree, APPROX, APPROX, NULL},
    {&algo_allreduce_collnet, APPROX, APPROX, NULL}, {&algo_allreduce_collnet_ring, APPROX, APPROX, NULL},
    {&algo_reducescatter_ring, EXACT, EXACT, NULL},  {&algo_reducescatter_naive, EXACT, EXACT, NULL},
    {&algo_reducescatter_halving, EXACT, EXACT, NULL}, {&algo_reducescatter_pairwise, EXACT, EXACT, NULL},
    {&algo_allgather_ring, EXACT, EXACT, NULL},      {&algo_allgather_naive, EXACT, EXACT, NULL},
    {&algo_allgather_rd, EXACT, EXACT, NULL},        {&algo_allgather_bruck, EXACT, EXACT, NULL},
    {&algo_allgather_pairwise, EXACT, EXACT, NULL},
    {&algo_broadcast_naive, EXACT, EXACT, NULL},     {&algo_broadcast_binomial, EXACT, EXACT, NULL},
    {&algo_broadcast_chain, EXACT, EXACT, NULL},     {&algo_broadcast_scatter_allgather, EXACT, -1, algo_pof2},
    {&algo_broadcast_bintree, EXACT, UPPER, complete_tree},
    {&algo_reduce_naive, EXACT, EXACT, NULL},        {&algo_reduce_binomial, EXACT, EXACT, NULL},
    {&algo_reduce_chain, EXACT, EXACT, NULL},        {&algo_reduce_bintree, EXACT, UPPER, complete_tree},
    {&algo_reduce_rabenseifner, EXACT, EXACT, NULL},
    {&algo_alltoall_naive, EXACT, EXACT, NULL},      {&algo_alltoall_pairwise, EXACT, EXACT, NULL},
    {&algo_alltoall_direct, EXACT, EXACT, NULL},
    {&algo_allreduce_hier, EXACT, -1, NULL},         {&algo_allreduce_hier_leader, EXACT, -1, NULL},
    {&algo_allgather_pat, EXACT, EXACT, NULL},       {&algo_reducescatter_pat, EXACT, EXACT, NULL},
    {&algo_allreduce_symmetric, EXACT, EXACT, NULL}, {&algo_allgather_symmetric, EXACT, EXACT, NULL},
    {&algo_reducescatter_symmetric, UPPER, EXACT, NULL}, {&algo_allgather_ce, EXACT, EXACT, NULL},
    {&algo_alltoall_ce, EXACT, EXACT, NULL},
};
#define NCLAIMS (int)(sizeof claims / sizeof claims[0])

static void check(int rel, double sim, double f, const char *what, int p, uint64_t n) {
    double tol = 1e-9 * (f > 0 ? f : 1);
    if (rel == EXACT) cr_expect_leq(fabs(sim - f), tol, "%s p=%d n=%llu: sim %.17g closed %.17g", what, p, (unsigned long long)n, sim, f);
    if (rel == UPPER) cr_expect_leq(sim, f + tol, "%s p=%d n=%llu: sim %.17g above bound %.17g", what, p, (unsigned long long)n, sim, f);
    if (rel == LOWER) cr_expect_geq(sim, f - tol, "%s p=%d n=%llu: sim %.17g below bound %.17g", what, p, (unsigned long long)n, sim, f);
    if (rel == APPROX) {
        cr_expect_geq(sim, 0.5 * f, "%s p=%d n=%llu: sim %.6g far below the model %.6g", what, p, (unsigned long long)n, sim, f);
        cr_expect_leq(sim, 1.75 * f, "%s p=%d n=%llu: sim %.6g far above the model %.6g", what, p, (unsigned long long)n, sim, f);
    }
}

/* n = 720720 j is divisible by every p and p' up to 16, and by the chain's
 * default k for these sizes. */
static void closed_forms(int star) {
    uint64_t ns[] = {0, 720720, 720720ull * 8, 720720ull * 16};
    for (int c = 0; c < NCLAIMS; c++) {
        const claim_t *cl = &claims[c];
        int rel = star ? cl->star : cl->single;
        if (rel < 0) continue;
        for (int p = 2; p <= 16; p++) {
            topo_t *t = star ? th_star(p, 12.5e9, 1.5e-6, 0, 40e9) : th_full(p, 12.5e9, 1.5e-6, 1, 40e9);
            topo_params(t)->max_inflight = 32;
            cost_model_t m;
            cr_assert_eq(topo_cost_model(t, &m, NULL), 0);
            for (int k = 0; k < 4; k++) {
                engine_result_t r;
                baton_err_t e = {0};
                int rc = th_run(t, cl->a, ns[k], NULL, VERIFY_NONE, &r, &e);
                if (rc == BATON_EUNSUP) continue;
                cr_assert_eq(rc, 0, "%s", e.msg);
                int relp = rel == EXACT && cl->exact_if && !cl->exact_if(p) ? UPPER : rel;
                char what[64];
                snprintf(what, sizeof what, "%s %s%s", coll_name(cl->a->coll), cl->a->name, star ? " (star)" : "");
                check(relp, r.time_s, cl->a->cost(&m, p, ns[k], NULL), what, p, ns[k]);
            }
            topo_free(t);
        }
    }
}

/* All-to-all direct runs 16 peers at a time beyond 17 ranks (NCCL's p2p
 * channels, 2 a peer): every block still lands where it belongs, one
 * message a peer (and the own block's local copy), and the closed form
 * stays within the approximate band. */
Test(catalogue, alltoall_direct_rounds_verify) {
    const int ranks[] = {17, 18, 33, 100};
    for (size_t i = 0; i < sizeof ranks / sizeof *ranks; i++) {
        int p = ranks[i];
        topo_t *t = th_star(p, 12.5e9, 1.5e-6, 0, 40e9);
        cost_model_t m;
        cr_assert_eq(topo_cost_model(t, &m, NULL), 0);
        engine_result_t r;
        baton_err_t e = {0};
        uint64_t n = (uint64_t)p * 1001;
        cr_assert_eq(th_run(t, &algo_alltoall_direct, n, NULL, VERIFY_DATA, &r, &e), 0, "p=%d: %s", p, e.msg);
        cr_expect(r.verified, "p=%d", p);
        cr_expect_eq(r.messages, (uint64_t)p * p, "p=%d: a message a peer and its own block", p);
        check(p <= 17 ? EXACT : APPROX, r.time_s, algo_alltoall_direct.cost(&m, p, n, NULL), "alltoall direct", p, n);
        engine_result_free(&r);
        topo_free(t);
    }
}

Test(catalogue, closed_forms_single_port_mesh) { closed_forms(0); }
Test(catalogue, closed_forms_multi_port_star) { closed_forms(1); }

Test(catalogue, every_row_has_a_claim) {
    const algo_t *const *rows = algo_all();
    int n = 0;
    for (int i = 0; rows[i]; i++, n++) {
        int found = 0;
        for (int c = 0; c < NCLAIMS; c++) found |= claims[c].a == rows[i];
        cr_expect(found, "%s %s has no closed-form claim in this test", coll_name(rows[i]->coll), rows[i]->name);
    }
    cr_expect_eq(n, NCLAIMS);
}

Test(catalogue, chain_pipeline_option_is_in_the_formula) {
    topo_t *t = th_full(7, 12.5e9, 1.5e-6, 1, 40e9);
    cost_model_t m;
    cr_assert_eq(topo_cost_model(t, &m, NULL), 0);
    for (int k = 1; k <= 64; k *= 2) {
        algo_opts_t o = {.pipeline = k};
        engine_result_t r;
        cr_assert_eq(th_run(t, &algo_broadcast_chain, 64000, &o, VERIFY_SIGNATURE, &r, NULL), 0);
        check(EXACT, r.time_s, algo_broadcast_chain.cost(&m, 7, 64000, &o), "chain", 7, 64000);
        cr_assert_eq(th_run(t, &algo_reduce_chain, 64000, &o, VERIFY_SIGNATURE, &r, NULL), 0);
        check(EXACT, r.time_s, algo_reduce_chain.cost(&m, 7, 64000, &o), "chain reduce", 7, 64000);
    }
    topo_free(t);
}

/* ---- lower bounds (Chan et al. 2007), single-port ------------------- */

/* Chan et al. add the reduction term because in their model a rank does not
 * compute while it communicates. A schedule with several streams per rank
 * (split trees, one-shot) does overlap them here, and for it the bound is the
 * larger of the two terms: the data must move, and (p-1)/p n must be added
 * at each rank. */
static double chan_bound(coll_t c, int p, uint64_t n, const cost_model_t *m, int overlap) {
    double lg = cost_ceil_log2(p), b = (double)n, f = (double)(p - 1) / p;
    double g = f * b * m->gamma;
#define ADD(comm) (overlap ? ((comm) > g ? (comm) : g) : (comm) + g)
    switch (c) {
    case COLL_BROADCAST: return lg * m->alpha + b * m->beta;
    case COLL_REDUCE: return lg * m->alpha + ADD(b * m->beta);
    case COLL_ALLGATHER: return lg * m->alpha + f * b * m->beta;
    case COLL_REDUCE_SCATTER: return lg * m->alpha + ADD(f * b * m->beta);
    case COLL_ALLREDUCE: return lg * m->alpha + ADD(2 * f * b * m->beta);
#undef ADD
    case COLL_ALLTOALL: return (p > 1) * m->alpha + f * b * m->beta;   /* each rank must send (p-1)/p of its buffer */
    default: return 0;
    }
}

Test(catalogue, nothing_beats_the_lower_bounds) {
    const int pp[] = {2, 3, 4, 5, 7, 8, 12, 16, 17, 31, 64};
    const uint64_t nn[] = {0, 1, 7, 1000, 65536, 1000003, 16777216};
    const double alphas[] = {0, 1e-6, 20e-6}, gammas[] = {0, 1.0 / 40e9};
    const algo_t *const *rows = algo_all();
    for (int a = 0; a < 3; a++)
        for (int g = 0; g < 2; g++)
            for (int i = 0; i < (int)(sizeof pp / sizeof *pp); i++) {
                topo_t *t = th_full(pp[i], 10e9, alphas[a], 1, gammas[g] ? 1 / gammas[g] : 0);
                cost_model_t m;
                cr_assert_eq(topo_cost_model(t, &m, NULL), 0);
                for (int j = 0; j < (int)(sizeof nn / sizeof *nn); j++)
                    for (int k = 0; rows[k]; k++) {
                        engine_result_t r;
                        if (th_run(t, rows[k], nn[j], NULL, VERIFY_NONE, &r, NULL) < 0) continue;
                        sched_t s;
                        cr_assert_eq(algo_build(rows[k], pp[i], nn[j], NULL, &s, NULL), 0);
                        double lb = chan_bound(rows[k]->coll, pp[i], nn[j], &m, s.nchannels > 1);
                        cr_expect_geq(r.time_s, lb * (1 - 1e-12), "%s %s p=%d n=%llu beats the bound: %g < %g",
                                      coll_name(rows[k]->coll), rows[k]->name, pp[i], (unsigned long long)nn[j],
                                      r.time_s, lb);
                    }
                topo_free(t);
            }
}

/* ---- crossovers ---------------------------------------------------- */

static double sim_time(topo_t *t, const algo_t *a, uint64_t n) {
    engine_result_t r;
    baton_err_t e = {0};
    cr_assert_eq(th_run(t, a, n, NULL, VERIFY_NONE, &r, &e), 0, "%s", e.msg);
    return r.time_s;
}

/* 64 ranks, 5 us, 25 GB/s: latency-bound small messages favour the log-step
 * algorithms, bandwidth-bound large ones the ring-like ones. */
Test(catalogue, known_crossovers) {
    topo_t *t = th_full(64, 25e9, 5e-6, 1, 0);
    struct { const algo_t *small, *large; } pairs[] = {
        {&algo_allreduce_rd, &algo_allreduce_ring},
        {&algo_allreduce_binomial, &algo_allreduce_ring},
        {&algo_allreduce_rd, &algo_allreduce_rabenseifner},
        {&algo_broadcast_binomial, &algo_broadcast_scatter_allgather},
        {&algo_reduce_binomial, &algo_reduce_chain},
    };
    for (int i = 0; i < (int)(sizeof pairs / sizeof *pairs); i++) {
        const algo_t *s = pairs[i].small, *l = pairs[i].large;
        cr_expect_lt(sim_time(t, s, 1024), sim_time(t, l, 1024), "1 KiB: %s should beat %s", s->name, l->name);
        cr_expect_gt(sim_time(t, s, 256 << 20), sim_time(t, l, 256 << 20), "256 MiB: %s should lose to %s", s->name, l->name);
    }
    /* Bruck moves the same bytes as the ring in fewer rounds: in an alpha-beta
     * model it never loses (its real cost, the local rotation, is not modelled). */
    for (uint64_t n = 64; n <= (256u << 20); n *= 16)
        cr_expect_leq(sim_time(t, &algo_allgather_bruck, n), sim_time(t, &algo_allgather_ring, n));
    topo_free(t);
}

/* ---- hierarchical: every group size that divides p ------------------- */

Test(catalogue, hierarchical_every_group_size) {
    const algo_t *rows[] = {&algo_allreduce_hier, &algo_allreduce_hier_leader};
    for (int p = 1; p <= 16; p++) {
        topo_t *t = th_full(p, 12.5e9, 1.5e-6, 1, 40e9);
        cost_model_t m;
        cr_assert_eq(topo_cost_model(t, &m, NULL), 0);
        for (int g = 1; g <= p; g++) {
            algo_opts_t o = {.group = g};
            for (int a = 0; a < 2; a++) {
                engine_result_t r;
                baton_err_t e = {0};
                int rc = th_run(t, rows[a], 1001, &o, VERIFY_DATA, &r, &e);
                if (p % g) { cr_expect_eq(rc, BATON_EUNSUP, "%s p=%d g=%d", rows[a]->name, p, g); continue; }
                cr_assert_eq(rc, 0, "%s p=%d g=%d: %s", rows[a]->name, p, g, e.msg);
                uint64_t n = 720720ull * 4;
                cr_assert_eq(th_run(t, rows[a], n, &o, VERIFY_SIGNATURE, &r, &e), 0, "%s", e.msg);
                char what[64];
                snprintf(what, sizeof what, "%s g=%d", rows[a]->name, g);
                check(EXACT, r.time_s, rows[a]->cost(&m, p, n, &o), what, p, n);
            }
        }
        topo_free(t);
    }
}

/* Across a slow inter-group link, the 2D ring sends a fraction of the data
 * and beats the flat ring; the leader variant funnels everything through one
 * rank per group. Two groups of 8 joined by one 12.5 GB/s link per rank
 * pair, 100 GB/s inside. */
Test(catalogue, hierarchy_pays_off_across_slow_links) {
    topo_t *t = topo_create("two-nodes");
    char name[32];
    th_add_ranks(t, 16, "g");
    int sw[2] = {topo_add_node(t, "nvs0", NODE_SWITCH, 0, 0, NULL), topo_add_node(t, "nvs1", NODE_SWITCH, 0, 0, NULL)};
    int net = topo_add_node(t, "net", NODE_SWITCH, 0, 0, NULL);
    for (int i = 0; i < 16; i++) {
        snprintf(name, sizeof name, "nic%d", i);
        int nic = topo_add_node(t, name, NODE_NIC, 0, 0, NULL);
        topo_add_link(t, i, sw[i / 8], 100e9, 0.5e-6, NULL);
        topo_add_link(t, i, nic, 12.5e9, 1e-6, NULL);
        topo_add_link(t, nic, net, 12.5e9, 1e-6, NULL);
    }
    topo_params(t)->group_size = 8;
    cr_assert_eq(topo_finalize(t, "test", NULL), 0);
    algo_opts_t o = {.group = 8};
    engine_result_t ring, hier;
    cr_assert_eq(th_run(t, &algo_allreduce_ring, 256 << 20, &o, VERIFY_NONE, &ring, NULL), 0);
    cr_assert_eq(th_run(t, &algo_allreduce_hier, 256 << 20, &o, VERIFY_SIGNATURE, &hier, NULL), 0);
    cr_expect_lt(hier.time_s, ring.time_s, "hier %g vs flat ring %g", hier.time_s, ring.time_s);
    topo_free(t);
}

/* NCCL's tree on nodes computes the all-reduce for every node size that
 * divides p (one node: two chains; one GPU per node: the double binary
 * tree), on one channel and on three (chains rotated), and with one GPU per
 * node and one channel it is dbtree, message for message. */
Test(catalogue, nccltree_every_group_size) {
    const int ranks[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 24, 100};
    for (size_t i = 0; i < sizeof ranks / sizeof *ranks; i++) {
        int p = ranks[i];
        topo_t *t = th_star(p, 12.5e9, 1.5e-6, 0, 40e9);
        for (int g = 1; g <= p; g++)
            for (int C = 1; C <= 3 && p % g == 0; C += 2) {
                algo_opts_t o = {.group = g, .pipeline = 3, .channels = C};
                engine_result_t r;
                baton_err_t e = {0};
                cr_assert_eq(th_run(t, &algo_allreduce_nccltree, 1001, &o, VERIFY_DATA, &r, &e), 0, "p=%d g=%d C=%d: %s", p, g, C, e.msg);
                cr_expect(r.verified, "p=%d g=%d C=%d", p, g, C);
                if (g == 1 && C == 1) {
                    engine_result_t d;
                    cr_assert_eq(th_run(t, &algo_allreduce_dbtree, 1001, &o, VERIFY_NONE, &d, &e), 0, "%s", e.msg);
                    cr_expect_eq(r.time_s, d.time_s, "p=%d: one GPU per node is dbtree", p);
                    cr_expect_eq(r.messages, d.messages);
                    engine_result_free(&d);
                }
                engine_result_free(&r);
            }
        topo_free(t);
    }
}

/* ---- Rabenseifner's partner order ---------------------------------- */

static double fair_time(topo_t *t, const char *name, uint64_t n) {
    sched_t s;
    engine_result_t r;
    engine_opts_t o = {.contention = CONTENTION_FAIR};
    cr_assert_eq(algo_build(algo_find(COLL_ALLREDUCE, name), topo_nranks(t), n, NULL, &s, NULL), 0, "%s", name);
    cr_assert_eq(engine_run(&s, t, &o, &r, NULL), 0, "%s", name);
    return r.time_s;
}

/* `rabenseifner` halves with the nearest partner first, as MPICH does
 * (rank 0 sends half the buffer to rank 1 first); rabenseifner_far with
 * the farthest (rank 8 of 16). Under a 4:1 oversubscribed tree with ranks
 * placed by block, MPICH's order keeps the big halves inside a leaf:
 * 64 MiB, by hand from the busiest link of each step (in 1/B units of n):
 * near 2(n/2 + n/4 + 4 n/8 + 4 n/16) = 3 n/B, far 2(4 n/2 + 4 n/4 + n/8 +
 * n/16) = 6.375 n/B: 2.1x. */
Test(catalogue, rabenseifner_pairs_nearest_first_as_mpich) {
    sched_t s;
    sched_op_t op;
    cr_assert_eq(algo_build(&algo_allreduce_rabenseifner, 16, 1 << 20, NULL, &s, NULL), 0);
    cr_assert(sched_op(&s, 0, 0, 0, &op));
    cr_expect(op.send && op.send_peer == 1 && op.nchunk == 8, "MPICH: rank 0 first sends 8 of 16 blocks to rank 1");
    cr_assert_eq(algo_build(&algo_allreduce_rabenseifner_far, 16, 1 << 20, NULL, &s, NULL), 0);
    cr_assert(sched_op(&s, 0, 0, 0, &op));
    cr_expect(op.send && op.send_peer == 8 && op.nchunk == 8, "far: rank 0 first sends 8 of 16 blocks to rank 8");
    topo_t *t = th_load("tests/data/tree-4x4.yaml", NULL);
    uint64_t n = 64u << 20;
    double near = fair_time(t, "rabenseifner", n), far = fair_time(t, "rabenseifner_far", n), B = 10e9;
    cr_expect_float_eq(near, 3.0 * (double)n / B, 0.01 * near, "near %.6g s", near);
    cr_expect_float_eq(far, 6.375 * (double)n / B, 0.01 * far, "far %.6g s", far);
    topo_free(t);
}
