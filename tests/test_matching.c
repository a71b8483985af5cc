/* test_matching.c - software tag matching (topo_params_t.sw_match,
 * `software_matching`; sim/nccl/ncclrule.c proxy_floor): where libfabric's
 * CXI provider matches tags on the host (FI_CXI_RX_MATCH_MODE=software,
 * Polaris's setup 5) each network message a rank sends or receives costs its
 * proxy thread match_latency, one after another
 * (docs/decisions/network-software.md, "Software tag matching"). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sim/answer/run.h"
#include "../topologies/topo.h"
#include "helpers.h"

/* A 64 B all-to-all on Polaris, no protocol (no base latency): closed form
 * (predict) or simulated. */
static double alltoall_time(const char *sets, int predict) {
    topo_t *t = th_load("topologies/polaris.yaml", sets);
    run_req_t q = {.coll = COLL_ALLTOALL, .algo = "direct", .bytes = 64, .predict = predict, .proto = PROTO_NONE};
    run_out_t o;
    baton_err_t e = {0};
    cr_assert_eq(run_collective(t, &q, &o, &e), 0, "%s", e.msg);
    engine_result_free(&o.eng);
    topo_free(t);
    return o.time_s;
}

/* An all-to-all on p ranks, g a node, has each rank send to and receive
 * from the p - g ranks of other nodes: 2 (p - g) messages on its proxy
 * thread, each match_latency (2.7 us unless set), in the closed form and
 * the engine alike; the NIC's matching (the default) costs none of it. */
Test(matching, the_proxy_thread_matches_each_network_message) {
    for (int predict = 0; predict < 2; predict++) {
        cr_expect_float_eq(alltoall_time("nodes=2 software_matching=true", predict), 2 * 4 * 2.7e-6, 1e-12);
        cr_expect_float_eq(alltoall_time("nodes=4 software_matching=true", predict), 2 * 12 * 2.7e-6, 1e-12);
        cr_expect_float_eq(alltoall_time("nodes=2 software_matching=true match_latency=4us", predict), 2 * 4 * 4e-6,
                           1e-12);
        cr_expect_lt(alltoall_time("nodes=2", predict), 2 * 4 * 2.7e-6 / 2);
        cr_expect_lt(alltoall_time("nodes=2 match_latency=4us", predict), 2 * 4 * 2.7e-6 / 2, "the knob alone is not on");
    }
    /* under the socket transport a message pays both: the TCP stack's and the match */
    cr_expect_float_eq(alltoall_time("nodes=2 socket=true software_matching=true", 1), 2 * 4 * (5e-6 + 2.7e-6), 1e-12);
}

/* FI_CXI_RX_MATCH_MODE in nccl_env: software is on, hardware and hybrid
 * off; a `software_matching` --set wins; anything else is an error at the
 * file's line. */
static int matching_of(const char *env, const char *sets) {
    FILE *f = fopen("/tmp/baton_matching_env.yaml", "w");
    cr_assert_not_null(f);
    fprintf(f, "name: p-env\nextends: polaris\nnccl_env: {%s}\n", env);
    fclose(f);
    topo_t *t = th_load("/tmp/baton_matching_env.yaml", sets);
    int on = topo_params_c(t)->sw_match;
    topo_free(t);
    remove("/tmp/baton_matching_env.yaml");
    return on;
}

Test(matching, nccl_env_names_the_matching) {
    cr_expect_eq(matching_of("FI_CXI_RX_MATCH_MODE: software", NULL), 1);
    cr_expect_eq(matching_of("FI_CXI_RX_MATCH_MODE: hardware", NULL), 0);
    cr_expect_eq(matching_of("FI_CXI_RX_MATCH_MODE: hybrid", NULL), 0);
    cr_expect_eq(matching_of("FI_CXI_RX_MATCH_MODE: software", "software_matching=false"), 0);
    FILE *f = fopen("/tmp/baton_matching_bad.yaml", "w");
    cr_assert_not_null(f);
    fputs("name: p-env\nextends: polaris\nnccl_env:\n  FI_CXI_RX_MATCH_MODE: sometimes\n", f);
    fclose(f);
    th_says("plan -t /tmp/baton_matching_bad.yaml", 1, "baton_matching_bad.yaml:4:", 1);
    th_says("plan -t /tmp/baton_matching_bad.yaml", 1, "FI_CXI_RX_MATCH_MODE must be hardware, software or hybrid", 1);
    remove("/tmp/baton_matching_bad.yaml");
    th_says("predict -t polaris --set software_matching=maybe -c alltoall -s 1MiB", 1, "must be true or false", 1);
}

/* plan says it, and --explain names the part and what removes it: 8
 * Polaris nodes, a 4 KiB all-to-all, 2 x 28 messages a rank. */
Test(matching, plan_and_explain_say_it) {
    th_says("plan -t polaris --set nodes=2 --set software_matching=true", 0,
            "each network message a rank sends or receives costs its proxy thread 2.7 us", 1);
    th_says("plan -t polaris --set nodes=2", 0, "matched in software", 0);
    char *out = NULL;
    cr_assert_eq(th_cli("predict -t polaris --set nodes=8 --set software_matching=true -c alltoall -a direct --proto LL "
                        "-s 4KiB --explain", &out, 1), 0, "%s", out);
    cr_expect_not_null(strstr(out, "proxy's tag matching, a message at a time"), "%s", out);
    cr_expect_not_null(strstr(out, "match-bound"), "%s", out);
    cr_expect_null(strstr(out, "socket-bound"), "%s", out);
    free(out);
}
