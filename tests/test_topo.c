/* test_topo.c - YAML topologies: errors name file:line:col; routes; cost model. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include "../topologies/topo_yaml.h"

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
