/* test_plain_default.c - a machine file that says nothing of NCCL gets the
 * plain alpha-beta model by default (issue 53); NCCL's machines keep theirs. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../topologies/topo_yaml.h"
#include "helpers.h"

static const char *SWITCH4 =
    "name: sw4\n"
    "nodes:\n"
    "  - {name: \"g[0-3]\"}\n"
    "  - {name: sw, kind: switch}\n"
    "links:\n"
    "  - {a: \"g[0-3]\", b: sw, bw: 50GiB/s, latency: 500ns}\n";

/* SWITCH4 with `extra` first, in a file of its own; the path in buf. */
static void write_machine(char *buf, size_t len, const char *extra) {
    snprintf(buf, len, "/tmp/baton-plain-XXXXXX");
    int fd = mkstemp(buf);
    cr_assert_geq(fd, 0);
    FILE *f = fdopen(fd, "w");
    cr_assert_not_null(f);
    fprintf(f, "%s%s", extra, SWITCH4);
    fclose(f);
}

static topo_t *load(const char *path) {
    baton_err_t e = {0};
    topo_t *t = topo_yaml_load(path, NULL, 0, &e);
    cr_assert_not_null(t, "%s", e.msg);
    return t;
}

Test(plain_default, no_protocols_no_arch_is_alpha_beta_on_one_channel) {
    char path[64];
    write_machine(path, sizeof path, "");
    topo_t *t = load(path);
    cr_expect_eq(topo_params_c(t)->plain, 1);
    cr_expect_eq(topo_params_c(t)->no_protocols, 1, "--proto auto means none");
    cr_expect_eq(topo_params_c(t)->channels, 1);
    topo_free(t);
    unlink(path);
}

Test(plain_default, its_own_channels_stay) {
    char path[64];
    write_machine(path, sizeof path, "channels: 4\n");
    topo_t *t = load(path);
    cr_expect_eq(topo_params_c(t)->plain, 1);
    cr_expect_eq(topo_params_c(t)->channels, 4);
    topo_free(t);
    unlink(path);
}

/* A word of NCCL -- arch:, protocols:, gpu: -- keeps NCCL's defaults. */
Test(plain_default, nccl_machines_keep_their_defaults) {
    const char *extras[] = {"arch: hopper\n", "protocols:\n  LL: {latency: 0.6us}\n", "gpu: h100-sxm\n"};
    for (int i = 0; i < 3; i++) {
        char path[64];
        write_machine(path, sizeof path, extras[i]);
        topo_t *t = load(path);
        cr_expect_eq(topo_params_c(t)->plain, 0, "%s", extras[i]);
        cr_expect_eq(topo_params_c(t)->no_protocols, 0, "%s", extras[i]);
        cr_expect_eq(topo_params_c(t)->channels, 0, "%s", extras[i]);
        topo_free(t);
        unlink(path);
    }
    baton_err_t e = {0};
    topo_t *t = topo_yaml_load("topologies/hgx-h100.yaml", NULL, 0, &e);
    cr_assert_not_null(t, "%s", e.msg);
    cr_expect_eq(topo_params_c(t)->plain, 0, "a shipped NCCL machine");
    topo_free(t);
}

/* What the user sees: the note, and the time of --proto none --channels 1;
 * --proto auto asks for NCCL's protocols again (and takes longer). */
Test(plain_default, sim_says_so_and_times_alpha_beta) {
    char path[64], args[256];
    write_machine(path, sizeof path, "");
    char *out = NULL;
    snprintf(args, sizeof args, "sim -t %s -c allreduce -a ring -s 1MiB --json", path);
    cr_assert_eq(th_cli(args, &out, 0), 0, "%s", out);
    cr_expect(strstr(out, "note:") && strstr(out, "plain alpha-beta"), "%s", out);
    free(out);
    cJSON *dflt = th_cli_json((snprintf(args, sizeof args, "sim -t %s -c allreduce -a ring -s 1MiB --json", path), args));
    cJSON *none = th_cli_json((snprintf(args, sizeof args, "sim -t %s -c allreduce -a ring -s 1MiB --json --proto none --channels 1", path), args));
    cJSON *nccl = th_cli_json((snprintf(args, sizeof args, "sim -t %s -c allreduce -a ring -s 1MiB --json --proto auto", path), args));
    cr_assert(dflt && none && nccl);
    cr_expect_eq(th_jnum(dflt, "time_s"), th_jnum(none, "time_s"));
    cr_expect_gt(th_jnum(nccl, "time_s"), th_jnum(none, "time_s"), "NCCL's protocols add their latencies");
    cJSON_Delete(dflt), cJSON_Delete(none), cJSON_Delete(nccl);
    unlink(path);
}
