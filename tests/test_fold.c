/* test_fold.c - folded clusters (topologies/fold.c): a few witness nodes
 * answer for the whole. Oracles: the whole machine, loaded and routed. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <math.h>

#include "../models/cost.h"
#include "../sim/answer/run.h"
#include "../topologies/fold.h"
#include "../topologies/topo_yaml.h"
#include "helpers.h"

static topo_t *load_sets(const char *path, const char *sets_csv, int fold) {
    char buf[256];
    const char *v[8];
    snprintf(buf, sizeof buf, "%s", sets_csv);
    int n = th_sets(buf, v, 8);
    baton_err_t e = {0};
    topo_t *t = fold ? topo_yaml_load_folded(path, v, n, 1, &e) : topo_yaml_load(path, v, n, &e);
    cr_assert_not_null(t, "%s %s: %s", path, sets_csv, e.msg);
    return t;
}

/* The fat-tree arithmetic the witnesses come from is the generator's: on a
 * rail-optimized cluster without PXN, a route between GPUs of two nodes is
 * GPU -> its NIC -> the fabric -> the peer's NIC -> GPU, so its links are
 * 2 + gen_shape_hops between the two NICs' places, for every pair. */
Test(fold, the_shape_arithmetic_is_the_built_fabric) {
    static const char *const cases[][2] = {{"nodes=5 radix=8", "8"}, {"nodes=13 radix=8 nics=2", "2"},
                                          {"nodes=40 radix=16", "8"}, {"nodes=33 radix=16 oversubscription=2", "8"}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char sets[128];
        snprintf(sets, sizeof sets, "%s pxn=false", cases[c][0]);
        topo_t *t = load_sets("topologies/cluster-h100.yaml", sets, 0);
        int nics = atoi(cases[c][1]), p = topo_nranks(t), radix = strstr(sets, "radix=8") ? 8 : 16;
        gen_fabric_t f = {.radix = radix, .oversub = strstr(sets, "oversubscription=2") ? 2 : 1, .rails = nics};
        gen_shape_t s;
        cr_assert_eq(gen_shape_init(&s, &f, p / 8 * nics, NULL), 0);
        int checked = 0, hops[7] = {0};
        for (int a = 0; a < p; a += 3)
            for (int b = 0; b < p; b += 5) {
                if (a / 8 == b / 8) continue;
                int na = a / 8 * nics + (a % 8) * nics / 8, nb = b / 8 * nics + (b % 8) * nics / 8;   /* each GPU's NIC */
                topo_route_t r;
                cr_assert_eq(topo_route(t, a, b, &r, NULL), 0);
                int h = gen_shape_hops(&s, na, nb);
                cr_expect_eq(r.nlinks, 2 + h, "%s: rank %d -> %d: %d links, the shape says 2 + %d", sets, a, b, r.nlinks, h);
                hops[h]++, checked++;
            }
        cr_expect(checked > 20 && hops[2] + hops[4] + hops[6] == checked, "%s: %d pairs", sets, checked);
        if (strstr(sets, "nodes=40")) cr_expect(hops[2] && hops[4] && hops[6], "three levels: every distance seen");
        gen_shape_free(&s);
        topo_free(t);
    }
}

/* Every node's distances to node 0's NICs and to node N-1's are some
 * witness's (brute force over the definition), the ends are witnesses, and
 * the list is ascending and short. */
Test(fold, every_node_has_a_witness_at_its_distances) {
    static const int shapes[][5] = {   /* nodes, NICs a node, radix, rails, oversubscription */
        {13, 8, 8, 8, 1}, {40, 8, 16, 8, 1}, {33, 8, 16, 8, 2}, {1000, 1, 16, 1, 1}, {200, 2, 32, 2, 1},
        {4097, 8, 64, 8, 1}, {131072, 8, 256, 8, 1}, {77, 4, 12, 4, 1}};
    for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++) {
        int N = shapes[c][0], h = shapes[c][1], w[64];
        gen_fabric_t f = {.radix = shapes[c][2], .rails = shapes[c][3], .oversub = shapes[c][4]};
        gen_shape_t s;
        cr_assert_eq(gen_shape_init(&s, &f, N * h, NULL), 0);
        int nw = fold_witnesses(&f, N, h, w, 64);
        cr_assert(nw >= 2 && nw <= 64 && w[0] == 0 && w[nw - 1] == N - 1, "shape %zu: %d witnesses", c, nw);
        for (int i = 1; i < nw; i++) cr_assert_lt(w[i - 1], w[i]);
        for (int k = 0; k < N; k += N > 5000 ? 97 : 1)
            for (int end = 0; end < 2; end++) {
                int x = end ? N - 1 : 0, found = 0;
                for (int j = 0; j < nw && !found; j++) {
                    int same = w[j] != x || k == x;
                    for (int a = 0; a < h && same; a++)
                        for (int b = 0; b < h && same; b++)
                            same = gen_shape_hops(&s, k * h + a, x * h + b) == gen_shape_hops(&s, w[j] * h + a, x * h + b);
                    found = same;
                }
                cr_expect(found, "shape %zu: node %d against node %d has no witness", c, k, x);
            }
        gen_shape_free(&s);
    }
}

/* The closed forms' view of a folded cluster is the whole one's, bit for
 * bit: the slowest and fastest routes to rank 0 and to rank p-1, the route
 * to the first reducing switch, and the counts it stands for. */
Test(fold, the_witnesses_see_what_the_whole_cluster_sees) {
    static const char *const cases[][2] = {
        {"cluster-h100", "nodes=13 radix=8"},           {"cluster-h100", "nodes=64 radix=16"},
        {"cluster-h100", "nodes=200 radix=32 nics=1"},  {"cluster-h100", "nodes=100 radix=16 nics=2 pxn=false"},
        {"cluster-h100", "nodes=90 radix=16 oversubscription=2"}, {"cluster-h100", "nodes=4097 radix=64"},
        {"cluster-a100", "nodes=100 radix=32"},         {"cluster-p4d", "nodes=100 radix=16"},
        {"cluster-pcie", "nodes=64 radix=16"},          {"cluster-pcie", "nodes=57 radix=8 gpus=1 group_size=1"}};
    int folded = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char path[128];
        snprintf(path, sizeof path, "topologies/%s.yaml", cases[c][0]);
        topo_t *w = load_sets(path, cases[c][1], 0), *f = load_sets(path, cases[c][1], 1);
        cost_model_t mw, mf;
        cr_assert_eq(topo_cost_model(w, &mw, NULL), 0);
        cr_assert_eq(topo_cost_model(f, &mf, NULL), 0);
        const char *m = cases[c][1];
        if (topo_fold_ranks(f)) {
            folded++;
            cr_expect_lt(topo_nranks(f), topo_nranks(w) / 2, "%s %s: fewer ranks built", cases[c][0], m);
            cr_expect_eq(topo_fold_ranks(f), topo_nranks(w), "%s %s: ranks stood for", cases[c][0], m);
            cr_expect_eq(topo_fold_reducers(f), topo_nreducers(w), "%s %s: reducing switches", cases[c][0], m);
        }
        cr_expect(mw.alpha == mf.alpha && mw.beta == mf.beta && mw.beta_path == mf.beta_path, "%s %s: alpha %.17g/%.17g beta %.17g/%.17g",
                  cases[c][0], m, mw.alpha, mf.alpha, mw.beta, mf.beta);
        cr_expect(mw.uniform == mf.uniform && mw.helper_alpha == mf.helper_alpha && mw.helper_beta == mf.helper_beta,
                  "%s %s: uniform or helper route", cases[c][0], m);
        topo_free(w);
        topo_free(f);
    }
    cr_expect_geq(folded, 9, "every case but one of few nodes folds (%d did)", folded);
}

/* What is not a cluster of identical copies joined by a fat-tree loads
 * whole: an included node (cluster-mi300x), a reducing fabric (SHARP), a
 * group spanning nodes, a node unlike the others. */
Test(fold, what_is_not_copies_loads_whole) {
    static const char *const cases[][2] = {{"topologies/cluster-mi300x.yaml", "nodes=64 radix=16"},
                                          {"topologies/cluster-h100.yaml", "nodes=8 radix=16 sharp=true"},
                                          {"topologies/cluster-pcie.yaml", "nodes=64 radix=16 gpus=1"},
                                          {"topologies/hgx-h100.yaml", ""}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        topo_t *w = load_sets(cases[c][0], cases[c][1], 0), *f = load_sets(cases[c][0], cases[c][1], 1);
        cr_expect_eq(topo_fold_ranks(f), 0, "%s %s folded", cases[c][0], cases[c][1]);
        cr_expect_eq(topo_nranks(f), topo_nranks(w));
        topo_free(w);
        topo_free(f);
    }
    const char *odd = "/tmp/baton_fold_odd.yaml";
    FILE *fp = fopen(odd, "w");
    cr_assert_not_null(fp);
    fputs("name: odd\nparams: {nodes: 64}\nnodes:\n  - {name: \"n[0-${nodes-1}].gpu[0-1]\"}\n"
          "  - {name: \"n[0-${nodes-1}].nic[0-1]\", kind: nic}\n  - {name: extra, kind: switch}\nlinks:\n"
          "  - {a: \"n[0-${nodes-1}].gpu[0-1]\", b: \"n[0-${nodes-1}].nic[0-1]\", bw: 50GB/s, latency: 1us}\n"
          "  - {a: n0.gpu0, b: extra, bw: 50GB/s, latency: 1us}\n"
          "generate:\n  - {fat_tree: \"n[0-${nodes-1}].nic[0-1]\", rails: 2, radix: 8, bw: 50GB/s, latency: 1us}\n", fp);
    fclose(fp);
    topo_t *f = load_sets(odd, "", 1);
    cr_expect_eq(topo_fold_ranks(f), 0, "node 0 has a link the others lack: it must not fold");
    cr_expect_eq(topo_nranks(f), 128);
    topo_free(f);
    remove(odd);
}

/* `predict` on a folded cluster prints what the whole prints: rows it can
 * answer from the witnesses (the folded line says so), and rows whose link
 * loads need every rank, which load the whole. At 8 B and 48 MiB, on
 * NVSwitch nodes and on nodes whose rings NCCL's search orders (a ring of
 * NVLinks: graph.c spreads node 0's rings over every node, not only the
 * witnesses). */
Test(fold, predict_answers_as_the_whole_cluster) {
    static const char *const rows[][2] = {{"allreduce", "twoshot"},   {"allreduce", "binomial"}, {"allreduce", "naive"},
                                         {"broadcast", "bintree"},   {"reduce", "chain"},       {"broadcast", "scatter_allgather"},
                                         {"allreduce", "ring"},      {"allreduce", "nccl"},     {"allreduce", "auto"},
                                         {"allgather", "nccl"},      {"alltoall", "naive"}};
    static const char *const machines[] = {"cluster-h100 --set nodes=64 --set radix=16",
                                           "cluster-p4d --set nodes=100 --set radix=16",
                                           "tests/data/machines/ringnode-cluster.yaml"};
    static const char *const sizes[] = {"8", "48MiB"};
    int folded[3] = {0};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 2; k++) {
                char args[512], *w, *f;
                snprintf(args, sizeof args, "predict -t %s -c %s -a %s -s %s --fold 0", machines[j], rows[i][0], rows[i][1],
                         sizes[k]);
                int rw = th_cli(args, &w, 0);
                snprintf(args, sizeof args, "predict -t %s -c %s -a %s -s %s --fold 1", machines[j], rows[i][0], rows[i][1],
                         sizes[k]);
                cr_expect_eq(th_cli(args, &f, 0), rw, "%s: another exit status", args);
                char *note = strstr(f, "  folded ");
                if (note) {
                    folded[j]++;
                    cr_expect(strstr(note, "of its ") && strstr(note, " nodes built"), "%s", note);
                    *note = '\0';                       /* the last line: the rest must be the whole's */
                }
                cr_expect_str_eq(f, w, "%s: folded and whole differ", args);
                free(w);
                free(f);
            }
    for (int j = 0; j < 3; j++)
        cr_expect_geq(folded[j], 16, "%s: rows answered from the witnesses: %d of 22", machines[j], folded[j]);
}

/* `baton CMD MORE --fold 0` and `--fold 1` print the same but for the
 * folded run's last line (starting with tag), which it prints exactly when
 * the folded cluster answered (folded). */
static void folds_as_the_whole(const char *cmd, const char *more, const char *tag, int folded) {
    char args[768], *w, *f;
    snprintf(args, sizeof args, "%s %s --fold 0", cmd, more);
    cr_assert_eq(th_cli(args, &w, 0), 0, "%s", args);
    snprintf(args, sizeof args, "%s %s --fold 1", cmd, more);
    cr_assert_eq(th_cli(args, &f, 0), 0, "%s", args);
    char *note = strstr(f, tag);
    cr_expect(!note == !folded, "%s: %s folded line: %s", args, folded ? "no" : "a", f);
    if (note) *note = '\0';                          /* the last line: the rest must be the whole's */
    cr_expect_str_eq(f, w, "%s: folded and whole differ", args);
    free(w);
    free(f);
}

/* Every command that answers by closed form folds a large cluster: the
 * output is the whole's, answered from the witnesses where every size or
 * cell can be (a table then says so on its last line), else from the whole,
 * loaded once (a step pattern or the simulator needs every rank). */
Test(fold, commands_answer_as_the_whole_cluster) {
#define H100 "-t cluster-h100 --set nodes=64 --set radix=16"
#define SWEEP "sweep -t cluster-h100 -c allreduce --set nodes=64,100 --set radix=16 --sizes 8,1GiB -a nccl"
#define SELECT "select " H100 " -c allreduce,allgather --sizes 8:1GiB:x64 --model closed"
    static const struct { const char *cmd, *more, *tag; int folded; } runs[] = {
        {"predict " H100 " -c allreduce", "-a nccl --sizes 8:1GiB:x32", "  folded ", 1},
        {"predict " H100 " -c allreduce", "-a auto --sizes 8:1GiB:x32", "  folded ", 0},       /* rd's steps */
        {"predict " H100 " -c allreduce", "-a nccl --sizes 1KiB,64MiB --format nccl-tests", "  folded ", 0},   /* a log */
        {"plan " H100, "--sizes 8:1GiB:x32", "folded: ", 1},
        {"plan -t tests/data/machines/ringnode-cluster.yaml", "--sizes 1KiB,64MiB", "folded: ", 1},   /* searched rings */
        {"plan " H100, "--sizes 1MiB --sim", "folded: ", 0},
        {SELECT, "--algos ring,nccltree,bintree,nvlstree,dbtree --vs-nccl", "folded: ", 1},
        {SELECT, "--algos ring,nccltree --format csv", "folded: ", 0},
        {SELECT, "--algos ring,rd", "folded: ", 0},
        {SWEEP, "--model closed", "folded", 0},                                               /* CSV: no line */
        {SWEEP, "--sizes 1MiB", "folded", 0},                                                 /* simulated */
    };
#undef H100
#undef SWEEP
#undef SELECT
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++)
        folds_as_the_whole(runs[i].cmd, runs[i].more, runs[i].tag, runs[i].folded);
}

/* --explain reads the formula, not the graph: folded, it says what the
 * whole says, below the line that says it was folded. (A row whose steps
 * each see their own links, twoshot, needs every rank: the folded cluster
 * hands it to the whole, with no such line.) */
Test(fold, explain_answers_as_the_whole_cluster) {
    char *w, *f;
    const char *args = "predict -t cluster-h100 --set nodes=64 --set radix=16 -c allreduce -a ring -s 1MiB --explain";
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s --fold 0", args);
    cr_assert_eq(th_cli(cmd, &w, 1), 0);
    snprintf(cmd, sizeof cmd, "%s --fold 1", args);
    cr_assert_eq(th_cli(cmd, &f, 1), 0);
    char *note = strstr(f, "  folded "), *eol = note ? strchr(note, '\n') : NULL;
    cr_assert(note && eol, "%s", f);
    memmove(note, eol + 1, strlen(eol + 1) + 1);
    cr_expect(strstr(f, "  explain  the ring formula"), "%s", f);
    cr_expect_str_eq(f, w);
    free(w);
    free(f);
}

Test(fold, predict_refuses_fold_for_the_simulator) {
    char *out;
    cr_expect_eq(th_cli("sim -t cluster-h100 -c allreduce -a ring -s 1MiB --fold 1", &out, 0), 2);
    cr_expect(strstr(out, "--fold is predict's"), "%s", out);
    free(out);
}

/* The rows of `rows` on the cluster in path with sets (a blank-separated
 * list), whole and folded: each row the folded cluster answers must be the
 * whole machine's view bit for bit (alpha, the slowest route, the busiest
 * link, the view across groups); the others must say they need every
 * rank. How many it answered; -1 if the cluster does not load. */
static int rows_as_the_whole(const char *path, const char *sets, const char *const *rows, int nrows) {
    char buf[256];
    const char *v[8];
    snprintf(buf, sizeof buf, "%s", sets);
    int nv = th_sets(buf, v, 8), folded = 0;
    baton_err_t le = {0};
    topo_t *w = topo_yaml_load(path, v, nv, &le);
    if (w == NULL) return -1;
    topo_t *f = load_sets(path, sets, 1);
    cr_assert(topo_fold_ranks(f), "%s %s folds", path, sets);
    cost_model_t mw, mf;
    cr_assert_eq(topo_cost_model(w, &mw, NULL), 0);
    cr_assert_eq(topo_cost_model(f, &mf, NULL), 0);
    for (int r = 0; r < nrows; r++) {
        const algo_t *a = algo_find(COLL_ALLREDUCE, rows[r]);
        algo_opts_t ow = {0}, of = {0};
        form_opts(w, &ow);
        form_opts(f, &of);
        sched_t sw, sf;
        cr_assert_eq(algo_build(a, topo_nranks(w), 1 << 26, &ow, &sw, NULL), 0);
        cr_assert_eq(algo_build(a, topo_nranks(w), 1 << 26, &of, &sf, NULL), 0);
        cost_model_t vw, vf;
        baton_err_t e = {0};
        cr_assert_eq(form_model(w, a, &sw, &mw, &vw, NULL), 0);
        int rc = form_model(f, a, &sf, &mf, &vf, &e);
        if (rc != 0) {                                /* no witness pair as far apart: the whole answers */
            cr_expect_eq(rc, BATON_EWHOLE, "%s %s: %s", sets, rows[r], e.msg);
            cr_expect(strstr(e.msg, "its links' loads need every rank"), "%s %s: %s", sets, rows[r], e.msg);
            continue;
        }
        folded++;
        cr_expect(vf.alpha == vw.alpha && vf.beta == vw.beta && vf.beta_path == vw.beta_path,
                  "%s %s: alpha %.17g/%.17g, beta %.17g/%.17g", sets, rows[r], vf.alpha, vw.alpha, vf.beta, vw.beta);
        cr_expect(vf.channels == vw.channels && vf.has_across == vw.has_across, "%s %s", sets, rows[r]);
        if (vw.has_across)
            cr_expect(vf.across.alpha == vw.across.alpha && vf.across.beta == vw.across.beta, "%s %s: across", sets, rows[r]);
    }
    topo_free(w);
    topo_free(f);
    return folded;
}

static const char *const pattern_rows[] = {"bintree", "chain", "hier", "hier_leader", "dbtree", "nccltree"};


/* pattern_rows on each (machine, --set) case, each answered as the whole
 * (rows_as_the_whole); the rows answered folded, in all. */
static int pattern_rows_on(const char *const (*cases)[2], size_t n) {
    int folded = 0;
    for (size_t c = 0; c < n; c++) {
        char path[128];
        snprintf(path, sizeof path, "topologies/%s.yaml", cases[c][0]);
        int k = rows_as_the_whole(path, cases[c][1], pattern_rows, 6);
        cr_assert_geq(k, 0, "%s %s loads", cases[c][0], cases[c][1]);
        folded += k;
    }
    return folded;
}
/* A pattern of peers on a folded cluster loads the whole cluster's links:
 * its nodes' links counted node by node, the fabric's own by the
 * generator's arithmetic from how each stand-in crosses (fold.h). Each row
 * (trees, chains and the hierarchical rows, whose few messages the whole
 * routes one by one) is held to the whole machine's view bit for bit, on
 * two- and three-level trees, one NIC or eight, PXN on and off,
 * oversubscribed. */
Test(fold, a_pattern_loads_the_whole_clusters_links) {
    static const char *const cases[][2] = {{"cluster-h100", "nodes=64 radix=16"}, {"cluster-p4d", "nodes=100 radix=16"},
                                          {"cluster-h100", "nodes=48 radix=8 nics=1"},
                                          {"cluster-h100", "nodes=90 radix=16 oversubscription=2"},
                                          {"cluster-h100", "nodes=24 radix=64"},            /* two levels */
                                          {"cluster-h100", "nodes=64 radix=16 pxn=false"},
                                          {"cluster-h100", "nodes=16 radix=4 nics=1 oversubscription=2"},
                                          {"cluster-a100", "nodes=40 radix=16"}};
    int folded = pattern_rows_on(cases, sizeof cases / sizeof cases[0]);
    cr_expect_geq(folded, 7 * 6, "rows answered folded, as the whole: %d", folded);
}

/* The same over fat-tree shapes: radix, node count, NICs a node,
 * oversubscription and PXN, every combination that loads (a radix too
 * small for the nodes does not). */
Test(fold, every_fat_tree_shape_loads_as_the_whole) {
    static const int radix[] = {4, 8, 16}, nodes[] = {5, 13, 40}, nics[] = {1, 2, 8}, over[] = {1, 2};
    int shapes = 0, folded = 0;
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
            for (int c = 0; c < 3; c++)
                for (int d = 0; d < 2; d++)
                    for (int x = 0; x < 2; x++) {
                        char sets[160];
                        snprintf(sets, sizeof sets, "nodes=%d radix=%d nics=%d oversubscription=%d pxn=%s", nodes[b],
                                 radix[a], nics[c], over[d], x ? "true" : "false");
                        int k = rows_as_the_whole("topologies/cluster-h100.yaml", sets, pattern_rows, 3);
                        if (k < 0) continue;
                        shapes++, folded += k;
                    }
    cr_expect_geq(shapes, 70, "shapes that load: %d", shapes);
    cr_expect_geq(folded, shapes * 5 / 2, "rows answered folded over %d shapes: %d", shapes, folded);
}

/* Racks fold as nodes do (issue 48): a GB200/GB300 NVL72 cluster is `racks`
 * copies of one rack ("r[0-${racks-1}]..."), joined by a fat-tree over the
 * trays' NICs, so the witnesses are racks. predict on 2-4 racks (and 16)
 * prints what the whole prints; where racks share leaves alike (2 or 4
 * trays: a rail's NICs of several racks on one leaf) the witnesses answer,
 * and a full rack's 18 NICs a rail straddle 32-port leaves differently rack
 * by rack, so a ring's neighbours have no witness pair as far apart and the
 * whole answers (the output is the whole's either way). */
Test(fold, racks_answer_as_the_whole_cluster) {
    static const char *const machines[] = {"gb200-nvl72", "gb300-nvl72"};
    static const char *const sets[] = {"--set racks=2 --set trays=2", "--set racks=3 --set trays=2", "--set racks=4 --set trays=2",
                                       "--set racks=4 --set trays=4", "--set racks=4", "--set racks=16 --set trays=2"};
    static const char *const rows[] = {"ring", "nccl", "nccltree", "bintree"};
    int folded = 0;
    for (int m = 0; m < 2; m++)
        for (int s = 0; s < 6; s++)
            for (int r = 0; r < 4; r++) {
                char more[160];
                snprintf(more, sizeof more, "-c allreduce -a %s -s 1MiB", rows[r]);
                char cmd[256];
                snprintf(cmd, sizeof cmd, "predict -t %s %s", machines[m], sets[s]);
                int f = s == 2 || s == 3 || s == 5;        /* 3 of 4 racks, 3 of 16 built */
                folds_as_the_whole(cmd, more, "  folded ", f);
                folded += f;
            }
    cr_expect_eq(folded, 2 * 3 * 4);
}

/* A pattern of peers on folded racks loads the whole cluster's links: the
 * racks' own links (GPUs, the NVLink switch trays, PXN through a peer GPU
 * to its NIC) counted rack by rack, the rail fabric's by its arithmetic;
 * bit for bit against the whole machine's view. */
Test(fold, a_pattern_loads_the_whole_racks_links) {
    static const char *const cases[][2] = {{"gb200-nvl72", "racks=4 trays=2"}, {"gb200-nvl72", "racks=16 trays=2"},
                                          {"gb200-nvl72", "racks=8 trays=4"}, {"gb300-nvl72", "racks=16 trays=2"}};
    int folded = pattern_rows_on(cases, sizeof cases / sizeof cases[0]);
    cr_expect_geq(folded, 4 * 6, "rows answered folded, as the whole: %d", folded);
}

/* A dragonfly (polaris) as large as --fold asks loads whole and says why,
 * on the line a folded cluster uses; the rest is the whole's answer. */
Test(fold, a_dragonfly_says_why_it_loads_whole) {
    static const char *const cmds[][2] = {{"predict -t polaris --set nodes=64 -c allreduce -a ring -s 1GiB", "  folded   no: "},
                                         {"predict -t polaris --set nodes=64 -c allreduce -a nccl -s 1MiB", "  folded   no: "},
                                         {"plan -t polaris --set nodes=64 --sizes 1GiB", "folded: no: "}};
    for (int i = 0; i < 3; i++) {
        char args[256], *w, *f;
        snprintf(args, sizeof args, "%s --fold 0", cmds[i][0]);
        cr_assert_eq(th_cli(args, &w, 0), 0, "%s", args);
        snprintf(args, sizeof args, "%s --fold 16", cmds[i][0]);
        cr_assert_eq(th_cli(args, &f, 0), 0, "%s", args);
        char *note = strstr(f, cmds[i][1]);
        cr_assert(note && strstr(note, "a dragonfly loads whole"), "%s: %s", args, f);
        *note = '\0';
        cr_expect_str_eq(f, w, "%s: otherwise the whole's", args);
        free(w);
        free(f);
        snprintf(args, sizeof args, "%s --fold 65", cmds[i][0]);    /* smaller than asked: nothing to say */
        cr_assert_eq(th_cli(args, &f, 0), 0, "%s", args);
        cr_expect(strstr(f, "folded") == NULL, "%s: %s", args, f);
        free(f);
    }
}
