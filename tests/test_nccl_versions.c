/* test_nccl_versions.c - NCCL's own model (sim/nccl/tuning.c) follows the
 * machine's NCCL version where NCCL's src/graph/tuning.cc changed a table or
 * formula between 2.18.1 and 2.30.7 (NCCL's git tags; tuning.h's
 * TUNING_*_SINCE). One test per changed rule: on each side of the boundary the
 * model's latency or bandwidth equals the number worked by hand from that
 * release's tuning.cc. Bandwidths are read at 1 GiB, where no tree correction
 * applies (treeCorrectionFactor stops at 256-512 MiB). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sim/nccl/tuning.h"
#include "helpers.h"

#define GIB (1ull << 30)

static tuning_machine_t at(arch_t arch, int ranks, int nodes, int nch, double bw, int version) {
    return (tuning_machine_t){.nranks = ranks, .nnodes = nodes, .arch = arch, .nvlink = 1, .ll128 = 1,
                              .nchannels = nch, .bw = bw, .version = version};
}

/* The model's algorithm bandwidth (GB/s) for 1 GiB: bytes over (time - latency). */
static double algbw(const tuning_machine_t *m, coll_t c, tuning_algo_t a, proto_t p) {
    double t = tuning_time(m, c, a, p, GIB) * 1e6, lat = tuning_latency_us(m, c, a, p);
    cr_assert_gt(t, 0, "%s/%d runs", tuning_algo_name(a), (int)p);
    return (double)GIB / (1000.0 * (t - lat));
}

#define LAT(m, c, a, p) tuning_latency_us(&(m), COLL_##c, TUNING_##a, PROTO_##p)
#define BW(m, c, a, p) algbw(&(m), COLL_##c, TUNING_##a, PROTO_##p)

/* Tree/Simple's latency, 2 nodes x 4 GPUs on NVLink: base + 2 ((ppn-1) intra
 * + log2(nNodes) inter). 2.18.1 and 2.19.1-2.22.3: base 0, hwLat 28 on every
 * hop: 2 (3 x 28 + 28) = 224; 2.18.3: 4 (NVLink), 14 (NET): 2 (12 + 14) = 52;
 * 2.23.4: base 8.4 + 52 = 60.4 (tuning.cc of v2.18.1-1, v2.18.3-1, v2.19.1-1,
 * v2.23.4-1). */
Test(nccl_versions, tree_simple_latency) {
    int v[] = {21801, 21803, 21806, 21901, 22203, 22304, 23007};
    double want[] = {224, 52, 52, 224, 224, 60.4, 60.4};
    for (int i = 0; i < 7; i++) {
        tuning_machine_t m = at(ARCH_AMPERE, 8, 2, 4, 20, v[i]);
        cr_expect_float_eq(LAT(m, ALLREDUCE, TREE, SIMPLE), want[i], 1e-9, "version %d", v[i]);
    }
    tuning_machine_t pci = at(ARCH_AMPERE, 8, 1, 4, 20, 21803);   /* 2.18.3's PCI: 6; 2.23.4's: 4 */
    pci.nvlink = 0;
    cr_expect_float_eq(LAT(pci, ALLREDUCE, TREE, SIMPLE), 2 * 7 * 6.0, 1e-9);
    pci.version = 22304;
    cr_expect_float_eq(LAT(pci, ALLREDUCE, TREE, SIMPLE), 8.4 + 2 * 7 * 4.0, 1e-9);
}

/* Ring/LL's bus share: 2.20.5 x 1/4 for all-reduce (and across nodes), x 1/3
 * for all-gather on one node; 2.21.5 x 1/2 (tuning.cc of v2.20.5-1, v2.21.5-1).
 * One node of 8, 2 channels x 20 GB/s: bus 40 -> 10 / 13.33 / 20, under
 * llMaxBws' Ampere 87.7; all-reduce's algBw x 8/14, all-gather's x 8/7. */
Test(nccl_versions, ring_ll_share) {
    tuning_machine_t m = at(ARCH_AMPERE, 8, 1, 2, 20, 22005);
    cr_expect_float_eq(BW(m, ALLREDUCE, RING, LL), 10.0 * 8 / 14, 1e-6);
    cr_expect_float_eq(BW(m, ALLGATHER, RING, LL), 40.0 / 3 * 8 / 7, 1e-6);
    m.version = 22105;
    cr_expect_float_eq(BW(m, ALLREDUCE, RING, LL), 20.0 * 8 / 14, 1e-6);
    cr_expect_float_eq(BW(m, ALLGATHER, RING, LL), 20.0 * 8 / 7, 1e-6);
    tuning_machine_t two = at(ARCH_AMPERE, 8, 2, 2, 20, 22005);   /* across nodes: all-gather x 1/4 too */
    cr_expect_float_eq(BW(two, ALLGATHER, RING, LL), 10.0 * 8 / 7, 1e-6);
}

/* Ring all-reduce's network steps: 2 nNodes until 2.22.3, 2 (nNodes - 1) from
 * 2.23.4. 2 nodes x 4 GPUs, Ring/Simple: 8.4 + (14 - k) x 3.4 (NVLink; the
 * network overhead 1 x 3 is below it) + k x 14: k = 4: 98.4, k = 2: 77.2
 * (tuning.cc of v2.22.3-1, v2.23.4-1). */
Test(nccl_versions, ring_network_steps) {
    tuning_machine_t m = at(ARCH_AMPERE, 8, 2, 4, 20, 22203);
    cr_expect_float_eq(LAT(m, ALLREDUCE, RING, SIMPLE), 8.4 + 10 * 3.4 + 4 * 14, 1e-9);
    m.version = 22304;
    cr_expect_float_eq(LAT(m, ALLREDUCE, RING, SIMPLE), 8.4 + 12 * 3.4 + 2 * 14, 1e-9);
    cr_expect_float_eq(LAT(m, ALLGATHER, RING, SIMPLE), 8.4 + 6 * 3.4 + 1 * 14, 1e-9);   /* nNodes - 1 in both */
    m.version = 22203;
    cr_expect_float_eq(LAT(m, ALLGATHER, RING, SIMPLE), 8.4 + 6 * 3.4 + 1 * 14, 1e-9);
}

/* One GPU a node, from 2.23.4: every algorithm's network latency is the
 * tree's row, and Ring/LL128 keeps x .92 (before x .7 at ppn < 2). 4 nodes x 1,
 * all-gather Ring/LL: 6.6 + 3 x 2.7 (ring's row) = 14.7, then 6.6 + 3 x 5.0
 * = 21.6; Ring/LL128 bus 2 x 20 x .7 = 28, then 36.8 (under 2 x 20), algBw
 * x 4/3 (tuning.cc of v2.22.3-1, v2.23.4-1). */
Test(nccl_versions, one_gpu_a_node) {
    tuning_machine_t m = at(ARCH_AMPERE, 4, 4, 2, 20, 22203);
    cr_expect_float_eq(LAT(m, ALLGATHER, RING, LL), 6.6 + 3 * 2.7, 1e-9);
    cr_expect_float_eq(BW(m, ALLGATHER, RING, LL128), 28.0 * 4 / 3, 1e-6);
    m.version = 22304;
    cr_expect_float_eq(LAT(m, ALLGATHER, RING, LL), 6.6 + 3 * 5.0, 1e-9);
    cr_expect_float_eq(BW(m, ALLGATHER, RING, LL128), 36.8 * 4 / 3, 1e-6);
}

/* Hopper's per-channel caps at 4+ nodes: 2.18.1 perChMaxTreeBws 33.0 and one
 * LL128 cap a GPU (ll128MaxBwPerCh 36.7); 2.18.3 tree 36.0 and
 * perChMaxTreeLL128Bws 29.0. 4 nodes x 8, 2 channels x 40: Tree bus min(.92 x
 * 80, 2 x cap) = 66 / 72, Simple algBw half: 33 / 36; LL128 min(x 120/128,
 * 2 x cap) = 61.875 / 58, half (tuning.cc of v2.18.1-1, v2.18.3-1). */
Test(nccl_versions, hopper_caps_2_18_3) {
    tuning_machine_t m = at(ARCH_HOPPER, 32, 4, 2, 40, 21801);
    cr_expect_float_eq(BW(m, ALLREDUCE, TREE, SIMPLE), 33.0, 1e-6);
    cr_expect_float_eq(BW(m, ALLREDUCE, TREE, LL128), 66.0 * 120 / 128 / 2, 1e-6);
    m.version = 21803;
    cr_expect_float_eq(BW(m, ALLREDUCE, TREE, SIMPLE), 36.0, 1e-6);
    cr_expect_float_eq(BW(m, ALLREDUCE, TREE, LL128), 29.0, 1e-6);
}

/* llMaxBws' Hopper row (one node): 87.7 until 2.20.5, 141.0 from 2.21.5.
 * 8 x H100, 32 channels x 20: Tree bus min(.92 x 640, 32 x 38.7) = 588.8, LL
 * 588.8 / 3.8 = 154.9 capped, algBw half (tuning.cc of v2.20.5-1, v2.21.5-1). */
Test(nccl_versions, hopper_ll_cap) {
    tuning_machine_t m = at(ARCH_HOPPER, 8, 1, 32, 20, 22005);
    cr_expect_float_eq(BW(m, ALLREDUCE, TREE, LL), 87.7 / 2, 1e-6);
    m.version = 22105;
    cr_expect_float_eq(BW(m, ALLREDUCE, TREE, LL), 141.0 / 2, 1e-6);
}

/* Blackwell's rows: Hopper's before 2.25.1 (compCapIndex stops at Hopper),
 * 2 x Hopper's in 2.25-2.27, their own from 2.28.3. One node of 8, 2 channels
 * x 100: Tree bus min(184, 2 x cap), cap 38.7 / 77.4 / 70.0, Simple algBw half
 * (tuning.cc of v2.24.3-1, v2.25.1-1, v2.28.3-1). */
Test(nccl_versions, blackwell_rows) {
    int v[] = {22403, 22501, 22707, 22803, 23007};
    double cap[] = {38.7, 77.4, 77.4, 70.0, 70.0};
    for (int i = 0; i < 5; i++) {
        tuning_machine_t m = at(ARCH_BLACKWELL, 8, 1, 2, 100, v[i]);
        cr_expect_float_eq(BW(m, ALLREDUCE, TREE, SIMPLE), cap[i], 1e-6, "version %d", v[i]);
    }
}

/* Blackwell's Ring/LL128 cap: 2 x 36.7 until 2.28.9, 34.6 (two nodes) in
 * 2.29, 40.0 from 2.30.3. 2 nodes x 8, 2 channels x 100: min(.92 x 200, 2 x
 * cap), algBw x 16/30 (tuning.cc of v2.28.9-1, v2.29.2-1, v2.30.3-1). */
Test(nccl_versions, blackwell_ring_ll128) {
    int v[] = {22809, 22902, 23003};
    double cap[] = {73.4, 34.6, 40.0};
    for (int i = 0; i < 3; i++) {
        tuning_machine_t m = at(ARCH_BLACKWELL, 16, 2, 2, 100, v[i]);
        cr_expect_float_eq(BW(m, ALLREDUCE, RING, LL128), 2 * cap[i] * 16 / 30, 1e-6, "version %d", v[i]);
    }
}

static tuning_machine_t nvls(int ranks, int nodes, int version) {
    tuning_machine_t m = at(ARCH_HOPPER, ranks, nodes, 16, 20, version);
    m.nvls_channels = 16, m.nvls_bw = 20, m.nvls_inter = 10;
    return m;
}

/* NVLS and NVLSTree's latency: 2.18 a 23 us base, NVLSTree + 2 (nNodes - 1)
 * x 19; 2.19.1 no base, NVLink 23 + 2 log2(nNodes) x 14; 2.21.5 NVLink 25;
 * 2.29.2 network 20.9. NVLSTree on 2 nodes: 61, 51, 53, 66.8; NVLS on one
 * node: 23, 23, 25 (tuning.cc of v2.18.6-1, v2.19.1-1, v2.21.5-1, v2.29.2-1). */
Test(nccl_versions, nvls_latency) {
    int v[] = {21806, 21901, 22105, 22809, 22902};
    double tree[] = {23 + 2 * 19.0, 23 + 2 * 14.0, 25 + 2 * 14.0, 25 + 2 * 14.0, 25 + 2 * 20.9};
    double one[] = {23, 23, 25, 25, 25};
    for (int i = 0; i < 5; i++) {
        tuning_machine_t m = nvls(16, 2, v[i]), n1 = nvls(8, 1, v[i]);
        cr_expect_float_eq(LAT(m, ALLREDUCE, NVLS_TREE, SIMPLE), tree[i], 1e-9, "version %d", v[i]);
        cr_expect_float_eq(LAT(n1, ALLREDUCE, NVLS, SIMPLE), one[i], 1e-9, "version %d", v[i]);
    }
}

/* NVLS's bandwidth, one node of 8 H100, 16 NVLS channels x 20 GB/s: before
 * 2.28.3 bus 16 x 20 = 320, algBw x .75 (2.18.1) or x 5/6 (2.18.3-2.27);
 * from 2.28.3 16 x 20 x .85 x 15/16 x 2 = 510, x 8/14 (tuning.cc of v2.18.1-1,
 * v2.18.3-1, v2.27.7-1, v2.28.3-1). */
Test(nccl_versions, nvls_bandwidth) {
    int v[] = {21801, 21803, 22707, 22803};
    double want[] = {320 * .75, 320 * 5.0 / 6, 320 * 5.0 / 6, 510.0 * 8 / 14};
    for (int i = 0; i < 4; i++) {
        tuning_machine_t m = nvls(8, 1, v[i]);
        cr_expect_float_eq(BW(m, ALLREDUCE, NVLS, SIMPLE), want[i], 1e-6, "version %d", v[i]);
    }
}

/* NVLSTree's bandwidth before 2.28.3: 2.18 bwIntra (two nodes), x .70 nNodes
 * / (2 (nNodes - 1)); 2.19.1 min(bwIntra, bwInter), x 5/6. 2 nodes x 8, 16
 * channels, bwIntra 20, bwInter 10: 320 x .70 = 224; 160 x 5/6 (tuning.cc of
 * v2.18.6-1, v2.19.1-1). */
Test(nccl_versions, nvls_tree_bandwidth) {
    tuning_machine_t m = nvls(16, 2, 21806);
    cr_expect_float_eq(BW(m, ALLREDUCE, NVLS_TREE, SIMPLE), 320 * .70, 1e-6);
    m.version = 21901;
    cr_expect_float_eq(BW(m, ALLREDUCE, NVLS_TREE, SIMPLE), 160 * 5.0 / 6, 1e-6);
}

/* NVLS all-gather (one node): none in 2.18 (all-reduce only); 2.19.1-2.26
 * min(bwIntra, bwInter) = 20 a channel, as it is from 2.23.4 (no ratio);
 * 2.27.3 min(bwIntra 7/8, .9 bwInter) = 17.5 (tuning.cc of v2.18.6-1,
 * v2.26.6-1, v2.27.3-1). */
Test(nccl_versions, nvls_allgather) {
    tuning_machine_t m = nvls(8, 1, 21806);
    cr_expect_lt(tuning_time(&m, COLL_ALLGATHER, TUNING_NVLS, PROTO_SIMPLE, GIB), 0, "2.18: all-reduce only");
    m.version = 22606;
    cr_expect_float_eq(BW(m, ALLGATHER, NVLS, SIMPLE), 320.0, 1e-6);
    m.version = 22703;
    cr_expect_float_eq(BW(m, ALLGATHER, NVLS, SIMPLE), 16 * 17.5, 1e-6);
}

/* CollNetDirect's latency in 2.18: no base, 8 us in the node, 10.7 across,
 * 0.5 us arity; 2.19.1: 3.7, 31, 0.4. 2 nodes x 8: 2 (8 + 7 x .5) + 10.7 =
 * 33.7; 2 (3.7 + 7 x .4) + 31 = 44 (tuning.cc of v2.18.6-1, v2.19.1-1). */
Test(nccl_versions, collnet_latency) {
    tuning_machine_t m = nvls(16, 2, 21806);
    m.collnet = 1;
    cr_expect_float_eq(LAT(m, ALLREDUCE, COLLNET_DIRECT, SIMPLE), 2 * (8 + 7 * .5) + 10.7, 1e-9);
    m.version = 21901;
    cr_expect_float_eq(LAT(m, ALLREDUCE, COLLNET_DIRECT, SIMPLE), 2 * (3.7 + 7 * .4) + 31, 1e-9);
}

/* The first line of `baton predict ARGS -a nccl` names row `row`. */
static void picks(const char *args, const char *row) {
    char cmd[320], *out;
    snprintf(cmd, sizeof cmd, "predict %s -a nccl", args);
    cr_assert_eq(th_cli(cmd, &out, 0), 0, "%s: %s", cmd, out);
    char *nl = strchr(out, '\n');
    if (nl) *nl = '\0';
    cr_expect(strstr(out, row) != NULL, "%s: want '%s' in '%s'", cmd, row, out);
    free(out);
}

/* On Polaris (nccl_tuner: NCCL's own pick), 2 nodes, 32 KiB all-reduce:
 * NCCL 2.22 counts 4 network steps in the ring's latency and picks its tree,
 * 2.23 counts 2 and picks the ring (the ring_network_steps rule). */
Test(nccl_versions, polaris_pick_switches_at_2_23) {
    picks("-t polaris --set nodes=2 --set nccl_version=2.22.3 -c allreduce -s 32KiB", "allreduce nccltree");
    picks("-t polaris --set nodes=2 --set nccl_version=2.23.4 -c allreduce -s 32KiB", "allreduce ring");
}

/* `plan` names whose tables its right-hand column is, where the machine names its NCCL. */
Test(nccl_versions, plan_names_the_tables) {
    th_says("plan -t polaris --set nodes=2 --set nccl_version=2.18 --sizes 32KiB", 0,
            "NCCL's model (NCCL 2.18.0's tables) sees 2 node(s)", 1);
    th_says("plan -t polaris --set nodes=2 --sizes 32KiB", 0, "NCCL's model sees 2 node(s)", 1);
}
