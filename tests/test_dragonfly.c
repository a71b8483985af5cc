/* test_dragonfly.c - the dragonfly generator (topologies/dragonfly.c) and
 * its routing. Oracles: routes and link loads worked out by hand on a
 * small instance, and the simulator's full run against --symmetric.
 *
 * The instance: 12 hosts h0..h11, 2 a router (r0..r5), 2 routers a group
 * (g0 = r0 r1, g1 = r2 r3, g2 = r4 r5), 1 global port a router. Group i's
 * port o = (j - i - 1) mod 3 goes to group j (the consecutive arrangement,
 * port q on router q of the group):
 *     g0-g1: r0 (o 0) - r3 (o 1)     g1-g2: r2 - r5     g2-g0: r4 - r1
 * Host and local links 100 GB/s, 1 us; global links 100 GB/s, 2 us. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../models/cost.h"
#include "../topologies/dragonfly.h"
#include "../topologies/linkload.h"
#include "../topologies/topo_yaml.h"
#include "helpers.h"

static const char *const SMALL =
    "name: df-small\n"
    "params: {nodes: 12, routing: minimal, globals: 1, hpr: 2, rpg: 2}\n"
    "nodes:\n  - {name: \"h[0-${nodes-1}]\"}\n"
    "generate:\n"
    "  - {dragonfly: \"h[0-${nodes-1}]\", hosts_per_router: \"${hpr}\", routers_per_group: \"${rpg}\", global_ports: \"${globals}\",\n"
    "     bw: 100GB/s, latency: 1us, global_latency: 2us, routing: \"${routing}\"}\n";

static char *write_small(void) {
    static char path[] = "/tmp/baton_df_small.yaml";
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(SMALL, f);
    fclose(f);
    return path;
}

static topo_t *load(const char *sets) {
    char buf[128];
    const char *v[4];
    snprintf(buf, sizeof buf, "%s", sets);
    int n = th_sets(buf, v, 4);
    baton_err_t e = {0};
    topo_t *t = topo_yaml_load(write_small(), v, n, &e);
    cr_assert_not_null(t, "%s", e.msg);
    return t;
}

/* The nodes a route passes, "h0 df.r0 df.r3 h7". */
static void route_text(topo_t *t, int a, int b, char *out, size_t cap, double *lat) {
    topo_route_t r;
    baton_err_t e = {0};
    cr_assert_eq(topo_route(t, a, b, &r, &e), 0, "%s", e.msg);
    size_t w = (size_t)snprintf(out, cap, "%s", topo_node(t, topo_dlink(t, r.links[0])->src)->name);
    for (int i = 0; i < r.nlinks && w < cap; i++)
        w += (size_t)snprintf(out + w, cap - w, " %s", topo_node(t, topo_dlink(t, r.links[i])->dst)->name);
    *lat = r.lat;
}

Test(dragonfly, minimal_routes_by_hand) {
    topo_t *t = load("");
    static const struct { int a, b; const char *nodes; double lat; } want[] = {
        {0, 1, "h0 df.r0 h1", 2e-6},                               /* one router */
        {0, 3, "h0 df.r0 df.r1 h3", 3e-6},                         /* one group: a local link */
        {0, 7, "h0 df.r0 df.r3 h7", 4e-6},                         /* r0 holds g0's link to g1 */
        {0, 11, "h0 df.r0 df.r1 df.r4 df.r5 h11", 6e-6},           /* local, global (r1-r4), local */
        {11, 0, "h11 df.r5 df.r4 df.r1 df.r0 h0", 6e-6},
        {4, 9, "h4 df.r2 df.r5 df.r4 h9", 5e-6},                   /* r2 holds g1's link to g2 */
    };
    cr_expect_eq(topo_nnodes(t), 18);
    cr_expect_eq(topo_nlinks(t), 2 * (12 + 3 + 3), "12 host links, a local link a group, a global link a pair, both ways");
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        char got[256];
        double lat;
        route_text(t, want[i].a, want[i].b, got, sizeof got, &lat);
        cr_expect_str_eq(got, want[i].nodes, "h%d -> h%d", want[i].a, want[i].b);
        cr_expect_float_eq(lat, want[i].lat, 1e-15, "h%d -> h%d: %g s", want[i].a, want[i].b, lat);
    }
    topo_free(t);
}

/* Adaptive: links are pooled (dragonfly.c add_pool), a hub a group (df.gN:
 * each router's link to it its local link and its global port, 100 + 100
 * GB/s, 0.5 us) and a cable a group pair (its one global link's 100 GB/s,
 * 2 + 1 us). A pair across
 * groups takes the minimal route or the Valiant one through the third
 * group (h0 -> h11: 1 + 0.5 + 3 + 0.5 + 1 = 6 us, via g1 9 us), and over
 * all pairs both occur. */
Test(dragonfly, adaptive_spreads_over_valiant_paths) {
    topo_t *t = load("routing=adaptive");
    int minimal = 0, valiant = 0;
    for (int a = 0; a < 12; a++)
        for (int b = 0; b < 12; b++) {
            if (a / 4 == b / 4) continue;
            char got[256];
            double lat;
            route_text(t, a, b, got, sizeof got, &lat);
            int n = 0;
            for (const char *s = got; (s = strstr(s, "df.r")) != NULL; s++) n++;
            if (a == 0 && b == 11)
                cr_expect(!strcmp(got, "h0 df.r0 df.g0 df.g2 df.r5 h11") || !strcmp(got, "h0 df.r0 df.g0 df.g1 df.g2 df.r5 h11"),
                          "h0 -> h11: %s", got);
            if (a == 0 && b == 11) cr_expect_float_eq(lat, strstr(got, "df.g1") ? 9e-6 : 6e-6, 1e-15, "%s: %g s", got, lat);
            /* a minimal route crosses one global link (2 to 4 routers), a Valiant one two (3 to 6) */
            int globals = 0;
            topo_route_t r;
            baton_err_t e = {0};
            cr_assert_eq(topo_route(t, a, b, &r, &e), 0);
            for (int i = 0; i < r.nlinks; i++) globals += topo_dlink(t, r.links[i])->lat > 1.5e-6;
            cr_expect(globals == 1 || globals == 2, "h%d -> h%d: %s crosses %d global links", a, b, got, globals);
            minimal += globals == 1, valiant += globals == 2;
            (void)n;
        }
    cr_expect_gt(minimal, 0);
    cr_expect_gt(valiant, 0, "adaptive routing never took a Valiant path");
    topo_free(t);
}

/* Link loads: every host sends to the host 4 on (group g to group g + 1).
 * All four messages of a group cross its one global link to the next group
 * (r0->r3, r2->r5, r4->r1), so the busiest link carries 4 blocks: beta =
 * 4 / 100 GB/s; every route is 5 us long (h0: r0-r3-r2, 1 + 2 + 1 + 1; h2:
 * r1-r0-r3, the same). */
static int shift4(const void *ctx, int c, int r) {
    (void)c;
    return (r + 4) % (ctx ? *(const int *)ctx : 12);
}

Test(dragonfly, link_loads_by_hand) {
    topo_t *t = load("");
    cost_model_t m = {0};
    baton_err_t e = {0};
    cr_assert_eq(linkload_pattern_cost(t, shift4, NULL, 1, 1, &m, &e), 1, "%s", e.msg);
    cr_expect_float_eq(m.beta, 4 / 100e9, 1e-22, "beta %g", m.beta);
    cr_expect_float_eq(m.alpha, 5e-6, 1e-15, "alpha %g", m.alpha);
    topo_free(t);
}

/* A group's links pooled, by hand: 16 hosts, 4 a router, one group of 4
 * routers, every host sending to the one 4 on (router r to r + 1). Minimal,
 * the 4 messages share the local link r -> r + 1 (beta 4 / 100 GB/s); with
 * adaptive routing they share router r's link to the hub, its 3 local
 * links' 300 GB/s (beta 4 / 300 GB/s: a static route a pair could not
 * spread them). Every route is 3 us either way: 1 + 1 + 1, or 1 + 0.5 + 0.5
 * + 1. */
Test(dragonfly, adaptive_pools_a_groups_links_by_hand) {
    static const double want[2] = {4 / 100e9, 4 / 300e9};
    for (int adaptive = 0; adaptive < 2; adaptive++) {
        topo_t *t = load(adaptive ? "nodes=16 hpr=4 rpg=4 routing=adaptive" : "nodes=16 hpr=4 rpg=4");
        cost_model_t m = {0};
        baton_err_t e = {0};
        int hosts = 16;
        cr_assert_eq(linkload_pattern_cost(t, shift4, &hosts, 1, 1, &m, &e), 1, "%s", e.msg);
        cr_expect_float_eq(m.beta, want[adaptive], 1e-22, "adaptive %d: beta %g", adaptive, m.beta);
        cr_expect_float_eq(m.alpha, 3e-6, 1e-15, "adaptive %d: alpha %g", adaptive, m.alpha);
        char got[256];
        double lat;
        route_text(t, 0, 4, got, sizeof got, &lat);
        cr_expect_str_eq(got, adaptive ? "h0 df.r0 df.g0 df.r1 h4" : "h0 df.r0 df.r1 h4");
        topo_free(t);
    }
}

/* With 2 global ports a router (2 links between each pair of groups) a
 * ring's routes repeat a group on: --symmetric simulates 4 ranks for 12 and
 * answers what the full run does. With 1 port the wrap-around shares r1->r0
 * with group 0's way out, and --symmetric says why it cannot stand in. */
Test(dragonfly, symmetric_equals_full) {
    const char *path = write_small();
    char cmd[512], *a = NULL, *b = NULL;
    snprintf(cmd, sizeof cmd, "sim -t %s --set globals=2 -c allreduce -a ring -s 1200000 --symmetric", path);
    cr_assert_eq(th_cli(cmd, &a, 1), 0, "%s", a);
    snprintf(cmd, sizeof cmd, "sim -t %s --set globals=2 -c allreduce -a ring -s 1200000 --no-symmetric", path);
    cr_assert_eq(th_cli(cmd, &b, 1), 0, "%s", b);
    cr_expect_not_null(strstr(a, "4 representatives simulated for 12 ranks"), "%s", a);
    const char *ta = strstr(a, "time"), *tb = strstr(b, "time");
    cr_assert(ta && tb);
    cr_expect_eq(strtod(ta + 4, NULL), strtod(tb + 4, NULL), "symmetric %s vs full %s", ta, tb);
    free(a), free(b);
    th_says("sim -t /tmp/baton_df_small.yaml -c allreduce -a ring -s 1200000 --symmetric", 1, "--symmetric:", 1);
}

/* The pool is never slower than the links as built: every router's hub
 * link carries what all its links carry, so an all-to-all on a group of 3
 * routers, or across two groups of one router (global ports only: no local
 * hop, no local latency), takes no longer adaptive than minimal where flows
 * share links fairly (FIFO holds a link for one message at a time, so a
 * pooled link there serves two flows one after the other:
 * docs/decisions/scale.md). */
static double sim_time(const char *sets) {
    char cmd[512];
    snprintf(cmd, sizeof cmd, "sim -t /tmp/baton_df_small.yaml %s -c alltoall -a direct -s 1200000000 --contention fair "
             "--json", sets);
    return th_cli_num(cmd, "time_s");
}

Test(dragonfly, a_pool_is_never_slower_than_its_links) {
    write_small();
    static const char *const shapes[] = {"--set nodes=12 --set hpr=4 --set rpg=3", "--set nodes=4 --set hpr=2 --set rpg=1 "
                                         "--set globals=2"};
    for (int i = 0; i < 2; i++) {
        char adaptive[256];
        snprintf(adaptive, sizeof adaptive, "%s --set routing=adaptive", shapes[i]);
        double a = sim_time(adaptive), m = sim_time(shapes[i]);
        cr_expect_leq(a, m * (1 + 1e-9), "%s: adaptive %g s, minimal %g s", shapes[i], a, m);
    }
}

Test(dragonfly, impossible_counts_name_the_line) {
    th_says("topo /tmp/baton_df_small.yaml --set nodes=40", 1,
            "baton_df_small.yaml:6:5: dragonfly: 40 hosts make 10 groups, and each group needs a global link to each of the 9 others", 1);
    write_small();
    th_says("topo /tmp/baton_df_small.yaml --set routing=valiant", 1, "routing 'valiant': a dragonfly routes minimal or adaptive", 1);
    gen_dragonfly_t f = {.per_router = 2, .per_group = 2, .globals = 1, .links = 3};
    dfly_shape_t s;
    baton_err_t e = {0};
    cr_expect_lt(dfly_shape(&f, 12, &s, &e), 0);
    cr_expect_not_null(strstr(e.msg, "3 global links between each pair of 3 groups need 6 ports"), "%s", e.msg);
    f.links = 1;
    cr_expect_eq(dfly_shape(&f, 12, &s, &e), 0);
    cr_expect_eq(s.routers, 6);
    cr_expect_eq(s.groups, 3);
}
