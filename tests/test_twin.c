/* test_twin.c - machines that route alike share one route cache
 * (topologies/topo_twin.c), the link loads read off it are kept once
 * (sim/form/peers.c), routes put aside for a passing change of rates
 * come back with them (topo_routes_aside), and a machine whose own rates
 * change in the same order keeps its routes, re-rated (topo_routes_settle).
 * Oracle: a fresh machine at the same rates, routing alone. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../models/cost.h"
#include "../sim/answer/run.h"
#include "../sim/form/form.h"
#include "../topologies/topo_yaml.h"
#include "helpers.h"

/* g0 reaches g1 by switch a (100 GB/s) or b (50 GB/s), the same hops. */
static const char *two_ways =
    "name: two-ways\nnodes:\n  - {name: \"g[0-1]\"}\n  - {name: sa, kind: switch}\n  - {name: sb, kind: switch}\n"
    "  - {name: sc, kind: switch}\n"
    "links:\n  - {a: g0, b: sa, bw: 100GB/s, latency: 1us}\n  - {a: g0, b: sb, bw: 50GB/s, latency: 1us}\n"
    "  - {a: sa, b: sc, bw: 100GB/s, latency: 1us}\n  - {a: sb, b: sc, bw: 100GB/s, latency: 1us}\n"
    "  - {a: sc, b: g1, bw: 100GB/s, latency: 1us}\n";

static topo_t *two_ways_at(const char *path, double scale) {
    topo_t *t = th_load_text(path, two_ways);
    for (int l = 0; l < topo_nlinks(t); l += 2)
        cr_assert_eq(topo_set_link_bw(t, l, topo_dlink(t, l)->bw * scale, NULL), 0);
    return t;
}

static int link_from(const topo_t *t, const char *a, const char *b) {
    int x = topo_find_node(t, a), y = topo_find_node(t, b);
    for (int l = 0; l < topo_nlinks(t); l++)
        if (topo_dlink(t, l)->src == x && topo_dlink(t, l)->dst == y) return l;
    cr_assert_fail("no link %s -> %s", a, b);
    return -1;
}

/* Every pair's route on t as on fresh: the same links, latency and rate, bit for bit. */
static void routes_as(topo_t *t, topo_t *fresh, const char *what) {
    int p = topo_nranks(t);
    cr_assert_eq(p, topo_nranks(fresh));
    for (int s = 0; s < p; s++)
        for (int d = 0; d < p; d++) {
            topo_route_t a, b;
            cr_assert_eq(topo_route(t, s, d, &a, NULL), 0);
            cr_assert_eq(topo_route(fresh, s, d, &b, NULL), 0);
            cr_assert_eq(a.nlinks, b.nlinks, "%s: %d -> %d: %d links against %d", what, s, d, a.nlinks, b.nlinks);
            for (int i = 0; i < a.nlinks; i++) cr_assert_eq(a.links[i], b.links[i], "%s: %d -> %d: link %d", what, s, d, i);
            cr_assert(memcmp(&a.lat, &b.lat, sizeof a.lat) == 0 && memcmp(&a.bw, &b.bw, sizeof a.bw) == 0,
                      "%s: %d -> %d: %g s, %g B/s against %g, %g", what, s, d, a.lat, a.bw, b.lat, b.bw);
        }
}

Test(twin, rates_in_the_same_order_share_routes_and_keep_their_own_rates) {
    topo_t *root = two_ways_at("build/twin-root.yaml", 1), *half = two_ways_at("build/twin-half.yaml", 0.5);
    topo_t *fresh = two_ways_at("build/twin-fresh.yaml", 0.5);
    topo_route_t r;
    cr_assert_eq(topo_route(root, 0, 1, &r, NULL), 0);
    cr_assert_eq(topo_share_routes(half, root), 1, "every rate halved: the same order everywhere");
    cr_expect_eq(topo_route_owner(half), root);
    routes_as(half, fresh, "halved");
    cr_expect_eq(topo_nroutes(half), 0, "the twin keeps no routes of its own");
    topo_route_t h;
    cr_assert_eq(topo_route(half, 0, 1, &h, NULL), 0);
    cr_expect_eq(h.bw, 50e9, "the twin's own rate: %g", h.bw);
    cr_expect_eq(h.links, r.links, "the root's route itself");
    topo_free(fresh);
    topo_free(half);
    topo_free(root);
}

Test(twin, an_order_that_differs_routes_alone) {
    topo_t *root = two_ways_at("build/twin-root2.yaml", 1), *flip = two_ways_at("build/twin-flip.yaml", 1);
    cr_assert_eq(topo_set_link_bw(flip, link_from(flip, "g0", "sa"), 10e9, NULL), 0);
    cr_expect_eq(topo_share_routes(flip, root), 0, "g0's two ways change places: not alike");
    topo_route_t r;
    cr_assert_eq(topo_route(flip, 0, 1, &r, NULL), 0);
    cr_expect_eq(r.bw, 50e9, "by b: %g", r.bw);
    topo_t *same = th_load_text("build/twin-same.yaml", two_ways);
    cr_expect_eq(topo_share_routes(same, root), 1, "the same file: alike");
    topo_free(same);
    char other[1024];
    snprintf(other, sizeof other, "%s", two_ways);
    char *at = strstr(other, "latency: 1us}\n  - {a: sc, b: g1");   /* sb -> sc's latency */
    cr_assert_not_null(at);
    at[9] = '2';
    topo_t *lat = th_load_text("build/twin-lat.yaml", other);
    cr_expect_eq(topo_share_routes(lat, root), 0, "sb -> sc at 2 us: a route's latency would differ");
    topo_free(lat);
    topo_free(flip);
    topo_free(root);
}

/* A share ends where either machine's rates change: the twin routes by its
 * own, and follows neither the root's change nor its own old order. */
Test(twin, a_change_of_rates_ends_the_share) {
    topo_t *root = two_ways_at("build/twin-root3.yaml", 1), *twin = two_ways_at("build/twin-t3.yaml", 0.5);
    cr_assert_eq(topo_share_routes(twin, root), 1);
    cr_assert_eq(topo_set_link_bw(root, link_from(root, "g0", "sa"), 10e9, NULL), 0);
    topo_route_t r;
    int by_a = link_from(root, "g0", "sa"), by_b = link_from(root, "g0", "sb");
    cr_assert_eq(topo_route(twin, 0, 1, &r, NULL), 0);
    cr_expect_eq(r.links[0], by_a, "the twin still goes by a, its wider way");
    cr_expect_eq(r.bw, 50e9, "at its own rates: %g", r.bw);
    cr_assert_eq(topo_route(root, 0, 1, &r, NULL), 0);
    cr_expect_eq(r.links[0], by_b, "the root goes by b");
    topo_t *root2 = two_ways_at("build/twin-root4.yaml", 1), *twin2 = two_ways_at("build/twin-t4.yaml", 1);
    cr_assert_eq(topo_share_routes(twin2, root2), 1);
    cr_assert_eq(topo_set_link_bw(twin2, link_from(twin2, "g0", "sa"), 10e9, NULL), 0);
    cr_assert_eq(topo_route(twin2, 0, 1, &r, NULL), 0);
    cr_expect_eq(r.links[0], by_b, "the twin's own change: by b");
    cr_expect_eq(r.bw, 50e9, "%g", r.bw);
    cr_expect_eq(topo_route_owner(twin2), twin2);
    topo_free(twin2);
    topo_free(root2);
    topo_free(twin);
    topo_free(root);
}

/* A dragonfly of four groups (Polaris's machine at 32 nodes, a router a group): every
 * pair's route on a twin whose network runs at half its rate is a fresh
 * machine's at that rate; slowing one node's NICs reorders its router's
 * links, so that machine routes alone. */
Test(twin, a_dragonfly_twin_routes_every_pair_as_a_fresh_machine) {
    const char *base = "nodes=32,routers_per_group=1";
    topo_t *root = th_load("topologies/polaris.yaml", base);
    topo_t *slow = th_load("topologies/polaris.yaml", "nodes=32,routers_per_group=1,nic_bw=100Gb/s");
    topo_t *fresh = th_load("topologies/polaris.yaml", "nodes=32,routers_per_group=1,nic_bw=100Gb/s");
    topo_route_t r;
    cr_assert_eq(topo_route(root, 0, topo_nranks(root) - 1, &r, NULL), 0);
    cr_assert_eq(topo_share_routes(slow, root), 1, "the whole fabric at half its rate routes alike");
    routes_as(slow, fresh, "nic_bw=100Gb/s");
    topo_t *node = th_load("topologies/polaris.yaml", base);
    int nic = topo_find_node(node, "n0.nic0");
    for (int l = 0; l < topo_nlinks(node); l += 2)
        if (topo_dlink(node, l)->src == nic || topo_dlink(node, l)->dst == nic)
            cr_assert_eq(topo_set_link_bw(node, l, topo_dlink(node, l)->bw * 0.5, NULL), 0);
    cr_expect_eq(topo_share_routes(node, root), 0, "n0's NIC slower than its router's other ports");
    topo_free(node);
    topo_free(fresh);
    topo_free(slow);
    topo_free(root);
}

/* Shipped machines, each loaded twice with every rate scaled (x 0.5, x 0.1):
 * where topo_routes_alike says the scaled one routes as the file's, every
 * pair's route on it, looked up in the file's cache, is a fresh scaled
 * machine's (PXN's NVLink test is a threshold: x 0.1 takes cluster-h100's
 * NVLink below it, and that machine must route alone). */
Test(twin, shipped_machines_scaled_route_as_fresh_ones_where_alike) {
    static const char *const m[][2] = {
        {"topologies/cluster-h100.yaml", "nodes=4"},     {"topologies/cluster-h100.yaml", "nodes=4,gdr=false"},
        {"topologies/cluster-h100.yaml", "nodes=2,p2p=false"}, {"topologies/gb200-nvl72.yaml", "trays=4"},
        {"topologies/dgx1-v100.yaml", "-"},              {"topologies/pcie-8gpu.yaml", "-"},
        {"topologies/cluster-mi300x.yaml", "nodes=2"},   {"topologies/p5.yaml", "nodes=2"},
    };
    int shared = 0, alone = 0;
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
        for (double scale = 0.5; scale > 0.05; scale -= 0.4) {
            topo_t *root = th_load(m[i][0], m[i][1]), *t = th_load(m[i][0], m[i][1]), *fresh = th_load(m[i][0], m[i][1]);
            for (int l = 0; l < topo_nlinks(t); l += 2) {
                cr_assert_eq(topo_set_link_bw(t, l, topo_dlink(t, l)->bw * scale, NULL), 0);
                cr_assert_eq(topo_set_link_bw(fresh, l, topo_dlink(fresh, l)->bw * scale, NULL), 0);
            }
            topo_route_t r;
            cr_assert_eq(topo_route(root, 0, topo_nranks(root) - 1, &r, NULL), 0);
            char what[160];
            snprintf(what, sizeof what, "%s %s x %g", m[i][0], m[i][1], scale);
            if (topo_share_routes(t, root)) {
                shared++;
                routes_as(t, fresh, what);
            } else alone++;
            int pxn_below = strstr(m[i][0], "cluster-h100") && scale < 0.2 && topo_params_c(root)->pxn;
            cr_expect(!pxn_below || topo_route_owner(t) == t, "%s: NVLink below PXN's test routes alone", what);
            topo_free(fresh);
            topo_free(t);
            topo_free(root);
        }
    cr_expect_geq(shared, 10, "%d of %d shared: the test would show nothing", shared, shared + alone);
    cr_expect_geq(alone, 1, "PXN's threshold crossed somewhere");
}

/* A row's closed-form view on a twin (its link loads counted on the root,
 * costed at the twin's rates) is a fresh machine's, bit for bit: a pattern
 * of peers (the ring) and a pattern of steps (pairwise all-to-all). */
Test(twin, a_views_loads_counted_once_cost_as_a_fresh_machines) {
    const char *sets[] = {"nodes=32,routers_per_group=1", "nodes=32,routers_per_group=1,nic_bw=60Gb/s"};
    topo_t *root = th_load("topologies/polaris.yaml", sets[0]);
    topo_t *twin = th_load("topologies/polaris.yaml", sets[1]), *fresh = th_load("topologies/polaris.yaml", sets[1]);
    cr_assert_eq(topo_share_routes(twin, root), 1);
    struct { coll_t coll; const char *row; } rows[] = {{COLL_ALLREDUCE, "ring"}, {COLL_ALLTOALL, "pairwise"}};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const algo_t *a = algo_find(rows[i].coll, rows[i].row);
        cr_assert_not_null(a, "%s", rows[i].row);
        topo_t *on[3] = {root, twin, fresh};
        cost_model_t v[3];
        for (int k = 0; k < 3; k++) {
            algo_opts_t o = {0};
            form_opts(on[k], &o);
            sched_t s;
            cost_model_t m;
            cr_assert_eq(topo_cost_model(on[k], &m, NULL), 0);
            cr_assert_eq(algo_build(a, topo_nranks(on[k]), 1 << 26, &o, &s, NULL), 0);
            cr_assert_eq(form_model(on[k], a, &s, &m, &v[k], NULL), 0, "%s", rows[i].row);
        }
        cr_expect(v[1].beta != v[0].beta, "%s: the twin's rates, not the root's (%g)", rows[i].row, v[1].beta);
        cr_expect(memcmp(&v[1].alpha, &v[2].alpha, sizeof v[1].alpha) == 0 &&
                      memcmp(&v[1].beta, &v[2].beta, sizeof v[1].beta) == 0 &&
                      memcmp(&v[1].beta_path, &v[2].beta_path, sizeof v[1].beta_path) == 0 &&
                      v[1].channels == v[2].channels,
                  "%s: twin %g s %g s/B %g s/B against fresh %g %g %g", rows[i].row, v[1].alpha, v[1].beta,
                  v[1].beta_path, v[2].alpha, v[2].beta, v[2].beta_path);
    }
    topo_free(fresh);
    topo_free(twin);
    topo_free(root);
}

/* Routes put aside while every rate changes come back when the rates do
 * (the same cache, not found again); a rate left changed drops them. */
Test(twin, routes_put_aside_come_back_with_their_rates) {
    topo_t *t = th_load("topologies/polaris.yaml", "nodes=4"), *fresh = th_load("topologies/polaris.yaml", "nodes=4");
    int p = topo_nranks(t), n = topo_nlinks(t);
    topo_route_t before, during, after;
    cr_assert_eq(topo_route(t, 0, p - 1, &before, NULL), 0);
    double *saved = malloc((size_t)n * sizeof *saved);
    cr_assert_eq(topo_routes_aside(t), 0);
    for (int l = 0; l < n; l += 2) saved[l] = topo_dlink(t, l)->bw, topo_set_link_bw(t, l, saved[l] * (l % 4 ? 0.3 : 3), NULL);
    cr_assert_eq(topo_route(t, 0, p - 1, &during, NULL), 0);
    cr_expect_neq(during.bw, before.bw, "the passing rates are routed at");
    for (int l = 0; l < n; l += 2) topo_set_link_bw(t, l, saved[l], NULL);
    topo_routes_back(t);
    cr_assert_eq(topo_route(t, 0, p - 1, &after, NULL), 0);
    cr_expect_eq(after.links, before.links, "the cache put aside, back");
    routes_as(t, fresh, "back");
    cr_assert_eq(topo_routes_aside(t), 0);
    cr_assert_eq(topo_set_link_bw(t, 0, saved[0] * 0.5, NULL), 0);
    topo_routes_back(t);                               /* a rate still changed: re-rated, or dropped */
    cr_assert_eq(topo_set_link_bw(fresh, 0, saved[0] * 0.5, NULL), 0);
    routes_as(t, fresh, "a rate left changed");
    cr_assert_eq(topo_routes_aside(t), 0);             /* freed while aside: the sanitizers' run sees a bad read */
    free(saved);
    topo_free(fresh);
    topo_free(t);
}

/* Route every pair of t; the searches it took. */
static uint64_t route_all(topo_t *t) {
    uint64_t before = topo_nsearches(t);
    for (int s = 0; s < topo_nranks(t); s++)
        for (int d = 0; d < topo_nranks(t); d++) {
            topo_route_t r;
            cr_assert_eq(topo_route(t, s, d, &r, NULL), 0);
        }
    return topo_nsearches(t) - before;
}

/* A calibration's steps on one machine: the network's rates scaled (a
 * class of links, as calibrate's efficiencies do), passing on the way
 * through an order that would route otherwise (one link of a class moved
 * before the rest), keep every route, found by no new search, each at the
 * narrowest rate a fresh machine gives; a change that reorders a router's
 * ports forgets them, and the routes found again are a fresh machine's. */
Test(twin, rates_changed_in_their_order_keep_the_routes_rerated) {
    const char *sets = "nodes=32,routers_per_group=1";
    topo_t *t = th_load("topologies/polaris.yaml", sets), *fresh = th_load("topologies/polaris.yaml", sets);
    cr_assert_gt(route_all(t), 0, "routing every pair searches");
    uint32_t found = topo_nroutes(t);
    uint64_t epoch = topo_route_epoch(t);
    int n = topo_nlinks(t), nic = topo_find_node(t, "n0.nic0");
    for (int l = 0; l < n; l += 2)           /* every link at 0.6 of its rate, one link at a time */
        for (topo_t *m = t; m; m = m == t ? fresh : NULL)
            cr_assert_eq(topo_set_link_bw(m, l, topo_dlink(m, l)->bw * 0.6, NULL), 0);
    cr_expect_eq(topo_route_epoch(t), epoch, "the same links: what was computed from them alone stands");
    cr_expect_eq(topo_nroutes(t), found, "the order is the one the routes were found at: kept");
    cr_expect_eq(route_all(t), 0, "and no search finds them again");
    routes_as(t, fresh, "x 0.6");
    for (int l = 0; l < n; l += 2)           /* n0's NIC at a tenth: its router's ports reorder */
        if (topo_dlink(t, l)->src == nic || topo_dlink(t, l)->dst == nic)
            for (topo_t *m = t; m; m = m == t ? fresh : NULL)
                cr_assert_eq(topo_set_link_bw(m, l, topo_dlink(m, l)->bw * 0.1, NULL), 0);
    topo_route_epoch(t);
    cr_expect_eq(topo_nroutes(t), 0, "another order: the routes are forgotten");
    route_all(t);
    topo_t *again = th_load("topologies/polaris.yaml", sets);
    for (int l = 0; l < n; l += 2) cr_assert_eq(topo_set_link_bw(again, l, topo_dlink(fresh, l)->bw, NULL), 0);
    routes_as(t, again, "n0's NIC slowed");
    topo_free(again);
    topo_free(fresh);
    topo_free(t);
}

/* The two-ways machine: g0's way a falls below b, and t routes by b as a
 * fresh machine does (the order changed: forgotten); a rises back above b
 * and t routes by a again. */
Test(twin, rates_that_reorder_a_choice_route_again) {
    topo_t *t = two_ways_at("build/twin-settle.yaml", 1);
    int by_a = link_from(t, "g0", "sa"), by_b = link_from(t, "g0", "sb");
    topo_route_t r;
    cr_assert_eq(topo_route(t, 0, 1, &r, NULL), 0);
    cr_expect_eq(r.links[0], by_a);
    cr_assert_eq(topo_set_link_bw(t, by_a, 10e9, NULL), 0);
    cr_assert_eq(topo_route(t, 0, 1, &r, NULL), 0);
    cr_expect_eq(r.links[0], by_b, "a at 10 GB/s, b at 50: by b");
    cr_expect_eq(r.bw, 50e9, "%g", r.bw);
    cr_assert_eq(topo_set_link_bw(t, by_a, 60e9, NULL), 0);
    cr_assert_eq(topo_route(t, 0, 1, &r, NULL), 0);
    cr_expect_eq(r.links[0], by_a, "a at 60 GB/s: by a again");
    cr_expect_eq(r.bw, 60e9, "%g", r.bw);
    cr_assert_eq(topo_set_link_bw(t, by_b, 60e9, NULL), 0);   /* a tie: destination-mod-k's choice, as fresh */
    topo_t *fresh = two_ways_at("build/twin-settle-fresh.yaml", 1);
    cr_assert_eq(topo_set_link_bw(fresh, by_a, 60e9, NULL), 0);
    cr_assert_eq(topo_set_link_bw(fresh, by_b, 60e9, NULL), 0);
    routes_as(t, fresh, "a tie");
    topo_free(fresh);
    topo_free(t);
}

/* A machine that shares a twin's routes keeps the share through a passing
 * change of its own rates (NCCL's view of it: aside, rates set, rates
 * back), and through a change of its own that keeps their order. */
Test(twin, a_share_outlives_a_passing_change_and_an_ordered_one) {
    topo_t *root = two_ways_at("build/twin-pass-root.yaml", 1), *t = two_ways_at("build/twin-pass.yaml", 0.5);
    topo_route_t r;
    cr_assert_eq(topo_route(root, 0, 1, &r, NULL), 0);
    cr_assert_eq(topo_share_routes(t, root), 1);
    int n = topo_nlinks(t);
    double *saved = malloc((size_t)n * sizeof *saved);
    cr_assert_eq(topo_routes_aside(t), 0);
    for (int l = 0; l < n; l += 2) saved[l] = topo_dlink(t, l)->bw, topo_set_link_bw(t, l, 1e9 * (l + 1), NULL);
    cr_assert_eq(topo_route(t, 0, 1, &r, NULL), 0);
    for (int l = 0; l < n; l += 2) topo_set_link_bw(t, l, saved[l], NULL);
    topo_routes_back(t);
    cr_expect_eq(topo_route_owner(t), root, "the share came back with the rates");
    for (int l = 0; l < n; l += 2) topo_set_link_bw(t, l, saved[l] * 0.25, NULL);
    cr_expect_eq(topo_route_owner(t), root, "every rate x 0.25: the same order, the share stands");
    cr_assert_eq(topo_route(t, 0, 1, &r, NULL), 0);
    cr_expect_eq(r.bw, 50e9 * 0.25, "at t's own rates: %g", r.bw);
    free(saved);
    topo_free(t);
    topo_free(root);
}

/* Routes put aside, then the routing itself changed (every pair searched
 * in full): they do not come back, though the rates are the same. */
Test(twin, routes_put_aside_do_not_outlive_a_change_of_routing) {
    topo_t *t = th_load("topologies/polaris.yaml", "nodes=4");
    topo_route_t r;
    cr_assert_eq(topo_route(t, 0, topo_nranks(t) - 1, &r, NULL), 0);
    cr_assert_eq(topo_routes_aside(t), 0);
    topo_set_route_shortcut(t, 0);
    topo_routes_back(t);
    topo_route_epoch(t);
    cr_expect_eq(topo_nroutes(t), 0, "found the other way: forgotten");
    topo_free(t);
}
