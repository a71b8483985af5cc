/* test_small_items.c - issue 52's "output people read": the candy kids'
 * story for any kid count, and the small things a new user hit (help text,
 * unit errors, did-you-mean, sweeps' last point, the plot's labels, an
 * unknown command, machines found beside the binary, gpus' launch). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../sim/answer/plot.h"
#include "../sim/answer/select.h"
#include "../topologies/units.h"
#include "helpers.h"

static const char *bin(void) {
    const char *b = getenv("BATON_BIN");
    return b ? b : "build/baton";
}

/* Every hand-off line of `kids --kids n --method ring` names what it moved:
 * none ends in "now holds " with nothing after it. */
static int empty_handoffs(const char *out) {
    int n = 0;
    for (const char *s = strstr(out, "now holds "); s; s = strstr(s + 1, "now holds "))
        n += s[10] == '\n' || s[10] == '\0';
    return n;
}

Test(kidsstory, ring_any_count_no_empty_handoffs) {
    for (int n = 2; n <= 7; n++) {
        char args[64], *out;
        snprintf(args, sizeof args, "kids --kids %d --method ring", n);
        cr_assert_eq(th_cli(args, &out, 0), 0, "%s: %s", args, out);
        cr_expect_eq(empty_handoffs(out), 0, "%s lists empty hand-offs:\n%s", args, out);
        /* Uneven loads come with their reason whenever 4 numbers do not
         * split into n equal shares (3, 5, 6, 7 kids). */
        int uneven = 4 % n != 0;
        cr_expect_eq(strstr(out, "do not split evenly") != NULL, uneven, "%s: the shares' note:\n%s", args, out);
        free(out);
    }
}

Test(kidsstory, ring_five_names_the_shares_and_loads) {
    char *out;
    cr_assert_eq(th_cli("kids --kids 5 --method ring", &out, 0), 0);
    cr_expect(strstr(out, "RED | BLUE | GREEN | YELLOW | none") != NULL, "%s", out);
    /* The loads the note gives are the table's: said 6..7, heard 6..7. */
    cr_expect(strstr(out, "says 6 to 7 and hears 6 to 7") != NULL, "%s", out);
    cr_expect(strstr(out, "Cara  said  7") != NULL, "%s", out);
    /* A partial hand-off names its colour. */
    cr_expect(strstr(out, "Anna  -> Ben   adds RED, Ben now holds 11\n") != NULL, "%s", out);
    free(out);
}

Test(kidsstory, premise_counts_every_kid_ones) {
    char *out;
    cr_assert_eq(th_cli("kids --kids 5 --method ring", &out, 0), 0);
    cr_expect(strstr(out, "11111: everyone has") != NULL, "%s", out);
    free(out);
}

/* The page records no move of an empty share: 5 kids' ring on the page has
 * no message that writes no place ([] places, [] values). */
Test(kidsstory, page_has_no_empty_moves) {
    char cmd[512], *out;
    snprintf(cmd, sizeof cmd, "d=$(mktemp -d) && %s kids --kids 5 --html $d/k.html >/dev/null && "
             "grep -c '\\[\\],\\[\\]' $d/k.html; rm -rf $d", bin());
    th_sh(cmd, &out);
    cr_expect_str_eq(out, "0\n", "moves of empty shares on the page: %s", out);
    free(out);
}

/* `sim --help` and `predict --help`: the -c entry (up to -a) names every
 * collective baton has. */
Test(smallitems, help_lists_every_collective) {
    const char *cmds[] = {"sim --help", "predict --help"};
    for (int i = 0; i < 2; i++) {
        char *out;
        cr_assert_eq(th_cli(cmds[i], &out, 1), 0);
        char *c = strstr(out, "-c, --coll"), *a = c ? strstr(c, "-a, --algo") : NULL;
        cr_assert(c && a, "%s: no -c/-a entries:\n%s", cmds[i], out);
        *a = '\0';
        for (int k = 0; k < COLL_COUNT; k++)
            cr_expect(strstr(c, coll_name((coll_t)k)) != NULL, "%s: -c does not name %s: %s", cmds[i],
                      coll_name((coll_t)k), c);
        free(out);
    }
}

/* An unknown unit's error lists the accepted ones: sizes (binary and
 * decimal), bandwidths (bytes and bits) and times. */
Test(smallitems, unknown_unit_lists_the_units) {
    th_says("sim -t hgx-h100 -c allreduce -s 1XB", 2, "bad size '1XB'", 1);
    const char *sizes[] = {" B ", "KB", "GB", "EB", "KiB", "GiB", "EiB"};
    char *out;
    th_cli("sim -t hgx-h100 -c allreduce -s 1XB", &out, 0);
    for (int i = 0; i < 7; i++) cr_expect(strstr(out, sizes[i]) != NULL, "no %s in: %s", sizes[i], out);
    free(out);
    double v;
    const char *why = NULL;
    cr_assert_lt(units_bandwidth("3XB/s", &v, &why), 0);
    cr_expect(strstr(why, "GB/s") && strstr(why, "Gb/s") && strstr(why, "GiB/s"), "%s", why);
    cr_assert_lt(units_time("3 fortnights", &v, &why), 0);
    cr_expect(strstr(why, "us") && strstr(why, "ns") && strstr(why, "ms"), "%s", why);
}

/* A link endpoint that names no node: the closest node name is suggested. */
Test(smallitems, unknown_node_did_you_mean) {
    const char *f = "build/test-small-badnode.yaml";
    FILE *y = fopen(f, "w");
    cr_assert_not_null(y);
    fputs("name: badnode\nnodes:\n  - {name: \"gpu[0-1]\"}\n  - {name: nvswitch, kind: switch}\n"
          "links:\n  - {a: \"gpu[0-1]\", b: nvswich, bw: 450GB/s, latency: 0.3us}\n", y);
    fclose(y);
    char args[128];
    snprintf(args, sizeof args, "topo %s", f);
    th_says(args, 1, "6:24: unknown node 'nvswich' (declare it under nodes:); did you mean 'nvswitch'?", 1);
    /* Nothing close: no guess. */
    y = fopen(f, "w");
    fputs("name: badnode\nnodes:\n  - {name: \"gpu[0-1]\"}\n  - {name: nvswitch, kind: switch}\n"
          "links:\n  - {a: \"gpu[0-1]\", b: fabric, bw: 450GB/s, latency: 0.3us}\n", y);
    fclose(y);
    th_says(args, 1, "did you mean", 0);
    remove(f);
}

/* The plot's crossover lines: each labelled by the pair it separates (no
 * two alike on hgx-h100's all-reduce, where two crossovers lead to the same
 * algorithm), in the new winner's colour; no two curves share a colour. */
Test(smallitems, plot_labels_pairs_and_distinct_colours) {
    topo_t *t = th_load("topologies/hgx-h100.yaml", NULL);
    uint64_t *sizes;
    int n;
    const char *why;
    cr_assert_eq(select_parse_sizes("8B:1GiB", &sizes, &n, &why), 0);
    select_req_t q = {.ncolls = 1, .colls = {COLL_ALLREDUCE}, .sizes = sizes, .nsizes = n, .model = SELECT_CLOSED,
                      .proto = RUN_PROTO_AUTO};
    select_table_t tab;
    baton_err_t e = {0};
    cr_assert_eq(select_run(t, &q, &tab, &e), 0, "%s", e.msg);
    char dir[] = "/tmp/baton-test-plot-XXXXXX", gp[128];
    cr_assert_not_null(mkdtemp(dir));
    cr_assert_eq(plot_write_files(dir, &tab), 0);
    snprintf(gp, sizeof gp, "%s/plot.gp", dir);
    char *s = th_slurp(gp);
    cr_assert_not_null(s);
    char labels[32][96], cols[64][16];
    int nl = 0, nc = 0, ncross = 0;
    for (int i = 1; i < tab.nrows; i++) ncross += select_is_crossover(&tab, i);
    cr_assert_geq(ncross, 2, "hgx-h100's all-reduce has crossovers");
    for (char *l = strstr(s, "set label '"); l && nl < 32; l = strstr(l + 1, "set label '")) {
        char *end = strchr(l + 11, '\'');
        snprintf(labels[nl], sizeof labels[nl], "%.*s", (int)(end - l - 11), l + 11);
        cr_expect(strstr(labels[nl], " -> ") != NULL, "label '%s' names no pair", labels[nl]);
        for (int j = 0; j < nl; j++) cr_expect_str_neq(labels[j], labels[nl], "two crossovers labelled alike");
        nl++;
    }
    cr_expect_eq(nl, ncross, "one label per crossover");
    char *plot = strstr(s, "\nplot ");
    cr_assert_not_null(plot);
    char *stop = strchr(plot + 1, '\n');
    for (char *c = strstr(plot, "lc rgb '"); c && c < stop && nc < 64; c = strstr(c + 1, "lc rgb '")) {
        snprintf(cols[nc], sizeof cols[nc], "%.7s", c + 8);
        for (int j = 0; j < nc; j++) cr_expect_str_neq(cols[j], cols[nc], "two curves in colour %s", cols[nc]);
        nc++;
    }
    cr_expect_geq(nc, 10, "the all-reduce curves");
    free(s);
    char rm[160];
    snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
    cr_expect_eq(system(rm), 0);
    select_free(&tab);
    free(sizes);
    topo_free(t);
}

/* An unknown command: the suggestion and a pointer to --help, not the
 * whole usage after it. */
Test(smallitems, unknown_command_prints_only_the_suggestion) {
    const char *args[] = {"selct", "help selct"};
    for (int i = 0; i < 2; i++) {
        char *out;
        cr_expect_eq(th_cli(args[i], &out, 0), 2);
        cr_expect(strstr(out, "unknown command 'selct'; did you mean 'select'?") != NULL, "%s", out);
        cr_expect(strstr(out, "baton --help") != NULL, "%s", out);
        cr_expect(strstr(out, "commands:") == NULL, "the whole usage follows the suggestion:\n%s", out);
        cr_expect(strchr(out, '\n') && strchr(strchr(out, '\n') + 1, '\n') && !strchr(strchr(strchr(out, '\n') + 1, '\n') + 1, '\n'),
                  "two lines, not %s", out);
        free(out);
    }
}

/* A binary outside any install finds the machines of the clone it sits in
 * (<exe dir>/../topologies), run from another directory with no
 * $BATON_PATH: a copy of the binary in DIR/build beside DIR/topologies
 * holding a machine no other directory has. */
Test(smallitems, binary_finds_its_clones_machines) {
    char cmd[2048], cwd[512], *out;
    cr_assert_not_null(getcwd(cwd, sizeof cwd));
    const char *b = bin();
    snprintf(cmd, sizeof cmd,
             "d=$(mktemp -d) && mkdir $d/build $d/topologies && cp %s%s%s $d/build/baton && "
             "cp topologies/hgx-h100.yaml $d/topologies/only-in-this-clone.yaml && cd / && "
             "env -u BATON_PATH $d/build/baton topo only-in-this-clone 2>&1; rc=$?; rm -rf $d; exit $rc",
             b[0] == '/' ? "" : cwd, b[0] == '/' ? "" : "/", b);
    cr_expect_eq(th_sh(cmd, &out), 0, "%s", out);
    cr_expect(strstr(out, "topology hgx-h100: 8 ranks") != NULL, "%s", out);
    free(out);
}

/* A range whose HI is not on its grid ends below it, as nccl-tests' -b -e
 * -f do, and says so: 8B:1GiB:x16 ends at 128 MiB, and a note names 1 GiB,
 * the grid, the last point and the next. On the grid, or a list: no note. */
Test(smallitems, sizes_range_says_where_it_ends) {
    uint64_t *s;
    int n;
    const char *why;
    char note[256];
    cr_assert_eq(select_parse_sizes("8B:1GiB:x16", &s, &n, &why), 0);
    cr_expect_eq(s[n - 1], 128ull << 20, "the x16 grid from 8 B stops at 128 MiB");
    cr_expect_eq(select_sizes_note("8B:1GiB:x16", s, n, note, sizeof note), 1);
    cr_expect(strstr(note, "1 GiB is not on the x16 grid from 8 B: the sizes end at 128 MiB") &&
              strstr(note, "2 GiB"), "%s", note);
    free(s);
    cr_assert_eq(select_parse_sizes("8B:1GiB:x8", &s, &n, &why), 0);
    cr_expect_eq(s[n - 1], 1ull << 30);
    cr_expect_eq(select_sizes_note("8B:1GiB:x8", s, n, note, sizeof note), 0, "%s", note);
    free(s);
    cr_assert_eq(select_parse_sizes("8B,1GiB", &s, &n, &why), 0);
    cr_expect_eq(select_sizes_note("8B,1GiB", s, n, note, sizeof note), 0, "%s", note);
    free(s);
    th_says("select -t hgx-h100 -c allreduce --sizes 8B:1GiB:x16", 0,
            "baton select: note: --sizes 8B:1GiB:x16: 1 GiB is not on the x16 grid", 1);
    th_says("select -t hgx-h100 -c allreduce --sizes 8B:1GiB:x8", 0, "note:", 0);
    th_says("predict -t hgx-h100 -c allreduce --sizes 1KiB:1MB", 0, "1 MB is not on the x2 grid from 1 KiB", 1);
}

/* `gpus`' 4 us and a machine's 2.8 us are two costs: the table says which is
 * which, and `gpus -t` gives each number of a machine's GPU with its source
 * (the table's entry, or the file's own value) beside the machine's launch. */
Test(smallitems, gpus_says_where_launch_comes_from) {
    th_says("gpus", 0, "Not a machine's `launch:` (2.8 us unless the file sets it", 1);
    th_says("gpus -t hgx-h100", 0, "kernel launch     4.00 us      (the GPU table's", 1);
    th_says("gpus -t hgx-h100", 0, "machine launch      2.80 us      (baton's default", 1);
    th_says("gpus -t hgx-h100 --set launch=5us", 0, "machine launch      5.00 us      (the machine file's or --set)", 1);
    const char *f = "build/test-small-gpu.yaml";
    char cmd[256], *out;
    snprintf(cmd, sizeof cmd, "sed 's/^gpu: h100-sxm.*/gpu: {like: h100-sxm, launch: 3us}/' topologies/hgx-h100.yaml > %s", f);
    cr_assert_eq(th_sh(cmd, &out), 0);
    free(out);
    snprintf(cmd, sizeof cmd, "gpus -t %s", f);
    th_says(cmd, 0, "kernel launch     3.00 us      (the machine file's", 1);
    th_says(cmd, 0, "bf16             989.4 TFLOPS  (the GPU table's)", 1);
    th_says("gpus -t hgx-h100 --json", 2, "one at a time", 1);
    remove(f);
}

/* A GPU name is looked up too (a machine's `gpu:`, step's --gpu): a near
 * miss gets the table's name. */
Test(smallitems, unknown_gpu_did_you_mean) {
    th_says("step -t hgx-h100 --model llama3-8b --gpu h100-sx", 2, "did you mean 'h100-sxm'?", 1);
    const char *f = "build/test-small-gpuname.yaml";
    char cmd[256], *out;
    snprintf(cmd, sizeof cmd, "sed 's/^gpu: h100-sxm.*/gpu: h100sxm/' topologies/hgx-h100.yaml > %s", f);
    cr_assert_eq(th_sh(cmd, &out), 0);
    free(out);
    snprintf(cmd, sizeof cmd, "topo %s", f);
    th_says(cmd, 1, "unknown GPU 'h100sxm'", 1);
    th_says(cmd, 1, "did you mean 'h100-sxm'?", 1);
    remove(f);
}

/* --set of a parameter the file lacks: beyond spelling, the one parameter
 * with the same first word (nvlink_bw: the file has nvlink_gbps). */
Test(smallitems, set_unknown_parameter_same_stem) {
    th_says("predict -t hgx-h100 -c allreduce -s 1GB --set nvlink_bw=3GB/s", 1,
            "no parameter 'nvlink_bw'; did you mean 'nvlink_gbps'?", 1);
    th_says("predict -t hgx-h100 -c allreduce -s 1GB --set fabric_bw=3GB/s", 1, "did you mean", 0);
}

/* --plot draws in the format its name ends with, and any other name is a
 * usage error before anything runs (a .pdf used to get PNG bytes). */
Test(smallitems, plot_format_follows_the_name) {
    th_says("select -t hgx-h100 -c allreduce --sizes 1KiB,1MiB --plot build/x.pdf", 2, "name the picture FILE.png or FILE.svg",
            1);
    char *out;
    if (th_sh("gnuplot --version >/dev/null 2>&1", &out) != 0) { free(out); return; }   /* no gnuplot: no picture */
    free(out);
    cr_assert_eq(th_cli("select -t hgx-h100 -c allreduce --sizes 1KiB,1MiB --plot build/sel-test.svg", &out, 1), 0, "%s", out);
    free(out);
    char *svg = th_slurp("build/sel-test.svg");
    cr_assert_not_null(svg);
    cr_expect(strstr(svg, "<svg") != NULL, "an SVG document");
    free(svg);
}

/* An MSCCL file beyond the executor's 256 steps a threadblock is written
 * (baton reads it back) with a warning saying MSCCL would refuse it. */
Test(smallitems, msccl_export_warns_past_256_steps) {
    th_says("export --msccl -c allreduce -a ring -p 130 -o build/ring130.xml", 0, "a threadblock of 259 steps", 1);
    th_says("export --msccl -c allreduce -a ring -p 8 -o build/ring8.xml", 0, "threadblock of", 0);
}

/* A log that is not whole says so: lines among its rows that are no row,
 * and a text log ending without nccl-tests' closing lines; and one whose
 * NCCL baton has no rules for names the version it reads it with. */
Test(smallitems, a_log_that_is_not_whole_says_so) {
    const char *src = "validate/logs/nccl-tests/a100x16_2node_oci_roce_allreduce.txt";
    char cmd[512], *out;
    snprintf(cmd, sizeof cmd, "sed '/^ *4096 /a srun: error: node17: task 3: Exited with exit code 1' %s > build/stray.txt", src);
    cr_assert_eq(th_sh(cmd, &out), 0, "%s", out);
    free(out);
    th_says("validate -t cluster-a100 --set nodes=2 --nccl-tests build/stray.txt", 0,
            "1 line among the rows is no row (\"srun: error: node17:", 1);
    th_says("doctor -t cluster-a100 --set nodes=2 --nccl-tests build/stray.txt", 0, "1 line among the rows is no row", 1);
    snprintf(cmd, sizeof cmd, "sed '/^ *8192 /,$d' %s > build/cut.txt", src);
    cr_assert_eq(th_sh(cmd, &out), 0, "%s", out);
    free(out);
    th_says("validate -t cluster-a100 --set nodes=2 --nccl-tests build/cut.txt", 0,
            "ends after its 4 KiB row without nccl-tests' closing lines", 1);
    snprintf(cmd, sizeof cmd, "sed 's/^# \\(Out of bounds\\|Avg bus\\)/ \\1/' %s > build/old-close.txt", src);
    cr_assert_eq(th_sh(cmd, &out), 0, "%s", out);        /* older nccl-tests print its closing lines without '#' */
    free(out);
    th_says("validate -t cluster-a100 --set nodes=2 --nccl-tests build/old-close.txt", 0, "closing lines", 0);
    th_says("validate -t cluster-a100 --set nodes=2 --nccl-tests build/old-close.txt", 0, "no row", 0);
    char v[512];
    snprintf(v, sizeof v, "validate -t cluster-a100 --set nodes=2 --nccl-tests %s", src);
    th_says(v, 0, "closing lines", 0);
    th_says(v, 0, "no row", 0);
    cr_assert_eq(th_sh("sed 's/NCCL version 2.26.6/NCCL version 2.12.10/' validate/logs/nccl-tests-2026/B200x16_2nodes-GKE-"
                       "A4-gIB-RoCE_dranet-gke-rdma-doc_all_gather.txt > build/v212.txt", &out), 0, "%s", out);
    free(out);
    th_says("validate -t cluster-b200 --nccl-tests build/v212.txt", 0,
            "outside the versions whose rules baton knows (2.18.0 to 2.30.7): it is read with NCCL 2.30.7's", 1);
}

/* A log of another rank count against a machine sized by racks, trays or
 * gpus: validate names those, as doctor does; an excerpt that keeps one
 * Rank line of 144 ranks says nothing of its hosts. */
Test(smallitems, validate_sizes_a_machine_to_the_log) {
    th_says("validate -t gb200-nvl72 --nccl-tests validate/logs/nccl-tests-2026/GB200x8_2trays-MNNVL-IMEX_oci-hpc-oke-README_"
            "all_reduce.txt", 1, "size it to the log's (--set racks=N or --set trays=N)", 1);
    th_says("validate -t cluster-b200 --nccl-tests validate/logs/nccl-tests-2026/B200x2_2nodes-1GPU-1NIC-GKE-A4-gIB_dranet-"
            "nvidia-dranet-doc_all_gather.txt", 1, "--set gpus=N sets the GPUs a node", 1);
    th_says("validate -t gb200-nvl72 --set racks=2 --nccl-tests validate/logs/nccl-tests-2026/GB200x144_2racks-MNNVL-IB_"
            "coreweave-nccl-tests-README_all_reduce.txt", 0, "ran on 1 host", 0);
}

/* export takes --set with -t (an MSCCL file cut from Polaris's rings at 2
 * nodes: 8 GPUs), and refuses it without a machine to set. */
Test(smallitems, export_takes_set_with_its_machine) {
    th_says("export --msccl -c allreduce -a ring -t polaris --set nodes=2 -o build/ring-polaris2.xml", 0, "unknown option", 0);
    char *xml = th_slurp("build/ring-polaris2.xml");
    cr_assert_not_null(xml);
    cr_expect(strstr(xml, "ngpus=\"8\"") != NULL, "%.200s", xml);
    free(xml);
    th_says("export --msccl -c allreduce -a ring -p 8 --set nodes=2 -o build/x.xml", 2, "--set needs -t", 1);
}

/* topo's bisection cuts between nodes: 33 Polaris nodes split 16 | 17,
 * not through a node's NVLink (ranks 0..65 vs 66..131 read 613 GB/s). */
Test(smallitems, bisection_cuts_between_nodes) {
    th_says("topo polaris --set nodes=33", 0, "(ranks 0..63 vs 64..131)", 1);
    th_says("topo polaris --set nodes=32", 0, "(ranks 0..63 vs 64..127)", 1);
}
