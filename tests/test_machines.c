/* test_machines.c - real machines: the shipped topologies, the topology
 * language's parameters, routing, contention models and fair sharing.
 * In-network reduction (NVLS, NVLSTree, CollNet) is in
 * test_machines_reduce.c; NCCL's transports and choices on these machines
 * (P2P off, PXN, its proxy, its tree, nccl_env) in test_machines_nccl.c. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../topologies/flow.h"
#include "../topologies/topo_write.h"
#include "../topologies/topo_yaml.h"
#include "../sim/answer/run.h"
#include "helpers.h"

static const char *shipped[] = {"candy-kids", "uniform-8", "hgx-h100", "hgx-a100", "dgx1-v100",
                                "pcie-2gpu", "pcie-8gpu", "cluster-a100", "cluster-h100", "host", "gpu-virtual",
                              "mi300x", "cluster-mi300x", "cluster-mi355x", "pcie-box", "cluster-pcie", "cluster-p4d"};

/* Every shipped machine loads, routes between every pair of ranks, and runs
 * every applicable (collective, algorithm) to a verified result. */
Test(machines, every_shipped_topology_runs_everything) {
    for (int i = 0; i < (int)(sizeof shipped / sizeof *shipped); i++) {
        char path[128];
        snprintf(path, sizeof path, "topologies/%s.yaml", shipped[i]);
        topo_t *t = th_load(path, NULL);
        int p = topo_nranks(t);
        for (int a = 0; a < p; a++)
            for (int b = 0; b < p; b++) {
                topo_route_t rt;
                cr_assert_eq(topo_route(t, a, b, &rt, NULL), 0);
                cr_assert(a == b || rt.nlinks >= 1, "%s: no route %d -> %d", path, a, b);
            }
        const algo_t *const *rows = algo_all();
        for (int k = 0; rows[k]; k++) {
            engine_result_t r;
            baton_err_t e = {0};
            algo_opts_t o = {.group = topo_params_c(t)->group_size};
            if (rows[k] == &algo_allreduce_nvls && topo_nreducers(t) > 1) continue;   /* one switch per node: nvlstree's */
            int rc = th_run(t, rows[k], 4096, &o, VERIFY_SIGNATURE, &r, &e);
            if (rc == BATON_EUNSUP) continue;
            cr_assert_eq(rc, 0, "%s %s %s: %s", path, coll_name(rows[k]->coll), rows[k]->name, e.msg);
            cr_assert_eq(r.verified, 1);
        }
        topo_free(t);
    }
}

Test(machines, set_scales_the_cluster) {
    topo_t *t = th_load("topologies/cluster-h100.yaml", "nodes=128");
    cr_expect_eq(topo_nranks(t), 1024);
    cr_expect_eq(topo_params_c(t)->group_size, 8);
    /* every rank can leave its node at its NIC's 50 GB/s: full bisection */
    cr_expect_float_eq(flow_between_halves(t, 512), 512 * 50e9, 1e3);
    topo_free(t);
    t = th_load("topologies/cluster-a100.yaml", "nic_bw=100Gb/s");
    cr_expect_float_eq(flow_between_halves(t, 8), 8 * 12.5e9, 1e3);
    topo_free(t);
}

/* A 2:1 oversubscribed fat-tree halves what leaves a leaf; a ring whose hops
 * all cross pods loses half its bandwidth; full bisection loses nothing. */
Test(machines, oversubscription_halves_cross_pod_ring_bandwidth) {
    double busbw[2][2];
    for (int os = 1; os <= 2; os++) {
        char set[32];
        snprintf(set, sizeof set, "oversub=%d", os);
        topo_t *t = th_load("tests/data/machines/fattree.yaml", set);
        for (int m = 0; m < 2; m++) {
            sched_t s;
            cr_assert_eq(algo_build(&algo_allreduce_ring, 16, 256 << 20, NULL, &s, NULL), 0);
            engine_opts_t o = {.contention = m ? CONTENTION_FAIR : CONTENTION_FIFO};
            engine_result_t r;
            cr_assert_eq(engine_run(&s, t, &o, &r, NULL), 0);
            busbw[os - 1][m] = (256 << 20) / r.time_s * 2 * 15 / 16;
        }
        topo_free(t);
    }
    for (int m = 0; m < 2; m++) {
        cr_expect_float_eq(busbw[0][m], 10e9, 1e6, "full bisection: the links' 10 GB/s");
        cr_expect_float_eq(busbw[1][m], 5e9, 1e6, "2:1: half");
    }
}

/* Three ranks sending to one over its single link take three times as long
 * as one, whatever the sharing policy. */
static int incast_prog(const sched_t *s, int r, int c, uint32_t pc, sched_op_t *op) {
    if (pc > 0 || c >= s->param[0]) return 0;
    if (r == 0) *op = op_recv(c + 1, (uint32_t)c + 1, 1, RECV_COPY);
    else if (r == c + 1) *op = op_send(0, (uint32_t)r, 1);
    else return 0;
    return 1;
}

static double incast(int senders, contention_t m) {
    topo_t *t = th_star(4, 1e9, 0, 0, 0);
    sched_t s = {.coll = COLL_ALLGATHER, .algo = "incast", .nranks = 4, .nchannels = 3,
                 .bytes = 4000, .prog = incast_prog, .param = {senders}};
    sched_layout(&s, 4, 1);
    engine_opts_t o = {.contention = m};
    engine_result_t r;
    baton_err_t e = {0};
    cr_assert_eq(engine_run(&s, t, &o, &r, &e), 0, "%s", e.msg);
    topo_free(t);
    return r.time_s;
}

Test(machines, incast_three_to_one_takes_three_times_as_long) {
    contention_t modes[] = {CONTENTION_FIFO, CONTENTION_FAIR};
    for (int m = 0; m < 2; m++) {
        double one = incast(1, modes[m]), three = incast(3, modes[m]);
        cr_expect_float_eq(one, 1e-6, 1e-15, "1000 B at 1 GB/s");
        cr_expect_float_eq(three, 3 * one, 1e-15, "mode %d", m);
    }
    /* with no contention the three arrive together */
    cr_expect_float_eq(incast(3, CONTENTION_NONE), 1e-6, 1e-15);
}

/* Store and forward pays each hop's serialisation; cut-through pays one. */
Test(machines, store_and_forward_pays_every_hop) {
    topo_t *t = th_star(2, 1e9, 2e-6, 0, 0);
    sched_t s;
    cr_assert_eq(algo_build(&algo_broadcast_naive, 2, 1000, NULL, &s, NULL), 0);
    engine_result_t cut, sf;
    engine_opts_t o = {0};
    cr_assert_eq(engine_run(&s, t, &o, &cut, NULL), 0);
    o.store_forward = 1;
    cr_assert_eq(engine_run(&s, t, &o, &sf, NULL), 0);
    cr_expect_float_eq(cut.time_s, 2e-6 + 1e-6, 1e-15);
    cr_expect_float_eq(sf.time_s, 2e-6 + 2e-6, 1e-15);
    topo_free(t);
}

/* Torus generators make forwarding nodes; a 4x4 torus's farthest pair is 4 hops. */
Test(machines, torus_routes_through_its_nodes) {
    topo_t *t = th_load_text("build/torus-test.yaml", "name: t\nnodes:\n  - {name: \"g[0-15]\"}\ngenerate:\n"
                          "  - {torus: \"g[0-15]\", dims: [4, 4], bw: 10GB/s, latency: 1us}\n");
    cr_expect_eq(topo_nlinks(t), 2 * 32, "16 nodes x 2 dimensions");
    topo_route_t rt;
    cr_assert_eq(topo_route(t, 0, 10, &rt, NULL), 0);
    cr_expect_eq(rt.nlinks, 4);
    engine_result_t r;
    cr_assert_eq(th_sim(t, "ring", 16000, VERIFY_SIGNATURE, &r, NULL), 0);
    topo_free(t);
}

/* Protocols: the simulator and the closed form apply the same costs, so they
 * still agree on a uniform machine; LL wins small messages, Simple large. */
Test(protocols, sim_and_closed_form_agree_under_every_protocol) {
    topo_t *t = th_full(8, 25e9, 1e-6, 1, 0);
    cost_model_t m;
    cr_assert_eq(topo_cost_model(t, &m, NULL), 0);
    for (int pr = PROTO_LL; pr <= PROTO_SIMPLE; pr++) {
        const proto_cost_t *pc = &topo_params_c(t)->proto[pr];
        cost_model_t mp = proto_apply(&m, pc);
        for (uint64_t n = 8; n <= (64u << 20); n *= 64) {
            uint64_t nn = n * 8;
            sched_t s;
            cr_assert_eq(algo_build(&algo_allreduce_ring, 8, nn, NULL, &s, NULL), 0);
            engine_opts_t o = {.proto = pc};
            engine_result_t r;
            cr_assert_eq(engine_run(&s, t, &o, &r, NULL), 0);
            double closed = algo_allreduce_ring.cost(&mp, 8, nn, NULL) + pc->base_latency;
            cr_expect_float_eq(r.time_s, closed, 1e-9 * closed, "%s n=%llu", proto_name((proto_t)pr), (unsigned long long)nn);
        }
    }
    topo_free(t);
}

Test(protocols, auto_picks_ll_small_simple_large) {
    char *out;
    cr_assert_eq(th_cli("predict -t topologies/hgx-h100.yaml -c allreduce -a ring -s 8B --proto auto --json", &out, 1), 0);
    cr_expect(strstr(out, "\"protocol\":\"LL\"") != NULL, "%s", out);
    free(out);
    cr_assert_eq(th_cli("sim -t topologies/hgx-h100.yaml -c allreduce -a ring -s 1GiB --proto auto --json", &out, 1), 0);
    cr_expect(strstr(out, "\"protocol\":\"Simple\"") != NULL, "%s", out);
    free(out);
}

/* LL's flags halve the bandwidth: at 1 GiB (reductions free, so only the
 * wire counts) its busbw is half of Simple's, to within the latencies. */
Test(protocols, ll_halves_bandwidth) {
    topo_t *t = th_load("topologies/hgx-h100.yaml", "reduce_bw=0");
    double busbw[2];
    for (int i = 0; i < 2; i++) {
        run_req_t q = {.coll = COLL_ALLREDUCE, .algo = "ring", .bytes = 1ull << 30, .proto = i ? PROTO_SIMPLE : PROTO_LL};
        run_out_t r;
        cr_assert_eq(run_collective(t, &q, &r, NULL), 0);
        busbw[i] = r.busbw_GBps;
    }
    cr_expect_float_eq(busbw[0] / busbw[1], 0.5, 0.01);   /* latencies: 0.506 */
    topo_free(t);
}

/* A topology may set its own protocol costs. */
Test(protocols, topology_overrides_defaults) {
    topo_t *t = th_load_text("build/proto-test.yaml", "name: p\nprotocols:\n  LL: {latency: 2us, base: 0s}\nnodes:\n"
                          "  - {name: \"g[0-1]\"}\nlinks:\n  - {a: g0, b: g1, bw: 1GB/s, latency: 0s}\n");
    const proto_cost_t *ll = &topo_params_c(t)->proto[PROTO_LL];
    cr_expect_float_eq(ll->msg_latency, 2e-6, 1e-18);
    cr_expect_float_eq(ll->efficiency, 0.5, 1e-15, "kept NCCL's");
    cr_expect_eq(ll->base_latency, 0.0);
    topo_free(t);
}

/* Ring channels rotate inside each node, so with as many channels as GPUs per
 * node every NIC carries a ring each way (NCCL's rings do): the 2-node
 * cluster's busbw rises from one NIC's to nearly all eight. */
Test(machines, ring_channels_use_every_nic) {
    topo_t *t = th_load("topologies/cluster-a100.yaml", NULL);
    double busbw[2];
    for (int k = 0; k < 2; k++) {
        sched_t s;
        algo_opts_t o = {.channels = k ? 8 : 1, .group = 8};
        cr_assert_eq(algo_build(&algo_allreduce_ring, 16, 1ull << 30, &o, &s, NULL), 0);
        engine_opts_t eo = {.link_stats = 1};
        engine_result_t r;
        cr_assert_eq(engine_run(&s, t, &eo, &r, NULL), 0);
        busbw[k] = (1ull << 30) / r.time_s * 2 * 15 / 16 / 1e9;
        int busy_nics = 0;
        for (int l = 0; l < topo_nlinks(t); l++) {
            const topo_dlink_t *d = topo_dlink(t, l);
            if (topo_node(t, d->src)->kind == NODE_NIC && topo_node(t, d->dst)->kind == NODE_SWITCH && r.link_bytes[l] > 0) busy_nics++;
        }
        cr_expect_eq(busy_nics, k ? 16 : 2, "%d channel(s): %d NICs send", k ? 8 : 1, busy_nics);
        engine_result_free(&r);
    }
    cr_expect_float_eq(busbw[0], 25, 1, "one channel: one 200 Gb/s NIC");
    cr_expect_gt(busbw[1], 7 * busbw[0], "eight channels: %.1f GB/s", busbw[1]);
    topo_free(t);
}

/* The closed form sees what the channels share: on the 2-node cluster C rings
 * cross the network through min(C, 8) NIC pairs, so its beta is one NIC's
 * time over min(C, 8) (a hardware oracle), and with reductions free and one
 * channel per NIC it equals the simulator exactly; otherwise (adds, or two
 * channels taking turns on a NIC) it stays within 1 %. Four nodes of H100
 * the same. That is with each GPU sending through its own NIC (pxn=false,
 * FIFO). With PXN a ring's hop between nodes relays over NVLink to the
 * NIC on its destination's rail; fair sharing then equals the closed form
 * exactly up to one channel per NIC (FIFO books a relay's NVLink hop ahead
 * and runs up to 5 % over it). */
Test(machines, closed_form_ring_sees_the_links_its_channels_share) {
    const char *files[] = {"topologies/cluster-a100.yaml", "topologies/cluster-h100.yaml"};
    const char *nodes[] = {"nodes=2", "nodes=4"};
    for (int pxn = 0; pxn < 2; pxn++)
    for (int f = 0; f < 2; f++)
        for (int free_add = 0; free_add < 2; free_add++) {
            const char *sets[] = {nodes[f], free_add ? "reduce_bw=0" : "reduce_bw=680GB/s", pxn ? "pxn=true" : "pxn=false"};
            baton_err_t e = {0};
            topo_t *t = topo_yaml_load(files[f], sets, 3, &e);
            cr_assert_not_null(t, "%s", e.msg);
            double nic = f ? 50e9 : 25e9;
            for (int c = 1; c <= (pxn ? 8 : 16); c *= 2) {
                run_req_t q = {.coll = COLL_ALLREDUCE, .algo = "ring", .bytes = 64ull << 20, .proto = PROTO_NONE,
                               .opts = {.channels = c}, .predict = 1,
                               .contention = pxn ? CONTENTION_FAIR : CONTENTION_FIFO};
                run_out_t closed, sim;
                cr_assert_eq(run_collective(t, &q, &closed, &e), 0, "%s", e.msg);
                q.predict = 0;
                cr_assert_eq(run_collective(t, &q, &sim, &e), 0, "%s", e.msg);
                cr_expect_float_eq(closed.model.beta, 1 / (nic * (c < 8 ? c : 8)), 1e-9 * closed.model.beta,
                                   "%s %d channels: beta %g", files[f], c, closed.model.beta);
                double tol = free_add && c <= 8 ? 1e-9 : 0.01;
                cr_expect_float_eq(closed.time_s, sim.time_s, tol * sim.time_s, "%s pxn=%d %d channels%s: closed %g, sim %g",
                                   files[f], pxn, c, free_add ? ", free adds" : "", closed.time_s, sim.time_s);
                engine_result_free(&sim.eng);
            }
            topo_free(t);
        }
}

/* Hierarchical all-reduces see two machines: NVLink inside a node, one rail
 * NIC per GPU between nodes (peer and peer_across in algo.h). Their closed
 * forms then equal the simulator on the clusters, where the slowest pair's
 * view charged every intra-node step a NIC's bandwidth. */
Test(machines, closed_form_hierarchical_sees_both_levels) {
    const char *files[] = {"topologies/cluster-a100.yaml", "topologies/cluster-h100.yaml"};
    const char *nodes[] = {"nodes=2", "nodes=4"};
    const char *algos[] = {"hier", "hier_leader"};
    for (int f = 0; f < 2; f++) {
        topo_t *t = th_load(files[f], nodes[f]);
        for (int a = 0; a < 2; a++)
            for (uint64_t n = 720720ull * 8; n <= (1ull << 30); n *= 64) {
                run_req_t q = {.coll = COLL_ALLREDUCE, .algo = algos[a], .bytes = n, .proto = PROTO_NONE, .predict = 1};
                run_out_t closed, sim;
                baton_err_t e = {0};
                cr_assert_eq(run_collective(t, &q, &closed, &e), 0, "%s", e.msg);
                q.predict = 0;
                cr_assert_eq(run_collective(t, &q, &sim, &e), 0, "%s", e.msg);
                cr_expect_float_eq(closed.time_s, sim.time_s, 1e-9 * sim.time_s, "%s %s n=%llu: closed %g, sim %g",
                                   files[f], algos[a], (unsigned long long)n, closed.time_s, sim.time_s);
                engine_result_free(&sim.eng);
            }
        topo_free(t);
    }
}

/* A topology may say how many channels commands use by default; the flag
 * still wins, and a calibrated (written) file keeps it. */
Test(machines, topology_sets_default_channels) {
    char *out;
    cr_assert_eq(th_cli("topo topologies/cluster-a100.yaml --set channels=4", &out, 1), 0, "%s", out);
    cr_expect(strstr(out, "channels       4 by default") != NULL, "%s", out);
    free(out);
    double beta[3];
    const char *args[3] = {"", " --set channels=2", " --set channels=2 --channels 8"};
    for (int i = 0; i < 3; i++) {
        char cmd[256];
        snprintf(cmd, sizeof cmd, "predict -t topologies/cluster-a100.yaml -c allreduce -a ring -s 1GiB --json%s", args[i]);
        cr_assert_eq(th_cli(cmd, &out, 1), 0, "%s", out);
        char *b = strstr(out, "\"beta_s_per_byte\":");
        cr_assert_not_null(b, "%s", out);
        sscanf(b, "\"beta_s_per_byte\":%lf", &beta[i]);
        free(out);
    }
    cr_expect_float_eq(beta[0], 1 / 200e9, 1e-20, "the file's 8 channels: eight 25 GB/s NICs");
    cr_expect_float_eq(beta[1], 1 / 50e9, 1e-20, "two channels: two NICs");
    cr_expect_float_eq(beta[2], beta[0], 1e-20, "--channels overrides the file");
    cr_expect_eq(th_cli("topo topologies/cluster-a100.yaml --set channels=65", &out, 0), 1);
    cr_expect(strstr(out, "channels=65") != NULL, "%s", out);
    free(out);
    FILE *f = fopen("build/channels-test.yaml", "w");
    cr_assert_not_null(f);
    fputs("name: c\nchannels: 0\nnodes:\n  - {name: \"g[0-1]\"}\nlinks:\n  - {a: g0, b: g1, bw: 1GB/s, latency: 0s}\n", f);
    fclose(f);
    baton_err_t e = {0};
    cr_expect_null(topo_yaml_load("build/channels-test.yaml", NULL, 0, &e));
    cr_expect(strstr(e.msg, "channels-test.yaml:2:") != NULL && strstr(e.msg, "'channels'") != NULL, "%s", e.msg);
    topo_t *t = th_load("topologies/cluster-a100.yaml", "channels=4");
    f = fopen("build/channels-written.yaml", "w");
    cr_assert_not_null(f);
    cr_assert_eq(topo_write_yaml(t, "written", f), 0);
    fclose(f);
    topo_free(t);
    t = th_load("build/channels-written.yaml", NULL);
    cr_expect_eq(topo_params_c(t)->channels, 4, "a written (calibrated) file keeps its channels");
    topo_free(t);
}

/* More leaves than a spine has ports: a 3-level tree (radix 8: 16 leaves of
 * 4 hosts in 4 pods) still has full bisection and routes everywhere. */
Test(machines, three_level_fat_tree_has_full_bisection) {
    topo_t *t = th_load_text("build/ft3-test.yaml", "name: ft3\nnodes:\n  - {name: \"h[0-63]\"}\ngenerate:\n"
                          "  - {fat_tree: \"h[0-63]\", radix: 8, bw: 10GB/s, latency: 0s}\n");
    cr_expect_float_eq(flow_between_halves(t, 32), 32 * 10e9, 1e3);
    int cores = 0;
    for (int i = 0; i < topo_nnodes(t); i++) cores += strstr(topo_node(t, i)->name, ".core") != NULL;
    cr_expect_eq(cores, 16, "(radix/2)^2 core switches");
    topo_route_t rt;
    cr_assert_eq(topo_route(t, 0, 63, &rt, NULL), 0);
    cr_expect_eq(rt.nlinks, 6, "host, leaf, agg, core, agg, leaf, host");
    engine_result_t r;
    cr_assert_eq(th_sim(t, "ring", 64 << 20, VERIFY_SIGNATURE, &r, NULL), 0);
    topo_free(t);
}

/* include: with replicate builds the same machine as name ranges do: the
 * same nodes, links and simulated time, node for node. */
Test(machines, include_replicates_a_node_file) {
    topo_t *a = th_load("topologies/cluster-a100.yaml", "nodes=3");
    topo_t *b = th_load("tests/data/machines/cluster-include.yaml", "nodes=3");
    cr_assert_eq(topo_nranks(b), 24);
    cr_assert_eq(topo_nnodes(b), topo_nnodes(a));
    cr_assert_eq(topo_nlinks(b), topo_nlinks(a));
    for (int r = 0; r < 24; r++) cr_expect_str_eq(topo_rank_name(b, r), topo_rank_name(a, r));
    cr_expect_geq(topo_find_node(b, "n2.nvswitch"), 0);
    engine_result_t ra, rb;
    baton_err_t e = {0};
    cr_assert_eq(th_run(a, &algo_allreduce_ring, 64 << 20, NULL, VERIFY_SIGNATURE, &ra, &e), 0, "%s", e.msg);
    cr_assert_eq(th_run(b, &algo_allreduce_ring, 64 << 20, NULL, VERIFY_SIGNATURE, &rb, &e), 0, "%s", e.msg);
    cr_expect_eq(ra.time_s, rb.time_s);
    topo_free(a);
    topo_free(b);
}

/* A mistake inside an included file is reported at its own file and line. */
Test(machines, include_error_names_the_fragment) {
    baton_err_t e = {0};
    topo_t *t = topo_yaml_load("tests/data/machines/bad-include.yaml", NULL, 0, &e);
    cr_assert_null(t);
    cr_expect(strstr(e.msg, "bad-fragment.yaml:5:") != NULL, "%s", e.msg);
    cr_expect(strstr(e.msg, "n0.gpu9") != NULL, "%s", e.msg);
    cr_expect(strstr(e.msg, "(included from tests/data/machines/bad-include.yaml:3)") != NULL, "%s", e.msg);
}

/* A single-port machine books its ports as it books links, keeping the
 * hole a later booking leaves (sim/engine/book.h): on uniform-8 (one port each way)
 * the double binary tree at 100 MB under FIFO is within 15 % of max-min fair
 * sharing (21.07 against 23.90 ms); with ports booked first come it took
 * 31.03 ms, 30 % above. */
Test(machines, single_port_fifo_backfills_its_ports) {
    topo_t *t = th_load("topologies/uniform-8.yaml", NULL);
    run_req_t q = {.coll = COLL_ALLREDUCE, .algo = "dbtree", .bytes = 100000000, .proto = PROTO_NONE};
    run_out_t fifo, fair;
    baton_err_t e = {0};
    cr_assert_eq(run_collective(t, &q, &fifo, &e), 0, "%s", e.msg);
    q.contention = CONTENTION_FAIR;
    cr_assert_eq(run_collective(t, &q, &fair, &e), 0, "%s", e.msg);
    cr_expect(fabs(fifo.time_s / fair.time_s - 1) < 0.15, "FIFO %g s, fair %g s", fifo.time_s, fair.time_s);
    engine_result_free(&fifo.eng);
    engine_result_free(&fair.eng);
    topo_free(t);
}
