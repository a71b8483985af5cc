/* test_topo.c - YAML topologies: errors name file:line:col; routes; cost model. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sim/answer/run.h"
#include "../topologies/graph.h"
#include "../sim/nccl/tuning.h"
#include "../topologies/knobs.h"
#include "../topologies/topo_yaml.h"
#include "helpers.h"

static void expect_error(const char *file, const char *where, const char *what) {
    baton_err_t e = {0};
    topo_t *t = topo_yaml_load(file, NULL, 0, &e);
    cr_assert_null(t, "%s should be rejected", file);
    topo_free(t);
    cr_expect_neq(e.code, 0);
    cr_expect(strstr(e.msg, where) != NULL, "'%s' should say where ('%s')", e.msg, where);
    cr_expect(strstr(e.msg, what) != NULL, "'%s' should say what ('%s')", e.msg, what);
}

/* Every file under tests/data/bad/ opens with "# expect: LINE:COL | phrase"
 * (LINE:COL "-" when the error has no position); loading it must fail with
 * "FILE:LINE:COL:" and the phrase in the message. */
Test(topo_yaml, every_malformed_file_names_its_place) {
    DIR *d = opendir("tests/data/bad");
    cr_assert_not_null(d);
    int n = 0;
    for (struct dirent *de; (de = readdir(d)) != NULL;) {
        if (!strstr(de->d_name, ".yaml")) continue;
        char path[512], first[512], where[1100];
        snprintf(path, sizeof path, "tests/data/bad/%s", de->d_name);
        FILE *f = fopen(path, "r");
        cr_assert_not_null(f);
        cr_assert_not_null(fgets(first, sizeof first, f));
        fclose(f);
        char *bar = strstr(first, " | ");
        cr_assert(strncmp(first, "# expect: ", 10) == 0 && bar, "%s: no expect line", path);
        *bar = '\0';
        char *what = bar + 3;
        what[strcspn(what, "\n")] = '\0';
        if (strcmp(first + 10, "-") == 0) snprintf(where, sizeof where, "%s", path);
        else snprintf(where, sizeof where, "%s:%s:", path, first + 10);
        expect_error(path, where, what);
        n++;
    }
    closedir(d);
    cr_expect_geq(n, 20, "only %d malformed files", n);
}

/* Every knob (topologies/knobs.c) reads the same from a machine file as from
 * --set, each into its own field, and an overlay may set all but those that
 * shape the machine or say which NCCL and transport it runs. */
Test(topo_yaml, a_knob_reads_the_same_from_the_file_and_from_set) {
    static const char *const kv[][2] = {
        {"ports", "3"}, {"reduce_bw", "7GB/s"}, {"max_inflight", "5"}, {"group_size", "2"}, {"p2p", "false"},
        {"bw_scale", "0.5"}, {"lat_scale", "2"}, {"channels", "4"}, {"launch", "3us"}, {"nvls_efficiency", "0.7"},
        {"nvls_latency", "9us"}, {"host_bw", "11GB/s"}, {"pxn", "true"}, {"stage_bw", "4GB/s"},
        {"stage_latency", "6us"}, {"ll_scan", "5ns"}, {"nccl_version", "2.26.6"}, {"registered", "true"},
        {"nccl_tuner", "true"}, {"socket", "true"}, {"socket_bw", "3GB/s"}, {"socket_latency", "7us"},
        {"socket_threads", "2"}, {"gdr", "false"}, {"cta_policy", "2"}, {"eager", "true"},
        {"software_matching", "true"}, {"match_latency", "4us"}, {"rendezvous_latency", "12us"},
        {"rendezvous_above", "9000"}, {"inline_latency", "13us"}, {"inline_max", "200"},
        {"proxy_op_latency", "3us"}};
    enum { N = sizeof kv / sizeof kv[0] };
    const char *body = "nodes:\n  - {name: \"g[0-3]\"}\n  - {name: cpu0, kind: cpu}\n  - {name: nic0, kind: nic}\n"
                       "links:\n  - {mesh: \"g[0-3]\", bw: 100GB/s, latency: 1us}\n"
                       "  - {a: \"g[0-3]\", b: cpu0, bw: 20GB/s, latency: 1us}\n  - {a: cpu0, b: nic0, bw: 20GB/s, latency: 1us}\n";
    int n = 0;
    while (knobs_name(n)) n++;
    cr_assert_eq(n, N, "%d knobs, %d here: a new knob needs a value in this test", n, N);
    FILE *f = fopen("build/knobs-file.yaml", "w"), *g = fopen("build/knobs-base.yaml", "w");
    cr_assert(f && g);
    fputs("name: knobs\n", f);
    fputs("name: knobs\n", g);
    char sets[N][64];
    const char *setv[N];
    for (int i = 0; i < N; i++) {
        cr_expect(knobs_is(kv[i][0]), "%s", kv[i][0]);
        cr_expect_eq(knobs_overlay(kv[i][0]), strcmp(kv[i][0], "group_size") && strcmp(kv[i][0], "p2p") && strcmp(kv[i][0], "pxn") &&
                     strcmp(kv[i][0], "nccl_version") && strcmp(kv[i][0], "registered") && strcmp(kv[i][0], "nccl_tuner") &&
                     strcmp(kv[i][0], "socket") && strcmp(kv[i][0], "socket_latency") && strcmp(kv[i][0], "socket_threads") &&
                     strcmp(kv[i][0], "gdr") && strcmp(kv[i][0], "cta_policy") && strcmp(kv[i][0], "eager") &&
                     strcmp(kv[i][0], "software_matching") && strcmp(kv[i][0], "match_latency") &&
                     strcmp(kv[i][0], "rendezvous_above") && strcmp(kv[i][0], "inline_latency") &&
                     strcmp(kv[i][0], "inline_max") && strcmp(kv[i][0], "proxy_op_latency"), "%s", kv[i][0]);
        fprintf(f, "%s: %s\n", kv[i][0], kv[i][1]);
        snprintf(sets[i], sizeof sets[i], "%s=%s", kv[i][0], kv[i][1]);
        setv[i] = sets[i];
    }
    fputs(body, f);
    fputs(body, g);
    fclose(f);
    fclose(g);
    baton_err_t e = {0};
    topo_t *a = topo_yaml_load("build/knobs-file.yaml", NULL, 0, &e), *b = NULL, *d = NULL;
    cr_assert_not_null(a, "%s", e.msg);
    cr_assert_not_null(b = topo_yaml_load("build/knobs-base.yaml", setv, N, &e), "%s", e.msg);
    cr_assert_not_null(d = topo_yaml_load("build/knobs-base.yaml", NULL, 0, &e), "%s", e.msg);
    const topo_params_t *x = topo_params_c(a), *y = topo_params_c(b), *z = topo_params_c(d);
    const double got[][3] = {
        {x->ports, y->ports, 3}, {x->reduce_bw, y->reduce_bw, 7e9}, {x->max_inflight, y->max_inflight, 5},
        {x->group_size, y->group_size, 2}, {x->p2p, y->p2p, 0}, {x->bw_scale, y->bw_scale, 0.5},
        {x->lat_scale, y->lat_scale, 2}, {x->channels, y->channels, 4}, {x->launch, y->launch, 3e-6},
        {x->nvls_eff, y->nvls_eff, 0.7}, {x->nvls_lat, y->nvls_lat, 9e-6}, {x->host_bw, y->host_bw, 11e9},
        {x->pxn, y->pxn, 1}, {x->stage_bw, y->stage_bw, 4e9}, {x->stage_lat, y->stage_lat, 6e-6},
        {x->ll_scan, y->ll_scan, 5e-9}, {x->lib.nccl_version, y->lib.nccl_version, 22606},
        {x->registered, y->registered, 1}, {x->nccl_tuner, y->nccl_tuner, 1}, {x->socket, y->socket, 1},
        {x->socket_bw, y->socket_bw, 3e9}, {x->socket_lat, y->socket_lat, 7e-6}, {x->socket_threads, y->socket_threads, 2},
        {x->gdr, y->gdr, 0}, {x->cta_policy, y->cta_policy, 2}, {x->eager, y->eager, 1},
        {x->sw_match, y->sw_match, 1}, {x->match_lat, y->match_lat, 4e-6}, {x->rdzv_lat, y->rdzv_lat, 12e-6},
        {x->rdzv_above, y->rdzv_above, 9000}, {x->inline_lat, y->inline_lat, 13e-6}, {x->inline_max, y->inline_max, 200},
        {x->op_lat, y->op_lat, 3e-6}};
    const double dflt[] = {z->ports, z->reduce_bw, z->max_inflight, z->group_size, z->p2p, z->bw_scale, z->lat_scale,
                           z->channels, z->launch, z->nvls_eff, z->nvls_lat, z->host_bw, z->pxn, z->stage_bw,
                           z->stage_lat, z->ll_scan, z->lib.nccl_version, z->registered, z->nccl_tuner,
                           z->socket, z->socket_bw, z->socket_lat, z->socket_threads, z->gdr, z->cta_policy, z->eager,
                           z->sw_match, z->match_lat, z->rdzv_lat, z->rdzv_above, z->inline_lat, z->inline_max,
                           z->op_lat};
    for (int i = 0; i < N; i++) {
        cr_expect_float_eq(got[i][0], got[i][2], 1e-15 * (1 + got[i][2]), "%s from the file: %g", kv[i][0], got[i][0]);
        cr_expect_float_eq(got[i][1], got[i][2], 1e-15 * (1 + got[i][2]), "%s from --set: %g", kv[i][0], got[i][1]);
        cr_expect_neq(dflt[i], got[i][2], "%s: the test's value is the default, so it shows nothing", kv[i][0]);
    }
    topo_free(a);
    topo_free(b);
    topo_free(d);
}

/* `baton topo` lists every knob with its value, a --set one as set. */
Test(topo_yaml, topo_lists_every_knob) {
    char *out;
    cr_assert_eq(th_cli("topo topologies/pcie-box.yaml --set channels=3 --set stage_bw=2.5GB/s", &out, 1), 0, "%s", out);
    for (int i = 0; knobs_name(i); i++) {
        char want[64];
        snprintf(want, sizeof want, "%s=", knobs_name(i));
        cr_expect(strstr(out, want) != NULL, "no %s in: %s", knobs_name(i), out);
    }
    cr_expect(strstr(out, "channels=3,") && strstr(out, "stage_bw=2.5GB/s,") && strstr(out, "p2p=false,"), "%s", out);
    free(out);
}

/* A machine that leaves channels to NCCL shows "channels=auto", not a count
 * of 0 no run uses; --set takes "auto" back, and no other count takes it. */
Test(topo_yaml, unset_channels_show_and_set_as_auto) {
    char *out;
    cr_assert_eq(th_cli("topo topologies/dgx1-v100.yaml", &out, 1), 0, "%s", out);
    cr_expect(strstr(out, "channels=auto,") && !strstr(out, "channels=0"), "%s", out);
    free(out);
    cr_assert_eq(th_cli("topo topologies/dgx1-v100.yaml --set channels=3 --set channels=auto", &out, 1), 0, "%s", out);
    cr_expect(strstr(out, "channels=auto,") != NULL, "%s", out);
    free(out);
    cr_expect_neq(th_cli("topo topologies/dgx1-v100.yaml --set max_inflight=auto", &out, 0), 0, "%s", out);
    cr_expect(strstr(out, "max_inflight") && !strstr(out, "or auto"), "%s", out);
    free(out);
}

/* p2p=false stages through a CPU node; on a machine with none it changes
 * nothing, and the user is told so (a machine with CPUs is not warned, and
 * its answer moves). */
Test(topo_yaml, p2p_off_without_a_cpu_is_said) {
    char *out, *on, *off;
    cr_assert_eq(th_cli("predict -t hgx-h100 -c allreduce -a ring -s 1GiB --set p2p=false", &out, 0), 0, "%s", out);
    cr_expect(strstr(out, "p2p=false changes nothing on this machine") != NULL, "%s", out);
    free(out);
    cr_assert_eq(th_cli("predict -t dgx1-v100 -c allreduce -a ring -s 1GiB --set p2p=false", &off, 0), 0, "%s", off);
    cr_expect(strstr(off, "changes nothing") == NULL, "%s", off);
    cr_assert_eq(th_cli("predict -t dgx1-v100 -c allreduce -a ring -s 1GiB", &on, 0), 0, "%s", on);
    cr_expect(strcmp(strstr(on, "time"), strstr(off, "time")) != 0, "staged and direct print the same:\n%s", off);
    free(on);
    free(off);
}

/* topo --dot escapes a quote and a backslash in a name (the loader takes
 * both): before, `graph "we"ird"` and a name ending in a backslash ended
 * their DOT strings early, and Graphviz refused the file. */
Test(topo_yaml, dot_escapes_quotes_and_backslashes) {
    topo_free(th_load_text("build/dot-quote.yaml", "name: 'we\"ird'\nnodes:\n  - {name: 'g\"0'}\n  - {name: 'g1\\'}\n"
                           "  - {name: 'sw\\n', kind: switch}\nlinks:\n"
                           "  - {a: 'g\"0', b: 'sw\\n', bw: 100GB/s, latency: 1us}\n"
                           "  - {a: 'g1\\', b: 'sw\\n', bw: 100GB/s, latency: 1us}\n"));
    char *out;
    cr_assert_eq(th_cli("topo build/dot-quote.yaml --dot", &out, 1), 0, "%s", out);
    cr_expect(strstr(out, "graph \"we\\\"ird\" {\n") &&
              strstr(out, "\n  \"g\\\"0\" [shape=ellipse, label=\"g\\\"0\\nrank 0\"];\n") &&
              strstr(out, "\n  \"g1\\\\\" [shape=ellipse, label=\"g1\\\\\\nrank 1\"];\n") &&
              strstr(out, "\n  \"sw\\\\n\" [label=\"sw\\\\n\\nswitch\"];\n") &&
              strstr(out, "\n  \"g1\\\\\" -- \"sw\\\\n\" [label=\"100 GB/s\"];\n"), "%s", out);
    free(out);
}

/* A bracket may list numbers and ranges, in the order written. */
Test(topo_yaml, a_bracket_lists_numbers_and_ranges) {
    const char *f = "/tmp/baton_bracket_list.yaml";
    FILE *fp = fopen(f, "w");
    cr_assert_not_null(fp);
    fputs("name: l\nnodes:\n  - {name: \"n[3,0].gpu[0,2,5-6]\"}\n  - {name: sw, kind: switch}\nlinks:\n"
          "  - {a: \"n[3,0].gpu[0,2,5-6]\", b: sw, bw: 1GB/s, latency: 1us}\n", fp);
    fclose(fp);
    topo_t *t = th_load(f, NULL);
    static const char *const names[] = {"n3.gpu0", "n3.gpu2", "n3.gpu5", "n3.gpu6", "n0.gpu0", "n0.gpu2", "n0.gpu5", "n0.gpu6"};
    cr_assert_eq(topo_nranks(t), 8);
    for (int r = 0; r < 8; r++) cr_expect_str_eq(topo_rank_name(t, r), names[r]);
    topo_free(t);
    remove(f);
}

Test(topo_yaml, missing_file) {
    expect_error("tests/data/no-such-file.yaml", "no-such-file.yaml", "cannot open");
}

Test(topo_yaml, shipped_topologies_load) {
    const char *files[] = {"topologies/candy-kids.yaml", "topologies/uniform-8.yaml",
                           "topologies/hgx-h100.yaml", "topologies/hgx-a100.yaml", "topologies/dgx1-v100.yaml",
                           "topologies/pcie-2gpu.yaml", "topologies/pcie-8gpu.yaml",
                           "topologies/cluster-a100.yaml", "topologies/cluster-h100.yaml"};
    int ranks[] = {4, 8, 8, 8, 8, 2, 8, 16, 16};
    for (int i = 0; i < 9; i++) {
        baton_err_t e = {0};
        topo_t *t = topo_yaml_load(files[i], NULL, 0, &e);
        cr_assert_not_null(t, "%s: %s", files[i], e.msg);
        cr_expect_eq(topo_nranks(t), ranks[i], "%s", files[i]);
        topo_free(t);
    }
}

Test(topo_yaml, candy_kids_names_and_params) {
    baton_err_t e = {0};
    topo_t *t = topo_yaml_load("topologies/candy-kids.yaml", NULL, 0, &e);
    cr_assert_not_null(t, "%s", e.msg);
    const char *names[] = {"Anna", "Ben", "Cara", "Dan"};
    for (int r = 0; r < 4; r++) cr_expect_str_eq(topo_rank_name(t, r), names[r]);
    cr_expect_eq(topo_params_c(t)->ports, 1);
    cr_expect_eq(topo_nlinks(t), 12, "a 4-mesh has 6 full-duplex links");
    topo_free(t);
}

Test(topo_yaml, hgx_h100_is_450GBps_through_a_switch) {
    baton_err_t e = {0};
    topo_t *t = topo_yaml_load("topologies/hgx-h100.yaml", NULL, 0, &e);
    cr_assert_not_null(t, "%s", e.msg);
    topo_route_t rt;
    cr_assert_eq(topo_route(t, 0, 7, &rt, &e), 0);
    cr_expect_eq(rt.nlinks, 2);
    cr_expect_eq(rt.bw, 450e9);
    cr_expect_float_eq(rt.lat, 0.6e-6, 1e-15);
    cr_expect_eq(topo_params_c(t)->ports, 0);
    topo_free(t);
}

/* The closed forms' view of the machine is kept between calls (select asks
 * once a cell) and must follow every change: a link class's efficiency
 * (beta), the latency and bandwidth scales (alpha, beta), the reduction
 * rate (gamma); the same numbers as a machine loaded fresh with them. */
Test(topo, the_cost_model_follows_the_machine_it_is_kept_on) {
    baton_err_t e = {0};
    topo_t *t = topo_yaml_load("topologies/hgx-h100.yaml", NULL, 0, &e);
    cr_assert_not_null(t, "%s", e.msg);
    cost_model_t a, b;
    cr_assert_eq(topo_cost_model(t, &a, &e), 0, "%s", e.msg);
    cr_expect_float_eq(a.beta, 1 / 450e9, 1e-25);
    cr_assert_eq(topo_set_class_efficiency(t, "gpu-switch", 0.5, &e), 0, "%s", e.msg);
    cr_assert_eq(topo_cost_model(t, &b, &e), 0);
    cr_expect_float_eq(b.beta, 1 / 225e9, 1e-25, "efficiency 0.5: beta %g", b.beta);
    topo_params(t)->lat_scale = 2;
    topo_params(t)->bw_scale = 0.5;
    topo_params(t)->reduce_bw = 100e9;
    cr_assert_eq(topo_cost_model(t, &b, &e), 0);
    cr_expect_float_eq(b.alpha, 2 * a.alpha, 1e-20, "alpha %g, was %g", b.alpha, a.alpha);
    cr_expect_float_eq(b.beta, 1 / 112.5e9, 1e-25, "beta %g", b.beta);
    cr_expect_float_eq(b.gamma, 1e-11, 1e-25);
    topo_free(t);
}

/* Where two routes are equally short the widest first link wins: with one
 * NIC a node every GPU reaches every other in two hops over the NVSwitch
 * or through the NIC they share on PCIe; NCCL uses NVLink, so every pair
 * of a node routes at NVLink's 450 GB/s (half of them went through the
 * NIC at 63 GB/s when destination-mod-k alone chose). Two nodes' GPUs
 * still meet through the NIC. */
Test(topo, equally_short_routes_take_the_widest_link) {
    baton_err_t e = {0};
    const char *sets[] = {"nics=1"};
    topo_t *t = topo_yaml_load("topologies/cluster-h100.yaml", sets, 1, &e);
    cr_assert_not_null(t, "%s", e.msg);
    topo_route_t rt;
    for (int a = 0; a < 8; a++)
        for (int b = 0; b < 8; b++) {
            if (a == b) continue;
            cr_assert_eq(topo_route(t, a, b, &rt, &e), 0, "%s", e.msg);
            cr_expect_eq(rt.nlinks, 2, "%d -> %d", a, b);
            cr_expect_float_eq(rt.bw, 450e9, 1, "%d -> %d at %g B/s", a, b, rt.bw);
        }
    cr_assert_eq(topo_route(t, 0, 8, &rt, &e), 0, "%s", e.msg);
    cr_expect_geq(rt.nlinks, 4);
    cr_expect_leq(rt.bw, 63e9, "across nodes: %g B/s", rt.bw);
    topo_free(t);
}

Test(topo, routes_are_shortest_in_hops_and_cached) {
    baton_err_t e = {0};
    topo_t *t = topo_yaml_load("tests/data/two-hop.yaml", NULL, 0, &e);
    cr_assert_not_null(t, "%s", e.msg);
    topo_route_t rt;
    cr_assert_eq(topo_route(t, 0, 2, &rt, &e), 0);
    cr_expect_eq(rt.nlinks, 1, "the direct a-c link is one hop");
    cr_expect_eq(rt.bw, 1e9);
    cr_assert_eq(topo_route(t, 0, 1, &rt, &e), 0);
    cr_expect_eq(rt.nlinks, 2);
    cr_expect_eq(rt.bw, 50e9, "bottleneck of 100 and 50 GB/s");
    cr_expect_float_eq(rt.lat, 3e-6, 1e-15);
    const topo_dlink_t *first = topo_dlink(t, rt.links[0]);
    cr_expect_eq(first->src, 0);
    cr_expect_eq(topo_dlink(t, rt.links[1])->dst, 1);
    int32_t l0 = rt.links[0];
    cr_assert_eq(topo_route(t, 0, 1, &rt, &e), 0);
    cr_expect_eq(rt.links[0], l0, "same route again");
    cr_expect_eq(topo_params_c(t)->ports, 2);
    cr_expect_eq(topo_params_c(t)->reduce_bw, 10e9);
    topo_free(t);
}

/* Every route of machine `file` (with `set`, may be NULL), asked in the
 * order given by `stride`, equals the full search's; returns the searches
 * the shortcut ran. */
static uint64_t routes_match_full_search(const char *file, const char *set, int stride) {
    baton_err_t e = {0};
    const char *sets[] = {set};
    topo_t *a = topo_yaml_load(file, sets, set ? 1 : 0, &e), *b = topo_yaml_load(file, sets, set ? 1 : 0, &e);
    cr_assert(a && b, "%s: %s", file, e.msg);
    topo_set_route_shortcut(b, 0);
    int all = topo_nranks(a) + topo_nreducers(a);
    for (int i = 0; i < all * all; i++) {
        int s = (int)(((int64_t)i * stride) % (all * all)) / all, d = (int)(((int64_t)i * stride) % (all * all)) % all;
        topo_route_t x, y;
        int ra = topo_route(a, s, d, &x, &e), rb = topo_route(b, s, d, &y, &e);
        cr_assert_eq(ra, rb, "%s: route %d -> %d: shortcut %d, full search %d", file, s, d, ra, rb);
        if (ra < 0) {                             /* another node's reducing switch: unreachable both ways */
            cr_assert(s >= topo_nranks(a) || d >= topo_nranks(a), "%s: no route %d -> %d: %s", file, s, d, e.msg);
            continue;
        }
        cr_assert_eq(x.nlinks, y.nlinks, "%s: route %d -> %d", file, s, d);
        for (int k = 0; k < x.nlinks; k++)
            cr_assert_eq(x.links[k], y.links[k], "%s: route %d -> %d, hop %d", file, s, d, k);
        cr_assert(x.lat == y.lat && x.bw == y.bw, "%s: route %d -> %d", file, s, d);
    }
    uint64_t n = topo_nsearches(a);
    cr_expect_leq(n, topo_nsearches(b), "%s: the shortcut searches less", file);
    topo_free(a);
    topo_free(b);
    return n;
}

/* The shortcuts (a GPU on one switch port routes as its switch; a GPU with
 * an NVSwitch and a NIC routes through the one gate pair that connects)
 * give the same links as a full search on every shipped machine and on
 * fat-trees with equal-cost paths, whatever order the routes are asked in;
 * on a switch box no search at all. */
Test(topo, route_shortcut_equals_full_search) {
    const char *files[] = {"topologies/candy-kids.yaml", "topologies/uniform-8.yaml", "topologies/hgx-h100.yaml",
                           "topologies/hgx-a100.yaml", "topologies/dgx1-v100.yaml", "topologies/pcie-2gpu.yaml",
                           "topologies/pcie-8gpu.yaml", "topologies/cluster-a100.yaml",
                           "topologies/cluster-h100.yaml", "tests/data/machines/fattree.yaml",
                           "tests/data/machines/fattree3.yaml"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        for (int stride = 1; stride <= 7; stride += 6) routes_match_full_search(files[i], NULL, stride);
    routes_match_full_search("tests/data/machines/fattree.yaml", "oversub=3", 5);
    routes_match_full_search("tests/data/machines/fattree3.yaml", "oversub=2", 3);
    cr_expect_gt(routes_match_full_search("tests/data/machines/fattree3.yaml", NULL, 1), 0);
    /* multi-homed GPUs (NVSwitch and NIC) on a 3-level fat-tree: gated routes.
     * With PXN (the file's default) a route between nodes is two walks, the
     * second from a NIC on the destination's own leaf, whose searches stop
     * early (few nodes each) and so are many before the leaf's distances are
     * kept: 2,135 searches, 766 without PXN; either is per leaf, not per pair. */
    uint64_t n = routes_match_full_search("topologies/cluster-h100.yaml", "nodes=40", 1);
    cr_expect_leq(n * 40, 320 * 320, "searches %llu for 102,400 routes: per destination leaf, not per pair", (unsigned long long)n);
    routes_match_full_search("topologies/cluster-a100.yaml", "nodes=24", 11);
    topo_t *star = th_star(64, 10e9, 1e-6, 1, 0);
    baton_err_t e = {0};
    topo_route_t rt;
    for (int s = 0; s < 64; s++)
        for (int d = 0; d < 64; d++) cr_assert_eq(topo_route(star, s, d, &rt, &e), 0, "%s", e.msg);
    cr_assert_eq(topo_route(star, 0, 63, &rt, &e), 0, "%s", e.msg);
    cr_expect_eq(rt.nlinks, 2, "got %d links, %llu searches", rt.nlinks, (unsigned long long)topo_nsearches(star));
    cr_expect_eq(topo_nsearches(star), 0, "64 GPUs on one switch: no search for any of the 4,096 routes");
    topo_free(star);
}

Test(topo, cost_model_is_the_worst_pair) {
    baton_err_t e = {0};
    topo_t *t = topo_yaml_load("tests/data/two-hop.yaml", NULL, 0, &e);
    cr_assert_not_null(t, "%s", e.msg);
    cost_model_t m;
    cr_assert_eq(topo_cost_model(t, &m, &e), 0);
    cr_expect_float_eq(m.alpha, 5e-6, 1e-15, "a-c direct link is the slowest path");
    cr_expect_float_eq(m.beta, 1e-9, 1e-20);
    cr_expect_float_eq(m.gamma, 1e-10, 1e-20);
    topo_free(t);
}

/* Gated routes keep a leaf's distances in a byte each; on a machine whose
 * switches are farther apart than a byte counts (a chain of 300 switches,
 * each end GPU also on a switch of its own) they use the search's own
 * distances and still equal the full search. */
Test(topo, gated_routes_across_a_long_chain) {
    topo_t *t[2];
    for (int k = 0; k < 2; k++) {
        char name[32];
        t[k] = topo_create("chain");
        th_add_ranks(t[k], 2, "g");
        int sw[300], own[2];
        for (int i = 0; i < 300; i++) {
            snprintf(name, sizeof name, "s%d", i);
            sw[i] = topo_add_node(t[k], name, NODE_SWITCH, 0, 0, NULL);
            if (i) cr_assert_eq(topo_add_link(t[k], sw[i - 1], sw[i], 1e9, 1e-9, NULL), 0);
        }
        for (int g = 0; g < 2; g++) {
            snprintf(name, sizeof name, "own%d", g);
            own[g] = topo_add_node(t[k], name, NODE_SWITCH, 0, 0, NULL);
            cr_assert_eq(topo_add_link(t[k], g, own[g], 1e9, 1e-9, NULL), 0);
            cr_assert_eq(topo_add_link(t[k], g, sw[g ? 299 : 0], 1e9, 1e-9, NULL), 0);
        }
        cr_assert_eq(topo_finalize(t[k], "chain", NULL), 0);
        topo_set_route_shortcut(t[k], k == 0);
    }
    for (int rep = 0; rep < 3; rep++)
        for (int s = 0; s < 2; s++) {
            topo_route_t a, b;
            baton_err_t e = {0};
            cr_assert_eq(topo_route(t[0], s, 1 - s, &a, &e), 0, "%s", e.msg);
            cr_assert_eq(topo_route(t[1], s, 1 - s, &b, &e), 0, "%s", e.msg);
            cr_assert_eq(a.nlinks, 301, "%d links", a.nlinks);
            cr_assert_eq(a.nlinks, b.nlinks);
            for (int i = 0; i < a.nlinks; i++) cr_assert_eq(a.links[i], b.links[i], "hop %d", i);
        }
    topo_free(t[0]);
    topo_free(t[1]);
}

/* topo import nvsmi on the V100 log's own `nvidia-smi topo -m` header: a
 * direct link of k x 25 GB/s exactly where the matrix says NVk (read here
 * from the same lines), none elsewhere; GPUs SYS apart on two sockets; the
 * machine loads and NCCL's search finds six NVLink rings on it. */
Test(topo, import_nvsmi_matrix_from_the_dgx1_log) {
    const char *log = "validate/logs/nccl-tests-extra/v100x8_dgx1_cubemesh_konnase_allreduce.txt";
    char *out, cmd[512];
    snprintf(cmd, sizeof cmd, "topo import nvsmi %s --name imported -o build/imported.yaml", log);
    cr_assert_eq(th_cli(cmd, &out, 0), 0, "%s", out);
    free(out);
    int nv[8][8] = {{0}};
    FILE *f = fopen(log, "r");
    cr_assert_not_null(f);
    char line[512];
    int rows = 0;
    while (rows < 8 && fgets(line, sizeof line, f)) {
        int g;
        if (sscanf(line, "GPU%d", &g) != 1 || g != rows) continue;
        char *tok = strtok(line, " \t\n");
        for (int c = 0; c < 8 && (tok = strtok(NULL, " \t\n")); c++) nv[g][c] = strncmp(tok, "NV", 2) == 0 ? atoi(tok + 2) : 0;
        rows++;
    }
    fclose(f);
    cr_assert_eq(rows, 8);
    baton_err_t e = {0};
    topo_t *t = topo_yaml_load("build/imported.yaml", NULL, 0, &e);
    cr_assert_not_null(t, "%s", e.msg);
    int direct = 0;
    for (int a = 0; a < 8; a++)
        for (int b = 0; b < 8; b++) {
            if (a == b) continue;
            topo_route_t r;
            cr_assert_eq(topo_route(t, a, b, &r, NULL), 0);
            int is_direct = r.nlinks == 1;
            cr_expect_eq(is_direct, nv[a][b] > 0, "gpu%d-gpu%d: matrix NV%d, %d links", a, b, nv[a][b], r.nlinks);
            if (is_direct) {
                cr_expect_float_eq(r.bw, nv[a][b] * 25e9, 1, "gpu%d-gpu%d", a, b);
                direct++;
            } else cr_expect_eq(r.nlinks, a / 4 == b / 4 ? 2 : 3, "gpu%d-gpu%d through its CPU (and QPI)", a, b);
        }
    cr_expect_eq(direct, 32, "16 NVLink pairs, both ways");
    /* the log's device lines name the GPUs: V100, Volta's tables, a third of HBM2's 900 GB/s */
    const topo_params_t *tp = topo_params_c(t);
    cr_expect(tp->has_gpu && !strcmp(tp->gpu.name, "v100-sxm2"), "gpu %s", tp->gpu.name);
    cr_expect_eq(tp->arch, ARCH_VOLTA);
    cr_expect_float_eq(tp->reduce_bw, 300e9, 1e6);
    const graph_t *g = graph_get(t, &e);
    cr_assert_not_null(g);
    cr_expect_eq(g->nrings, 6);
    cr_expect_eq(g->worst, GRAPH_PATH_DIRECT);
    topo_free(t);
    cr_expect_eq(th_cli("topo import nvsmi topologies/hgx-h100.yaml", &out, 0), 1);
    cr_expect(strstr(out, "no `nvidia-smi topo -m` matrix") != NULL, "%s", out);
    free(out);
    f = fopen("build/bad-matrix.txt", "w");
    fputs("\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tNV9x\t0-1\nGPU1\tNV1\t X \t0-1\n", f);
    fclose(f);
    cr_expect_eq(th_cli("topo import nvsmi build/bad-matrix.txt", &out, 0), 1);
    cr_expect(strstr(out, "bad-matrix.txt:2:") && strstr(out, "NV9x"), "%s", out);
    free(out);
    f = fopen("build/dup-matrix.txt", "w");       /* found by the fuzzer: two nodes named gpu0 */
    fputs("\tGPU0\tGPU0\tNIC0\tCPU Affinity\nGPU0\t X \tPIX\tPXB\t0-1\nGPU0\tPIX\t X \tPXB\t0-1\n"
          "NIC0\tPXB\tPXB\t X \n", f);
    fclose(f);
    cr_expect_eq(th_cli("topo import nvsmi build/dup-matrix.txt", &out, 0), 1);
    cr_expect(strstr(out, "dup-matrix.txt:1:") && strstr(out, "names GPU0 twice"), "%s", out);
    free(out);
    /* nvidia-smi -L's lines, after the matrix; a GPU baton does not know gets no gpu: */
    f = fopen("build/smi-l.txt", "w");
    fputs("\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tNV18\t0-55\nGPU1\tNV18\t X \t0-55\n\n"
          "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-1)\nGPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-2)\n", f);
    fclose(f);
    cr_expect_eq(th_cli("topo import nvsmi build/smi-l.txt", &out, 1), 0, "%s", out);
    cr_expect(strstr(out, "\"NVIDIA H100 80GB HBM3\"") && strstr(out, "gpu: h100-sxm\narch: hopper\n"), "%s", out);
    free(out);
    f = fopen("build/smi-unknown.txt", "w");
    fputs("GPU 0: NVIDIA GeForce GTX 1080 (UUID: GPU-1)\n\tGPU0\tGPU1\n GPU0\t X \tPIX\nGPU1\tPIX\t X \n", f);
    fclose(f);
    cr_expect_eq(th_cli("topo import nvsmi build/smi-unknown.txt", &out, 1), 0, "%s", out);
    cr_expect(strstr(out, "\ngpu:") == NULL && strstr(out, "\narch:") == NULL, "%s", out);
    free(out);
}

/* An NVSwitch box's matrix (8 GPUs, NV<links> between every pair, two
 * NICs on PCIe switches) into path, with nvidia-smi -L lines naming the
 * GPUs `product` (NULL: none). */
static void nvswitch_matrix(const char *path, int links, const char *product) {
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("\tGPU0\tGPU1\tGPU2\tGPU3\tGPU4\tGPU5\tGPU6\tGPU7\tNIC0\tNIC1\tCPU Affinity\n", f);
    for (int r = 0; r < 10; r++) {
        fprintf(f, r < 8 ? "GPU%d" : "NIC%d", r < 8 ? r : r - 8);
        for (int c = 0; c < 10; c++) {
            int gr = r < 8, gc = c < 8, sock_r = gr ? r / 4 : r - 8, sock_c = gc ? c / 4 : c - 8;
            if (r == c) fputs("\t X ", f);
            else if (gr && gc) fprintf(f, "\tNV%d", links);
            else if (sock_r != sock_c) fputs("\tSYS", f);
            else fputs(gr != gc && (gr ? r : c) % 4 < 2 ? "\tPXB" : "\tNODE", f);
        }
        fputs(r < 8 ? "\t0-55\n" : "\n", f);
    }
    for (int g = 0; product && g < 8; g++) fprintf(f, "GPU %d: NVIDIA %s (UUID: GPU-%d)\n", g, product, g);
    fclose(f);
}

static double imported_time(const char *machine, coll_t coll, uint64_t bytes) {
    baton_err_t e = {0};
    topo_t *t = topo_yaml_load(machine, NULL, 0, &e);
    cr_assert_not_null(t, "%s", e.msg);
    run_req_t q = {.coll = coll, .algo = "nccl", .bytes = bytes, .proto = RUN_PROTO_AUTO, .predict = 1};
    run_out_t o;
    cr_assert_eq(run_collective(t, &q, &o, &e), 0, "%s: %s", machine, e.msg);
    topo_free(t);
    return o.time_s;
}

/* nvidia-smi writes NV18 between every pair of an HGX H100's GPUs: each
 * GPU's 18 links into the NVSwitches, not 18 to each peer. Imported as a
 * mesh of 450 GB/s pairs it predicted a 1 GiB all-reduce at 759 us (busbw
 * 2476 GB/s, over five times what a GPU's NVLinks carry); as one switch it
 * is the shipped hgx-h100 (its NVLS where the file names Hopper GPUs). */
/* cpu0 is GPU0's socket, as nvidia-smi numbers NUMA nodes, whichever
 * class of the matrix is found first (here the NIC's switch is GPU0's). */
Test(topo, import_nvsmi_puts_gpu0_on_cpu0) {
    FILE *f = fopen("build/numa-matrix.txt", "w");
    cr_assert_not_null(f);
    fputs("\tGPU0\tGPU1\tGPU2\tGPU3\tNIC0\tCPU Affinity\tNUMA Affinity\n"
          "GPU0\t X \tNV12\tNV12\tNV12\tPXB\t0-63\t0\n"
          "GPU1\tNV12\t X \tNV12\tNV12\tPXB\t0-63\t0\n"
          "GPU2\tNV12\tNV12\t X \tNV12\tSYS\t64-127\t1\n"
          "GPU3\tNV12\tNV12\tNV12\t X \tSYS\t64-127\t1\n"
          "NIC0\tPXB\tPXB\tSYS\tSYS\t X \n", f);
    fclose(f);
    char *out;
    cr_assert_eq(th_cli("topo import nvsmi build/numa-matrix.txt", &out, 1), 0, "%s", out);
    cr_expect(strstr(out, "{a: pcie4, b: cpu0,") != NULL, "%s", out);
    cr_expect(strstr(out, "{a: gpu2, b: cpu1,") != NULL && strstr(out, "{a: gpu3, b: cpu1,") != NULL, "%s", out);
    free(out);
}

Test(topo, import_nvsmi_nvswitch_box_is_a_switch_not_a_mesh) {
    char *out;
    nvswitch_matrix("build/nvswitch-h100.txt", 18, "H100 80GB HBM3");
    cr_assert_eq(th_cli("topo import nvsmi build/nvswitch-h100.txt -o build/nvswitch-h100.yaml", &out, 0), 0, "%s", out);
    free(out);
    baton_err_t e = {0};
    topo_t *t = topo_yaml_load("build/nvswitch-h100.yaml", NULL, 0, &e);
    cr_assert_not_null(t, "%s", e.msg);
    for (int a = 0; a < 8; a++)
        for (int b = 0; b < 8; b++) {
            topo_route_t r;
            if (a == b) continue;
            cr_assert_eq(topo_route(t, a, b, &r, NULL), 0);
            cr_expect_eq(r.nlinks, 2, "gpu%d-gpu%d: through the switch", a, b);
            cr_expect_float_eq(r.bw, 450e9, 1, "gpu%d-gpu%d", a, b);
        }
    topo_free(t);
    const coll_t colls[] = {COLL_ALLREDUCE, COLL_ALLGATHER};
    const uint64_t sizes[] = {1024, 1 << 20, 1ull << 30};
    for (int c = 0; c < 2; c++)
        for (int i = 0; i < 3; i++) {
            double got = imported_time("build/nvswitch-h100.yaml", colls[c], sizes[i]);
            double want = imported_time("topologies/hgx-h100.yaml", colls[c], sizes[i]);
            cr_expect(fabs(got / want - 1) < 0.01, "%s %llu B: imported %g s, hgx-h100 %g s", coll_name(colls[c]),
                      (unsigned long long)sizes[i], got, want);
        }
    char *y = th_slurp("build/nvswitch-h100.yaml");
    cr_expect(y && strstr(y, "pcie_bw: 63GB/s"), "H100: PCIe Gen5: %s", y ? y : "(unread)");
    free(y);
    nvswitch_matrix("build/nvswitch-a100.txt", 12, NULL);        /* an A100 box, GPUs unnamed: a switch that does not add */
    cr_assert_eq(th_cli("topo import nvsmi build/nvswitch-a100.txt", &out, 1), 0, "%s", out);
    cr_expect(strstr(out, "{name: nvswitch, kind: switch}") && strstr(out, "b: nvswitch, bw: \"${nvlink_gbps*12}GB/s\"") &&
              !strstr(out, "b: gpu1"), "%s", out);
    free(out);
}

/* Two RTX 4090 under one PCIe switch, as nvidia-smi shows them: GeForce
 * cards have no peer-to-peer access and PCIe Gen4, so the import stages
 * through host memory (pcie-box's rate) over 31.5 GB/s links. The 2 x RTX
 * 4090 log then validates 34.6 % off overall, 25.8 % at >= 64 MiB (as
 * pcie-box); imported as P2P over Gen3 it was 59.7 % and 85.5 %. */
Test(topo, import_nvsmi_geforce_box_stages_through_the_host) {
    FILE *f = fopen("build/rtx4090x2.txt", "w");
    cr_assert_not_null(f);
    fputs("\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tPIX\t0-31\nGPU1\tPIX\t X \t0-31\n\n"
          "GPU 0: NVIDIA GeForce RTX 4090 (UUID: GPU-a)\nGPU 1: NVIDIA GeForce RTX 4090 (UUID: GPU-b)\n", f);
    fclose(f);
    char *out;
    cr_assert_eq(th_cli("topo import nvsmi build/rtx4090x2.txt -o build/rtx4090x2.yaml", &out, 0), 0, "%s", out);
    free(out);
    char *y = th_slurp("build/rtx4090x2.yaml");
    cr_assert_not_null(y);
    cr_expect(strstr(y, "\np2p: false\n") && strstr(y, "\nstage_bw: 3.0GB/s\n") && strstr(y, "pcie_bw: 31.5GB/s"), "%s", y);
    free(y);
    cr_assert_eq(th_cli("validate -t build/rtx4090x2.yaml --json --nccl-tests "
                        "validate/logs/nccl-tests-extra/rtx4090x2_pcie_kalavai_docker_allreduce.txt", &out, 1), 0, "%s", out);
    cr_expect_lt(th_json_num(out, "mape_pct"), 40, "%s", out);
    cr_expect_lt(th_json_num(out, "mape_large_pct"), 30, "%s", out);
    free(out);
}

/* topo import nccl-xml on two public NCCL topology files: Azure ND A100 v4
 * (4 sockets, each a PCIe switch with 2 GPUs and 2 NICs at 16 GT/s x 16:
 * GPUs and NICs of a switch meet without a CPU, others cross sockets; ranks
 * in PCI bus order) and NC A100 v4 (NVLink bridges of 12 links joining GPUs
 * 0-1 and 2-3); malformed XML is an error naming its line. */
/* NCCL's dump of an HGX H100 lists an <nvlink> per NVSwitch a GPU reaches
 * (4 + 5 + 4 + 5 links: xml.cc keys them by the target's bus id). baton's
 * one switch takes their sum (a route took one of the four, 125 of the
 * GPU's 450 GB/s), and sm90 GPUs' switches add (NVLS): the 1 GiB all-reduce
 * is the shipped hgx-h100's. */
Test(topo, import_nccl_xml_nvswitches_are_one_switch) {
    FILE *f = fopen("build/h100-dump.xml", "w");
    cr_assert_not_null(f);
    fputs("<system version=\"1\">\n  <cpu numaid=\"0\" affinity=\"0000ffff\" arch=\"x86_64\" vendor=\"GenuineIntel\">\n", f);
    for (int g = 0; g < 8; g++) {
        fprintf(f, "    <pci busid=\"0000:%02x:00.0\" class=\"0x030200\" vendor=\"0x10de\" link_speed=\"32.0 GT/s PCIe\" "
                   "link_width=\"16\">\n      <gpu dev=\"%d\" sm=\"90\" rank=\"%d\" gdr=\"1\">\n", 0x18 + 16 * g, g, g);
        for (int k = 0; k < 4; k++)
            fprintf(f, "        <nvlink target=\"0000:%02x:00.0\" count=\"%d\" tclass=\"0x068000\"/>\n", 5 + k, k % 2 ? 5 : 4);
        fputs("      </gpu>\n    </pci>\n", f);
    }
    fputs("  </cpu>\n</system>\n", f);
    fclose(f);
    char *out;
    cr_assert_eq(th_cli("topo import nccl-xml build/h100-dump.xml -o build/h100-dump.yaml", &out, 0), 0, "%s", out);
    cr_expect(strstr(out, "names no NVLink") == NULL, "%s", out);
    free(out);
    baton_err_t e = {0};
    topo_t *t = topo_yaml_load("build/h100-dump.yaml", NULL, 0, &e);
    cr_assert_not_null(t, "%s", e.msg);
    for (int r = 1; r < 8; r++) {
        topo_route_t rt;
        cr_assert_eq(topo_route(t, 0, r, &rt, NULL), 0);
        cr_expect(rt.nlinks == 2 && rt.bw == 450e9, "gpu0-gpu%d: %d links at %g B/s", r, rt.nlinks, rt.bw);
    }
    topo_free(t);
    double got = imported_time("build/h100-dump.yaml", COLL_ALLREDUCE, 1ull << 30);
    double want = imported_time("topologies/hgx-h100.yaml", COLL_ALLREDUCE, 1ull << 30);
    cr_expect(fabs(got / want - 1) < 0.01, "imported %g s, hgx-h100 %g s", got, want);
}

/* A GPU that names one peer in two <nvlink>s (a <pci> holding its <gpu>
 * twice, as the import fuzzer wrote it) gets one link of both counts: the
 * loader takes one link between two nodes (tests/fuzz/regressions/import). */
Test(topo, import_nccl_xml_sums_a_pair_named_twice) {
    char *out = NULL;
    cr_assert_eq(th_cli("topo import nccl-xml tests/fuzz/regressions/import/xml-nvlink-twice -o build/nvlink-twice.yaml",
                        &out, 0), 0, "%s", out);
    free(out);
    cr_assert_eq(th_sh("grep -c 'a: gpu0, b: gpu1, bw: \"${nvlink_gbps\\*24}GB/s\"' build/nvlink-twice.yaml", &out), 0, "%s", out);
    cr_expect_eq(atoi(out), 1, "one gpu0-gpu1 link of 24: %s", out);
    free(out);
    topo_t *t = th_load("build/nvlink-twice.yaml", NULL);
    topo_free(t);
}

Test(topo, import_nccl_xml_public_files) {
    char *out;
    cr_assert_eq(th_cli("topo import nccl-xml tests/data/import/ndv4-topo.xml -o build/ndv4.yaml", &out, 0), 0, "%s", out);
    cr_expect(strstr(out, "names no NVLink") != NULL, "Azure's file leaves the NVLinks to NCCL: %s", out);
    free(out);
    baton_err_t e = {0};
    topo_t *t = topo_yaml_load("build/ndv4.yaml", NULL, 0, &e);
    cr_assert_not_null(t, "%s", e.msg);
    cr_expect_eq(topo_nranks(t), 8);
    int kinds[NODE_KIND_COUNT] = {0};
    for (int i = 0; i < topo_nnodes(t); i++) kinds[topo_node(t, i)->kind]++;
    cr_expect_eq(kinds[NODE_NIC], 8);
    cr_expect_eq(kinds[NODE_CPU], 4);
    cr_expect_eq(kinds[NODE_SWITCH], 4);
    for (int r = 0; r < 8; r++) {
        int node = topo_rank_node(t, r), nic = topo_nearest(t, node, NODE_NIC);
        cr_assert_geq(nic, 0);
        topo_route_t rt;
        cr_assert_eq(topo_route(t, r, r ^ 1, &rt, NULL), 0);   /* bus order pairs: 0001/0002 share a switch */
        cr_expect_eq(rt.nlinks, 2, "rank %d and %d share a PCIe switch", r, r ^ 1);
        cr_expect_float_eq(rt.bw, 16 * 16e9 * 128 / 130 / 8, 1e5, "16 GT/s x 16: %g", rt.bw);
        cr_assert_eq(topo_route(t, r, (r + 2) % 8, &rt, NULL), 0);
        int cpus = 0;
        for (int i = 0; i + 1 < rt.nlinks; i++) cpus += topo_node(t, topo_dlink(t, rt.links[i])->dst)->kind == NODE_CPU;
        cr_expect_eq(cpus, 2, "ranks %d and %d sit on different sockets", r, (r + 2) % 8);
    }
    topo_free(t);
    cr_assert_eq(th_cli("topo import nccl-xml tests/data/import/ncv4-topo.xml -o build/ncv4.yaml", &out, 0), 0, "%s", out);
    free(out);
    t = topo_yaml_load("build/ncv4.yaml", NULL, 0, &e);
    cr_assert_not_null(t, "%s", e.msg);
    topo_route_t rt;
    cr_assert_eq(topo_route(t, 0, 1, &rt, NULL), 0);
    cr_expect(rt.nlinks == 1 && rt.bw == 12 * 25e9, "NV12 between GPUs 0 and 1");
    cr_assert_eq(topo_route(t, 0, 2, &rt, NULL), 0);
    cr_expect_gt(rt.nlinks, 1, "no NVLink between GPUs 0 and 2");
    cr_expect_eq(topo_params_c(t)->arch, ARCH_AMPERE, "<gpu sm=\"80\">: Ampere's tables");
    topo_free(t);
    FILE *f = fopen("build/bad.xml", "w");
    fputs("<system version=\"1\">\n  <cpu numaid=\"0\">\n    <pci busid=\"1\" class=\"0x030200\">\n  </cpu>\n</system>\n", f);
    fclose(f);
    cr_expect_eq(th_cli("topo import nccl-xml build/bad.xml", &out, 0), 1);
    cr_expect(strstr(out, "bad.xml:4:") && strstr(out, "</cpu>"), "%s", out);
    free(out);
}

/* A route follows a bandwidth change on a machine that has routed before:
 * g0 reaches c over a (100 GB/s) or b (50 GB/s), the same hops; with g0 -> a
 * at 10 GB/s the route takes b, on the warm machine as on a fresh one (the
 * next hops chosen at the old rates were kept once: the widest's memo). */
Test(topo, a_route_follows_a_bandwidth_change) {
    const char *yaml = "name: two-ways\nnodes:\n  - {name: \"g[0-1]\"}\n  - {name: sa, kind: switch}\n  - {name: sb, kind: switch}\n"
                       "  - {name: sc, kind: switch}\n"
                       "links:\n  - {a: g0, b: sa, bw: 100GB/s, latency: 1us}\n  - {a: g0, b: sb, bw: 50GB/s, latency: 1us}\n"
                       "  - {a: sa, b: sc, bw: 100GB/s, latency: 1us}\n  - {a: sb, b: sc, bw: 100GB/s, latency: 1us}\n"
                       "  - {a: sc, b: g1, bw: 100GB/s, latency: 1us}\n";
    topo_t *warm = th_load_text("build/two-ways.yaml", yaml), *fresh = th_load_text("build/two-ways-2.yaml", yaml);
    topo_route_t r;
    cr_assert_eq(topo_route(warm, 0, 1, &r, NULL), 0);
    cr_expect_eq(r.bw, 100e9, "the wide way first: %g", r.bw);
    int a = topo_find_node(warm, "g0"), sa = topo_find_node(warm, "sa"), l = 0;
    while (l < topo_nlinks(warm) && !(topo_dlink(warm, l)->src == a && topo_dlink(warm, l)->dst == sa)) l++;
    cr_assert_lt(l, topo_nlinks(warm));
    cr_assert_eq(topo_set_link_bw(warm, l, 10e9, NULL), 0);
    cr_assert_eq(topo_set_link_bw(fresh, l, 10e9, NULL), 0);
    topo_route_t w, f, peek;
    cr_assert_eq(topo_route(warm, 0, 1, &w, NULL), 0);
    cr_assert_eq(topo_route(fresh, 0, 1, &f, NULL), 0);
    cr_expect_eq(f.bw, 50e9, "a fresh machine goes by b: %g", f.bw);
    cr_expect_eq(w.bw, f.bw, "the warm machine as the fresh: %g against %g", w.bw, f.bw);
    cr_expect_eq(w.nlinks, f.nlinks);
    for (int i = 0; i < w.nlinks && i < f.nlinks; i++) cr_expect_eq(w.links[i], f.links[i], "link %d", i);
    cr_assert_eq(topo_set_link_bw(warm, l, 100e9, NULL), 0);   /* and back, asked by peek first */
    cr_assert_eq(topo_route_peek(warm, 0, 1, &peek, NULL), 0);
    cr_expect_eq(peek.bw, 100e9, "peek follows the change back: %g", peek.bw);
    topo_free(warm);
    topo_free(fresh);
}
