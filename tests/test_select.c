/* test_select.c - selection tables, NCCL tuner files and plots. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../algorithms/algo.h"
#include "../topologies/topo_yaml.h"

#include "../sim/answer/plot.h"
#include "../sim/answer/report.h"
#include "../sim/answer/select.h"
#include <cjson/cJSON.h>
#include "helpers.h"

static select_table_t table(topo_t *t, coll_t c, const uint64_t *sizes, int n, int model, int nccl_only) {
    select_req_t q = {.ncolls = 1, .sizes = sizes, .nsizes = n, .model = model, .nccl_only = nccl_only,
                      .proto = nccl_only ? RUN_PROTO_AUTO : PROTO_NONE};
    q.colls[0] = c;
    select_table_t tab;
    baton_err_t e = {0};
    cr_assert_eq(select_run(t, &q, &tab, &e), 0, "%s", e.msg);
    return tab;
}

static int cell_of(const select_row_t *r, const char *name) {
    for (int i = 0; i < r->ncells; i++)
        if (!strcmp(r->cells[i].algo->name, name)) return i;
    return -1;
}

/* On a uniform machine the winner at every size is the algorithm whose closed
 * form is lowest, and the rd/ring crossover sits where the formulas cross. */
Test(select, uniform_machine_reproduces_the_closed_form_crossover) {
    topo_t *t = th_full(16, 25e9, 5e-6, 1, 0);
    cost_model_t m;
    cr_assert_eq(topo_cost_model(t, &m, NULL), 0);
    cr_assert(m.uniform);
    uint64_t sizes[40];
    for (int i = 0; i < 40; i++) sizes[i] = 16ull << i;
    select_table_t tab = table(t, COLL_ALLREDUCE, sizes, 40, SELECT_AUTO, 0);
    int crossed = -1;
    for (int i = 0; i < tab.nrows; i++) {
        select_row_t *r = &tab.rows[i];
        double best = 1e300;
        const algo_t *const *all = algo_all();
        for (int k = 0; all[k]; k++) {
            sched_t s;
            if (all[k]->coll != COLL_ALLREDUCE || algo_build(all[k], 16, sizes[i], NULL, &s, NULL) < 0 || all[k]->approx) continue;
            double c = all[k]->cost(&m, 16, sizes[i], NULL);
            best = c < best ? c : best;
        }
        cr_expect_leq(r->cells[r->winner].time_s, best * (1 + 1e-12), "size %llu", (unsigned long long)sizes[i]);
        int rd = cell_of(r, "rd"), ring = cell_of(r, "ring");
        if (crossed < 0 && r->cells[ring].time_s < r->cells[rd].time_s) crossed = i;
    }
    cr_assert_gt(crossed, 0, "ring never overtook rd");
    /* the closed forms cross between the two sizes */
    double before = algo_allreduce_rd.cost(&m, 16, sizes[crossed - 1], NULL) - algo_allreduce_ring.cost(&m, 16, sizes[crossed - 1], NULL);
    double after = algo_allreduce_rd.cost(&m, 16, sizes[crossed], NULL) - algo_allreduce_ring.cost(&m, 16, sizes[crossed], NULL);
    cr_expect(before <= 0 && after > 0);
    select_free(&tab);
    topo_free(t);
}

/* The tuner file, read back the way NCCL's example plugin reads it, gives
 * every size in the table the table's decision. */
Test(select, tuner_csv_parses_back_into_the_same_decisions) {
    topo_t *t = th_star(8, 50e9, 2e-6, 0, 0);
    uint64_t sizes[24];
    for (int i = 0; i < 24; i++) sizes[i] = 8ull << i;
    select_table_t tab = table(t, COLL_ALLREDUCE, sizes, 24, SELECT_AUTO, 1);
    char *csv = report_select_tuner(&tab, 1, 1, 0, 0);
    cr_assert_not_null(csv);
    for (int i = 0; i < tab.nrows; i++) {
        const select_cell_t *w = &tab.rows[i].cells[tab.rows[i].winner];
        const char *want_proto = w->proto == PROTO_LL ? "ll" : w->proto == PROTO_LL128 ? "ll128" : "simple";
        int found = 0;
        char *copy = strdup(csv), *save = NULL;
        for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
            char coll[32], algo[32], proto[32];
            unsigned long long lo, hi;
            int ch, nn, nr, po, rb;
            if (line[0] == '#') continue;
            cr_assert_eq(sscanf(line, "%31[^,],%llu,%llu,%31[^,],%31[^,],%d,%d,%d,%d,%d", coll, &lo, &hi, algo, proto, &ch, &nn, &nr, &po, &rb), 10, "%s", line);
            cr_expect_eq(nr, 8);
            if (sizes[i] < lo || sizes[i] > hi) continue;
            found++;
            cr_expect_str_eq(algo, w->algo->nccl);
            cr_expect_str_eq(proto, want_proto);
        }
        free(copy);
        cr_expect_eq(found, 1, "size %llu is in %d ranges", (unsigned long long)sizes[i], found);
    }
    free(csv);
    select_free(&tab);
    topo_free(t);
}

Test(select, json_and_csv_are_complete) {
    char *out;
    cr_assert_eq(th_cli("select -t topologies/hgx-h100.yaml -c allreduce,broadcast --sizes 1KiB,1MiB --format csv", &out, 1), 0);
    cr_expect(strstr(out, "collective,bytes,algorithm,protocol,model,time_s") == out);
    cr_expect(strstr(out, "broadcast,1048576,chain,") != NULL, "%s", out);
    free(out);
    cr_assert_eq(th_cli("select -t topologies/hgx-h100.yaml -c allreduce --sizes 1KiB:1MiB:x32 --format json", &out, 1), 0);
    cr_expect(strstr(out, "\"winner\":") != NULL && strstr(out, "\"crossover\":") != NULL, "%s", out);
    free(out);
}

/* gnuplot is installed by make test (scripts/deps.sh), so the PNG exists. */
Test(select, plot_is_a_png) {
    remove("build/select-test.png");
    char *out;
    cr_assert_eq(th_cli("select -t topologies/uniform-8.yaml -c allreduce --sizes 8B:1MiB:x8 --plot build/select-test.png", &out, 0), 0, "%s", out);
    free(out);
    FILE *f = fopen("build/select-test.png", "rb");
    cr_assert_not_null(f);
    unsigned char magic[8] = {0};
    cr_assert_eq(fread(magic, 1, 8, f), 8u);
    fclose(f);
    static const unsigned char png[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    cr_expect(memcmp(magic, png, 8) == 0);
}

/* One row of --link-stats' CSV: link, its ends, rate, bytes, busy seconds,
 * busy share of the run; 0 for the header or a line that is not a row. */
typedef struct { int l; char from[64], to[64]; double bw, busy, use; unsigned long long bytes; } link_row_t;
static int link_row(const char *line, link_row_t *r) {
    return sscanf(line, "%d,%63[^,],%63[^,],%lf,%llu,%lf,%lf", &r->l, r->from, r->to, &r->bw, &r->bytes, &r->busy,
                  &r->use) == 7;
}

/* A link is busy at its own rate: no link's busy time passes the run's
 * (a fast GPU link under a slow NIC is not busy for the NIC's time), under
 * FIFO and fair sharing, one channel or eight, and NCCL's NVLSTree; a
 * ring's busiest link is a NIC's. */
Test(trace, no_link_is_busy_longer_than_the_run) {
    const char *runs[] = {"-a ring --channels 8", "-a ring --channels 8 --contention fair", "-a ring --channels 1",
                          "-a nccl"};
    for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
        char args[256], *out;
        snprintf(args, sizeof args, "sim -t cluster-h100 --set nodes=2 -c allreduce -s 64MiB %s --link-stats "
                 "build/busy-test.csv", runs[i]);
        cr_assert_eq(th_cli(args, &out, 1), 0, "%s", out);
        free(out);
        char *csv = th_slurp("build/busy-test.csv"), *save = NULL;
        cr_assert_not_null(csv);
        double most = 0;
        char top[64] = "";
        link_row_t x;
        for (char *line = strtok_r(csv, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
            if (!link_row(line, &x)) continue;
            cr_expect_leq(x.use, 1 + 1e-9, "%s: %s -> %s busy %.3f of the run", runs[i], x.from, x.to, x.use);
            if (x.use > most) most = x.use, snprintf(top, sizeof top, "%s", x.from);
        }
        if (strstr(runs[i], "ring")) cr_expect(strstr(top, "nic") != NULL, "%s: the busiest link leaves %s", runs[i], top);
        free(csv);
    }
}

/* The trace is JSON a viewer opens, and for every link its slices add up to
 * the busy time the engine accounted for that link (two separate paths). */
Test(trace, valid_and_slices_sum_to_link_busy) {
    char *out;
    cr_assert_eq(th_cli("sim -t topologies/cluster-h100.yaml -c allreduce -a ring -s 1MiB --proto simple "
                        "--trace build/trace-test.json --link-stats build/links-test.csv", &out, 0), 0, "%s", out);
    free(out);
    char *json = th_slurp("build/trace-test.json"), *csv = th_slurp("build/links-test.csv");
    cr_assert_not_null(json);
    cr_assert_not_null(csv);
    cJSON *doc = cJSON_Parse(json);
    cr_assert_not_null(doc, "the trace is not JSON");
    cJSON *events = cJSON_GetObjectItem(doc, "traceEvents"), *ev;
    cr_assert(cJSON_IsArray(events));
    double busy[4096] = {0};
    int slices = 0;
    cJSON_ArrayForEach(ev, events) {
        if (strcmp(cJSON_GetObjectItem(ev, "ph")->valuestring, "X") || cJSON_GetObjectItem(ev, "pid")->valueint != 2) continue;
        busy[cJSON_GetObjectItem(ev, "tid")->valueint] += cJSON_GetObjectItem(ev, "dur")->valuedouble * 1e-6;
        slices++;
    }
    cr_expect_gt(slices, 0);
    int rows = 0;
    char *save = NULL;
    link_row_t x;
    for (char *line = strtok_r(csv, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (!link_row(line, &x)) continue;
        cr_expect_float_eq(busy[x.l], x.busy, 1e-9 + 1e-6 * x.busy, "link %d %s -> %s", x.l, x.from, x.to);
        rows++;
    }
    cr_expect_gt(rows, 100);
    cJSON_Delete(doc);
    free(json);
    free(csv);
}

Test(trace, explain_names_the_regime) {
    char *out;
    cr_assert_eq(th_cli("sim -t topologies/hgx-h100.yaml -c allreduce -a ring -s 1GiB --explain", &out, 1), 0);
    cr_expect(strstr(out, "bandwidth-bound") != NULL && strstr(out, "busiest link") != NULL, "%s", out);
    free(out);
    cr_assert_eq(th_cli("sim -t topologies/hgx-h100.yaml -c allreduce -a auto -s 8B --proto auto --explain", &out, 1), 0);
    cr_expect(strstr(out, "latency-bound") != NULL && strstr(out, "chosen") != NULL, "%s", out);
    free(out);
}

/* Shards of a grid, concatenated in order, are the whole grid, byte for byte
 * (CSV with its one header, and JSON Lines). */
Test(sweep, shards_concatenate_to_the_whole) {
    const char *base = "sweep -t topologies/cluster-h100.yaml -c allreduce -a auto --set nic_bw=100Gb/s,400Gb/s "
                       "--set nodes=2,3 --sizes 1KiB:16MiB:x16";
    const char *formats[] = {"csv", "jsonl"};
    for (int f = 0; f < 2; f++) {
        char cmd[512], *whole, *part;
        snprintf(cmd, sizeof cmd, "%s --format %s", base, formats[f]);
        cr_assert_eq(th_cli(cmd, &whole, 1), 0, "%s", whole);
        for (int n = 1; n <= 5; n += 2) {
            size_t len = 0;
            char *cat = calloc(strlen(whole) + 1, 1);
            for (int i = 1; i <= n; i++) {
                snprintf(cmd, sizeof cmd, "%s --format %s --shard %d/%d", base, formats[f], i, n);
                cr_assert_eq(th_cli(cmd, &part, 1), 0, "%s", part);
                cr_assert_leq(len + strlen(part), strlen(whole), "shards longer than the whole");
                memcpy(cat + len, part, strlen(part));
                len += strlen(part);
                free(part);
            }
            cr_expect_str_eq(cat, whole, "%s in %d shards", formats[f], n);
            free(cat);
        }
        cr_expect_eq((int)(strchr(whole, '\0') - whole) > 0, 1);
        free(whole);
    }
}

/* One rank: every algorithm takes no time; the table and JSON stay numbers
 * (a 0/0 margin printed "-nan"). */
Test(select, one_rank_is_free_and_prints_numbers) {
    char *out;
    cr_assert_eq(th_cli("select -t tests/data/machines/one-gpu.yaml -c allreduce,broadcast --sizes 1KiB,1GiB", &out, 1), 0);
    cr_expect(strstr(out, "nan") == NULL && strstr(out, "inf") == NULL, "%s", out);
    cr_expect(strstr(out, " 1.00\n") != NULL, "the next best's ratio: %s", out);
    free(out);
    cr_assert_eq(th_cli("select -t tests/data/machines/one-gpu.yaml -c allreduce --sizes 1KiB --wide", &out, 1), 0);
    cr_expect(strstr(out, "1.00 (") != NULL, "%s", out);
    free(out);
    cr_assert_eq(th_cli("select -t tests/data/machines/one-gpu.yaml -c allreduce --sizes 1KiB --format json", &out, 1), 0);
    cr_expect(strstr(out, "\"ratio\":1") != NULL, "%s", out);
    free(out);
}

/* One decision everywhere: with their defaults (-a auto, --proto auto),
 * predict names the algorithm and protocol select ranks first for the same
 * question (closed forms), on a node and on a cluster, small to large. */
Test(select, defaults_agree_with_the_winner) {
    const char *machines[] = {"topologies/hgx-h100.yaml", "topologies/cluster-a100.yaml", "topologies/dgx1-v100.yaml"};
    const char *sizes[] = {"1KiB", "16KiB", "1MiB", "64MiB", "1GiB"};
    for (int m = 0; m < 3; m++)
        for (int i = 0; i < 5; i++) {
            char args[256], *out, *sel, want[128] = "", got[128] = "";
            snprintf(args, sizeof args, "select -t %s -c allreduce --sizes %s --model closed --format csv", machines[m], sizes[i]);
            cr_assert_eq(th_cli(args, &sel, 1), 0, "%s", sel);
            for (char *l = strtok(sel, "\n"); l; l = strtok(NULL, "\n")) {
                char a[32], p[16];
                int w = 0;
                if (sscanf(l, "allreduce,%*[^,],%31[^,],%15[^,],%*[^,],%*[^,],%*[^,],%*[^,],%d", a, p, &w) == 3 && w)
                    snprintf(want, sizeof want, "\"algorithm\":\"%s\",\"auto\":true,\"protocol\":\"%s\"", a, p);
            }
            free(sel);
            snprintf(args, sizeof args, "predict -t %s -c allreduce -s %s --json", machines[m], sizes[i]);
            cr_assert_eq(th_cli(args, &out, 1), 0, "%s", out);
            char *at = strstr(out, "\"algorithm\":");
            if (at) snprintf(got, sizeof got, "%.*s", (int)strcspn(at, "}") , at);
            cr_expect(want[0] && strstr(out, want) != NULL, "%s %s: select says %s, predict %s", machines[m], sizes[i], want, got);
            free(out);
        }
}

/* The plot's legend matches its data when an algorithm does not apply
 * (oneshot on 1,024 ranks): every curve's title names the algorithm whose
 * points are in the file it reads (checked from the files gnuplot reads),
 * the winner is among them, and nothing is plotted for oneshot. */
Test(select, plot_legend_matches_its_data) {
    baton_err_t e = {0};
    topo_t *t = th_load("topologies/cluster-h100.yaml", "nodes=128");
    const char *algos[] = {"ring", "oneshot", "nccltree"};
    uint64_t sizes[] = {1024, 1 << 20, 1 << 30};
    select_req_t q = {.colls = {COLL_ALLREDUCE}, .ncolls = 1, .sizes = sizes, .nsizes = 3, .algos = algos, .nalgos = 3,
                      .proto = RUN_PROTO_AUTO, .model = SELECT_CLOSED};
    select_table_t tab;
    cr_assert_eq(select_run(t, &q, &tab, &e), 0, "%s", e.msg);
    char dir[] = "/tmp/baton-plot-test-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    cr_assert_eq(plot_write_files(dir, &tab), 0);
    char path[256];
    snprintf(path, sizeof path, "%s/plot.gp", dir);
    char *gp = th_slurp(path);
    cr_assert_not_null(gp);
    int curves = 0, winner_shown = 0;
    for (char *at = gp; (at = strstr(at, "' using 1:2")) != NULL; at++) {    /* the time panel's curves */
        char *open = at;
        while (open > gp && open[-1] != '\'') open--;
        char file[256], title[64];
        snprintf(file, sizeof file, "%.*s", (int)(at - open), open);
        cr_assert_eq(sscanf(strstr(at, "title '") + 7, "%63[^']", title), 1);
        FILE *f = fopen(file, "r");
        cr_assert_not_null(f, "%s", file);
        unsigned long long bytes;
        double us, bus;
        int rows = 0;
        while (fscanf(f, "%llu %lf %lf", &bytes, &us, &bus) == 3) {
            for (int i = 0; i < tab.nrows; i++)
                for (int k = 0; k < tab.rows[i].ncells; k++) {
                    const select_cell_t *c = &tab.rows[i].cells[k];
                    if (tab.rows[i].bytes == bytes && strcmp(c->algo->name, title) == 0)
                        cr_expect_float_eq(us, c->time_s * 1e6, 1e-6 * us, "%s at %llu B", title, bytes);
                }
            rows++;
        }
        fclose(f);
        cr_expect_gt(rows, 0, "%s has points", title);
        cr_expect_neq(strcmp(title, "oneshot"), 0, "oneshot does not apply on 1,024 ranks and has no curve");
        for (int i = 0; i < tab.nrows; i++) winner_shown |= strcmp(tab.rows[i].cells[tab.rows[i].winner].algo->name, title) == 0;
        curves++;
    }
    cr_expect_eq(curves, 2, "ring and nccltree");
    cr_expect(winner_shown, "the winner is in the legend");
    free(gp);
    select_free(&tab);
    topo_free(t);
    snprintf(path, sizeof path, "rm -rf %s", dir);
    cr_expect_eq(system(path), 0);
}

/* The default table fits 100 columns; --vs-nccl says what NCCL runs and
 * marks where it is more than 5 % slower than the winner. */
Test(select, compact_table_and_vs_nccl) {
    char *out;
    cr_assert_eq(th_cli("select -t topologies/hgx-h100.yaml -c allreduce,allgather --sizes 8B:1GiB:x8", &out, 1), 0, "%s", out);
    for (char *l = strtok(out, "\n"); l; l = strtok(NULL, "\n")) cr_expect_leq(strlen(l), 100, "%zu columns: %s", strlen(l), l);
    free(out);
    cr_assert_eq(th_cli("select -t topologies/hgx-h100.yaml -c allreduce --sizes 8B,1GiB --vs-nccl", &out, 1), 0, "%s", out);
    cr_expect(strstr(out, "NCCL runs") != NULL, "%s", out);
    cr_expect(strstr(out, "*") != NULL, "at 8 B NCCL's tree is slower than baton's winner: %s", out);
    cr_expect(strstr(out, "nvls/Simple") != NULL, "at 1 GiB NCCL runs NVLS: %s", out);
    free(out);
}

/* NCCL tuner files: NCCL's algorithm names and protocol rules (NVLSTree is
 * "nvls_tree" and Simple only: the example plugin reads an unknown name as
 * ring), channels -1 (NCCL keeps its own count: a count in the file binds
 * NCCL to it, and hgx-h100's times assume one aggregate channel, where NCCL
 * runs 16 or more), the count the times assumed in the header, wildcards on
 * request; all-to-all and --proto none are refused, not written as an empty
 * file. */
Test(select, nccl_tuner_file_is_what_nccl_reads) {
    char *out;
    cr_assert_eq(th_cli("select -t topologies/cluster-h100.yaml -c allreduce --sizes 64MiB:1GiB:x4 --format nccl-tuner",
                        &out, 1), 0, "%s", out);
    cr_expect(strstr(out, ",nvls_tree,simple,-1,2,16,") != NULL, "%s", out);
    cr_expect(strstr(out, "# channels -1: NCCL keeps its own count under baton's plugin") != NULL, "%s", out);
    cr_expect(strstr(out, "baton's times assumed 8);") != NULL, "%s", out);
    cr_expect(strstr(out, "NCCL's example plugin sets one channel where the\n# row says -1") != NULL, "%s", out);
    cr_expect(strstr(out, "nvlstree") == NULL && strstr(out, "nvls_tree,ll") == NULL, "%s", out);
    free(out);
    cr_assert_eq(th_cli("select -t topologies/dgx1-v100.yaml -c allreduce --sizes 1GiB --format nccl-tuner --tuner-wildcards",
                        &out, 1), 0, "%s", out);
    cr_expect(strstr(out, "ring,simple,-1,-1,-1,") != NULL, "NCCL's channels, any node and rank count: %s", out);
    cr_expect(strstr(out, "times assumed 6);") != NULL, "NCCL's six rings: %s", out);
    free(out);
    cr_assert_eq(th_cli("select -t topologies/hgx-h100.yaml -c allreduce --sizes 1GiB --format nccl-tuner", &out, 1), 0, "%s", out);
    cr_expect(strstr(out, ",nvls,simple,-1,1,8,") != NULL, "never one channel for NCCL: %s", out);
    cr_expect(strstr(out, "so with it write counts (--tuner-channels K)") != NULL, "the way out is named: %s", out);
    free(out);
    /* For NCCL's example plugin, which runs a row of -1 on one channel: every row binds the count given. */
    cr_assert_eq(th_cli("select -t topologies/hgx-h100.yaml -c allreduce --sizes 1KiB,1GiB --format nccl-tuner --tuner-channels 16",
                        &out, 1), 0, "%s", out);
    cr_expect(strstr(out, ",nvls,simple,16,1,8,") && strstr(out, ",ll,16,1,8,") && !strstr(out, ",-1,1,8,"), "%s", out);
    cr_expect(strstr(out, "# channels 16 (--tuner-channels): every row binds NCCL to 16 channels") != NULL, "%s", out);
    free(out);
    cr_expect_eq(th_cli("select -t topologies/hgx-h100.yaml -c allreduce --format nccl-tuner --tuner-channels 0", &out, 0), 2);
    free(out);
    cr_expect_eq(th_cli("select -t topologies/hgx-h100.yaml -c alltoall --format nccl-tuner", &out, 0), 2);
    cr_expect(strstr(out, "alltoall") != NULL, "%s", out);
    free(out);
    cr_expect_eq(th_cli("select -t topologies/hgx-h100.yaml -c allreduce --format nccl-tuner --proto none", &out, 0), 2);
    free(out);
}

/* A winner by an approximate formula is simulated before it wins: on
 * 32 x 8 H100 at 1 GiB nvlstree's formula (5.5 ms) is far below what the
 * simulator gives it under FIFO (14.0 ms), so the table's winner is a simulated cell,
 * its time is what `sim` says for it, and that is at most the simulated time
 * of the formula's favourite. */
Test(select, winner_is_confirmed_by_the_simulator) {
    const char *sets[] = {"nodes=32"};
    baton_err_t e = {0};
    topo_t *t = topo_yaml_load("topologies/cluster-h100.yaml", sets, 1, &e);
    cr_assert_not_null(t, "%s", e.msg);
    uint64_t n = 1ull << 30;
    select_req_t q = {.ncolls = 1, .sizes = &n, .nsizes = 1, .model = SELECT_AUTO, .proto = RUN_PROTO_AUTO};
    q.colls[0] = COLL_ALLREDUCE;
    select_table_t tab;
    cr_assert_eq(select_run(t, &q, &tab, &e), 0, "%s", e.msg);
    const select_row_t *r = &tab.rows[0];
    cr_assert_geq(r->winner, 0);
    const select_cell_t *w = &r->cells[r->winner];
    cr_expect(w->simulated, "%s won by formula", w->algo->name);
    run_req_t s = {.coll = COLL_ALLREDUCE, .algo = w->algo->name, .bytes = n, .proto = w->proto};
    run_out_t o;
    cr_assert_eq(run_collective(t, &s, &o, &e), 0, "%s", e.msg);
    cr_expect_float_eq(w->time_s, o.time_s, 1e-9 * o.time_s, "%s: table %g s, sim %g s", w->algo->name, w->time_s, o.time_s);
    engine_result_free(&o.eng);
    int nv = cell_of(r, "nvlstree");
    cr_assert_geq(nv, 0);
    s.algo = "nvlstree";
    s.proto = PROTO_SIMPLE;
    cr_assert_eq(run_collective(t, &s, &o, &e), 0, "%s", e.msg);
    cr_expect_leq(w->time_s, o.time_s, "winner %s %g s, nvlstree simulated %g s", w->algo->name, w->time_s, o.time_s);
    engine_result_free(&o.eng);
    select_free(&tab);
    topo_free(t);
}

/* Where FIFO's simulation puts an approximate row far above its formula and
 * that formula would have won, the table says so and how to check. A table
 * made by hand: nvlstree's formula 5.44 ms beats ring's simulated 5.99 ms,
 * but its FIFO simulation says 7.82 ms (what FIFO said on 4 x 8 H100 at
 * 1 GiB before links kept their holes for later messages, sim/engine/book.h).
 * Under fair sharing, or with the simulation near the formula, no caution. */
Test(select, a_fifo_demotion_is_flagged) {
    select_cell_t cells[2] = {
        {.algo = algo_find(COLL_ALLREDUCE, "ring"), .proto = PROTO_SIMPLE, .ok = 1, .simulated = 1, .time_s = 5.99e-3},
        {.algo = algo_find(COLL_ALLREDUCE, "nvlstree"), .proto = PROTO_SIMPLE, .ok = 1, .simulated = 1, .approx = 1,
         .time_s = 7.82e-3, .formula_s = 5.44e-3}};
    cr_assert(cells[0].algo && cells[1].algo);
    select_row_t row = {.coll = COLL_ALLREDUCE, .bytes = 1ull << 30, .ncells = 2, .cells = cells, .winner = 0, .runner_up = 1};
    select_table_t tab = {.topo = "cluster-h100", .ranks = 32, .contention = CONTENTION_FIFO, .nrows = 1, .rows = &row};
    char *out = report_select_table(&tab, 0, 0);
    cr_assert_not_null(out);
    cr_expect(strstr(out, "caution: at 1 GiB nvlstree/Simple's formula says 5.44 ms, its FIFO simulation 7.82 ms") != NULL,
              "%s", out);
    cr_expect(strstr(out, "--contention fair checks it") != NULL, "%s", out);
    free(out);
    tab.contention = CONTENTION_FAIR;
    out = report_select_table(&tab, 0, 0);
    cr_expect(strstr(out, "caution:") == NULL, "%s", out);
    free(out);
    tab.contention = CONTENTION_FIFO;
    cells[1].time_s = 5.49e-3 * 1.2;                  /* within FIFO_DOUBT of its formula */
    out = report_select_table(&tab, 0, 0);
    cr_expect(strstr(out, "caution:") == NULL, "%s", out);
    free(out);
}

/* The case that caution was made for, simulated: 4 x 8 H100 at 1 GiB, FIFO
 * now lets a message use a link in the hole another message's later start
 * left on it, and nvlstree simulates at its formula (5.45 ms; fair sharing
 * 5.49, the formula 5.44) and wins, with no caution. */
Test(select, fifo_with_backfilling_agrees_with_the_formula_at_four_nodes) {
    char *out;
    cr_assert_eq(th_cli("select -t topologies/cluster-h100.yaml --set nodes=4 -c allreduce --sizes 1GiB", &out, 1), 0, "%s", out);
    cr_expect(strstr(out, "1 GiB  nvlstree/Simple") != NULL, "%s", out);
    cr_expect(strstr(out, "caution:") == NULL, "%s", out);
    free(out);
}

/* An all-to-all runs each size as nccl-tests does, rounded down to a whole
 * float a peer (1 GiB on 72 ranks: 1073741760 bytes, where every power of
 * two had said "none applies"), labelled as asked with a note; a size
 * below one float a peer says why none applies, and the crossovers line
 * does not claim a winner at every size. */
Test(select, a_size_none_runs_says_why) {
    unsigned long long whole = (1ULL << 30) / (4 * 72) * (4 * 72);
    char want[160];
    th_says("select -t gb200-nvl72 -c alltoall --sizes 1GiB", 0, "    1 GiB  ce/Simple", 1);
    snprintf(want, sizeof want, "rounded down to a whole float a peer (1 GiB: %llu", whole);
    th_says("select -t gb200-nvl72 -c alltoall --sizes 1GiB", 0, want, 1);
    snprintf(want, sizeof want, "alltoall,%llu,ce,", whole);
    th_says("select -t gb200-nvl72 -c alltoall --sizes 1GiB --format csv", 0, want, 1);
    th_says("select -t gb200-nvl72 -c alltoall --sizes 72MiB", 0, "rounded down", 0);
    snprintf(want, sizeof want, "\"bytes\":%llu,\"asked_bytes\":1073741824", whole);
    th_says("select -t gb200-nvl72 -c alltoall --sizes 1GiB --format json", 0, want, 1);
    th_says("select -t gb200-nvl72 -c alltoall --sizes 8B --format json", 0, "\"bytes\":0,\"asked_bytes\":8,\"why\":\"an all-to-all", 1);
    th_says("select -t gb200-nvl72 --set racks=2 -c allgather --sizes 1GiB --format nccl-tuner", 0,
            "ring and tree rows 16: a ring per NIC", 1);
    th_says("select -t gb200-nvl72 -c alltoall --sizes 8B", 0,
            "(none applies: an all-to-all on 72 ranks runs nothing below 288 bytes, a float a peer", 1);
    th_says("select -t gb200-nvl72 -c alltoall --sizes 8B", 0, "crossovers: none (no algorithm applies at any", 1);
    th_says("select -t gb200-nvl72 -c alltoall --sizes 8B,72MiB", 0, "crossovers: none (one winner wherever one applies)", 1);
    th_says("predict -t gb200-nvl72 -c alltoall -a direct -s 1GiB", 1, "nccl-tests runs this size as 1073741760 bytes", 1);
    /* a tuner file with no rule (rows NCCL does not run): an error, not a file of comments NCCL would read as none */
    th_says("select -t hgx-h100 -c allreduce --sizes 1KiB,64MiB --algos direct --format nccl-tuner", 1,
            "--format nccl-tuner: no size has a row NCCL runs among --algos", 1);
}

/* A row's answer is its own, whatever ran before it in the process and
 * however many workers run the rows: the view of a row costed by its steps
 * is the size's (sim/form/form.c memo_key), so Rabenseifner's 1 GiB formula
 * after its 8 B row is the 1 GiB formula alone (it read 10.45 ms, the 8 B
 * row's view, where alone it is 9.20); and the table is the same over one
 * worker or two (BATON_JOBS; sim/answer/select.c). */
Test(select, a_row_is_the_same_whatever_ran_before_it) {
    const char *raben = "select -t cluster-h100 --set nodes=4 -c allreduce --algos rabenseifner --proto Simple --format json";
    char cmd[256];
    snprintf(cmd, sizeof cmd, "%s --sizes 1GiB", raben);
    cJSON *alone = th_cli_json(cmd);
    snprintf(cmd, sizeof cmd, "%s --sizes 8,1GiB", raben);
    cJSON *after = th_cli_json(cmd);
    cJSON *a = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(alone, 0), "results"), 0);
    cJSON *b = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(after, 1), "results"), 0);
    cr_assert(a && b);
    cr_expect_eq(th_jnum(b, "formula_time_s"), th_jnum(a, "formula_time_s"), "1 GiB after 8 B: %.9g, alone %.9g",
                 th_jnum(b, "formula_time_s"), th_jnum(a, "formula_time_s"));
    cr_expect_eq(th_jnum(b, "time_s"), th_jnum(a, "time_s"));
    cJSON_Delete(alone);
    cJSON_Delete(after);
    char *out = NULL;
    int rc = th_sh("b=${BATON_BIN:-build/baton}; args='select -t cluster-h100 --set nodes=4 -c allreduce,allgather "
                   "--sizes 8,4KiB,1MiB,64MiB,1GiB --vs-nccl --format json';"
                   " x=$(BATON_JOBS=1 $b $args | md5sum) && y=$(BATON_JOBS=2 $b $args | md5sum) &&"
                   " z=$(BATON_JOBS=3 $b $args | md5sum) && [ \"$x\" = \"$y\" ] && [ \"$x\" = \"$z\" ]", &out);
    cr_expect_eq(rc, 0, "select over 1, 2 and 3 workers printed different tables");
    free(out);
}
