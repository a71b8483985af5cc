/* test_tuning.c - NCCL's own cost model (sim/nccl/tuning.h, sim/nccl/plan.h)
 * against the numbers worked by hand from NCCL 2.30.7's tables
 * (docs/reference/nccl.md section 1.8), and on the machines. */
#include <criterion/criterion.h>
#include <string.h>

#include "../sim/nccl/tuning.h"
#include "../sim/answer/run.h"
#include "../sim/nccl/plan.h"
#include "../topologies/topo_yaml.h"
#include "helpers.h"

static tuning_machine_t machine(int ranks, int nodes, int nvlink) {
    return (tuning_machine_t){.nranks = ranks, .nnodes = nodes, .arch = ARCH_AMPERE, .nvlink = nvlink, .ll128 = 1,
                              .nchannels = 12, .bw = 20};
}

#define LAT(m, a, p) tuning_latency_us(&(m), COLL_ALLREDUCE, TUNING_##a, PROTO_##p)

/* Section 1.8, to 1 % (they are exact sums of the tables' numbers). */
Test(tuning, latencies_worked_by_hand) {
    tuning_machine_t nv = machine(8, 1, 1), pci = machine(8, 1, 0), two = machine(16, 2, 1);
    cr_expect_float_eq(LAT(nv, RING, LL), 15.0, 0.15);
    cr_expect_float_eq(LAT(nv, RING, LL128), 40.6, 0.406);
    cr_expect_float_eq(LAT(nv, RING, SIMPLE), 56.0, 0.56);
    cr_expect_float_eq(LAT(nv, TREE, LL), 15.2, 0.152);
    cr_expect_float_eq(LAT(nv, TREE, LL128), 31.5, 0.315);
    cr_expect_float_eq(LAT(nv, TREE, SIMPLE), 64.4, 0.644);
    cr_expect_float_eq(LAT(nv, NVLS, SIMPLE), 25.0, 0.25);
    cr_expect_float_eq(LAT(pci, RING, LL), 20.6, 0.206);
    cr_expect_float_eq(LAT(pci, RING, SIMPLE), 88.2, 0.882);
    cr_expect_float_eq(LAT(pci, TREE, LL), 20.8, 0.208);
    cr_expect_float_eq(LAT(two, RING, LL), 40.0, 0.4);
    cr_expect_float_eq(LAT(two, TREE, LL), 25.2, 0.252);
    cr_expect_float_eq(LAT(two, RING, SIMPLE), 131.6, 1.316);
}

/* Bandwidths (section 1.4): 8 x A100, 12 channels at 20 GB/s: Ring Simple
 * busBw 240, algBw 240 x 8/14; LL half of it under llMaxBw; Tree capped per
 * channel and halved; the plateau correction across nodes. */
Test(tuning, bandwidths_and_corrections) {
    tuning_machine_t m = machine(8, 1, 1);
    uint64_t n = 1ull << 30;
    double alg = 240.0 * 8 / 14;
    cr_expect_float_eq(tuning_time(&m, COLL_ALLREDUCE, TUNING_RING, PROTO_SIMPLE, n), (56.0 + n / (1000 * alg)) * 1e-6, 1e-12);
    double ll = 87.7 * 8 / 14;      /* 0.5 x 240 = 120 > llMaxBw (Ampere, 1 node) 87.7: capped */
    cr_expect_float_eq(tuning_time(&m, COLL_ALLREDUCE, TUNING_RING, PROTO_LL, n), (15.0 + n / (1000 * ll)) * 1e-6, 1e-12);
    uint64_t small = 64 << 10;       /* log2(64 KiB / 64) = 10: Simple's factor .6 */
    double tb = 0.92 * 240 * 0.5 * 0.6;
    cr_expect_float_eq(tuning_time(&m, COLL_ALLREDUCE, TUNING_TREE, PROTO_SIMPLE, small), (64.4 + small / (1000 * tb)) * 1e-6,
                       1e-12);
    tuning_machine_t two = machine(16, 2, 1);
    double big = 240.0 * 16 / 30;
    cr_expect_float_eq(tuning_time(&two, COLL_ALLREDUCE, TUNING_RING, PROTO_SIMPLE, n), (131.6 * 1.4 + n / (1000 * big)) * 1e-6,
                       1e-12, "the plateau correction: latency x 1.4 on Ampere");
    cr_expect_lt(tuning_time(&m, COLL_BROADCAST, TUNING_TREE, PROTO_SIMPLE, n), 0, "broadcast is Ring only");
    cr_expect_lt(tuning_time(&m, COLL_ALLREDUCE, TUNING_NVLS, PROTO_SIMPLE, n), 0, "no NVLS without a reducing switch");
    tuning_algo_t a = TUNING_TREE;
    proto_t p = PROTO_NONE;
    double t;
    cr_assert_eq(tuning_pick(&m, COLL_ALLREDUCE, 8, 0, &a, &p, &t), 0);
    cr_expect(a == TUNING_RING && p == PROTO_LL, "8 B: Ring LL (15.0 us) beats Tree LL (15.2 us): %s/%s",
              tuning_algo_name(a), proto_name(p));
    cr_assert_eq(tuning_pick(&m, COLL_ALLREDUCE, n, 0, &a, &p, &t), 0);
    cr_expect(a == TUNING_RING && p == PROTO_SIMPLE, "1 GiB: Ring Simple: %s/%s", tuning_algo_name(a), proto_name(p));
}

/* On the DGX-1, NCCL's model reads the six NVLink rings at NCCL's 20 GB/s
 * a link (the numbers NCCL_DEBUG=INFO prints for that box: 6 rings, bw 20). */
Test(tuning, dgx1_graph_as_nccl_sees_it) {
    baton_err_t e = {0};
    topo_t *t = th_load("topologies/dgx1-v100.yaml", NULL);
    tuning_machine_t m;
    algo_opts_t o = {0};
    cr_assert_eq(view_machine(t, &o, &m, &e), 0, "%s", e.msg);
    cr_expect_eq(m.nchannels, 6);
    cr_expect_float_eq(m.bw, 20.0, 1e-9, "%g GB/s a channel", m.bw);
    cr_expect_eq(m.arch, ARCH_VOLTA);
    cr_expect_eq(m.nvlink, 1);
    cr_expect_eq(m.nnodes, 1);
    run_req_t q = {.coll = COLL_ALLREDUCE, .algo = "nccl", .bytes = 8, .proto = RUN_PROTO_AUTO};
    run_out_t out;
    cr_assert_eq(plan_run(t, &q, &out, &e), 0, "%s", e.msg);
    cr_expect_float_eq(out.time_s, 15.0e-6 + 8 / (1000 * 39.0 * 8 / 14) * 1e-6, 1e-12, "Ring LL, Volta's LL cap");
    cr_expect_str_eq(out.algo->name, "ring");
    topo_free(t);
}

/* The command line: validate --model nccl runs; calibrating it is refused. */
Test(tuning, validate_model_nccl) {
    char *out;
    const char *log = " --nccl-tests validate/logs/nccl-tests/a100x8_nvswitch_oci_bmgpu48_allreduce.txt";
    char args[512];
    snprintf(args, sizeof args, "validate -t topologies/hgx-a100.yaml --model nccl --json%s", log);
    cr_assert_eq(th_cli(args, &out, 1), 0, "%s", out);
    cr_expect(strstr(out, "\"mape_pct\":") != NULL, "%s", out);
    free(out);
    snprintf(args, sizeof args, "calibrate -t topologies/hgx-a100.yaml --model nccl -o build/x.yaml%s", log);
    cr_expect_eq(th_cli(args, &out, 0), 1);
    cr_expect(strstr(out, "nothing to fit") != NULL, "%s", out);
    free(out);
}

/* NCCL's protocol rules under -a nccl: NVLS runs Simple only (hgx-h100,
 * every size), and LL128 needs NVLink inside the node (never on a PCIe box). */
Test(tuning, nccl_protocol_rules) {
    baton_err_t e = {0};
    const char *files[] = {"topologies/hgx-h100.yaml", "topologies/pcie-8gpu.yaml"};
    for (int f = 0; f < 2; f++) {
        topo_t *t = th_load(files[f], NULL);
        for (uint64_t n = 8; n <= (1ull << 30); n *= 4) {
            run_req_t q = {.coll = COLL_ALLREDUCE, .algo = "nccl", .bytes = n, .proto = RUN_PROTO_AUTO, .predict = 1};
            run_out_t o;
            cr_assert_eq(run_collective(t, &q, &o, &e), 0, "%s", e.msg);
            if (strcmp(o.algo->name, "nvls") == 0) cr_expect_eq(o.proto, PROTO_SIMPLE, "%s %llu B: nvls/%s", files[f],
                                                                  (unsigned long long)n, proto_name(o.proto));
            cr_expect(f == 0 || o.proto != PROTO_LL128, "%s %llu B: LL128 on PCIe", files[f], (unsigned long long)n);
        }
        if (f == 1) {
            run_req_t q = {.coll = COLL_ALLREDUCE, .algo = "ring", .bytes = 1 << 20, .proto = PROTO_LL128, .predict = 1};
            run_out_t o;
            cr_expect_eq(run_collective(t, &q, &o, &e), 0, "a named protocol is still a what-if: %s", e.msg);
        }
        topo_free(t);
    }
}

/* Where the search had nothing to choose, NCCL's model takes the channels
 * NCCL's search would: 8 x A100 at NCCL's 240 GB/s a GPU: 12 x 20 GB/s. */
Test(tuning, flat_node_channels_as_nccl) {
    baton_err_t e = {0};
    topo_t *t = th_load("topologies/hgx-a100.yaml", NULL);
    tuning_machine_t m;
    algo_opts_t o = {0};
    cr_assert_eq(view_machine(t, &o, &m, &e), 0, "%s", e.msg);
    cr_expect_eq(m.nchannels, 12);
    cr_expect_float_eq(m.bw, 20.0, 1e-9);
    topo_free(t);
}

/* NCCL counts links at its rates of their line rate: an efficiency the
 * machine file or a calibration sets on a class is baton's, not NCCL's, so
 * it changes nothing NCCL's model sees (mi300x's xGMI at 0.82: still six
 * channels at 20.6/25 of 64 GB/s). */
Test(tuning, nccl_model_ignores_class_efficiency) {
    baton_err_t e = {0};
    topo_t *t = th_load("topologies/mi300x.yaml", NULL);
    cr_expect_float_eq(topo_class_efficiency(t, "gpu-gpu"), 0.82, 1e-12);
    tuning_machine_t m, m2;
    algo_opts_t o = {0};
    cr_assert_eq(view_machine(t, &o, &m, &e), 0, "%s", e.msg);
    cr_expect_float_eq(m.bw, 64.0 * 20.6 / 25, 1e-9, "%g GB/s a channel", m.bw);
    cr_assert_eq(topo_set_class_efficiency(t, "gpu-gpu", 0.5, &e), 0, "%s", e.msg);
    cr_assert_eq(view_machine(t, &o, &m2, &e), 0, "%s", e.msg);
    cr_expect_float_eq(m2.bw, m.bw, 1e-9);
    cr_expect_eq(m2.nchannels, m.nchannels);
    topo_free(t);
}

/* NVLS across nodes needs CollNet (a fabric that reduces): NCCL's model then
 * takes the lower of the in-node NVLS bandwidth and the network's, and
 * NVLink's plus the network's NVLS latency without the base (section 1.4,
 * 1.5): 32 ranks on 4 Hopper nodes, 16 NVLS channels, 25 GB/s each to the
 * switch, 20 through the network: intraBw 25 x 0.85 x 15/16 x 2 = 39.84,
 * busBw 16 x min(39.84, 20) = 320, algBw 320 x 32 / 62; latency 25 + 18 us.
 * Without CollNet NCCL's loop skips it (NVLSTree is its way across); on
 * cluster-h100 with `sharp=true` view_machine says CollNet, without it not. */
Test(tuning, nvls_across_nodes_with_collnet) {
    tuning_machine_t m = {.nranks = 32, .nnodes = 4, .arch = ARCH_HOPPER, .nvlink = 1, .ll128 = 1, .nchannels = 8,
                          .bw = 40, .nvls_channels = 16, .nvls_bw = 25, .collnet = 1, .nvls_inter = 20};
    uint64_t n = 1ull << 30;
    double bw = 320.0 * 32 / 62, want = (25 + 18 + (double)n / (1000 * bw)) * 1e-6;
    cr_expect_float_eq(tuning_time(&m, COLL_ALLREDUCE, TUNING_NVLS, PROTO_SIMPLE, n), want, want * 1e-12);
    m.nvls_inter = 100;                                  /* the network faster: NVLink binds */
    bw = 16 * 25 * 0.85 * 15.0 / 16 * 2 * 32 / 62;
    want = (43 + (double)n / (1000 * bw)) * 1e-6;
    cr_expect_float_eq(tuning_time(&m, COLL_ALLREDUCE, TUNING_NVLS, PROTO_SIMPLE, n), want, want * 1e-12);
    cr_expect_lt(tuning_time(&m, COLL_ALLGATHER, TUNING_NVLS, PROTO_SIMPLE, n), 0, "all-gather: not across nodes");
    m.collnet = 0;
    cr_expect_lt(tuning_time(&m, COLL_ALLREDUCE, TUNING_NVLS, PROTO_SIMPLE, n), 0, "no CollNet: one node only");
    for (int sharp = 0; sharp < 2; sharp++) {
        const char *sets[] = {"nodes=4", sharp ? "sharp=true" : "sharp=false"};
        topo_t *t = topo_yaml_load("topologies/cluster-h100.yaml", sets, 2, NULL);
        cr_assert_not_null(t);
        algo_opts_t o = {0};
        cr_assert_eq(view_machine(t, &o, &m, NULL), 0);
        cr_expect_eq(m.collnet, sharp);
        cr_expect_eq(m.nvls_channels, 16, "NVLS in each node (NVLSTree's too)");
        run_req_t q = {.coll = COLL_ALLREDUCE, .algo = "nccl", .bytes = n, .proto = RUN_PROTO_AUTO};
        run_out_t out;
        cr_assert_eq(plan_run(t, &q, &out, NULL), 0);
        if (sharp) cr_expect_str_eq(out.algo->name, "collnet");
        else cr_expect_str_neq(out.algo->name, "collnet");
        topo_free(t);
    }
}

/* NVLSTree (NCCL 2.30.7's tuning.cc): NVLS in each node, a tree between
 * them, Simple all-reduce only, two nodes or more. Per NVLS channel the
 * lower of intraBw (bwIntra x efficiency x (nCh - 1)/nCh x 2), interBw
 * (bwInter, x 2 on two nodes) and Hopper's perChMaxNVLSTreeBw (57.7 on two
 * nodes, 45.5 on more); algBw = nCh x that x nRanks / nsteps; latency
 * NVLink's 25 + 2 log2(nNodes) x the network's 20.9, no base. 16 ranks on
 * two nodes, 16 channels at 23.2 GB/s to the switch and 25 through the
 * network: min(36.975, 50, 57.7) x 16 x 16/30 GB/s, 66.8 us; on four nodes
 * (32 ranks) min(36.975, 25, 45.5) x 16 x 32/62, 108.6 us. The 2 x 8 H200
 * logs' top sizes (busbw up to 485 GB/s, above what their rings carry) are
 * NVLSTree's: --model nccl on cluster-h100 picks it from 64 MiB. */
Test(tuning, nvls_tree_across_nodes) {
    tuning_machine_t m = {.nranks = 16, .nnodes = 2, .arch = ARCH_HOPPER, .nvlink = 1, .ll128 = 1, .nchannels = 8,
                          .bw = 50, .nvls_channels = 16, .nvls_bw = 23.2, .nvls_inter = 25};
    uint64_t n = 1ull << 30;
    double bw2 = 23.2 * 0.85 * 15 / 16 * 2 * 16 * 16.0 / 30;
    cr_expect_float_eq(LAT(m, NVLS_TREE, SIMPLE), 66.8, 1e-9);
    cr_expect_float_eq(tuning_time(&m, COLL_ALLREDUCE, TUNING_NVLS_TREE, PROTO_SIMPLE, n), (66.8 + n / (1000 * bw2)) * 1e-6,
                       1e-15);
    cr_expect_lt(tuning_time(&m, COLL_ALLREDUCE, TUNING_NVLS_TREE, PROTO_LL128, n), 0, "Simple only");
    cr_expect_lt(tuning_time(&m, COLL_ALLGATHER, TUNING_NVLS_TREE, PROTO_SIMPLE, n), 0, "all-reduce only");
    m.nranks = 32, m.nnodes = 4;
    double bw4 = 25.0 * 16 * 32.0 / 62;
    cr_expect_float_eq(LAT(m, NVLS_TREE, SIMPLE), 25 + 2 * 2 * 20.9, 1e-9);
    cr_expect_float_eq(tuning_time(&m, COLL_ALLREDUCE, TUNING_NVLS_TREE, PROTO_SIMPLE, n),
                       (25 + 4 * 20.9 + n / (1000 * bw4)) * 1e-6, 1e-15);
    m.nranks = 8, m.nnodes = 1;
    cr_expect_lt(tuning_time(&m, COLL_ALLREDUCE, TUNING_NVLS_TREE, PROTO_SIMPLE, n), 0, "one node: NVLS itself");
    const char *sets[] = {"nodes=2"};
    topo_t *t = topo_yaml_load("topologies/cluster-h100.yaml", sets, 1, NULL);
    cr_assert_not_null(t);
    for (uint64_t b = 64ull << 20; b <= (16ull << 30); b <<= 2) {
        run_req_t q = {.coll = COLL_ALLREDUCE, .algo = "nccl", .bytes = b, .proto = RUN_PROTO_AUTO};
        run_out_t out;
        cr_assert_eq(plan_run(t, &q, &out, NULL), 0);
        cr_expect_str_eq(out.algo->name, "nvlstree", "%llu B", (unsigned long long)b);
    }
    topo_free(t);
}

/* CollNetDirect (section 1.4, 1.5): Simple all-reduce only, with a CollNet
 * plugin: busBw = nCh x bwIntra / factor (factor = ppn / nCh, halved towards
 * 1; Hopper x 0.85), algBw half of it; latency 2 (intraLat + (ppn - 1) 0.4) +
 * interLat, no base: 32 ranks on 4 Ampere nodes, 8 channels at 25 GB/s:
 * 200 GB/s bus, 100 algorithm, 2 (3.7 + 2.8) + 31 = 44 us. 4 channels:
 * factor 2 -> 1.5. On cluster-a100 with SHARP (no NVLS) NCCL's model names
 * collnet_ring at 1 GiB. */
Test(tuning, collnet_direct_worked_by_hand) {
    tuning_machine_t m = {.nranks = 32, .nnodes = 4, .arch = ARCH_AMPERE, .nvlink = 1, .ll128 = 1, .nchannels = 8,
                          .bw = 25, .collnet = 1};
    uint64_t n = 1ull << 30;
    double want = (44 + (double)n / (1000 * 100.0)) * 1e-6;
    cr_expect_float_eq(tuning_time(&m, COLL_ALLREDUCE, TUNING_COLLNET_DIRECT, PROTO_SIMPLE, n), want, want * 1e-12);
    cr_expect_float_eq(tuning_latency_us(&m, COLL_ALLREDUCE, TUNING_COLLNET_DIRECT, PROTO_SIMPLE), 44.0, 1e-9);
    m.nchannels = 4;
    want = (44 + (double)n / (1000 * (4 * 25 / 1.5 * 0.5))) * 1e-6;
    cr_expect_float_eq(tuning_time(&m, COLL_ALLREDUCE, TUNING_COLLNET_DIRECT, PROTO_SIMPLE, n), want, want * 1e-12);
    m.arch = ARCH_HOPPER;
    want = (44 + (double)n / (1000 * (4 * 25 / 1.5 * 0.85 * 0.5))) * 1e-6;
    cr_expect_float_eq(tuning_time(&m, COLL_ALLREDUCE, TUNING_COLLNET_DIRECT, PROTO_SIMPLE, n), want, want * 1e-12);
    cr_expect_lt(tuning_time(&m, COLL_ALLREDUCE, TUNING_COLLNET_DIRECT, PROTO_LL, n), 0, "Simple only");
    cr_expect_lt(tuning_time(&m, COLL_ALLGATHER, TUNING_COLLNET_DIRECT, PROTO_SIMPLE, n), 0, "all-reduce only here");
    m.collnet = 0;
    cr_expect_lt(tuning_time(&m, COLL_ALLREDUCE, TUNING_COLLNET_DIRECT, PROTO_SIMPLE, n), 0, "no CollNet plugin");
    const char *sets[] = {"nodes=16", "sharp=true"};
    topo_t *t = topo_yaml_load("topologies/cluster-a100.yaml", sets, 2, NULL);
    cr_assert_not_null(t);
    run_req_t q = {.coll = COLL_ALLREDUCE, .algo = "nccl", .bytes = n, .proto = RUN_PROTO_AUTO};
    run_out_t out;
    cr_assert_eq(plan_run(t, &q, &out, NULL), 0);
    cr_expect_str_eq(out.algo->name, "collnet_ring");
    topo_free(t);
}
