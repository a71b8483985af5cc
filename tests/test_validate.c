/* test_validate.c - what validate says of a log against a machine: another
 * GPU or other hosts named, the log's NCCL_ALGO / NCCL_PROTO followed, each
 * log's own MAPE, how nccl-tests timed the rows. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../models/gpu.h"
#include "../topologies/topo_yaml.h"
#include "../validate/nccltests.h"
#include "helpers.h"

/* A log of another GPU generation than the machine's is answered with a
 * warning naming both (an A100 log against hgx-h100 was 29 % off, silently);
 * the log's own machine, and an H200 log on the H100 cluster (one
 * generation), say nothing. */
Test(validate, a_log_of_another_gpu_is_named) {
    const char *a100 = " --nccl-tests validate/logs/nccl-tests/a100x8_nvswitch_oci_bmgpu48_allreduce.txt";
    char args[512];
    snprintf(args, sizeof args, "validate -t topologies/hgx-h100.yaml%s", a100);
    th_says(args, 0, "ran on NVIDIA A100-SXM4-40GB (ampere); hgx-h100's GPU is h100-sxm (hopper)", 1);
    /* --json carries it, for a script that never sees stderr */
    snprintf(args, sizeof args, "validate -t topologies/hgx-h100.yaml --json%s", a100);
    th_says(args, 0, "\"messages\":[\"warning: validate/logs/nccl-tests/a100x8_nvswitch_oci_bmgpu48_allreduce.txt ran on "
            "NVIDIA A100-SXM4-40GB (ampere)", 1);
    snprintf(args, sizeof args, "validate -t topologies/hgx-a100.yaml --json%s", a100);
    th_says(args, 0, "\"messages\":[]", 1);
    th_says("validate -t topologies/cluster-h100.yaml --nccl-tests "
            "validate/logs/nccl-tests-extra/h200x16_2node_bf3roce8x400_schmaustech_allreduce.txt", 0, "is this the machine", 0);
    cr_expect_str_eq(gpu_family_of_device("NVIDIA H200"), "hopper");
    cr_expect_str_eq(gpu_family_of_device("Tesla V100-SXM2-16GB"), "volta");
    cr_expect_str_eq(gpu_family_of_device("AMD Instinct MI300X"), "cdna3");
    cr_expect_str_eq(gpu_family_of_device("NVIDIA L40S"), "ada");
    cr_expect_null(gpu_family_of_device("NVIDIA GeForce GTX 1080"));
}

/* The Rank lines' hosts against the machine's nodes: 16 ranks on 4 hosts of
 * 4 against cluster-h100's 2 nodes of 8 is a warning; hosts interleaved
 * (mpirun --map-by node) are still 2 hosts of 8, and say nothing. */
Test(validate, a_log_on_other_hosts_is_named) {
    nt_log_t l;
    baton_err_t e = {0};
    cr_assert_eq(nt_parse("tests/data/nccl/interleaved-hosts.txt", 0, &l, &e), 0, "%s", e.msg);
    cr_expect_eq(l.hosts, 2);
    cr_expect_eq(l.per_host, 8);
    nt_free(&l);
    th_says("validate -t topologies/cluster-h100.yaml --nccl-tests tests/data/nccl/four-hosts.txt", 0,
            "four-hosts.txt ran on 4 hosts, 4 GPUs each; cluster-h100 puts its 16 ranks on 2 nodes of 8", 1);
    th_says("validate -t topologies/cluster-h100.yaml --nccl-tests tests/data/nccl/interleaved-hosts.txt", 0,
            "is this the machine", 0);
    /* a pod per GPU: 16 host names, but NCCL's own INIT line counts 2 nodes */
    cr_assert_eq(nt_parse("tests/data/nccl/pods.txt", 0, &l, &e), 0, "%s", e.msg);
    cr_expect_eq(l.hosts, 16);
    cr_expect_eq(l.nccl_nodes, 2);
    nt_free(&l);
    th_says("validate -t topologies/cluster-h100.yaml --nccl-tests tests/data/nccl/pods.txt", 0, "is this the machine", 0);
    th_says("validate -t topologies/cluster-pcie.yaml --nccl-tests tests/data/nccl/pods.txt", 0,
            "ran on 2 nodes (NCCL's nNodes); cluster-pcie puts its 16 ranks on 8 nodes of 2", 1);
}

Test(validate, the_logs_nccl_algo_and_proto_are_followed) {
    char *out;
    cr_assert_eq(th_cli("validate -t topologies/hgx-h100.yaml --nccl-tests tests/data/nccl/env-ring.txt", &out, 0), 0,
                 "%s", out);
    cr_expect(strstr(out, "env-ring.txt:3: NCCL_ALGO=Ring set: -a nccl picks only among what it leaves NCCL") != NULL,
              "%s", out);
    /* without the lines -a nccl runs dbtree and nvls here, and LL128 is NCCL's on NVLink */
    const char *rows = strstr(out, "model\n");
    cr_assert_not_null(rows, "%s", out);
    cr_expect(strstr(rows, "tree/") == NULL && strstr(rows, "nvls") == NULL && strstr(rows, "LL128") == NULL, "%s", out);
    cr_expect(strstr(rows, "ring/LL") != NULL && strstr(rows, "ring/Simple") != NULL, "%s", out);
    free(out);
    /* -a given: the user's word, and a note */
    cr_assert_eq(th_cli("validate -t topologies/hgx-h100.yaml -a dbtree --nccl-tests tests/data/nccl/env-ring.txt", &out, 0),
                 0, "%s", out);
    cr_expect(strstr(out, "NCCL_ALGO=Ring set; -a given here instead") != NULL && strstr(out, "dbtree/") != NULL, "%s", out);
    free(out);
    /* a fit runs within them too, and says so */
    th_says("calibrate -t topologies/hgx-h100.yaml -o build/env-ring.yaml --nccl-tests tests/data/nccl/env-ring.txt", 0,
            "at 3 sizes, within what the logs' NCCL_ALGO and NCCL_PROTO left NCCL", 1);
    /* and records them: the written machine's NCCL is told the same, without the log */
    th_says("predict -t build/env-ring.yaml -c allreduce -s 256MiB", 0,
            "allreduce ring on env-ring (8 ranks), 256 MiB", 1);
    th_says("predict -t build/env-ring.yaml -c allreduce -s 256MiB", 0,
            "within   the machine's nccl_env: NCCL_ALGO=Ring NCCL_PROTO=^LL128", 1);
    /* NCCL's own tables pick within them too (nvls/Simple at 256 MiB without) */
    cr_assert_eq(th_cli("validate -t topologies/hgx-h100.yaml --model nccl --nccl-tests tests/data/nccl/env-ring.txt", &out,
                        1), 0, "%s", out);
    cr_expect(strstr(out, "nvls") == NULL && strstr(out, "ring/Simple") != NULL, "%s", out);
    free(out);
}

/* Several logs in one validation: each log's own MAPE (JSON "logs", and a
 * line each) is what validating that log alone says. */
Test(validate, each_logs_mape_is_its_own_validation) {
    const char *ar = "validate/logs/nccl-tests/rtx2080ti_x2_pcie3_nop2p_allreduce.txt",
               *ag = "validate/logs/nccl-tests/rtx2080ti_x2_pcie3_nop2p_allgather.txt";
    char args[512], *both, *one;
    snprintf(args, sizeof args, "validate -t topologies/pcie-2gpu.yaml --set p2p=false --json --nccl-tests %s %s", ar, ag);
    cr_assert_eq(th_cli(args, &both, 1), 0, "%s", both);
    const char *logs = strstr(both, "\"logs\":[");
    cr_assert_not_null(logs, "%s", both);
    const char *files[2] = {ar, ag};
    for (int i = 0; i < 2; i++) {
        snprintf(args, sizeof args, "validate -t topologies/pcie-2gpu.yaml --set p2p=false --json --nccl-tests %s", files[i]);
        cr_assert_eq(th_cli(args, &one, 1), 0, "%s", one);
        char want[512];
        snprintf(want, sizeof want, "{\"log\":\"%s\",\"sizes\":%d,\"mape_pct\":%.4f}", files[i], i == 0 ? 28 : 26,
                 th_json_num(one, "mape_pct"));
        cr_expect(strstr(logs, want) != NULL, "%s in %s", want, logs);
        free(one);
    }
    free(both);
}

/* nccl-tests -m 4 times groups of four calls and divides among them, -w 0
 * times the first calls (NCCL's setup), -G replays them as CUDA graphs: the first
 * two are warnings (baton times one warm call), the third drops -g's
 * launches in turn from every prediction. */
Test(validate, how_nccl_tests_timed_the_rows_is_read) {
    const char *on = "validate -t topologies/pcie-2gpu.yaml --set p2p=false --json --nccl-tests tests/data/nccl/";
    char args[256], *grouped, *launched;
    snprintf(args, sizeof args, "%sgrouped.txt", on);
    th_says(args, 0, "warning: tests/data/nccl/grouped.txt:2: agg iters 4 (nccl-tests -m 4)", 1);
    th_says(args, 0, "note: tests/data/nccl/grouped.txt:2: graph 1 (nccl-tests -G)", 1);
    th_says(args, 0, "warning: tests/data/nccl/grouped.txt:2: warmup iters 0 (nccl-tests -w 0)", 1);
    cr_assert_eq(th_cli(args, &grouped, 1), 0, "%s", grouped);
    snprintf(args, sizeof args, "%slaunched.txt", on);
    th_says(args, 0, "\"messages\":[]", 1);
    cr_assert_eq(th_cli(args, &launched, 1), 0, "%s", launched);
    baton_err_t e = {0};
    topo_t *t = topo_yaml_load("topologies/pcie-2gpu.yaml", NULL, 0, &e);
    cr_assert_not_null(t, "%s", e.msg);
    double launch = topo_params_c(t)->launch, dt = th_json_num(launched, "predicted_s") - th_json_num(grouped, "predicted_s");
    cr_expect(launch > 0 && fabs(dt - launch) < 1e-9, "the -g 2 launch %g s, the graph's prediction %g s lower", launch, dt);
    topo_free(t);
    free(grouped);
    free(launched);
}
