/* test_cli.c - the command line as a user meets it: exit codes, JSON, help,
 * the README's promises and the shipped example's expected output. */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"


Test(cli, candy_kids_json_times) {
    const char *algo[] = {"naive", "tree", "ring"};
    const char *named[] = {"naive", "binomial", "ring"};      /* tree is the binomial tree's alias */
    double want[] = {24, 16, 6};
    for (int i = 0; i < 3; i++) {
        char args[256];
        snprintf(args, sizeof args, "sim -t topologies/candy-kids.yaml -c allreduce -a %s -s 4 --json --verify", algo[i]);
        cJSON *j = th_cli_json(args);
        cr_expect_eq(th_jnum(j, "time_s"), want[i], "%s", algo[i]);
        cr_expect_eq(th_jnum(j, "ranks"), 4);
        cr_expect_eq(th_jnum(j, "bytes"), 4);
        cr_expect(cJSON_IsTrue(cJSON_GetObjectItem(j, "verified")));
        cr_expect_str_eq(cJSON_GetObjectItem(j, "collective")->valuestring, "allreduce");
        cr_expect_str_eq(cJSON_GetObjectItem(j, "algorithm")->valuestring, named[i]);
        cr_expect_float_eq(th_jnum(j, "algbw_GBps"), 4 / want[i] / 1e9, 1e-20);
        cr_expect_float_eq(th_jnum(j, "busbw_GBps"), 4 / want[i] / 1e9 * 1.5, 1e-20);
        cJSON_Delete(j);
    }
}

/* JSON printed a field at a time escapes what came from the user: a log
 * path and a machine name with a quote and a backslash come back as they
 * were (validate, step, sweep's --set values), not as broken JSON. */
Test(cli, json_escapes_the_users_strings) {
    char *out;
    cr_assert_eq(th_sh("cp validate/logs/nccl-tests/rtx2080ti_x2_pcie3_nop2p_allreduce.txt 'build/we\"ird\\log.txt' && "
                       "sed 's/^name: .*/name: \"q\\\\\"x\"/' topologies/pcie-2gpu.yaml > build/qname.yaml && "
                       "sed 's/^name: .*/name: \"h\\\\\"x\"/' topologies/hgx-h100.yaml > build/hname.yaml", &out), 0, "%s", out);
    free(out);
    cJSON *j = th_cli_json("validate -t build/qname.yaml --set p2p=false --json --nccl-tests 'build/we\"ird\\log.txt'");
    cr_expect_str_eq(cJSON_GetObjectItem(j, "topology")->valuestring, "q\"x");
    cr_expect_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "rows"), 0), "log")->valuestring,
                     "build/we\"ird\\log.txt");
    cJSON_Delete(j);
    j = th_cli_json("step -t build/hname.yaml --model 70b --json");
    cr_expect_str_eq(cJSON_GetObjectItem(j, "machine")->valuestring, "h\"x");
    cJSON_Delete(j);
    j = th_cli_json("sweep -t build/hname.yaml -c allreduce --set 'nvlink_gbps=450' --sizes 1MiB --format jsonl");
    cr_expect_str_eq(cJSON_GetObjectItem(j, "nvlink_gbps")->valuestring, "450");
    cJSON_Delete(j);
}

/* Defaults that name a shipped machine (kids' candy-kids, validate
 * --backend host's host) find it on the search path, as -t NAME does: run
 * from another folder with $BATON_PATH naming the machines (as after `make
 * install`, where they live in the share folder), both still answer. */
Test(cli, default_machines_are_found_on_the_search_path) {
    char here[4096], cmd[12800], *out;
    const char *bin = getenv("BATON_BIN") ? getenv("BATON_BIN") : "build/baton";
    cr_assert_not_null(getcwd(here, sizeof here));
    const char *root = bin[0] == '/' ? "" : here, *sep = bin[0] == '/' ? "" : "/";
    snprintf(cmd, sizeof cmd, "cd /tmp && BATON_PATH=%s/topologies %s%s%s kids --method ring 2>&1", here, root, sep, bin);
    cr_assert_eq(th_sh(cmd, &out), 0, "%s", out);
    cr_expect(strstr(out, "Method ring: 6 s") != NULL, "%s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "cd /tmp && BATON_PATH=%s/topologies %s%s%s validate --backend host -c allreduce -a ring "
             "--ranks 2 --sizes 1KiB,4KiB --reps 1 2>&1", here, root, sep, bin);
    cr_assert_eq(th_sh(cmd, &out), 0, "%s", out);
    cr_expect(strstr(out, "MAPE") != NULL, "%s", out);
    free(out);
}

/* plan --json gives per size what `predict -a nccl` answers (the same row,
 * protocol and time) beside NCCL's own model's pick, null for all-to-all,
 * which that model does not have. */
Test(cli, plan_json_is_predicts_answer_per_size) {
    const char *sizes[] = {"1024", "1048576", "1073741824"};
    cJSON *j = th_cli_json("plan -t topologies/cluster-h100.yaml --set nodes=2 --sizes 1KiB,1MiB,1GiB --json");
    cJSON *rows = cJSON_GetObjectItem(j, "sizes");
    cr_assert_eq(cJSON_GetArraySize(rows), 3);
    cr_expect_eq(th_jnum(cJSON_GetObjectItem(j, "nccl_view"), "nodes"), 2);
    cr_expect_eq(th_jnum(j, "ranks"), 16);
    for (int i = 0; i < 3; i++) {
        char args[256];
        cJSON *r = cJSON_GetArrayItem(rows, i), *x = cJSON_GetObjectItem(r, "nccl_model");
        snprintf(args, sizeof args, "predict -t topologies/cluster-h100.yaml --set nodes=2 -c allreduce -a nccl -s %s --json",
                 sizes[i]);
        cJSON *p = th_cli_json(args);
        cr_expect_eq(th_jnum(r, "bytes"), th_jnum(p, "bytes"));
        cr_expect_eq(th_jnum(r, "time_s"), th_jnum(p, "time_s"), "%s", sizes[i]);
        cr_expect_str_eq(cJSON_GetObjectItem(r, "algorithm")->valuestring, cJSON_GetObjectItem(p, "algorithm")->valuestring);
        cr_expect_str_eq(cJSON_GetObjectItem(r, "protocol")->valuestring, cJSON_GetObjectItem(p, "protocol")->valuestring);
        cr_expect(cJSON_IsObject(x) && th_jnum(x, "time_s") > 0, "%s: NCCL's model", sizes[i]);
        cJSON_Delete(p);
    }
    cJSON_Delete(j);
    j = th_cli_json("plan -t topologies/hgx-h100.yaml -c alltoall --sizes 1MiB --json");
    cr_expect(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "sizes"), 0), "nccl_model")));
    cJSON_Delete(j);
}

Test(cli, predict_agrees_with_sim_on_hgx_h100) {
    const char *algo[] = {"ring", "tree", "naive"};
    for (int i = 0; i < 3; i++) {
        char args[256];
        snprintf(args, sizeof args, "sim -t topologies/hgx-h100.yaml -c allreduce -a %s -s 1GiB --json", algo[i]);
        cJSON *s = th_cli_json(args);
        snprintf(args, sizeof args, "predict -t topologies/hgx-h100.yaml -c allreduce -a %s -s 1GiB --json", algo[i]);
        cJSON *p = th_cli_json(args);
        cr_expect_float_eq(th_jnum(s, "time_s"), th_jnum(p, "time_s"), th_jnum(p, "time_s") * 1e-9, "%s", algo[i]);
        cr_expect_str_eq(cJSON_GetObjectItem(p, "model")->valuestring, "closed");
        cJSON_Delete(s);
        cJSON_Delete(p);
    }
}

Test(cli, ring_busbw_on_h100_approaches_link_rate) {
    cJSON *j = th_cli_json("sim -t topologies/hgx-h100.yaml -c allreduce -a ring -s 8GiB --json");
    double busbw = th_jnum(j, "busbw_GBps");
    /* 450 GB/s links, 1.1 TB/s reductions: busbw = 2(p-1)/p n / t < 450 */
    cr_expect_lt(busbw, 450);
    cr_expect_gt(busbw, 300);
    cJSON_Delete(j);
}

/* A reducing switch's sends are counted apart: an NVLS all-reduce on 8
 * GPUs is one send a GPU (its slice to the switch) and the switch's
 * multicasts; the most one rank sent is 1, not the switch's count. */
Test(cli, switch_messages_are_not_a_ranks) {
    cJSON *j = th_cli_json("sim -t hgx-h100 -c allreduce -a nvls -s 1MiB --json");
    double all = th_jnum(j, "messages"), sw = th_jnum(j, "switch_messages");
    cr_expect_eq(th_jnum(j, "max_rank_messages"), 1);
    cr_expect(sw > 0 && all - sw == 8, "%g messages, %g the switch's", all, sw);
    cJSON_Delete(j);
    j = th_cli_json("sim -t hgx-h100 -c allreduce -a ring -s 1MiB --json");
    cr_expect_eq(th_jnum(j, "switch_messages"), 0);
    cr_expect_eq(th_jnum(j, "max_rank_messages"), 14);      /* 2 (p - 1) steps, one channel */
    cJSON_Delete(j);
}

static void expect_exit(const char *args, int code, const char *says) {
    char *out;
    int rc = th_cli(args, &out, 0);
    cr_expect_eq(rc, code, "baton %s: exit %d, want %d; said: %s", args, rc, code, out);
    if (says) cr_expect(strstr(out, says) != NULL, "baton %s said '%s', want '%s'", args, out, says);
    free(out);
}

Test(cli, exit_codes) {
    expect_exit("", 2, "usage");
    expect_exit("frobnicate", 2, "unknown command");
    expect_exit("sim -t topologies/candy-kids.yaml -c allreduce -a ring", 2, "missing -s");
    expect_exit("sim -t topologies/candy-kids.yaml -c allreduce -a ring -s 4 --bogus", 2, "unknown option");
    expect_exit("sim -t topologies/candy-kids.yaml -c allfoo -a ring -s 4", 2, "unknown collective");
    expect_exit("sim -t topologies/candy-kids.yaml -c allreduce -a ring -s 4x", 2, "bad size");
    expect_exit("sim -t topologies/candy-kids.yaml -c allreduce -a bogo -s 4", 1, "no algorithm 'bogo'");
    expect_exit("predict -t topologies/candy-kids.yaml -c alltoall -a auto -s 6", 1,   /* 4 kids: no alltoall of 6 bytes */
                "-a auto: no alltoall algorithm runs 6 bytes on 4 ranks: alltoall naive needs the size to be a multiple");
    expect_exit("sim -t tests/data/bad/missing-unit.yaml -c allreduce -a ring -s 4", 1,
                "missing-unit.yaml:7:22: bad bandwidth '450': missing unit");
    expect_exit("sim -t nowhere.yaml -c allreduce -a ring -s 4", 1, "cannot open");
    expect_exit("topo tests/data", 1, "tests/data: cannot read: Is a directory");        /* not a YAML error */
    expect_exit("validate -t topologies/hgx-a100.yaml --nccl-tests tests/data", 1, "tests/data: cannot read: Is a directory");
    expect_exit("topo tests/data/bad/duplicate.yaml --check", 1, "duplicate node name");
    expect_exit("topo topologies/cluster-h100.yaml --set nodez=4", 1, "has no parameter 'nodez'");
    expect_exit("topo topologies/cluster-h100.yaml --set nodes=4 --check", 0, "ok (32 ranks)");
    expect_exit("topo topologies/cluster-h100.yaml --set nodes", 2, "write --set name=value");
    expect_exit("topo topologies/cluster-h100.yaml --set nodes=0", 1, "cluster-h100.yaml:25:5: nodes=0: nodes must be a "
                "whole number in 1..1048576: a cluster has at least one node (with --set nodes=0)");   /* its require: rule */
    FILE *f = fopen("build/no-require.yaml", "w");                 /* a file without one: the pattern's own error */
    cr_assert_not_null(f);
    fputs("params: {n: 2}\nnodes:\n  - {name: \"g[0-${n-1}]\"}\n  - {name: sw, kind: switch}\n"
          "links:\n  - {a: \"g[0-${n-1}]\", b: sw, bw: 10GB/s, latency: 1us}\n", f);
    fclose(f);
    expect_exit("topo build/no-require.yaml --set n=0", 1, "a range must go up: [first-last] with 0 <= first <= "
                "last (with --set n=0)");                          /* the file is fine: the value is not */
    expect_exit("sim -t topologies/hgx-h100.yaml -c allreduce -a ring -s 1MB --contention fast", 2, "fifo, fair or none");
    expect_exit("topo topologies/hgx-h100.yaml --check", 0, "ok (8 ranks)");
    expect_exit("topo topologies/cluster-a100.yaml --set sharp=true", 0, "8 fabric switches reduce: 8 rails x 1 leaf (collnet_ring)");
    expect_exit("topo topologies/cluster-h100.yaml", 0, "2 switches, one a node (NVLS: -a nvlstree)");
    expect_exit("kids --method bogus", 2, "unknown method");
}

Test(cli, every_command_has_help) {
    const char *cmds[] = {"sim", "predict", "kids", "topo", "algos", "select", "tp"};
    for (int i = 0; i < 7; i++) {
        char args[64];
        snprintf(args, sizeof args, "%s --help", cmds[i]);
        expect_exit(args, 0, "usage: baton");
    }
    expect_exit("--help", 0, "commands:");
}

Test(cli, algos_json_lists_the_registry) {
    cJSON *j = th_cli_json("algos --json");
    cr_assert(cJSON_IsArray(j));
    cr_expect_eq(cJSON_GetArraySize(j), 50);   /* 43, then PAT x2, symmetric x3, ce x2 (issue 48) */
    cJSON *row;
    cJSON_ArrayForEach(row, j) {
        const char *fields[] = {"collective", "algorithm", "cost", "requires"};
        for (int k = 0; k < 4; k++) cr_expect(cJSON_IsString(cJSON_GetObjectItem(row, fields[k])), "%s", fields[k]);
    }
    cJSON_Delete(j);
}

Test(cli, dump_prints_goal) {
    char *out;
    cr_assert_eq(th_cli("sim -t topologies/candy-kids.yaml -c allreduce -a ring -s 10 --dump", &out, 1), 0);
    char *golden = th_slurp("tests/data/ring-p4-10B.goal");
    cr_assert_not_null(golden);
    cr_expect_str_eq(out, golden);
    free(out);
    free(golden);
}

/* examples/NAME.sh prints exactly examples/NAME.expected. */
static void example_prints_expected(const char *name) {
    const char *bin = getenv("BATON_BIN");
    char cmd[512], path[256], *out;
    snprintf(cmd, sizeof cmd, "sh examples/%s.sh %s", name, bin ? bin : "build/baton");
    cr_assert_eq(th_sh(cmd, &out), 0, "%s", out);
    snprintf(path, sizeof path, "examples/%s.expected", name);
    char *want = th_slurp(path);
    cr_assert_not_null(want);
    cr_expect_str_eq(out, want);
    free(out);
    free(want);
}

Test(cli, candy_kids_example_prints_its_expected_output) { example_prints_expected("candy-kids"); }

/* -a auto names its choice, and the choice has the lowest closed form. */
Test(cli, auto_picks_the_lowest_closed_form) {
    const char *sizes[] = {"1KiB", "64MiB"};
    for (int i = 0; i < 2; i++) {
        char args[256];
        snprintf(args, sizeof args, "predict -t topologies/hgx-h100.yaml -c allreduce -a auto -s %s --json", sizes[i]);
        cJSON *j = th_cli_json(args);
        cr_expect(cJSON_IsTrue(cJSON_GetObjectItem(j, "auto")));
        double best = th_jnum(j, "time_s");
        const char *chosen = cJSON_GetObjectItem(j, "algorithm")->valuestring;
        cJSON *rows = th_cli_json("algos -c allreduce --json"), *row;
        cJSON_ArrayForEach(row, rows) {
            const char *name = cJSON_GetObjectItem(row, "algorithm")->valuestring;
            snprintf(args, sizeof args, "predict -t topologies/hgx-h100.yaml -c allreduce -a %s -s %s --json", name, sizes[i]);
            char *out;
            if (th_cli(args, &out, 1) != 0) { free(out); continue; }   /* not applicable here */
            cJSON *o = cJSON_Parse(out);
            cr_expect_geq(th_jnum(o, "time_s"), best, "%s beats auto's %s at %s", name, chosen, sizes[i]);
            cJSON_Delete(o);
            free(out);
        }
        cJSON_Delete(rows);
        cJSON_Delete(j);
    }
}

Test(cli, options_root_channels_pipeline_group) {
    expect_exit("sim -t topologies/uniform-8.yaml -c broadcast -a chain -s 1MB --root 5 --pipeline 8 --verify", 0, "verified yes");
    expect_exit("sim -t topologies/uniform-8.yaml -c reduce -a bintree -s 1MB --root 7 --verify", 0, "verified yes");
    expect_exit("sim -t topologies/uniform-8.yaml -c allgather -a ring -s 1MB --channels 4 --verify", 0, "verified yes");
    expect_exit("sim -t topologies/uniform-8.yaml -c allreduce -a hier -s 1MB --group 4 --verify", 0, "verified yes");
    expect_exit("sim -t topologies/uniform-8.yaml -c alltoall -a pairwise -s 8000 --verify", 0, "verified yes");
    expect_exit("sim -t topologies/uniform-8.yaml -c broadcast -a chain -s 1MB --root 8", 1, "root 8 is not a rank");
    expect_exit("sim -t topologies/uniform-8.yaml -c allreduce -a hier -s 1MB --group 3", 1, "groups of equal size");
    expect_exit("sim -t topologies/uniform-8.yaml -c alltoall -a pairwise -s 1001", 1, "multiple of the rank count");
    expect_exit("sim -t topologies/uniform-8.yaml -c allgather -a rd -s 1MB --channels 0", 2, "--channels must be");
    expect_exit("sim -t topologies/uniform-8.yaml -c allreduce -a ring -s 1MB --pipeline x", 2, "--pipeline must be");
}

Test(cli, tp_example_prints_its_expected_output) { example_prints_expected("tp-decode-vs-prefill"); }

Test(cli, where_the_time_goes_example_prints_its_expected_output) { example_prints_expected("where-the-time-goes"); }
Test(cli, calibrate_and_ask_example_prints_its_expected_output) { example_prints_expected("calibrate-and-ask"); }

/* step, concurrent and gpus: bad input names what is wrong (and a model
 * file's line), exits 1 or 2, never a crash. */
/* Numbers and lists that are not what they say: refused, not read in part
 * (a sign wrapping to 2^64, trailing junk, a parameter set twice, an empty
 * value in a list). */
Test(cli, partial_numbers_are_refused) {
    expect_exit("tp -t hgx-h100 --preset 70b --tokens -1", 2, "--tokens must be a whole number from 1 to 1073741824, not '-1'");
    expect_exit("tp -t hgx-h100 --preset 70b --compute-ms -5", 2, "--compute-ms must be milliseconds from 0 to 1e9");
    expect_exit("kids --kids 3x", 2, "--kids must be 2..64, not '3x'");
    expect_exit("sweep -t hgx-h100 -c allreduce --sizes 1MiB --shard 1/2/3", 2, "--shard I/N with 1 <= I <= N, not '1/2/3'");
    expect_exit("sweep -t cluster-h100 -c allreduce --sizes 1MiB --set nodes=2 --set nodes=4", 2, "--set nodes given twice");
    expect_exit("sweep -t cluster-h100 -c allreduce --sizes 1MiB --set nodes=2,,4", 2, "--set nodes: an empty value in its list");
    expect_exit("sweep -t hgx-h100 -c foo --sizes 1MiB", 2, "unknown collective 'foo'");     /* usage, as every command */
    expect_exit("sweep -t hgx-h100 -c allreduce --sizes abc", 2, "--sizes abc: not a size");
}

Test(cli, step_and_concurrent_reject_bad_input) {
    FILE *f = fopen("build/bad-model.yaml", "w");
    cr_assert_not_null(f);
    fputs("name: bad\nlayers: 12\nhidden: lots\n", f);
    fclose(f);
    expect_exit("step -t topologies/hgx-h100.yaml --model build/bad-model.yaml", 1, "bad-model.yaml:3:9: 'hidden' must be a whole number");
    f = fopen("build/odd-model.yaml", "w");
    fputs("name: odd\nlayers: 2\nhidden: 512\nheads: 8\nkv_heads: 3\nffn: 1024\nvocab: 100\n", f);
    fclose(f);
    expect_exit("step -t topologies/hgx-h100.yaml --model build/odd-model.yaml", 1, "multiple of kv_heads");
    expect_exit("step -t topologies/hgx-h100.yaml --model llama3-71b", 1, "unknown model 'llama3-71b'");
    expect_exit("step -t topologies/hgx-h100.yaml --model 70b --tp 8 --dp 2", 1, "16 ranks, but hgx-h100 has 8");
    expect_exit("step -t topologies/hgx-h100.yaml --model 70b --ep 2", 1, "has no experts");
    /* tensor parallelism splits the heads: 64 query and 8 KV heads go 1, 2, 4 or 8 ways (16: a copy of each
       KV head per pair of ranks); Qwen2.5-7B's 28 and 4 do not go 8 ways, which vLLM refuses too */
    expect_exit("step -t topologies/hgx-h100.yaml --model 70b --tp 3", 1,
                "tp 3 does not split llama3-70b's 64 attention heads and 8 KV heads (tp 1, 2, 4 or 8 does; --tp)");
    expect_exit("step -t topologies/hgx-h100.yaml --model qwen2.5-7b --tp 8", 1, "(tp 1, 2 or 4 does; --tp)");
    expect_exit("step -t topologies/cluster-h100.yaml --set nodes=2 --model 70b --tp 16", 0, "tp 16 x dp 1");
    expect_exit("step -t topologies/hgx-a100.yaml --model 70b --dtype fp8", 1, "a100-sxm has no fp8");
    expect_exit("step -t topologies/uniform-8.yaml --model 70b", 2, "give --gpu");
    expect_exit("step -t topologies/hgx-h100.yaml --model 70b --phase think", 2, "--phase is decode");
    expect_exit("concurrent -t topologies/hgx-h100.yaml 's=1MiB ranks=0-8'", 1, "ranks=0-8");
    expect_exit("concurrent -t topologies/hgx-h100.yaml 's=1MiB ranks=0,0'", 1, "twice");
    expect_exit("concurrent -t topologies/hgx-h100.yaml 'ranks=0-3'", 1, "needs a size");
    expect_exit("concurrent -t topologies/hgx-h100.yaml 'c=broadcast s=1MiB'", 1,
                "the default a=ring does not run broadcast: name one with a=");
    expect_exit("concurrent -t topologies/hgx-h100.yaml 's=1MiB s=2MiB'", 1, "s= given twice");
    expect_exit("concurrent -t topologies/hgx-h100.yaml 's=1MiB channels=0'", 1, "channels=0: want 1 to 64");
    expect_exit("step -t topologies/hgx-h100.yaml --model llama3-70b --optimizer replicated", 2, "--optimizer is for train");
    expect_exit("step -t topologies/hgx-h100.yaml --model llama3-70b --pp 3", 0, "tp 2 x dp 1 x pp 3 (6 of the 8 GPUs; the rest "
                "idle)\n  stages      80 layers in 3 stages of up to 27");
    expect_exit("concurrent -t topologies/hgx-h100.yaml 's=1MiB a=rign'", 1, "did you mean");
    expect_exit("concurrent -t topologies/hgx-h100.yaml 's=1MiB after=0'", 1, "only wait for an earlier one");
    expect_exit("concurrent -t topologies/hgx-h100.yaml 's=1MiB colour=red'", 1, "unknown key 'colour'");
    expect_exit("gpus", 0, "h100-sxm");
    expect_exit("gpus --json extra", 2, "unexpected argument 'extra'");
    /* gpus --json carries the same datasheet as the table, and the models' published sizes */
    cJSON *j = th_cli_json("gpus --json"), *g = NULL, *m = NULL, *x;
    cJSON_ArrayForEach(x, cJSON_GetObjectItem(j, "gpus")) if (!strcmp(cJSON_GetObjectItem(x, "name")->valuestring, "h100-sxm")) g = x;
    cJSON_ArrayForEach(x, cJSON_GetObjectItem(j, "models")) if (!strcmp(cJSON_GetObjectItem(x, "name")->valuestring, "llama3-70b")) m = x;
    cr_assert(g && m, "h100-sxm and llama3-70b listed");
    cr_expect_eq(th_jnum(g, "hbm_Bps"), 3350e9);
    cr_expect(th_jnum(g, "bf16_flops") > 989e12 && th_jnum(g, "bf16_flops") < 990e12);
    cr_expect_eq(th_jnum(m, "heads"), 64);
    cr_expect_eq(th_jnum(m, "kv_heads"), 8);
    cr_expect(fabs(th_jnum(m, "params") / 70.6e9 - 1) < 0.002, "%g", th_jnum(m, "params"));
    cJSON_Delete(j);
    expect_exit("step -t topologies/hgx-h100.yaml --model mixtral-8x7b --tp 1 --dp 8 --ep 8 --batch 64", 0,
                "ep all-to-all");            /* an all-to-all over the whole box: NCCL has no row for it */
}

/* A 70B decode on two 4-GPU groups of one box: both groups' all-reduces run
 * at once and, on an NVSwitch, each takes what it takes alone (the step
 * reports the group's own all-reduce, simulated on ranks 0-3). */
/* A hold-out that holds out nothing, or everything, would report an error
 * in sample, or none, as held out: each is refused, naming the range. */
Test(cli, a_hold_out_must_hold_out_some_sizes_and_not_all) {
    const char *cal = "calibrate -t topologies/pcie-2gpu.yaml --set p2p=false --cv 0 -o build/hold.yaml --nccl-tests "
                      "validate/logs/nccl-tests/rtx2080ti_x2_pcie3_nop2p_allreduce.txt --hold-out ";
    const char *bad[][2] = {{"1MiB:1KiB", "the first size is the smaller"},
                            {"5TiB:6TiB", "no size of the logs is in it"},
                            {"8:2GiB", "every size of the logs is in it"}};
    char args[512];
    for (int i = 0; i < 3; i++) {             /* a range written backwards is the command line's: usage, 2 */
        snprintf(args, sizeof args, "%s%s", cal, bad[i][0]);
        expect_exit(args, i == 0 ? 2 : 1, bad[i][1]);
    }
    snprintf(args, sizeof args, "%s%s", cal, "1KiB:1MiB");
    expect_exit(args, 0, "on the held-out sizes");
}

Test(cli, step_groups_run_at_once) {
    cJSON *s = th_cli_json("step -t topologies/hgx-h100.yaml --model 70b --tp 4 --dp 2 --batch 8 --proto simple --json");
    cJSON *c = cJSON_GetArrayItem(cJSON_GetObjectItem(s, "collectives"), 0);
    cr_assert_not_null(c);
    cr_expect_eq(th_jnum(c, "groups"), 2);
    cr_expect_eq(th_jnum(c, "ranks"), 4);
    char args[256];
    snprintf(args, sizeof args, "concurrent -t topologies/hgx-h100.yaml --proto simple --json 'a=%s s=%d ranks=0-3'",
             cJSON_GetObjectItem(c, "algorithm")->valuestring, (int)th_jnum(c, "bytes"));
    cJSON *one = th_cli_json(args);
    cr_expect_float_eq(th_jnum(c, "each_s"), th_jnum(one, "time_s"), 1e-12);
    cJSON_Delete(s);
    cJSON_Delete(one);
}

/* tp's communication is 2 x layers x the all-reduce of tokens x hidden x bytes,
 * the same all-reduce `baton sim -a nccl` reports (tp's default, step's). */
Test(cli, tp_is_two_allreduces_per_layer) {
    cJSON *tp = th_cli_json("tp -t topologies/hgx-h100.yaml --layers 28 --hidden 3584 --tokens 16 --dtype fp16 --json");
    cr_expect_eq(th_jnum(tp, "allreduces"), 56);
    cr_expect_eq(th_jnum(tp, "bytes"), 16 * 3584 * 2);
    char args[256];
    snprintf(args, sizeof args, "sim -t topologies/hgx-h100.yaml -c allreduce -a nccl -s %d --json", 16 * 3584 * 2);
    cJSON *ar = th_cli_json(args);
    double t = th_jnum(ar, "time_s");            /* tp prints 9 significant digits */
    cr_expect_float_eq(th_jnum(tp, "comm_time_s"), 56 * t, 1e-8 * 56 * t);
    cr_expect_float_eq(th_jnum(tp, "allreduce_time_s"), t, 1e-8 * t);
    cJSON_Delete(ar);
    cJSON_Delete(tp);
    expect_exit("tp -t topologies/hgx-h100.yaml --preset 70b --tp 4", 1, "--tp 4 but");
    expect_exit("tp -t topologies/hgx-h100.yaml --preset 3b", 2, "unknown preset");
}

/* Every command, run twice, prints and writes the same bytes: nothing may
 * depend on addresses, hash order, time or threads. */
Test(cli, every_command_is_deterministic) {
    static const char *const cmds[] = {
        "kids",
        "sim -t topologies/cluster-a100.yaml -c allreduce -a dbtree -s 3MiB --contention fair --explain "
        "--trace /tmp/baton-det-%d.json --link-stats /tmp/baton-det-%d.csv",
        "select -t topologies/cluster-h100.yaml -c allreduce,reducescatter --sizes 1KiB:1GiB:x8 --model des --format csv",
        "sweep -t topologies/cluster-a100.yaml -c allgather --set nodes=2,3 --sizes 1MiB,7MiB --format jsonl",
        "topo topologies/dgx1-v100.yaml",
        "tp -t topologies/hgx-h100.yaml --preset 8b --tokens 4096 --phase prefill --compute-ms 5",
        "calibrate -t topologies/hgx-a100.yaml --nccl-tests validate/logs/nccl-tests/a100x8_nvswitch_oci_bmgpu48_allreduce.txt "
        "-o /tmp/baton-det-%d.yaml",
    };
    for (int i = 0; i < (int)(sizeof cmds / sizeof *cmds); i++) {
        char *out[2], *files[2][2] = {{NULL}};
        for (int run = 0; run < 2; run++) {
            char args[1024];
            const char *ext[2] = {"json", "csv"};
            /* calibrate prints its output's name: the same name both times */
            int yaml = strstr(cmds[i], "det-%d.yaml") != NULL, nfiles = yaml ? 1 : strstr(cmds[i], "%d") ? 2 : 0;
            int tag = yaml ? 0 : run;
            snprintf(args, sizeof args, cmds[i], tag, tag);
            cr_assert_eq(th_cli(args, &out[run], 1), 0, "baton %s: %s", args, out[run]);
            for (int k = 0; k < nfiles; k++) {
                char path[64];
                snprintf(path, sizeof path, "/tmp/baton-det-%d.%s", tag, yaml ? "yaml" : ext[k]);
                files[run][k] = th_slurp(path);
                cr_assert_not_null(files[run][k], "%s", path);
                remove(path);
            }
        }
        cr_expect_str_eq(out[0], out[1], "baton %s: two runs differ", cmds[i]);
        for (int k = 0; k < 2 && files[0][k]; k++)
            cr_expect_str_eq(files[0][k], files[1][k], "baton %s: its output files differ", cmds[i]);
        for (int run = 0; run < 2; run++) {
            free(out[run]);
            free(files[run][0]);
            free(files[run][1]);
        }
    }
}

/* A failed run leaves an existing output file as it was; a good run
 * replaces it whole, with no temporary file left beside it. */
Test(cli, outputs_are_written_whole_or_not_at_all) {
    const char *path = "/tmp/baton-atomic.csv";
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("keep me\n", f);
    fclose(f);
    expect_exit("select -t tests/data/bad/bw-huge.yaml -c allreduce --format csv -o /tmp/baton-atomic.csv", 1, "bw-huge.yaml:6:38");
    expect_exit("select -t topologies/uniform-8.yaml -c allreduce --sizes 1KiB:1x -o /tmp/baton-atomic.csv", 2, "--sizes");
    expect_exit("sim -t topologies/uniform-8.yaml -c allreduce -a nosuch -s 1MiB --trace /tmp/baton-atomic.csv", 1, "nosuch");
    char *kept = th_slurp(path);
    cr_expect_str_eq(kept, "keep me\n");
    free(kept);
    expect_exit("select -t topologies/uniform-8.yaml -c allreduce --sizes 1KiB,1MiB --format csv -o /tmp/baton-atomic.csv", 0, NULL);
    kept = th_slurp(path);
    cr_expect(strncmp(kept, "collective,", 11) == 0 || strstr(kept, "allreduce") != NULL, "replaced: %s", kept);
    free(kept);
    char *ls;
    th_sh("ls /tmp | grep -c 'baton-atomic.csv.tmp' || true", &ls);
    cr_expect_eq(atoi(ls), 0, "a temporary file was left behind");
    free(ls);
    remove(path);
    /* every output says which file it could not write and why, in one form */
    const char *outs[] = {
        "select -t topologies/uniform-8.yaml -c allreduce -o /no/such/dir/out",
        "sweep -t topologies/uniform-8.yaml -c allreduce --sizes 1MiB -o /no/such/dir/out",
        "sim -t topologies/uniform-8.yaml -c allreduce -a ring -s 1MiB --trace /no/such/dir/out",
        "sim -t topologies/uniform-8.yaml -c allreduce -a ring -s 1MiB --link-stats /no/such/dir/out",
        "sim -t topologies/uniform-8.yaml -c allreduce -a ring -s 8 --html /no/such/dir/out",
        "kids --html /no/such/dir/out",
        "step -t topologies/hgx-h100.yaml --model llama3-70b --trace /no/such/dir/out",
        "topo import nccl-xml tests/data/import/ncv4-topo.xml -o /no/such/dir/out",
        "validate --backend host -c allreduce --sizes 8:64 --reps 1 --log /no/such/dir/out",
    };
    for (size_t i = 0; i < sizeof outs / sizeof outs[0]; i++)
        expect_exit(outs[i], 1, "/no/such/dir/out: cannot write: No such file or directory");
    /* calibrate names its output only once it is written */
    char *out;
    cr_expect_eq(th_cli("calibrate -t topologies/pcie-2gpu.yaml --set p2p=false --cv 0 -o tests/data --nccl-tests "
                        "validate/logs/nccl-tests/rtx2080ti_x2_pcie3_nop2p_allreduce.txt", &out, 0), 1, "%s", out);
    cr_expect(strstr(out, "tests/data: cannot write") && !strstr(out, "-> tests/data"), "%s", out);
    free(out);
}

/* Misspelt names get the nearest right one, unrelated words none; limits are
 * errors that say the limit. */
Test(cli, did_you_mean_and_limits) {
    expect_exit("sim -t topologies/uniform-8.yaml -c allredcue -a ring -s 1MiB", 2, "did you mean 'allreduce'?");
    expect_exit("sim -t topologies/uniform-8.yaml -c allreduce -a rign -s 1MiB", 1, "did you mean 'ring'?");
    expect_exit("validate --backend host -c allreduce --ranks 100000 --sizes 1KiB,2KiB,4KiB", 1, "at most 256 ranks");
    expect_exit("predict -t topologies/uniform-8.yaml -c reduce -a binomail -s 1MiB", 1, "did you mean 'binomial'?");
    char *out;
    th_cli("sim -t topologies/uniform-8.yaml -c allreduce -a xyz -s 1MiB", &out, 0);
    cr_expect(strstr(out, "did you mean") == NULL, "%s", out);
    free(out);
}

/* 0 bytes: NCCL launches nothing (enqueue.cc discards an empty collective),
 * so no command answers a time for it (predict had said 7.8 us). */
Test(cli, zero_bytes_have_no_time) {
    expect_exit("predict -t hgx-b200 -c allreduce -s 0", 2, "-s 0: 0 bytes move nothing: NCCL discards an empty collective");
    expect_exit("sim -t topologies/uniform-8.yaml -c allreduce -a ring -s 0B", 2, "0 bytes move nothing");
    expect_exit("select -t hgx-b200 -c allreduce --sizes 1KiB,0", 2, "--sizes 1KiB,0: 0 bytes move nothing");
    expect_exit("predict -t hgx-b200 -c allreduce -s 1", 0, "1 B");
}

/* --symmetric: the full run's JSON answer from one representative on a
 * 512-GPU cluster, and a reason (exit 1) where it would not be exact. With
 * PXN a ring's hop between nodes relays through the destination's rail, which
 * crosses the spines only between leaves: the representative is then a leaf's
 * 32 nodes, and the answer is still the full run's. */
Test(cli, symmetric_fast_path) {
    for (int pxn = 0; pxn < 2; pxn++) {
        char base[256], args[512];
        snprintf(base, sizeof base, "sim -t topologies/cluster-h100.yaml --set nodes=64 --set pxn=%s -c allreduce -a ring "
                 "-s 1GiB --channels 1 --json", pxn ? "true" : "false");
        snprintf(args, sizeof args, "%s --no-symmetric", base);
        cJSON *full = th_cli_json(args);
        snprintf(args, sizeof args, "%s --symmetric", base);
        cJSON *fast = th_cli_json(args);
        cJSON *unasked = th_cli_json(base);           /* 512 ranks: taken where proven */
        cr_expect(th_jnum(unasked, "time_s") == th_jnum(full, "time_s") && th_jnum(unasked, "ranks_simulated") ==
                  th_jnum(fast, "ranks_simulated"), "unasked: %.17g s with %g ranks", th_jnum(unasked, "time_s"),
                  th_jnum(unasked, "ranks_simulated"));
        cJSON_Delete(unasked);
        cr_expect(th_jnum(fast, "time_s") == th_jnum(full, "time_s"), "fast %.17g, full %.17g", th_jnum(fast, "time_s"),
                  th_jnum(full, "time_s"));
        cr_expect_eq(th_jnum(fast, "messages"), th_jnum(full, "messages"));
        cr_expect_eq(th_jnum(full, "ranks_simulated"), 512);
        cr_expect_eq(th_jnum(fast, "ranks_simulated"), pxn ? 256 : 8, "pxn=%d: a representative of %g GPUs", pxn,
                     th_jnum(fast, "ranks_simulated"));
        if (!pxn) cr_expect_lt(th_jnum(fast, "events") * 32, th_jnum(full, "events"));
        cJSON_Delete(full);
        cJSON_Delete(fast);
    }
    char *out;
    cr_expect_eq(th_cli("sim -t topologies/hgx-h100.yaml -c allreduce -a rd -s 1GiB --symmetric", &out, 0), 1);
    cr_expect(strstr(out, "--symmetric: rd's ranks are not interchangeable") != NULL, "%s", out);
    free(out);
    cr_expect_eq(th_cli("sim -t topologies/hgx-h100.yaml -c allreduce -a ring -s 1GiB --symmetric --verify", &out, 0), 2);
    free(out);
}

/* -a nccl picks among the algorithms NCCL has, as a log of NCCL measured;
 * -a auto may pick others (one-shot, recursive doubling) where they win. */
Test(cli, auto_nccl_picks_only_what_nccl_has) {
    const char *sizes[] = {"8B", "64KiB", "4MiB", "1GiB"};
    int differs = 0;
    for (int i = 0; i < 4; i++) {
        char args[256];
        snprintf(args, sizeof args, "predict -t topologies/cluster-a100.yaml -c allreduce -a nccl --proto auto -s %s --json",
                 sizes[i]);
        cJSON *j = th_cli_json(args);
        const char *name = cJSON_GetObjectItem(j, "algorithm")->valuestring;
        const algo_t *a = algo_find(COLL_ALLREDUCE, name);
        cr_assert_not_null(a, "%s", name);
        cr_expect_not_null(a->nccl, "%s: -a nccl chose %s, which NCCL does not have", sizes[i], name);
        snprintf(args, sizeof args, "predict -t topologies/cluster-a100.yaml -c allreduce -a auto --proto auto -s %s --json",
                 sizes[i]);
        cJSON *k = th_cli_json(args);
        differs += strcmp(name, cJSON_GetObjectItem(k, "algorithm")->valuestring) != 0;
        cr_expect_geq(th_jnum(j, "time_s"), th_jnum(k, "time_s"), "auto takes the lowest of all, a superset");
        cJSON_Delete(j);
        cJSON_Delete(k);
    }
    cr_expect_gt(differs, 0, "on a cluster auto finds algorithms NCCL lacks at some size");
    /* all-to-all: NCCL's p2p schedule (pairwise), on Simple at 1 MiB; none where the size does not split */
    expect_exit("predict -t topologies/hgx-h100.yaml -c alltoall -a nccl -s 1MiB", 0, "alltoall direct on hgx-h100");
    expect_exit("predict -t topologies/hgx-h100.yaml -c alltoall -a nccl -s 12", 1, "does alltoall on 8 ranks: alltoall pairwise needs the size to be a multiple of the rank count (12 bytes over 8 ranks)");
    /* NCCL's rows build there; the protocol left them out: no row's build refusal is the reason */
    expect_exit("predict -t topologies/pcie-8gpu.yaml -c allreduce -a nccl -s 1MiB --proto LL128", 1,
                "does allreduce with LL128 on 8 ranks (see `baton algos -c allreduce`)");
    expect_exit("plan -t topologies/hgx-h100.yaml -c alltoall --sizes 1GiB", 0, "direct     Simple");   /* its model: none */
    expect_exit("plan -t topologies/hgx-h100.yaml -c alltoall --sizes 1GiB", 0, "- (its model has no alltoall)");
}

/* Conventions: --version, `baton help CMD`, did-you-mean for commands, and
 * -t NAME found by name: in topologies/, through $BATON_PATH, else an error
 * naming where it looked and the nearest shipped name. */
Test(cli, conventions_version_help_names) {
    char *out;
    cr_expect_eq(th_cli("--version", &out, 1), 0);
    cr_expect(strncmp(out, "baton ", 6) == 0, "%s", out);
    free(out);
    cr_expect_eq(th_cli("help plan", &out, 1), 0);
    cr_expect(strstr(out, "usage: baton plan") != NULL, "%s", out);
    free(out);
    cr_expect_eq(th_cli("selct", &out, 0), 2);
    cr_expect(strstr(out, "did you mean 'select'?") != NULL, "%s", out);
    free(out);
    cr_expect_eq(th_cli("predict -t hgx-h100 -c allreduce -s 1MiB --json", &out, 1), 0, "%s", out);
    cr_expect(strstr(out, "\"topology\":\"hgx-h100\"") != NULL, "%s", out);
    free(out);
    cr_expect_eq(th_cli("predict -t hgx-h10 -c allreduce -s 1MiB", &out, 0), 1);
    cr_expect(strstr(out, "BATON_PATH") && strstr(out, "did you mean 'hgx-h100'?"), "%s", out);
    free(out);
    const char *bin = getenv("BATON_BIN") ? getenv("BATON_BIN") : "build/baton";
    char cmd[2048], cwd[512];
    cr_assert_not_null(getcwd(cwd, sizeof cwd));
    snprintf(cmd, sizeof cmd, "cd /tmp && BATON_PATH=/nonexistent:%s/topologies %s%s%s topo dgx1-v100 2>&1", cwd,
             bin[0] == '/' ? "" : cwd, bin[0] == '/' ? "" : "/", bin);
    cr_expect_eq(th_sh(cmd, &out), 0, "%s", out);
    cr_expect(strstr(out, "topology dgx1-v100: 8 ranks") != NULL, "%s", out);
    free(out);
}

/* What a person reads has no control characters but newlines and tabs (a
 * form feed where a man page's \f font escape belongs renders as "IFILER"). */
Test(cli, docs_have_no_stray_control_characters) {
    char *out;
    cr_assert_eq(th_sh("LC_ALL=C grep -lP '[\\x00-\\x08\\x0b-\\x1f\\x7f]' README.md docs/*.md docs/baton.1 "
                       "docs/teaching/*.md docs/guide/*.md docs/decisions/*.md docs/reference/*.md "
                       "docs/reference/commands/*.md 2>/dev/null; true", &out), 0);
    cr_expect_str_eq(out, "", "files with control characters: %s", out);
    free(out);
}

/* make install to a temporary prefix: the installed binary finds the
 * shipped machines by name from anywhere, the man page and pkg-config file
 * are there, and make uninstall removes everything it put there. It
 * installs what was built (-o: never remade here, where it is built): a rebuild from sources
 * edited since would replace build/baton under the tests running beside
 * this one, which then fail by the dozen ("Permission denied"). */
Test(cli, install_to_a_prefix_and_run_from_there, .timeout = 600) {
    char dir[] = "/tmp/baton-install-XXXXXX", cmd[1024], *out;
    cr_assert_not_null(mkdtemp(dir));
    snprintf(cmd, sizeof cmd, "o=; for f in build/baton build/libbaton.a build/libbaton.so build/libnccl-tuner-baton.so; do "
                              "[ -e $f ] && o=\"$o -o $f\"; done; make -s install PREFIX=%s B=build $o >/dev/null 2>&1 && cd / && "
                              "%s/bin/baton predict -t hgx-h100 -c allreduce -s 1GiB --json 2>&1", dir, dir);
    cr_assert_eq(th_sh(cmd, &out), 0, "%s", out);
    cr_expect(strstr(out, "\"topology\":\"hgx-h100\"") != NULL, "%s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "cd / && %s/bin/baton kids --method ring 2>&1", dir);   /* its default machine too */
    cr_assert_eq(th_sh(cmd, &out), 0, "%s", out);
    cr_expect(strstr(out, "Method ring: 6 s") != NULL, "%s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "test -f %s/share/man/man1/baton.1 && test -f %s/include/baton.h && "
                              "! test -e %s/include/baton && grep -q 'Libs: -L' %s/lib/pkgconfig/baton.pc && echo ok",
             dir, dir, dir, dir);   /* the one public header, no internal ones (tests/install.sh checks more) */
    cr_expect_eq(th_sh(cmd, &out), 0, "%s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "make -s uninstall PREFIX=%s >/dev/null 2>&1 && find %s -type f | wc -l", dir, dir);
    cr_expect_eq(th_sh(cmd, &out), 0);
    cr_expect_eq(atoi(out), 0, "files left after uninstall: %s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_expect_eq(system(cmd), 0);
}

/* --explain: the formula's shares of its time, the per-call latency and the
 * switches' synchronisation included, add up to 100 %; the critical path
 * names switches by name, not as ranks; predict explains too (the formula,
 * no simulation). */
Test(cli, explain_adds_up_and_names_switches) {
    char *out;
    cr_assert_eq(th_cli("sim -t topologies/hgx-h100.yaml -c allreduce -a nvls -s 64KiB --explain", &out, 1), 0, "%s", out);
    char *at = strstr(out, "formula's"), *end = at ? strstr(at, "-bound") : NULL;
    cr_assert(at && end, "%s", out);
    int sum = 0, n = 0, po = 0, x;
    for (char *p = strchr(at, '('); p && p < end; p = strchr(p + 1, '('))
        if (sscanf(p + 1, "%d %%", &x) == 1) sum += x, n++;
    cr_assert_not_null(strstr(at, "once per call"), "%s", out);
    sscanf(strchr(strstr(at, "once per call"), '(') + 1, "%d", &po);
    cr_expect(n >= 4 && sum >= 98 && sum <= 102, "%d parts, %d %%: %s", n, sum, out);
    cr_expect(po > 0, "the protocol's base latency is in the split");
    cr_expect(strstr(out, "-> nvswitch") != NULL && strstr(out, "-> 8") == NULL, "%s", out);
    free(out);
    cr_assert_eq(th_cli("predict -t topologies/hgx-h100.yaml -c allreduce -a ring -s 1GiB --explain", &out, 1), 0, "%s", out);
    cr_expect(strstr(out, "bandwidth-bound") != NULL && strstr(out, "twice the bandwidth") != NULL, "%s", out);
    free(out);
}

/* Every command's --help ends with an example, and the example runs. */
Test(cli, every_help_has_an_example_that_runs, .timeout = 300) {
    const char *cmds[] = {"sim", "predict", "kids", "topo", "plan", "algos", "select", "tp", "sweep", "validate"};
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
        char args[64], *out;
        snprintf(args, sizeof args, "%s --help", cmds[i]);
        cr_assert_eq(th_cli(args, &out, 1), 0, "%s", args);
        char *ex = strstr(out, "\nexample:\n  baton ");
        cr_assert_not_null(ex, "%s --help has no example", cmds[i]);
        ex += strlen("\nexample:\n  baton ");
        char line[512];
        snprintf(line, sizeof line, "%.*s", (int)strcspn(ex, "\n"), ex);
        free(out);
        if (strstr(line, "&&")) *strstr(line, "&&") = 0;          /* topo's second example imports a file */
        cr_expect_eq(th_cli(line, &out, 1), 0, "the example of %s fails: baton %s", cmds[i], line);
        free(out);
    }
}

/* Sweeps beyond one machine: the GNU parallel example and the Slurm array
 * script (run here task by task, as Slurm would) give the unsharded run's
 * bytes exactly. */
Test(cli, sharded_sweeps_equal_the_whole_run) {
    const char *bin = getenv("BATON_BIN") ? getenv("BATON_BIN") : "build/baton";
    char cmd[2048], *whole, *out;
    snprintf(cmd, sizeof cmd, "%s sweep -t topologies/cluster-h100.yaml -c allreduce --set nodes=2,4,8,16 "
                              "--set nic_bw=200Gb/s,400Gb/s --sizes 1MiB,64MiB,1GiB --format csv", bin);
    cr_assert_eq(th_sh(cmd, &whole), 0, "%s", whole);
    cr_expect_gt(strlen(whole), 500);
    snprintf(cmd, sizeof cmd, "sh examples/sweep-sharded.sh %s 3", bin);
    cr_assert_eq(th_sh(cmd, &out), 0, "%s", out);
    cr_expect_str_eq(out, whole, "GNU parallel's 3 shards");
    free(out);
    snprintf(cmd, sizeof cmd, "d=$(mktemp -d) && for i in 1 2 3 4 5; do SLURM_ARRAY_TASK_ID=$i SLURM_ARRAY_TASK_COUNT=5 "
                              "BATON=%s OUT_DIR=$d sh examples/sweep-slurm.sbatch || exit 1; done && "
                              "cat $d/shard-1.csv $d/shard-2.csv $d/shard-3.csv $d/shard-4.csv $d/shard-5.csv && rm -rf $d", bin);
    cr_assert_eq(th_sh(cmd, &out), 0, "%s", out);
    cr_expect_str_eq(out, whole, "the Slurm array's 5 tasks");
    free(out);
    const char *jobs[] = {"1", "3"};                 /* one process, or batches over workers (util/par.c) */
    for (int j = 0; j < 2; j++) {
        snprintf(cmd, sizeof cmd, "BATON_JOBS=%s %s sweep -t topologies/cluster-h100.yaml -c allreduce --set nodes=2,4,8,16 "
                                  "--set nic_bw=200Gb/s,400Gb/s --sizes 1MiB,64MiB,1GiB --format csv", jobs[j], bin);
        cr_assert_eq(th_sh(cmd, &out), 0, "%s", out);
        cr_expect_str_eq(out, whole, "BATON_JOBS=%s", jobs[j]);
        free(out);
    }
    free(whole);
}

/* An output file's option takes the next word whatever it is; a word that
 * reads as an option is refused (a usage error, nothing written), where it
 * once wrote a file named --no-symmetric and dropped the option. */
Test(cli, an_output_file_that_reads_as_an_option_is_refused) {
    remove("--no-symmetric");
    th_says("sim -t candy-kids -c allreduce -s 24 --link-stats --no-symmetric", 2,
            "--link-stats needs a file name, not the option '--no-symmetric'", 1);
    th_says("sim -t candy-kids -c allreduce -s 24 --trace --json", 2, "--trace needs a file name", 1);
    th_says("sim -t candy-kids -c allreduce -s 24 --link-stats -h", 2, "--link-stats needs a file name, not the option '-h'", 1);
    th_says("replay -t candy-kids --trace --json x.0.et", 2, "--trace needs a file name", 1);
    th_says("step -t hgx-h100 --model llama3-8b --trace --json", 2, "--trace needs a file name", 1);
    th_says("kids --html --ops", 2, "--html needs a file name", 1);
    th_says("select -t candy-kids -c allreduce -o --wide", 2, "-o needs a file name", 1);
    FILE *f = fopen("--no-symmetric", "r");
    cr_expect_null(f, "nothing written");
    if (f) fclose(f), remove("--no-symmetric");
    th_says("sim -t candy-kids -c allreduce -s 24 --link-stats build/cli-links.csv", 0, "allreduce", 1);
}

/* What a new user hit on the 2026 machines (docs/decisions/hostile-input.md,
 * "A bad-input sweep"): plan's all-to-all on an NVL72 rack (1 KiB is no
 * multiple of 72) runs it as nccl-tests does; plan's JSON gives NVLS rows
 * the channels its table does; doctor's reproduce line keeps the log's
 * collective; one rank gives valid JSON with zero bandwidths, and its
 * all-to-all takes no time in sim as in predict. */
Test(cli, what_a_new_user_hit_on_the_2026_machines) {
    th_says("plan -t gb200-nvl72 -c alltoall --sizes 1KiB,1GiB", 0,
            "table says the size it ran (1 GiB: 1073741760 bytes on 72 ranks)", 1);
    th_says("plan -t gb200-nvl72 -c alltoall --sizes 1KiB", 0, "       864 B  direct", 1);
    th_says("plan -t gb200-nvl72 -c alltoall --sizes 64", 0, "runs nothing below 288 bytes", 1);
    cJSON *j = th_cli_json("plan -t gb200-nvl72 --sizes 1GiB --json");
    const cJSON *row = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "sizes"), 0);
    cr_expect_str_eq(cJSON_GetObjectItem(row, "algorithm")->valuestring, "nvls");
    cr_expect_eq(th_jnum((cJSON *)row, "channels"), 24, "the table's 24 NVLS channels");
    cJSON_Delete(j);
    th_says("plan -t gb200-nvl72 --sizes 1GiB", 0, "1 GiB  nvls       Simple        24", 1);
    th_says("doctor -t cluster-b200 --nccl-tests validate/logs/nccl-tests-2026/"
            "B200x16_2nodes-GKE-A4-gIB-RoCE_dranet-gke-rdma-doc_all_gather.txt", 0,
            "reproduce: baton expect -t cluster-b200 -c allgather --cause", 1);
    j = th_cli_json("expect -t cluster-b200 --set gpus=1 --set nodes=1 --sizes 8,1MiB --format json");
    const cJSON *r0 = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "rows"), 0);
    cr_expect_eq(th_jnum((cJSON *)r0, "algbw_GBps"), 0);
    cr_expect_eq(th_jnum((cJSON *)r0, "busbw_GBps"), 0);
    cJSON_Delete(j);
    th_says("plan -t cluster-b200 --set gpus=1 --set nodes=1 --sizes 1MiB", 0, "- (one rank: nothing moves)", 1);
    /* one rank's all-to-all copies its own block only: no call is paid, in sim as in predict
     * (the self-copy had paid the protocol's base latency, 6.6 us) */
    static const char *a2a[] = {"naive", "pairwise", "direct"};
    for (int i = 0; i < 3; i++) {
        char cmd[160];
        snprintf(cmd, sizeof cmd, "sim -t cluster-b200 --set gpus=1 --set nodes=1 -c alltoall -a %s -s 1MiB", a2a[i]);
        th_says(cmd, 0, "time     0 s (simulated)", 1);
    }
    /* -o /dev/stdout with stdout sent to a file: the file keeps what the command printed before
     * (it had been renamed over, the printed lines lost), as through a pipe */
    char *out = NULL;
    int rc = th_sh("f=$(mktemp) && ${BATON_BIN:-build/baton} sim -t hgx-h100 -c allreduce -s 1MB --link-stats /dev/stdout"
                   " > $f && a=$(wc -l < $f) && b=$(${BATON_BIN:-build/baton} sim -t hgx-h100 -c allreduce -s 1MB"
                   " --link-stats /dev/stdout | wc -l) && grep -q '^allreduce' $f; s=$?; rm -f $f;"
                   " [ $s = 0 ] && [ \"$a\" = \"$b\" ]", &out);
    cr_expect_eq(rc, 0, "--link-stats /dev/stdout into a file lost the command's own lines: %s", out);
    free(out);
}

/* A full disk under `baton CMD > file` is a failure the command says, with
 * a non-zero exit, whatever the command (each prints through stdio and is
 * checked once, in main.c's output_written); expect's nccl-tests log said
 * "ok" and sweep exited 0. Skipped where /dev/full is not there. */
Test(cli, a_failed_write_to_standard_output_fails) {
    static const char *const cmds[] = {
        "topo topologies/hgx-h100.yaml",
        "sweep -t cluster-h100 -c allreduce --set nodes=2,4 --sizes 1MiB,1GiB --model closed",
        "expect -t cluster-h100 --format nccl-tests",
        "predict -t cluster-h100 -c allreduce --sizes 1KiB,1MiB --format nccl-tests",
        "kids",
        "--help",
        "help topo",
        "--version",
    };
    if (access("/dev/full", W_OK) != 0) return;
    const char *bin = getenv("BATON_BIN");
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        char cmd[512], *out;
        snprintf(cmd, sizeof cmd, "%s %s 2>&1 >/dev/full", bin ? bin : "build/baton", cmds[i]);
        int rc = th_sh(cmd, &out);
        cr_expect_neq(rc, 0, "%s: exit 0", cmds[i]);
        cr_expect(strstr(out, "cannot write standard output") && !strstr(out, ": ok"), "%s: %s", cmds[i], out);
        free(out);
        snprintf(cmd, sizeof cmd, "%s %s >/dev/null 2>&1", bin ? bin : "build/baton", cmds[i]);
        cr_expect_eq(th_sh(cmd, &out), 0, "%s fails with its output written", cmds[i]);
        free(out);
    }
}

/* Values a new user's sweep found taken silently (item by item in
 * docs/decisions/hostile-input.md, "Outputs, options and logs ..."): a
 * usage error (2) naming the option, or an input error (1) naming what. */
Test(cli, values_once_taken_silently_are_refused) {
    const char *A100 = " --nccl-tests validate/logs/nccl-tests/a100x8_nvswitch_oci_bmgpu48_allreduce.txt";
    static const struct { const char *args; int rc; const char *says; } c[] = {
        {"doctor -t hgx-a100 --fail-below nan", 2, "--fail-below PCT"},
        {"calibrate -t hgx-a100 -o build/t-cv.yaml --cv 5x", 2, "--cv must be a whole number"},
        {"calibrate -t hgx-a100 -o build/t-cv.yaml --cv nan", 2, "--cv must be a whole number"},
        {"calibrate -t hgx-a100 -o build/t-cv.yaml --cv 2.5", 2, "--cv must be a whole number"},
        {"validate -t hgx-a100 --channels 5x", 2, "--channels must be a whole number"},
        {"validate -t hgx-a100 --ranks 8x", 2, "--ranks must be a whole number"},
        {"calibrate -t hgx-a100 -o build/t-cv.yaml --hold-out bogus", 2, "--hold-out LO:HI"},
        {"calibrate -t hgx-a100 -o build/t-cv.yaml --hold-out 1GiB:1KiB", 2, "the first size is the smaller"},
        {"calibrate -t hgx-a100 --cv 0 -o /nonexistent-dir/x.yaml", 1, "/nonexistent-dir/x.yaml: cannot write"},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        char args[512];
        snprintf(args, sizeof args, "%s%s", c[i].args, A100);
        th_says(args, c[i].rc, c[i].says, 1);
    }
    char nofit[512];                          /* refused before the fit: no table printed */
    snprintf(nofit, sizeof nofit, "calibrate -t hgx-a100 --cv 0 -o /nonexistent-dir/x.yaml%s", A100);
    th_says(nofit, 1, "MAPE", 0);
    th_says("select -t hgx-h100 -c allreduce --group 2x", 2, "--group must be a whole number", 1);
    th_says("select -t hgx-h100 -c allreduce --tuner-channels 16", 2, "give it", 1);
    th_says("predict -t hgx-h100 -c allreduce --sizes 1GiB,1MiB --format nccl-tests", 2, "give them ascending", 1);
    th_says("expect -t hgx-h100 -c allreduce --sizes 1MiB,1MiB --format nccl-tests", 2, "give them ascending", 1);
    th_says("topo topologies/hgx-h100.yaml --check --dot", 2, "--check or --dot, not both", 1);
    th_says("predict -t cluster-h100 --set socket=true --set socket_bw=0 -c allreduce -s 1GiB", 1,
            "socket_bw=0: must be a bandwidth above 0", 1);
    static const char *const bad_socket[] = {"-1", "0", "abc", "8/", "8/x"};
    for (size_t i = 0; i < sizeof bad_socket / sizeof bad_socket[0]; i++) {
        char args[256];
        snprintf(args, sizeof args, "expect -t cluster-h100 -c allreduce --sizes 1GiB --cause socket=%s", bad_socket[i]);
        th_says(args, 1, "BW[/LAT]", 1);
    }
    th_says("expect -t cluster-h100 -c allreduce --sizes 1GiB --cause socket=8/2.5", 0, "with --cause socket=8/2.5", 1);
}

/* A run of more logs than one command holds is refused, never cut short
 * unsaid (the 65th log was dropped and the MAPE was over 64). */
Test(cli, more_logs_than_a_run_holds_are_refused) {
    char args[65 * 16 + 64], *at = args, *out;          /* a short name: th_cli's command line holds 4 KiB */
    cr_assert_eq(th_sh("cp validate/logs/nccl-tests/a100x8_nvswitch_oci_bmgpu48_allreduce.txt build/t-l.txt", &out), 0);
    free(out);
    at += sprintf(at, "validate -t hgx-a100 --nccl-tests");
    for (int i = 0; i < 65; i++) at += sprintf(at, " build/t-l.txt");
    th_says(args, 2, "at most 64 logs in one run", 1);
    memcpy(args, "doctor  ", 8);                         /* "validate" -> "doctor  " */
    th_says(args, 2, "at most 64 logs in one run", 1);
}

/* gb300-nvl72 inherits gb200-nvl72's fidelity bands through extends: the
 * band says whose logs measured it, and that none of the GB300's did. */
Test(cli, an_inherited_band_says_whose_logs_it_is) {
    th_says("expect -t gb300-nvl72 -c allreduce --sizes 1GiB", 0, "measured error on gb200-nvl72's logs", 1);
    th_says("expect -t gb300-nvl72 -c allreduce --sizes 1GiB", 0, "no log of gb300-nvl72 itself was measured", 1);
    th_says("expect -t gb200-nvl72 -c allreduce --sizes 1GiB", 0, "the logs gb200-nvl72's file names", 1);
}
