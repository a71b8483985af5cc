/* test_one_answer.c - one answer per question (issue 52, section 1): predict
 * says where its approximate formula and the simulator disagree beyond the
 * band, select's simulated cells are predict's check of the same row, plan
 * names its two answers for what they are, -a nccl's help and output say the
 * same thing, and --explain's parts add up to the time they explain. */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sim/answer/run.h"
#include "helpers.h"

static cJSON *json_of(const char *args) {
    char *out;
    int rc = th_cli(args, &out, 1);
    cr_assert_eq(rc, 0, "baton %s exited %d: %s", args, rc, out);
    cJSON *j = cJSON_Parse(out);
    cr_assert_not_null(j, "baton %s: not JSON: %s", args, out);
    free(out);
    return j;
}

static double num(const cJSON *j, const char *k, const char *args) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, k);
    cr_assert(cJSON_IsNumber(v), "baton %s: no number %s", args, k);
    return v->valuedouble;
}

static const char *str(const cJSON *j, const char *k, const char *args) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, k);
    cr_assert(cJSON_IsString(v), "baton %s: no string %s", args, k);
    return v->valuestring;
}

static int close_to(double a, double b) { return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b)) + 1e-15; }

/* The case: a 64-node H100 cluster's -a nccl all-reduce at 1 GiB,
 * nvlstree by its formula. predict prints the simulator's time beside its
 * own, because they are more than the band apart, and that time is the
 * simulator's for the same row, protocol and NCCL's pipeline. */
Test(one_answer, predict_says_where_the_simulator_disagrees) {
    const char *args = "predict -t topologies/cluster-h100.yaml --set nodes=64 -c allreduce -a nccl -s 1GiB";
    char *out, json[256], sim[256];
    cr_assert_eq(th_cli(args, &out, 1), 0, "%s", out);
    cr_expect(strstr(out, "  simulated ") != NULL && strstr(out, "beyond its 5 % band") != NULL, "%s", out);
    free(out);
    snprintf(json, sizeof json, "%s --json", args);
    cJSON *p = json_of(json);
    double formula = num(p, "time_s", json), simulated = num(p, "simulated_time_s", json);
    cr_expect_str_eq(str(p, "formula", json), "approximate");
    cr_expect_str_eq(str(p, "check", json), "simulated");
    cr_expect(cJSON_IsTrue(cJSON_GetObjectItem(p, "beyond_band")));
    cr_expect_gt(fabs(simulated - formula), RUN_FORMULA_BAND * simulated, "%g vs %g", simulated, formula);
    snprintf(sim, sizeof sim, "sim -t topologies/cluster-h100.yaml --set nodes=64 -c allreduce -a %s --proto %s "
             "--pipeline %d -s 1GiB --json", str(p, "algorithm", json), str(p, "protocol", json),
             (int)num(p, "pipeline_steps", json));
    cJSON *s = json_of(sim);
    cr_expect(close_to(num(s, "time_s", sim), simulated), "sim %g, predict's simulated %g", num(s, "time_s", sim), simulated);
    cJSON_Delete(s);
    cJSON_Delete(p);
}

/* -a auto: sim simulates the rows whose formulas are close and keeps the
 * fastest; on two MI300X nodes at 4 MiB the lowest formula (nccltree/LL,
 * 109.6 us) simulates slower (157.6 us) than direct/LL128 (111.8 us), so
 * sim answers direct, equal to `sim -a direct`, and predict, which answers
 * by its formula, names sim's pick and its time. (Two GB200 racks at 4 MiB
 * did, until sim ran NVLSTree at NCCL's cut as well; two GB300 racks at 8
 * MiB, until a reducing switch's messages moved eagerly.) */
#define MISJUDGED "-t cluster-mi300x -c allreduce -s 4MiB --json"
Test(one_answer, predict_names_sims_pick_where_its_formula_misjudged) {
    cJSON *s = json_of("sim " MISJUDGED);
    cJSON *d = json_of("sim -a direct " MISJUDGED);
    cJSON *n = json_of("sim -a nccltree " MISJUDGED);
    cJSON *p = json_of("predict " MISJUDGED);
    cr_expect_str_eq(str(p, "algorithm", "predict"), "nccltree");
    cr_expect_str_eq(str(s, "algorithm", "sim"), "direct");
    cr_expect_eq(num(s, "time_s", "sim"), num(d, "time_s", "sim -a direct"));
    cr_expect_lt(num(d, "time_s", "direct"), num(n, "time_s", "nvlstree"));
    cJSON *pick = cJSON_GetObjectItem(p, "simulator_pick");
    cr_assert_not_null(pick);
    cr_expect_str_eq(str(pick, "algorithm", "pick"), "direct");
    cr_expect_eq(num(pick, "time_s", "pick"), num(s, "time_s", "sim"));
    cJSON_Delete(s), cJSON_Delete(d), cJSON_Delete(n), cJSON_Delete(p);
}

/* An exact formula is not checked (nothing to say): a ring on one node. */
Test(one_answer, an_exact_formula_needs_no_check) {
    const char *args = "predict -t topologies/uniform-8.yaml -c allreduce -a ring -s 1MiB --json";
    cJSON *p = json_of(args);
    cr_expect_str_eq(str(p, "formula", args), "exact");
    cr_expect_null(cJSON_GetObjectItem(p, "simulated_time_s"));
    cJSON_Delete(p);
}

/* The cell of row r in a select JSON row, or NULL. */
static const cJSON *select_cell(const cJSON *row, const char *algo) {
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(row, "results"))
        if (strcmp(cJSON_GetObjectItem(c, "algorithm")->valuestring, algo) == 0) return c;
    return NULL;
}

/* The same row on the same machine: select's [s] time is predict's check,
 * and the formula select keeps beside it is predict's time, for rows whose
 * formula is approximate (nvls, dbtree) and on a cluster. */
Test(one_answer, predict_and_select_agree_on_the_same_row) {
    static const struct { const char *topo, *algo, *size; } cases[] = {
        {"topologies/hgx-h100.yaml", "nvls", "1GiB"},
        {"topologies/hgx-h100.yaml", "nvls", "128MiB"},
        {"topologies/hgx-h100.yaml", "dbtree", "1MiB"},
        {"topologies/cluster-h100.yaml --set nodes=2", "nvlstree", "64MiB"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char sel[256], pre[256];
        snprintf(sel, sizeof sel, "select -t %s -c allreduce --algos %s --sizes %s --format json", cases[i].topo,
                 cases[i].algo, cases[i].size);
        snprintf(pre, sizeof pre, "predict -t %s -c allreduce -a %s -s %s --json", cases[i].topo, cases[i].algo,
                 cases[i].size);
        cJSON *s = json_of(sel), *p = json_of(pre);
        const cJSON *c = select_cell(cJSON_GetArrayItem(s, 0), cases[i].algo);
        cr_assert_not_null(c, "%s", sel);
        cr_expect_str_eq(str(c, "model", sel), "des", "%s", sel);
        cr_expect_str_eq(str(p, "check", pre), "simulated", "%s", pre);
        cr_expect_str_eq(str(c, "protocol", sel), str(p, "protocol", pre), "%s", sel);
        cr_expect(close_to(num(c, "time_s", sel), num(p, "simulated_time_s", pre)), "%s: select %g, predict's simulator %g",
                  sel, num(c, "time_s", sel), num(p, "simulated_time_s", pre));
        cr_expect(close_to(num(c, "formula_time_s", sel), num(p, "time_s", pre)), "%s: select's formula %g, predict %g",
                  sel, num(c, "formula_time_s", sel), num(p, "time_s", pre));
        cJSON_Delete(s);
        cJSON_Delete(p);
    }
}

/* The table says what [s] is and, where the formula is beyond the band,
 * the formula's time predict quotes. */
Test(one_answer, select_says_why_simulated_cells_differ_from_predict) {
    const char *pre = "predict -t topologies/hgx-h100.yaml -c allreduce -a dbtree --proto Simple -s 1GiB --json";
    cJSON *p = json_of(pre);
    char *out, want[128];
    snprintf(want, sizeof want, "predict's formula: dbtree/Simple at 1 GiB %.3g ms", num(p, "time_s", pre) * 1e3);
    cr_assert_eq(th_cli("select -t topologies/hgx-h100.yaml -c allreduce --sizes 1GiB --algos dbtree,bintree", &out, 1), 0,
                 "%s", out);
    cr_expect(strstr(out, "[s]: the formula is only approximate on this machine") != NULL, "%s", out);
    cr_expect(strstr(out, want) != NULL, "no '%s' in %s", want, out);
    free(out);
    cJSON_Delete(p);
}

/* plan's two answers are named for what they are, in the text and the JSON
 * alike (the JSON's keys stay). */
Test(one_answer, plan_names_its_columns) {
    char *out;
    cr_assert_eq(th_cli("plan -t topologies/hgx-h100.yaml --sizes 1MiB", &out, 1), 0, "%s", out);
    cr_expect(strstr(out, "what baton expects NCCL to run, and its time (-a nccl") != NULL, "%s", out);
    cr_expect(strstr(out, "what NCCL's own cost model believes (--model nccl)") != NULL, "%s", out);
    cr_expect(strstr(out, "NCCL's own model (--model nccl)") == NULL, "%s", out);
    free(out);
    const char *args = "plan -t topologies/hgx-h100.yaml --sizes 1MiB --json";
    cJSON *j = json_of(args), *cols = cJSON_GetObjectItem(j, "columns");
    cr_assert_not_null(cols, "no columns");
    cr_expect_str_eq(str(cols, "sizes", args), "what baton expects NCCL to run, and its time (-a nccl)");
    cr_expect_str_eq(str(cols, "nccl_model", args), "what NCCL's own cost model believes (--model nccl)");
    cr_expect_not_null(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "sizes"), 0), "nccl_model"));
    cJSON_Delete(j);
}

/* --help and the answer say the same of -a nccl: what baton expects NCCL to
 * run, the lowest closed form of NCCL's algorithms; never "NCCL's choice". */
Test(one_answer, help_and_output_say_the_same_of_nccl) {
    const char *cmds[] = {"predict", "sim"};
    for (int i = 0; i < 2; i++) {
        char args[64], *out;
        snprintf(args, sizeof args, "%s --help", cmds[i]);
        cr_assert_eq(th_cli(args, &out, 1), 0);
        cr_expect(strstr(out, "nccl (what baton expects NCCL to run") != NULL, "%s", out);
        cr_expect(strstr(out, "lowest\n") != NULL && strstr(out, "closed-form time") != NULL, "%s", out);
        cr_expect(strstr(out, "NCCL's choice") == NULL, "%s", out);
        free(out);
    }
    char *out;
    cr_assert_eq(th_cli("predict -t topologies/hgx-h100.yaml -c allreduce -a nccl -s 1MiB", &out, 1), 0);
    cr_expect(strstr(out, "chosen   by -a nccl, what baton expects NCCL to run: the lowest closed-form time") != NULL, "%s", out);
    free(out);
}

/* The parts of an --explain --json answer add up to its total, which is the
 * time the command answered; a row with reducing switches names their
 * synchronisation (the part --explain used to leave out). */
static void parts_add_up(const char *args) {
    cJSON *j = json_of(args), *x = cJSON_GetObjectItem(j, "explain");
    static const char *const keys[] = {"alpha_s", "beta_s", "gamma_s", "overlap_s", "transfer_s", "wait_s", "reduce_s",
                                       "idle_s", "once_s", "sync_s", "ceiling_s", "socket_s", "proxy_s", "launches_s"};
    cr_assert_not_null(x, "baton %s: no explain object", args);
    double sum = 0, total = num(x, "total_s", args), time = num(j, "time_s", args);
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) sum += num(x, keys[i], args);
    cr_expect(fabs(sum - total) <= 1e-9 * total, "baton %s: parts %.9g, total %.9g", args, sum, total);
    cr_expect_eq(total, time, "baton %s: explains %.9g, answers %.9g", args, total, time);
    /* the leftovers (ceiling, idle, overlap) close the sum by construction, so
     * what can fail is their sign and size: no part below zero but the
     * overlap a formula subtracts, and that never more than the whole */
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (strcmp(keys[i], "overlap_s") != 0)
            cr_expect_geq(num(x, keys[i], args), -1e-9 * total, "baton %s: %s below zero", args, keys[i]);
    cr_expect_leq(fabs(num(x, "overlap_s", args)), total, "baton %s: overlap beyond the total", args);
    const char *algo = str(j, "algorithm", args);
    if (strncmp(algo, "nvls", 4) == 0) cr_expect_gt(num(x, "sync_s", args), 0, "%s: NVLS's switches sync", args);
    cJSON_Delete(j);
}

Test(one_answer, explain_parts_add_up_in_predict) {
    static const char *const topos[] = {"topologies/hgx-h100.yaml", "topologies/cluster-h100.yaml --set nodes=2",
                                        "topologies/cluster-h100.yaml --set nodes=4", "topologies/dgx1-v100.yaml"};
    static const char *const algos[] = {"nccl", "ring", "auto", "dbtree"};
    static const char *const sizes[] = {"64KiB", "1MiB", "64MiB", "1GiB"};
    for (int t = 0; t < 4; t++)
        for (int a = 0; a < 4; a++)
            for (int s = 0; s < 4; s++) {
                char args[256];
                snprintf(args, sizeof args, "predict -t %s -c allreduce -a %s -s %s --explain --json", topos[t], algos[a],
                         sizes[s]);
                parts_add_up(args);
            }
    parts_add_up("predict -t topologies/hgx-h100.yaml -c allreduce -a nvls -s 64KiB --explain --json");
    parts_add_up("predict -t topologies/cluster-h100.yaml --set nodes=4 -c allreduce -a nvlstree -s 1GiB --explain --json");
    parts_add_up("predict -t topologies/hgx-h100.yaml -c allreduce -a ring -s 1MiB -g 2 --explain --json");
}

/* The socket transport's proxy thread is a part of its own, not the GPU's
 * ceiling: a small all-to-all on 8 nodes of sockets is its messages, 2 (p -
 * g) x socket_latency = 2 x 28 x 5 us a rank, beyond everything else but
 * Simple's base latency (NCCL's p2p runs Simple across nodes). */
Test(one_answer, explain_names_the_socket_proxy_thread) {
    const char *args = "predict -t polaris --set nodes=8 --set socket=true -c alltoall -a nccl -s 4KiB --explain --json";
    parts_add_up(args);
    cJSON *j = json_of(args), *x = cJSON_GetObjectItem(j, "explain");
    double total = num(x, "total_s", args), sock = num(x, "socket_s", args);
    cr_expect(fabs(num(x, "ceiling_s", args)) < 1e-12 * total, "the socket floor is not a ceiling");
    cr_expect(fabs(total - (2.0 * 28 * 5e-6 + 8.4e-6)) < 1e-12, "the floor: Simple's base latency + 280 us, not %.9g", total);
    cr_expect_gt(sock, 0.5 * total, "%g of %g", sock, total);
    cJSON_Delete(j);
    char *out = NULL;
    cr_assert_eq(th_cli("predict -t polaris --set nodes=8 --set socket=true -c alltoall -a nccl -s 4KiB --explain", &out, 1), 0);
    cr_expect(strstr(out, "socket proxy thread's messages") != NULL && strstr(out, "GPU/host ceiling") == NULL, "%s", out);
    cr_expect(strstr(out, "socket-bound: ") != NULL && strstr(out, "socket_threads=N") != NULL && strstr(out, "latency-bound") == NULL,
              "what removes it, and no what-if that saves nothing: %s", out);
    free(out);
}

Test(one_answer, explain_parts_add_up_in_sim) {
    static const char *const runs[] = {
        "-t topologies/hgx-h100.yaml -c allreduce -a nccl -s 64KiB",
        "-t topologies/hgx-h100.yaml -c allreduce -a nvls -s 1MiB",
        "-t topologies/hgx-h100.yaml -c allreduce -a ring -s 64MiB",
        "-t topologies/cluster-h100.yaml --set nodes=2 -c allreduce -a nccl -s 1MiB",
        "-t topologies/cluster-h100.yaml --set nodes=2 -c allreduce -a nccl -s 64MiB",
        "-t topologies/cluster-h100.yaml --set nodes=2 -c allreduce -a ring -s 64KiB",
        "-t topologies/mi300x.yaml -c allreduce -a nccl -s 1MiB",      /* the library's rule: direct, not NCCL's */
        /* eager: messages that land before their receives are posted (the path's
         * receiver side then; the NVLS switches' always; every one with eager) */
        "-t topologies/cluster-h100.yaml --set nodes=2 -c allreduce -a nvlstree -s 4MiB",
        "-t topologies/cluster-h100.yaml --set nodes=2 --set eager=true -c allreduce -a nccl -s 1MiB",
        "-t topologies/cluster-h100.yaml --set nodes=4 --set eager=true -c allgather -a ring -s 64KiB",
        "-t topologies/cluster-h100.yaml --set nodes=2 --set eager=true -c alltoall -a nccl -s 1MiB",
    };
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        char args[256];
        snprintf(args, sizeof args, "sim %s --explain --json", runs[i]);
        parts_add_up(args);
    }
}

/* --explain explains the run asked for: the same time as without it (it
 * reran -a nccl's row without NCCL's pipeline: 2 x 8 H100, 64 MiB). */
Test(one_answer, explain_does_not_change_the_answer) {
    const char *plain = "sim -t topologies/cluster-h100.yaml --set nodes=2 -c allreduce -a nccl -s 64MiB --json";
    const char *expl = "sim -t topologies/cluster-h100.yaml --set nodes=2 -c allreduce -a nccl -s 64MiB --json --explain";
    cJSON *a = json_of(plain), *b = json_of(expl);
    cr_expect_eq(num(a, "time_s", plain), num(b, "time_s", expl));
    cr_expect_str_eq(str(a, "algorithm", plain), str(b, "algorithm", expl));
    cr_expect_eq(num(a, "pipeline_steps", plain), num(b, "pipeline_steps", expl));
    cJSON_Delete(a);
    cJSON_Delete(b);
}

/* predict's table (--sizes) says the same as predict at each size: the
 * simulator's time on the row whose formula is beyond the band (hgx-h100's
 * double binary tree at 1 GiB), nothing on rows within it. */
Test(one_answer, predict_sizes_table_says_what_predict_says) {
    const char *one = "predict -t topologies/hgx-h100.yaml -c allreduce -a dbtree -s 1GiB --json";
    cJSON *p = json_of(one);
    cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(p, "beyond_band")), "%s", one);
    char *out, want[64];
    snprintf(want, sizeof want, "simulated %.6g ms", num(p, "simulated_time_s", one) * 1e3);
    cr_assert_eq(th_cli("predict -t topologies/hgx-h100.yaml -c allreduce -a dbtree --sizes 8,1GiB", &out, 1), 0, "%s", out);
    char *big = strstr(out, "1 GiB"), *small = strstr(out, "8 B");
    cr_assert(big && small, "%s", out);
    cr_expect(strstr(big, want) != NULL, "no '%s' in %s", want, out);
    cr_expect(strstr(small, "simulated") == NULL || strstr(small, "simulated") > big, "8 B is within the band: %s", out);
    free(out);
    cJSON_Delete(p);
}

/* --explain's advice is what halving a part saves, not half the part: on
 * hgx-b200 NVLS at 1 GiB the formula's per-message latency is hidden behind
 * the bytes (its alpha term and overlap cancel), so halving it saves under a
 * microsecond, where it once said 515 us; the ring at 1 KiB is latency-bound. */
static double advice_us(const char *args, const char *what) {
    char *out, *at;
    double v = -1;
    cr_assert_eq(th_cli(args, &out, 1), 0, "%s", out);
    cr_assert((at = strstr(out, what)) != NULL, "no '%s' in %s", what, out);
    char unit[8] = "";
    cr_assert(sscanf(at + strlen(what), "%lf %7s", &v, unit) == 2, "%s", at);
    double scale = !strncmp(unit, "ns", 2) ? 1e-3 : !strncmp(unit, "us", 2) ? 1 : !strncmp(unit, "ms", 2) ? 1e3 : 1e6;
    free(out);
    return v * scale;
}

/* Where predict's pick has an exact formula or one the simulator bears out
 * but another row's formula misjudges that row, predict still names `sim`'s
 * answer on a small call: two A100 nodes, a 128 KiB broadcast, chain/LL at
 * 43.0 us (simulated within 2 %) against binomial, whose formula says 54.2
 * us and whose run takes 32.6 (only one of its four rounds crosses the
 * network); predict had said chain with no word of it. On an HGX B200 a 4
 * MiB broadcast, binomial exact at 34.4 us, sim answers bintree/LL at 32.3. */
Test(one_answer, predict_names_sims_pick_beside_an_exact_formula) {
    static const char *const calls[] = {"-t cluster-a100 --set nodes=2 -c broadcast -s 128KiB",
                                        "-t hgx-b200 -c broadcast -s 4MiB"};
    for (int i = 0; i < 2; i++) {
        char cmd[160];
        snprintf(cmd, sizeof cmd, "predict %s --json", calls[i]);
        cJSON *p = json_of(cmd);
        snprintf(cmd, sizeof cmd, "sim %s --json", calls[i]);
        cJSON *s = json_of(cmd);
        const cJSON *beyond = cJSON_GetObjectItem(p, "beyond_band");
        cr_expect(!cJSON_IsTrue(beyond), "%s: the pick's own check is within the band", calls[i]);
        cr_expect_str_eq(str(p, "formula", "predict"), i ? "exact" : "approximate", "%s", calls[i]);
        cr_expect_str_neq(str(p, "algorithm", "predict"), str(s, "algorithm", "sim"), "%s", calls[i]);
        cr_expect_lt(num(s, "time_s", "sim"), num(p, "time_s", "predict"), "%s", calls[i]);
        cJSON *pick = cJSON_GetObjectItem(p, "simulator_pick");
        cr_assert_not_null(pick, "%s", calls[i]);
        cr_expect_str_eq(str(pick, "algorithm", "pick"), str(s, "algorithm", "sim"), "%s", calls[i]);
        cr_expect_str_eq(str(pick, "protocol", "pick"), str(s, "protocol", "sim"), "%s", calls[i]);
        cr_expect_eq(num(pick, "time_s", "pick"), num(s, "time_s", "sim"), "%s", calls[i]);
        cJSON_Delete(s), cJSON_Delete(p);
    }
    th_says("predict -t cluster-a100 --set nodes=2 -c broadcast -s 128KiB", 0, "sim      answers binomial/Simple in 32.5536 us",
            1);
}

Test(one_answer, explain_advice_is_what_halving_saves) {
    const char *bw = "predict -t hgx-b200 -c allreduce -a nvls -s 1GiB --explain";
    cr_expect(advice_us(bw, "half the per-message latency saves ") < 10, "%s", bw);
    cr_expect(advice_us(bw, "twice the bandwidth ") > 1000, "%s", bw);
    th_says(bw, 0, "bandwidth-bound: half the per-message latency", 1);
    th_says("predict -t hgx-h100 -c allreduce -a ring -s 1KiB --explain", 0, "latency-bound: half the per-message", 1);
}

/* A row that reduces in a switch runs Simple only, as NCCL runs it: on two
 * GB200 racks of two trays at 64 MiB sim had answered nvlstree/LL128 (its
 * own cut, 290.7 us), a protocol NCCL never gives NVLSTree, and predict
 * named it as the simulator's pick. Now both say nvlstree/Simple, -a
 * nvlstree --proto LL128 is refused, and select's winner is Simple. And
 * predict's nccl-tests log writes sim's time where sim answers another row:
 * on two MI300X nodes at 4 MiB direct's. */
Test(one_answer, switch_reductions_run_simple_and_predict_logs_sims_pick) {
    cJSON *s = json_of("sim -t gb200-nvl72 --set racks=2 --set trays=2 -c allreduce -s 64MiB --json");
    cJSON *p = json_of("predict -t gb200-nvl72 --set racks=2 --set trays=2 -c allreduce -s 64MiB --json");
    cr_expect_str_eq(str(p, "algorithm", "predict"), str(s, "algorithm", "sim"));
    cr_expect_str_eq(str(s, "algorithm", "sim"), "nvlstree");
    cr_expect_str_eq(str(s, "protocol", "sim"), "Simple");
    cr_expect_str_eq(str(p, "protocol", "predict"), "Simple");
    cJSON_Delete(s), cJSON_Delete(p);
    th_says("predict -t gb200-nvl72 --set racks=2 --set trays=2 -c allreduce -a nvlstree --proto LL128 -s 64MiB", 1,
            "nvlstree runs with Simple only, as NCCL runs it (not LL128)", 1);
    th_says("select -t gb200-nvl72 --set racks=2 --set trays=2 -c allreduce --sizes 64MiB", 0, "nvlstree/LL", 0);
    char *log;
    cr_assert_eq(th_cli("predict -t cluster-mi300x -c allreduce --sizes 1MiB,4MiB --format nccl-tests", &log, 1), 0,
                 "%s", log);
    cJSON *d = json_of("sim -a direct -t cluster-mi300x -c allreduce -s 4MiB --json");
    const char *row = strstr(log, "\n     4194304");
    cr_assert_not_null(row, "%s", log);
    double us = 0;
    cr_assert_eq(sscanf(row, " %*s %*s %*s %*s %*s %lf", &us), 1, "%s", row);
    cr_expect(fabs(us - 1e6 * num(d, "time_s", "sim -a direct")) < 1e-4, "log %g us, sim -a direct %g s", us,
              num(d, "time_s", "sim -a direct"));      /* the log's four decimals */
    cJSON_Delete(d);
    free(log);
}

/* predict's -a auto is the lowest of every row's own predict, what the
 * GPUs and hosts add included: on polaris (a proxy operation a remote peer)
 * oneshot's formula is the lowest at 8 B, and it was picked at 160.6 us
 * where rd's whole time is 23.1 us. All-reduce and all-gather, 2 and 8
 * nodes, 8 B to 64 KiB. */
Test(one_answer, auto_is_the_lowest_whole_time_of_any_row) {
    static const char *nodes[] = {"2", "8"}, *colls[] = {"allreduce", "allgather"}, *sizes[] = {"8", "4KiB", "64KiB"};
    for (int n = 0; n < 2; n++)
        for (int c = 0; c < 2; c++)
            for (int s = 0; s < 3; s++) {
                char args[256];
                snprintf(args, sizeof args, "predict -t polaris --set nodes=%s -c %s -s %s --json", nodes[n], colls[c], sizes[s]);
                cJSON *j = json_of(args);
                double autot = num(j, "time_s", args);
                cJSON_Delete(j);
                const algo_t *const *rows = algo_all();
                double low = INFINITY;
                const char *lowname = "";
                for (int i = 0; rows[i]; i++) {
                    if ((int)rows[i]->coll != coll_parse(colls[c])) continue;
                    char one[320], *out;
                    snprintf(one, sizeof one, "predict -t polaris --set nodes=%s -c %s -s %s -a %s --json", nodes[n], colls[c],
                             sizes[s], rows[i]->name);
                    if (th_cli(one, &out, 1) != 0) { free(out); continue; }    /* a row that cannot run here */
                    cJSON *r = cJSON_Parse(out);
                    free(out);
                    const cJSON *v = r ? cJSON_GetObjectItemCaseSensitive(r, "time_s") : NULL;
                    if (cJSON_IsNumber(v) && v->valuedouble < low) low = v->valuedouble, lowname = rows[i]->name;
                    cJSON_Delete(r);
                }
                cr_expect(autot <= low * (1 + 1e-9), "%s: auto %.9g s, %s %.9g s", args, autot, lowname, low);
            }
}
