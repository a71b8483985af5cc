/* test_nccl_newer.c - NCCL's newer algorithms (issue 48, item 3): PAT, the
 * symmetric-memory kernels and the copy-engine collectives as catalogue rows
 * (verified with data for p = 1..17, 31, 64, 72, 100, equal to their closed
 * forms on a uniform machine, refused clearly where they do not apply), and
 * -a nccl / --model nccl following the machine's NCCL version, one test a
 * version rule, each naming NCCL's file and version. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sim/nccl/tuning.h"
#include "../sim/nccl/plan.h"
#include "../sim/answer/run.h"
#include "../topologies/graph.h"
#include "helpers.h"

static const algo_t *const newer[] = {&algo_allgather_pat,       &algo_reducescatter_pat, &algo_allreduce_symmetric,
                                      &algo_allgather_symmetric, &algo_reducescatter_symmetric,
                                      &algo_allgather_ce,        &algo_alltoall_ce};
#define NNEW (int)(sizeof newer / sizeof newer[0])
static const int ps[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 31, 64, 72, 100};
#define NP (int)(sizeof ps / sizeof ps[0])

/* Each row moves real bytes to where they belong, sizes that p divides and
 * sizes it does not (all-to-all: p divides its size). */
Test(nccl_newer, rows_verify_with_data_at_many_rank_counts) {
    for (int i = 0; i < NP; i++) {
        int p = ps[i];
        topo_t *t = th_full(p, 10e9, 1e-6, 0, 20e9);
        for (int a = 0; a < NNEW; a++) {
            int a2a = newer[a]->coll == COLL_ALLTOALL;
            uint64_t ns[] = {0, a2a ? (uint64_t)p * 13 : 1003, (uint64_t)p * 64};
            for (int k = 0; k < 3; k++) {
                engine_result_t r;
                baton_err_t e = {0};
                int rc = th_run(t, newer[a], ns[k], NULL, VERIFY_DATA, &r, &e);
                cr_assert_eq(rc, 0, "%s %s p=%d n=%llu: %s", coll_name(newer[a]->coll), newer[a]->name, p,
                             (unsigned long long)ns[k], e.msg);
                cr_expect_eq(r.verified, 1, "%s %s p=%d", coll_name(newer[a]->coll), newer[a]->name, p);
                engine_result_free(&r);
            }
        }
        topo_free(t);
    }
}

/* On a uniform machine (a star of multi-port links, and a single-port full
 * mesh) the simulator's time is the row's closed form, to 1e-9, beyond the
 * 2..16 ranks test_catalogue.c checks; the symmetric reduce-scatter's
 * single-port formula is an upper bound (symmetric.c). */
Test(nccl_newer, rows_equal_their_closed_forms_on_a_uniform_machine) {
    const int big[] = {2, 3, 17, 31, 64, 72, 100};
    for (int i = 0; i < (int)(sizeof big / sizeof *big); i++)
        for (int star = 0; star < 2; star++) {
            int p = big[i];
            topo_t *t = star ? th_star(p, 12.5e9, 1.5e-6, 0, 40e9) : th_full(p, 12.5e9, 1.5e-6, 1, 40e9);
            topo_params(t)->max_inflight = 128;
            cost_model_t m;
            cr_assert_eq(topo_cost_model(t, &m, NULL), 0);
            for (int a = 0; a < NNEW; a++) {
                uint64_t n = (uint64_t)p * 65536;
                engine_result_t r;
                baton_err_t e = {0};
                cr_assert_eq(th_run(t, newer[a], n, NULL, VERIFY_NONE, &r, &e), 0, "%s", e.msg);
                double f = newer[a]->cost(&m, p, n, NULL), tol = 1e-9 * f;
                if (!star && newer[a] == &algo_reducescatter_symmetric)
                    cr_expect_leq(r.time_s, f + tol, "rs symmetric p=%d: sim %.9g above %.9g", p, r.time_s, f);
                else
                    cr_expect_leq(fabs(r.time_s - f), tol, "%s %s p=%d%s: sim %.12g closed %.12g", coll_name(newer[a]->coll),
                                  newer[a]->name, p, star ? " (star)" : "", r.time_s, f);
                engine_result_free(&r);
            }
            topo_free(t);
        }
}

/* PAT at more than one rank per node, the symmetric kernels and copy
 * engines across NVLink domains: refused, saying why and NCCL's rule. */
Test(nccl_newer, refusals_say_where_a_row_does_not_apply) {
    topo_t *t = th_full(16, 10e9, 1e-6, 0, 20e9);
    algo_opts_t o = {.group = 8};
    engine_result_t r;
    baton_err_t e = {0};
    cr_expect_eq(th_run(t, &algo_allgather_pat, 1600, &o, VERIFY_SIGNATURE, &r, &e), BATON_EUNSUP);
    cr_expect(strstr(e.msg, "one rank per node") && strstr(e.msg, "ncclPatEnable") && strstr(e.msg, "8 per node"), "%s", e.msg);
    const algo_t *dom[] = {&algo_allreduce_symmetric, &algo_allgather_ce, &algo_alltoall_ce};
    for (int i = 0; i < 3; i++) {
        e = (baton_err_t){0};
        cr_expect_eq(th_run(t, dom[i], 1600, &o, VERIFY_SIGNATURE, &r, &e), BATON_EUNSUP);
        cr_expect(strstr(e.msg, "one NVLink domain") && strstr(e.msg, "2 domains of 8"), "%s", e.msg);
    }
    topo_free(t);
}

/* The first line of `baton predict ARGS -a nccl` names row `row`. */
static void picks(const char *args, const char *row, int want) {
    char cmd[320], *out;
    snprintf(cmd, sizeof cmd, "predict %s -a nccl", args);
    cr_assert_eq(th_cli(cmd, &out, 0), 0, "%s: %s", cmd, out);
    char *nl = strchr(out, '\n');
    if (nl) *nl = '\0';
    cr_expect_eq(strstr(out, row) != NULL, want, "%s: %s '%s' in '%s'", cmd, want ? "want" : "do not want", row, out);
    free(out);
}

#define ONE_PER_NODE "-t cluster-b200 --set gpus=1 --set nodes=16 -s 1KiB"

/* PAT: NCCL 2.23.4's src/graph/tuning.cc ncclPatEnable (nNodes == nRanks),
 * Simple only; -a nccl runs it where NCCL's tuner picks it: 16 nodes of one
 * GPU at 1 KiB from 2.23, never in 2.22.3, never at 8 GPUs a node. */
Test(nccl_newer, pat_from_2_23_at_one_gpu_per_node) {
    picks("-c allgather " ONE_PER_NODE, "allgather pat", 1);
    picks("-c reducescatter " ONE_PER_NODE " --set nccl_version=2.23.4", "reducescatter pat", 1);
    picks("-c allgather " ONE_PER_NODE " --set nccl_version=2.22.3", "pat", 0);
    picks("-c allgather -t cluster-b200 --set nodes=16 -s 1KiB", "pat", 0);
    picks("-c allgather " ONE_PER_NODE " -s 1GiB", "pat", 0);      /* the tuner's 0.75: ring at 1 GiB */
}

/* PAT runs Simple only, so where the call leaves Simple out (NCCL_PROTO, a
 * log's or doctor's `--cause proto=`, or -a nccl --proto) NCCL's tuner
 * cannot pick it (IGNORE in its cost table) and picks among the rest:
 * -a nccl runs a ring there, where it once forced PAT and found nothing to
 * run. With Simple allowed PAT stays NCCL's pick. */
Test(nccl_newer, a_call_without_simple_leaves_pat_out) {
    picks("-c allgather " ONE_PER_NODE " --proto LL128", "allgather ring", 1);
    picks("-c allgather " ONE_PER_NODE " --proto LL", "allgather ring", 1);
    picks("-c allgather " ONE_PER_NODE " --proto Simple", "allgather pat", 1);
    th_says("expect -c allgather " ONE_PER_NODE " --cause proto=LL128", 0, "ring/LL128", 1);
    th_says("expect -c allgather " ONE_PER_NODE " --cause proto=LL128", 0, "pat", 0);
    th_says("expect -c allgather " ONE_PER_NODE " --cause proto=Simple", 0, "pat/Simple", 1);
    tuning_machine_t m = {.nranks = 16, .nnodes = 16, .arch = ARCH_BLACKWELL, .nvlink = 1, .ll128 = 1, .nchannels = 4, .bw = 40};
    tuning_algo_t a = TUNING_RING;
    proto_t pr = PROTO_NONE;
    double x = 0;
    cr_assert_eq(tuning_pick(&m, COLL_ALLGATHER, 1024, 1u << PROTO_SIMPLE, &a, &pr, &x), 0);
    cr_expect_eq(pr, PROTO_SIMPLE);
    cr_assert_eq(tuning_pick(&m, COLL_ALLGATHER, 1024, 1u << PROTO_LL128, &a, &pr, &x), 0);
    cr_expect_eq(pr, PROTO_LL128);
    cr_expect_neq(a, TUNING_PAT);
}

/* PAT's bandwidth in NCCL's own model: busBw x .85 in 2.23.4's tuning.cc,
 * x .75 from 2.24.3; latency 8 + log2(nodes) x 14/3.5 + 2.8 a rank. */
Test(nccl_newer, pat_model_follows_the_version) {
    tuning_machine_t m = {.nranks = 16, .nnodes = 16, .arch = ARCH_BLACKWELL, .nvlink = 1, .nchannels = 8, .bw = 6.25,
                          .version = 22304};
    uint64_t n = 1 << 30;
    double bw = 8 * 6.25;
    cr_expect_float_eq(tuning_latency_us(&m, COLL_ALLGATHER, TUNING_PAT, PROTO_SIMPLE), 8 + 4 * 4.0 + 16 * 2.8, 1e-9);
    cr_expect_float_eq(tuning_time(&m, COLL_ALLGATHER, TUNING_PAT, PROTO_SIMPLE, n), (68.8 + n / (1000 * bw * .85)) * 1e-6, 1e-12);
    m.version = 22403;
    cr_expect_float_eq(tuning_time(&m, COLL_ALLGATHER, TUNING_PAT, PROTO_SIMPLE, n), (68.8 + n / (1000 * bw * .75)) * 1e-6, 1e-12);
    cr_expect_lt(tuning_time(&m, COLL_ALLGATHER, TUNING_PAT, PROTO_LL, n), 0, "Simple only");
    cr_expect_lt(tuning_time(&m, COLL_ALLREDUCE, TUNING_PAT, PROTO_SIMPLE, n), 0, "no all-reduce");
    m.version = 22203;
    cr_expect_lt(tuning_time(&m, COLL_ALLGATHER, TUNING_PAT, PROTO_SIMPLE, n), 0, "none before 2.23");
    m.version = 22403, m.nnodes = 2;
    cr_expect_lt(tuning_time(&m, COLL_ALLGATHER, TUNING_PAT, PROTO_SIMPLE, n), 0, "8 GPUs a node");
}

/* Symmetric kernels: NCCL 2.27.3's src/enqueue.cc (nNodes == 1, both
 * buffers in symmetric windows: "always use symmetric if available"), 2.28+
 * src/scheduler/symmetric_sched.cc (no fallback when both are registered);
 * kernels for sm90 and later (src/device/symmetric/generate.py). */
Test(nccl_newer, symmetric_kernels_from_2_27_with_registered_buffers) {
    const char *k = "NCCL's symmetric kernel";
    th_says("predict -a nccl -t hgx-b200 -c allreduce -s 64MiB --set registered=true --set nccl_version=2.27.3", 0, k, 1);
    th_says("predict -a nccl -t hgx-b200 -c reducescatter -s 64MiB --set registered=true", 0, k, 1);
    picks("-t hgx-b200 -c reducescatter -s 64MiB --set registered=true", "reducescatter symmetric", 1);
    picks("-t hgx-h100 -c allgather -s 1GiB --set registered=true", "allgather symmetric", 1);
    th_says("predict -a nccl -t hgx-b200 -c allreduce -s 64MiB --set registered=true --set nccl_version=2.26.6", 0, k, 0);
    th_says("predict -a nccl -t hgx-b200 -c allreduce -s 64MiB", 0, k, 0);                         /* not registered */
    th_says("predict -a nccl -t cluster-b200 -c allreduce -s 64MiB --set registered=true", 0, k, 0);   /* two domains */
    th_says("predict -a nccl -t hgx-a100 -c allreduce -s 64MiB --set registered=true", 0, k, 0);       /* Ampere */
}

/* -a nccl runs the kernel NCCL's own model picks (sym_kernels.cc, 2.30.7
 * ncclSymkPickKernel; NCCL_PROTO does not enter it) as the row that moves
 * its data, with its protocol, and says which: an LL kernel is an LL row
 * without barriers (all-reduce AGxLL(MC)_R the one-shot, the all-gather's
 * and reduce-scatter's LL the direct row), all-reduce's multimem
 * RSxLDMC_AGxSTMC NVLS's nvls row, the LD/ST kernels the symmetric rows;
 * where the one-shot cannot run (72 ranks) the symmetric row with LL. The
 * time is that row's at that protocol; a protocol asked of baton picks among
 * that protocol's kernels. */
static void kernel_runs_as(const char *args, const char *kernel, const char *row, const char *proto) {
    char cmd[320], *out = NULL;
    snprintf(cmd, sizeof cmd, "predict -a nccl --set registered=true --json %s", args);
    cr_assert_eq(th_cli(cmd, &out, 1), 0, "%s: %s", cmd, out);
    char want[3][96];
    snprintf(want[0], sizeof want[0], "\"nccl_kernel\":\"%s\"", kernel);
    snprintf(want[1], sizeof want[1], "\"algorithm\":\"%s\"", row);
    snprintf(want[2], sizeof want[2], "\"protocol\":\"%s\"", proto);
    for (int i = 0; i < 3; i++) cr_expect(strstr(out, want[i]) != NULL, "%s: no %s in %.400s", cmd, want[i], out);
    double t = th_json_num(out, "time_s");
    free(out);
    snprintf(cmd, sizeof cmd, "predict -a %s --proto %s --set registered=true --json %s", row, proto, args);
    cr_assert_eq(th_cli(cmd, &out, 1), 0, "%s: %s", cmd, out);
    cr_expect_float_eq(th_json_num(out, "time_s"), t, 1e-15, "%s", cmd);
    free(out);
}

Test(nccl_newer, symmetric_kernels_run_as_the_rows_that_move_their_data) {
    kernel_runs_as("-t hgx-b200 -c allreduce -s 1KiB", "AllReduce_AGxLLMC_R", "oneshot", "LL");
    kernel_runs_as("-t hgx-b200 -c allreduce -s 64MiB", "AllReduce_RSxLDMC_AGxSTMC", "nvls", "Simple");
    kernel_runs_as("-t hgx-b200 -c allreduce -s 1KiB --proto Simple", "AllReduce_RSxLDMC_AGxSTMC", "nvls", "Simple");
    kernel_runs_as("-t hgx-b200 -c allgather -s 1KiB", "AllGather_LLMC", "direct", "LL");
    kernel_runs_as("-t hgx-b200 -c allgather -s 1MiB", "AllGather_STMC", "symmetric", "Simple");
    kernel_runs_as("-t hgx-b200 -c reducescatter -s 1KiB", "ReduceScatter_LL", "direct", "LL");
    kernel_runs_as("-t hgx-b200 -c reducescatter -s 64MiB", "ReduceScatter_LDMC", "symmetric", "Simple");
    kernel_runs_as("-t gb200-nvl72 -c allreduce -s 1KiB", "AllReduce_AGxLLMC_R", "symmetric", "LL");
    th_says("predict -a nccl -t hgx-b200 --set registered=true -c allreduce -s 1KiB", 0,
            "chosen   by -a nccl: NCCL's symmetric kernel AllReduce_AGxLLMC_R", 1);
    /* a rerun of the answer (sim, --explain, predict's check, select --vs-nccl) runs the same kernel's row */
    th_says("sim -a nccl -t hgx-h100 --set registered=true -c allreduce -s 1KiB --explain", 0, "explain  the simulated", 1);
    th_says("sim -a nccl -t hgx-h100 --set registered=true -c allgather -s 1MiB", 0, "NCCL's symmetric kernel AllGather_STMC", 1);
    th_says("predict -a nccl -t hgx-h100 --set registered=true -c allreduce -s 1KiB", 0, "unchecked", 0);
    th_says("select -t hgx-h100 --set registered=true -c allreduce --sizes 1KiB --vs-nccl", 0, "oneshot/LL", 1);
}

/* A rule or NCCL_ALGO that names another algorithm leaves PAT out: NCCL's
 * tuner is not asked (a tuner file's row, a log's TUNING line, doctor's
 * `--cause algo=`). */
Test(nccl_newer, a_rule_or_nccl_algo_leaves_pat_out) {
    th_says("expect -c allgather " ONE_PER_NODE " --cause algo=ring", 0, "ring/", 1);
    const char *path = "build/test_nccl_newer_ring.csv";
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("allgather,0,1048576,ring,simple,-1,-1,-1,-1\n", f);
    fclose(f);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "plan -c allgather -t cluster-b200 --set gpus=1 --set nodes=16 --sizes 1KiB --tuner %s", path);
    th_says(cmd, 0, "IGNORE", 0);
    th_says(cmd, 0, "ring       Simple", 1);
    remove(path);
}

/* The copy-engine all-gather: NCCL 2.29.2's src/enqueue.cc taskAppend:
 * registered, all ranks direct over NVLink, minCompCap >= 100, count above
 * NCCL_SYM_CE_THRESHOLD (8 Mi elements a rank: 32 MiB of floats). */
Test(nccl_newer, ce_allgather_from_2_29_on_blackwell_above_8mi_elements) {
    picks("-t hgx-b200 -c allgather -s 1GiB --set registered=true --set nccl_version=2.29.2", "allgather ce", 1);
    picks("-t hgx-b200 -c allgather -s 1GiB --set registered=true --set nccl_version=2.28.9", "allgather symmetric", 1);
    picks("-t hgx-b200 -c allgather -s 256MiB --set registered=true", "allgather symmetric", 1);   /* 32 MiB a rank: not above */
    picks("-t hgx-b200 -c allgather -s 257MiB --set registered=true", "allgather ce", 1);
    picks("-t hgx-h100 -c allgather -s 1GiB --set registered=true", "ce", 0);                  /* Hopper */
    picks("-t hgx-b200 -c alltoall -s 1GiB --set registered=true", "ce", 0);   /* CE all-to-all: only with NCCL_CTA_POLICY=2 */
}

/* NCCL_CTA_POLICY=2 (ZERO) asks for no kernel: all-gather and all-to-all go
 * on the copy engines from 2.28 (2.28.3 src/enqueue.cc taskAppend: nNodes
 * == 1, both buffers symmetric windows, CTAPolicy == ZERO; 2.30.7
 * src/ce_coll.cc ncclCeAvailable: every rank in the NVLink team), at any
 * size and on Hopper too; what has no CE kernel keeps its own. */
Test(nccl_newer, cta_policy_zero_runs_the_copy_engines_from_2_28) {
    picks("-t hgx-b200 -c alltoall -s 1GiB --set registered=true --set cta_policy=2 --set nccl_version=2.28.3", "alltoall ce", 1);
    picks("-t hgx-h100 -c allgather -s 1MiB --set registered=true --set cta_policy=ZERO", "allgather ce", 1);   /* NCCL's name */
    picks("-t hgx-b200 -c alltoall -s 1GiB --set registered=true --set cta_policy=2 --set nccl_version=2.27.7", "ce", 0);
    picks("-t hgx-b200 -c alltoall -s 1GiB --set cta_policy=2", "ce", 0);                     /* not registered */
    picks("-t hgx-b200 -c alltoall -s 1GiB --set registered=true --set cta_policy=1", "ce", 0);   /* EFFICIENCY */
    picks("-t cluster-b200 -c alltoall -s 1GiB --set registered=true --set cta_policy=2", "ce", 0);   /* two domains */
    th_says("predict -a nccl -t hgx-b200 -c allreduce -s 1GiB --set registered=true --set cta_policy=2", 0,
            "NCCL's symmetric kernel AllReduce_RSxLDMC_AGxSTMC", 1);
    th_says("predict -t hgx-b200 -c alltoall -s 1GiB --set cta_policy=3", 1, "default, efficiency or zero (0, 1 or 2), not '3'", 1);
}

/* A version baton does not know: the option and the file say so, the file
 * at its line. */
Test(nccl_newer, unknown_versions_are_refused) {
    th_says("predict -t hgx-b200 -c allreduce -s 1MiB --set nccl_version=2.31.0", 1, "2.18.0 to 2.30.7", 1);
    th_says("predict -t hgx-b200 -c allreduce -s 1MiB --set nccl_version=two", 1, "--set nccl_version=two: must be", 1);
    const char *path = "build/test_nccl_newer_bad_version.yaml";
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("name: bad-version\nextends: hgx-b200\nlibrary: {nccl: 2.17.3}\n", f);
    fclose(f);
    th_says("predict -t build/test_nccl_newer_bad_version.yaml -c allreduce -s 1MiB", 1,
            "test_nccl_newer_bad_version.yaml:3:17: 'nccl' must be an NCCL version", 1);
    th_says("predict -t build/test_nccl_newer_bad_version.yaml -c allreduce -s 1MiB", 1, "not '2.17.3'", 1);
    f = fopen(path, "w");                    /* the knob in a file: its value named once, not twice */
    cr_assert_not_null(f);
    fputs("name: bad-version\nnccl_version: 9.99\nnodes:\n  - {name: \"g[0-1]\"}\n  - {name: sw, kind: switch}\n"
          "links:\n  - {a: \"g[0-1]\", b: sw, bw: 1GB/s, latency: 1us}\n", f);
    fclose(f);
    th_says("predict -t build/test_nccl_newer_bad_version.yaml -c allreduce -s 1MiB", 1, "not '9.99'", 1);
    th_says("predict -t build/test_nccl_newer_bad_version.yaml -c allreduce -s 1MiB", 1, "not '9.99', not", 0);
    remove(path);
}

/* plan on a GB200 NVL72 shows the rack as NCCL's node (one NVLink domain,
 * the clique) and NVLS as NCCL sets it up on Blackwell: 32 heads
 * (search.cc, NCCL_MAX_NVLS_ARITY), 24 channels on one domain from 2.27
 * (nvls.cc NVLS_NCHANNELS_SM100_NVL), 32 in 2.26.6 (NVLS_NCHANNELS_SM100),
 * 32 on two racks with 400 Gb/s NICs and 24 on four (2.30.3's
 * ncclNvlsTreeSm100Tuning); an H100 box 8 heads and 16 channels. */
Test(nccl_newer, plan_shows_the_clique_nvls_heads_and_channels) {
    th_says("plan -t gb200-nvl72", 0, "NVLink domains: 1 domains, min ranks per domain: 72", 1);
    th_says("plan -t gb200-nvl72", 0, "multi-node NVLink clique (MNNVL)", 1);
    th_says("plan -t gb200-nvl72", 0, "NVLS comm headRank 0 nHeads 32 nvlsRanks 72", 1);
    th_says("plan -t gb200-nvl72", 0, "NVLS tuning: nChannels 24 chunkSize 131072", 1);
    th_says("plan -t gb200-nvl72 --set nccl_version=2.26.6", 0, "NVLS tuning: nChannels 32 ", 1);
    th_says("plan -t gb200-nvl72 --set racks=2", 0, "NVLS tuning: nChannels 32 chunkSize 131072 treeMaxChunkSize 65536", 1);
    th_says("plan -t gb200-nvl72 --set racks=4", 0, "NVLS tuning: nChannels 24 chunkSize 131072 treeMaxChunkSize 131072", 1);
    th_says("plan -t hgx-h100", 0, "NVLS comm headRank 0 nHeads 8 nvlsRanks 8", 1);
    th_says("plan -t hgx-h100", 0, "NVLS tuning: nChannels 16 ", 1);
}

/* -a nccl in the simulator runs first the candidate with the lowest closed
 * form and then skips those whose formula's half is above its time (sim/
 * run.c, simulate_lowest): the answer stays the fastest of every protocol's
 * own run, here on 2 and 3 GB200 racks, small (LL wins) and large (NVLSTree
 * on Simple wins). */
static double sim_time(const char *args) {
    char *out, cmd[256];
    snprintf(cmd, sizeof cmd, "sim %s --json", args);
    cr_assert_eq(th_cli(cmd, &out, 1), 0, "%s: %s", cmd, out);
    double x = th_json_num(out, "time_s");
    free(out);
    return x;
}

/* Each case under --proto auto answers its fastest protocol's own run. */
static void expect_auto_is_the_fastest(const char *const *cases, int n) {
    for (int i = 0; i < n; i++) {
        char args[256];
        double each = INFINITY;
        const char *protos[] = {"ll", "ll128", "simple"};
        for (int k = 0; k < 3; k++) {
            snprintf(args, sizeof args, "%s --proto %s", cases[i], protos[k]);
            double x = sim_time(args);
            if (x < each) each = x;
        }
        cr_expect_eq(sim_time(cases[i]), each, "%s: auto %.17g, the fastest protocol's own run %.17g", cases[i],
                     sim_time(cases[i]), each);
    }
}

Test(nccl_newer, sim_skips_only_what_cannot_win) {
    const char *cases[] = {"-t gb200-nvl72 --set racks=2 -c allreduce -a nccl -s 64KiB",
                           "-t gb200-nvl72 --set racks=3 -c allreduce -a nccl -s 64MiB",
                           "-t cluster-h100 -c allreduce -a nccl -s 1MiB"};
    expect_auto_is_the_fastest(cases, 3);
}

/* A named row under --proto auto runs the protocol with the lowest formula
 * first and the others give up once their clock passes its time (sim/
 * answer/run.c, give_up_at): the answer and its run are the fastest
 * protocol's own, here where Simple wins (a 1 GiB ring on 8 Polaris nodes:
 * LL, at twice its time, stops halfway), where LL wins (8 B) and with
 * -a auto. */
Test(nccl_newer, a_named_row_gives_up_only_what_cannot_win) {
    const char *cases[] = {"-t polaris --set nodes=8 -c allreduce -a ring -s 1GiB",
                           "-t polaris --set nodes=8 -c allreduce -a ring -s 8",
                           "-t cluster-h100 --set nodes=2 -c allgather -a ring -s 4MiB",
                           "-t hgx-h100 -c allreduce -a auto -s 64KiB"};
    expect_auto_is_the_fastest(cases, 4);
}

/* NCCL's own model of its symmetric kernels (src/sym_kernels.cc, 2.30.7),
 * worked by hand for 8 Blackwell GPUs with multimem: 1 GiB all-reduce runs
 * AllReduce_RSxLDMC_AGxSTMC on 3 blocks (the fewest within 2.5 % of its 4),
 * 19.5 + 1.125 GiB / 1000 "GB/s" (2^30 B / 1e6 us) - 1 = 1143.7 us; 1 KiB
 * the multimem LL one-shot (busMultiplier 1.1 "to beat non-MC LL") on 2
 * blocks, 11.5 us; without multimem the plain LL; none before Hopper. And
 * --model nccl answers with it where the buffers are registered. */
Test(nccl_newer, symmetric_kernels_own_model) {
    const char *k = NULL;
    int blocks = 0;
    double t = tuning_sym_time(ARCH_BLACKWELL, 8, COLL_ALLREDUCE, 1ull << 30, 1, 0, &k, &blocks);
    cr_expect_str_eq(k, "AllReduce_RSxLDMC_AGxSTMC");
    cr_expect_eq(blocks, 3);
    cr_expect(fabs(t - 1143.7e-6) < 0.5e-6, "%.9g", t);
    t = tuning_sym_time(ARCH_BLACKWELL, 8, COLL_ALLREDUCE, 1024, 1, 0, &k, &blocks);
    cr_expect_str_eq(k, "AllReduce_AGxLLMC_R");
    cr_expect_eq(blocks, 2);
    cr_expect(t > 11.4e-6 && t < 11.6e-6, "%.9g", t);
    tuning_sym_time(ARCH_BLACKWELL, 8, COLL_ALLREDUCE, 1024, 0, 0, &k, &blocks);
    cr_expect_str_eq(k, "AllReduce_AGxLL_R");
    cr_expect_lt(tuning_sym_time(ARCH_AMPERE, 8, COLL_ALLREDUCE, 1024, 0, 0, &k, &blocks), 0);
    th_says("plan -t hgx-b200 --set registered=true --sizes 1KiB,1GiB", 0, "nvls/Simple 1.14368 ms", 1);
}

/* NVLSTree's loops under -a nccl are cut on the channels `plan` prints
 * (view_nvls: nvls.cc's NVLS_NCHANNELS_SM90 16 on Hopper, SM100's 32 across
 * Blackwell domains in 2.25-2.30.2, 24 from 2.30.3 with 400 Gb/s NICs) and NVLSTree's largest chunk: a loop moves
 * channels x heads chunks, so the steps are the size over that, at most
 * 1 MiB / g. Before, Blackwell was cut on Hopper's 16. */
Test(nccl_newer, nvlstree_loops_follow_plans_channels) {
    static const char *const machines[][2] = {{"topologies/cluster-h100.yaml", "nodes=4"},
                                              {"topologies/cluster-b200.yaml", "nodes=4"},
                                              {"topologies/cluster-b200.yaml", "nodes=4,nccl_version=2.26.6"}};
    static const int want_channels[] = {16, 24, 32};   /* 2.30.3+: 24 with 400 Gb/s NICs (ncclNvlsTreeSm100Tuning) */
    for (int k = 0; k < 3; k++) {
        topo_t *t = th_load(machines[k][0], machines[k][1]);
        int p = topo_whole_ranks(t), g = topo_params_c(t)->group_size;
        tuning_machine_t m = {.nranks = p, .nnodes = p / g, .arch = (arch_t)topo_params_c(t)->arch};
        view_nvls_t x;
        view_nvls(t, &m, &x);
        cr_expect_eq(x.channels, want_channels[k], "%s %s: %d channels", machines[k][0], machines[k][1], x.channels);
        uint64_t n = 1ull << 30;
        run_req_t q = {.coll = COLL_ALLREDUCE, .algo = "nvlstree", .bytes = n, .proto = PROTO_SIMPLE, .predict = 1,
                       .cut = RUN_CUT_SIZED};
        run_out_t o;
        baton_err_t e = {0};
        cr_assert_eq(run_collective(t, &q, &o, &e), 0, "%s", e.msg);
        uint64_t ops = (uint64_t)x.channels * (uint64_t)graph_node_nics(t), loops = (n + ops * x.tree_chunk - 1) / (ops * x.tree_chunk);
        uint64_t most = (1u << 20) / (uint64_t)g;
        cr_expect_eq((uint64_t)o.nccl_steps, loops < most ? loops : most, "%s %s: %d steps, %llu loops of %d x %d x %d B",
                     machines[k][0], machines[k][1], o.nccl_steps, (unsigned long long)loops, x.channels,
                     graph_node_nics(t), x.tree_chunk);
        engine_result_free(&o.eng);
        topo_free(t);
    }
}
