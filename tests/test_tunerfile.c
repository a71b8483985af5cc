/* test_tunerfile.c - plan and validate honour a tuner CSV (NCCL's example
 * tuner plugin's file) as NCCL would: the first row that fits a size and
 * that NCCL can run there wins; elsewhere NCCL's own choice. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"

#define LOG "tests/data/ntjson/h200x2_all_reduce.json"
#define ON "-t cluster-h200 --set gpus=1"
#define SIZES "--sizes 1KiB:64MiB:x4"

static char dir[64];

/* A file of text in this test's directory; its path (static buffer). */
static const char *file(const char *name, const char *text) {
    static char path[160];
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/baton-tunerfile-XXXXXX");
        cr_assert(mkdtemp(dir));
    }
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs(text, f);
    fclose(f);
    return path;
}

static void cleanup(void) {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (dir[0]) cr_expect_eq(system(cmd), 0);
    dir[0] = '\0';
}

/* ring/LL128 from 64 KiB to 4 MiB, the bounds included, on any machine. */
#define RING_LL128 "# collective,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks\n" \
                   "allreduce,65536,4194304,ring,ll128,-1,-1,-1\n"

static const char *str(const cJSON *o, const char *k) { return cJSON_GetStringValue(cJSON_GetObjectItem(o, k)); }
static double num(const cJSON *o, const char *k) { return cJSON_GetNumberValue(cJSON_GetObjectItem(o, k)); }

Test(tunerfile, plan_takes_the_row_in_its_range_and_nccls_choice_outside, .fini = cleanup) {
    char args[512];
    snprintf(args, sizeof args, "plan -t hgx-h100 " SIZES " --json --tuner %s", file("ring.csv", "# header\n" RING_LL128));
    cJSON *with = th_cli_json(args), *without = th_cli_json("plan -t hgx-h100 " SIZES " --json");
    const cJSON *a = cJSON_GetObjectItem(with, "sizes"), *b = cJSON_GetObjectItem(without, "sizes");
    cr_assert_eq(cJSON_GetArraySize(a), 9);
    int inside = 0, changed = 0;
    for (int i = 0; i < 9; i++) {
        const cJSON *x = cJSON_GetArrayItem(a, i), *y = cJSON_GetArrayItem(b, i);
        const cJSON *mx = cJSON_GetObjectItem(x, "nccl_model"), *my = cJSON_GetObjectItem(y, "nccl_model");
        double bytes = num(x, "bytes");
        if (bytes >= 65536 && bytes <= 4194304) {
            inside++;
            cr_expect_str_eq(str(x, "algorithm"), "ring", "%.0f B", bytes);
            cr_expect_str_eq(str(x, "protocol"), "LL128", "%.0f B", bytes);
            cr_expect(cJSON_IsTrue(cJSON_GetObjectItem(x, "tuner")));
            cr_expect_str_eq(str(mx, "algorithm"), "ring", "NCCL's model too: the row's cost is 0");
            cr_expect_str_eq(str(mx, "protocol"), "LL128");
            changed += strcmp(str(y, "protocol"), "LL128") != 0;
        } else {
            cr_expect_str_eq(str(x, "algorithm"), str(y, "algorithm"), "%.0f B: NCCL's own", bytes);
            cr_expect_str_eq(str(x, "protocol"), str(y, "protocol"));
            cr_expect_eq(num(x, "time_s"), num(y, "time_s"));
            cr_expect_str_eq(str(mx, "algorithm"), str(my, "algorithm"));
            cr_expect_eq(num(mx, "time_s"), num(my, "time_s"));
            cr_expect_null(cJSON_GetObjectItem(x, "tuner"));
        }
    }
    cr_expect_eq(inside, 4, "64 KiB, 256 KiB, 1 MiB and 4 MiB (the bounds are in the range)");
    cr_expect_gt(changed, 0, "the row changes something: NCCL alone does not pick ring/LL128 there");
    cJSON_Delete(with);
    cJSON_Delete(without);
    snprintf(args, sizeof args, "plan -t hgx-h100 " SIZES " --tuner %s",     /* a spreadsheet's header row: skipped */
             file("ring.csv", "collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks\n" RING_LL128));
    th_says(args, 0, "tuner: /tmp/baton-tunerfile-", 1);
    th_says(args, 0, "1 of its 1 row fits this machine (nNodes 1, nRanks 8", 1);
}

Test(tunerfile, validate_predicts_the_rows_choice_in_its_range_only, .fini = cleanup) {
    char args[512];
    snprintf(args, sizeof args, "validate " ON " -a nccl --json --nccl-tests " LOG " --tuner %s",
             file("ring.csv", RING_LL128));
    cJSON *with = th_cli_json(args), *without = th_cli_json("validate " ON " -a nccl --json --nccl-tests " LOG);
    const cJSON *a = cJSON_GetObjectItem(with, "rows"), *b = cJSON_GetObjectItem(without, "rows");
    cr_assert_eq(cJSON_GetArraySize(a), 24);
    int moved = 0;
    for (int i = 0; i < 24; i++) {
        const cJSON *x = cJSON_GetArrayItem(a, i), *y = cJSON_GetArrayItem(b, i);
        double bytes = num(x, "bytes");
        if (bytes >= 65536 && bytes <= 4194304) {
            cr_expect_str_eq(str(x, "algorithm"), "ring");
            cr_expect_str_eq(str(x, "protocol"), "LL128", "%.0f B", bytes);
            moved += num(x, "predicted_s") != num(y, "predicted_s");
        } else {
            cr_expect_str_eq(str(x, "protocol"), str(y, "protocol"), "%.0f B", bytes);
            cr_expect_eq(num(x, "predicted_s"), num(y, "predicted_s"), "%.0f B: NCCL's own choice, the same time", bytes);
        }
    }
    cr_expect_eq(moved, 7, "64 KiB .. 4 MiB: ring/LL where not LL128 before, each time moves");
    cr_expect_neq(num(with, "mape_pct"), num(without, "mape_pct"));
    cJSON_Delete(with);
    cJSON_Delete(without);
    snprintf(args, sizeof args, "validate " ON " -a nccl --nccl-tests " LOG " --tuner %s", file("ring.csv", RING_LL128));
    th_says(args, 0, "1 of its 1 row fits cluster-h200: -a nccl takes the first that fits a size", 1);
    th_says(args, 0, "4 MiB    227.45 us   103.478 us   -54.5%", 1);
}

/* NVLS on a machine without a switch that reduces: NCCL's cost table marks
 * it IGNORE, so the example plugin goes on to the next row (plugin.c). */
Test(tunerfile, a_row_nccl_cannot_run_passes_to_the_next, .fini = cleanup) {
    char args[512];
    snprintf(args, sizeof args, "plan -t hgx-a100 --sizes 16KiB --tuner %s",
             file("nvls.csv", "allreduce,0,1048576,nvls,simple,-1,-1,-1\nallreduce,0,1048576,ring,simple,4,-1,-1\n"));
    th_says(args, 0, "passed over: NCCL's nvls/Simple at 0 B-1 MiB (8 ranks)", 1);
    th_says(args, 0, "      16 KiB  ring       Simple         4", 1);
    th_says(args, 0, "ring/Simple", 1);
}

/* nNodes and nRanks of another machine, numPipeOps of a group, registered
 * buffers: the row does not fit a lone call on hgx-h100 (1 node, 8 ranks). */
Test(tunerfile, rows_for_other_calls_do_not_apply, .fini = cleanup) {
    char *plain = NULL, *out = NULL, args[512];
    cr_assert_eq(th_cli("plan -t hgx-h100 --sizes 1MiB", &plain, 1), 0);
    const char *rows = "allreduce,0,1073741824,ring,ll128,-1,2,-1\nallreduce,0,1073741824,ring,ll128,-1,-1,16\n"
                       "allreduce,0,1073741824,ring,ll128,-1,-1,-1,4\nallreduce,0,1073741824,ring,ll128,-1,-1,-1,-1,1\n"
                       "allgather,0,1073741824,ring,ll128,-1,-1,-1\n";
    snprintf(args, sizeof args, "plan -t hgx-h100 --sizes 1MiB --tuner %s", file("other.csv", rows));
    cr_assert_eq(th_cli(args, &out, 1), 0);
    const char *size = strstr(out, "       1 MiB"), *size0 = strstr(plain, "       1 MiB");
    cr_assert(size && size0);
    cr_expect_eq(strncmp(size, size0, 100), 0, "NCCL's own:\n%s\n%s", size, size0);
    cr_expect(strstr(out, "1 of its 5 rows fits this machine") != NULL, "the all-gather row only:\n%s", out);
    free(plain);
    free(out);
}

Test(tunerfile, the_environment_names_the_file, .fini = cleanup) {
    char *out = NULL;
    setenv("NCCL_TUNER_CONFIG_FILE", file("env.csv", RING_LL128), 1);
    int rc = th_cli("plan -t hgx-h100 --sizes 1MiB", &out, 0);
    unsetenv("NCCL_TUNER_CONFIG_FILE");
    cr_expect_eq(rc, 0);
    cr_expect(strstr(out, "NCCL_TUNER_CONFIG_FILE=") && strstr(out, "1 MiB  ring       LL128"), "%s", out);
    free(out);
}

Test(tunerfile, a_malformed_file_names_its_line, .fini = cleanup) {
    char args[512];
    const char *bad = file("bad.csv", "# fine\nallreduce,0,100,ring,ll128,-1,-1,-1\nallreduce,0,100,ring,ll129,-1,-1,-1\n");
    snprintf(args, sizeof args, "plan -t hgx-h100 --tuner %s", bad);
    th_says(args, 1, "bad.csv:3: unknown protocol (ll, ll128, simple)", 1);
    snprintf(args, sizeof args, "validate " ON " --nccl-tests " LOG " --tuner %s", bad);
    th_says(args, 1, "bad.csv:3: unknown protocol (ll, ll128, simple)", 1);
    snprintf(args, sizeof args, "plan -t hgx-h100 --tuner %s", file("short.csv", "allreduce,0,100,ring\n"));
    th_says(args, 1, "short.csv:1: a row has 8 to 10 fields", 1);
    snprintf(args, sizeof args, "plan -t hgx-h100 --tuner %s", file("empty.csv", "# nothing\n"));
    th_says(args, 1, "empty.csv: no rows", 1);
    /* A count NCCL cannot run: refused at its line, as 0 is (one column of plan had dropped it, the other kept it). */
    snprintf(args, sizeof args, "plan -t hgx-h100 --sizes 64B --tuner %s", file("wide.csv", "allreduce,0,100,ring,simple,65,1,8,-1,-1\n"));
    th_says(args, 1, "wide.csv:1: channels above 64 (NCCL's MAXCHANNELS)", 1);
    snprintf(args, sizeof args, "plan -t hgx-h100 --sizes 64B --tuner %s", file("zero.csv", "allreduce,0,100,ring,simple,0,1,8,-1,-1\n"));
    th_says(args, 1, "zero.csv:1: channels 0", 1);
    th_says("plan -t hgx-h100 --tuner /nonexistent/t.csv", 1, "/nonexistent/t.csv: cannot open", 1);
    snprintf(args, sizeof args, "validate " ON " -a ring --nccl-tests " LOG " --tuner %s", file("ring.csv", RING_LL128));
    th_says(args, 2, "--tuner overrides NCCL's choice: it goes with -a nccl", 1);
}
