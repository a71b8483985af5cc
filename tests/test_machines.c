/* test_machines.c - real machines: the shipped topologies, the topology
 * language's parameters, routing, contention models and fair sharing. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../topologies/flow.h"
#include "../topologies/topo_write.h"
#include "../topologies/topo_yaml.h"
#include "../sim/run/run.h"
#include "helpers.h"

static topo_t *load(const char *path, const char *set) {
    baton_err_t e = {0};
    const char *sets[] = {set};
    topo_t *t = topo_yaml_load(path, sets, set ? 1 : 0, &e);
    cr_assert_not_null(t, "%s: %s", path, e.msg);
    return t;
}

/* tests/data/machines/NAME.yaml with `nodes` x `gpus`. */
static topo_t *small_cluster(const char *name, int nodes, int gpus) {
    char set[2][32], path[128];
    snprintf(set[0], sizeof set[0], "nodes=%d", nodes);
    snprintf(set[1], sizeof set[1], "gpus=%d", gpus);
    snprintf(path, sizeof path, "tests/data/machines/%s.yaml", name);
    const char *sets[] = {set[0], set[1]};
    baton_err_t e = {0};
    topo_t *t = topo_yaml_load(path, sets, 2, &e);
    cr_assert_not_null(t, "%s: %s", path, e.msg);
    return t;
}

/* An all-reduce of n bytes by algo on ch channels (pipeline: 0 its own)
 * verifies on t. */
static void expect_allreduce_verifies(topo_t *t, const char *algo, uint64_t n, int ch, int pipeline) {
    baton_err_t e = {0};
    run_req_t q = {.coll = COLL_ALLREDUCE, .algo = algo, .bytes = n, .verify = 1, .proto = PROTO_SIMPLE,
                   .opts = {.channels = ch, .pipeline = pipeline}};
    run_out_t o;
    cr_assert_eq(run_collective(t, &q, &o, &e), 0, "%s %s: %s", topo_name(t), algo, e.msg);
    cr_expect_eq(o.eng.verified, 1, "%s, %s %d ranks, %llu B, %d channels", topo_name(t), algo, topo_nranks(t),
                 (unsigned long long)n, ch);
    engine_result_free(&o.eng);
}

/* An all-reduce of n bytes by algo under Simple: closed form / simulated;
 * the simulated time into *sim_s. */
static double closed_over_sim(topo_t *t, const char *algo, uint64_t n, contention_t how, double *sim_s) {
    run_req_t q = {.coll = COLL_ALLREDUCE, .algo = algo, .bytes = n, .proto = PROTO_SIMPLE, .contention = how};
    run_out_t o, c;
    baton_err_t e = {0};
    cr_assert_eq(run_collective(t, &q, &o, &e), 0, "%s %s: %s", topo_name(t), algo, e.msg);
    q.predict = 1;
    cr_assert_eq(run_collective(t, &q, &c, &e), 0, "%s %s: %s", topo_name(t), algo, e.msg);
    engine_result_free(&o.eng);
    *sim_s = o.time_s;
    return c.time_s / o.time_s;
}

/* Write a topology text to path and load it. */
static topo_t *load_text(const char *path, const char *yaml) {
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fputs(yaml, f);
    fclose(f);
    return load(path, NULL);
}

static const char *shipped[] = {"candy-kids", "uniform-8", "hgx-h100", "hgx-a100", "dgx1-v100",
                                "pcie-2gpu", "pcie-8gpu", "cluster-a100", "cluster-h100", "host", "gpu-virtual",
                              "mi300x", "cluster-mi300x", "cluster-mi355x", "pcie-box", "cluster-pcie", "cluster-p4d"};

/* Every shipped machine loads, routes between every pair of ranks, and runs
 * every applicable (collective, algorithm) to a verified result. */
Test(machines, every_shipped_topology_runs_everything) {
    for (int i = 0; i < (int)(sizeof shipped / sizeof *shipped); i++) {
        char path[128];
        snprintf(path, sizeof path, "topologies/%s.yaml", shipped[i]);
        topo_t *t = load(path, NULL);
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
    topo_t *t = load("topologies/cluster-h100.yaml", "nodes=128");
    cr_expect_eq(topo_nranks(t), 1024);
    cr_expect_eq(topo_params_c(t)->group_size, 8);
    /* every rank can leave its node at its NIC's 50 GB/s: full bisection */
    cr_expect_float_eq(flow_between_halves(t, 512), 512 * 50e9, 1e3);
    topo_free(t);
    t = load("topologies/cluster-a100.yaml", "nic_bw=100Gb/s");
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
        topo_t *t = load("tests/data/machines/fattree.yaml", set);
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

Test(machines, p2p_false_doubles_pcie_traversals) {
    topo_t *on = load("topologies/pcie-2gpu.yaml", NULL), *off = load("topologies/pcie-2gpu.yaml", "p2p=false");
    topo_route_t a, b;
    cr_assert_eq(topo_route(on, 0, 1, &a, NULL), 0);
    cr_assert_eq(topo_route(off, 0, 1, &b, NULL), 0);
    cr_expect_eq(a.nlinks, 2);
    cr_expect_eq(b.nlinks, 4, "up to the CPU and down again");
    cr_expect_float_eq(b.lat, 2 * a.lat, 1e-15);
    engine_result_t ra, rb;
    cr_assert_eq(th_sim(on, "ring", 2, VERIFY_DATA, &ra, NULL), 0);
    cr_assert_eq(th_sim(off, "ring", 2, VERIFY_DATA, &rb, NULL), 0);
    cr_expect_float_eq(rb.time_s, 2 * ra.time_s, 1e-4 * rb.time_s, "latency-bound: twice the hops");
    topo_free(on);
    topo_free(off);
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
    topo_t *t = load_text("build/torus-test.yaml", "name: t\nnodes:\n  - {name: \"g[0-15]\"}\ngenerate:\n"
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
    topo_t *t = load("topologies/hgx-h100.yaml", "reduce_bw=0");
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
    topo_t *t = load_text("build/proto-test.yaml", "name: p\nprotocols:\n  LL: {latency: 2us, base: 0s}\nnodes:\n"
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
    topo_t *t = load("topologies/cluster-a100.yaml", NULL);
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
        topo_t *t = load(files[f], nodes[f]);
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

/* NCCL's tree on two nodes sends each byte across the network once each way
 * (the node tree is one edge per tree), the flat double binary tree twice;
 * its 8 channels enter and leave the nodes through all 16 NICs. */
Test(machines, nccltree_crosses_the_network_once_each_way) {
    topo_t *t = load("topologies/cluster-a100.yaml", NULL);
    const uint64_t n = 64ull << 20;
    uint64_t net[2];
    for (int a = 0; a < 2; a++) {
        sched_t s;
        algo_opts_t o = {.channels = 8, .group = 8};
        cr_assert_eq(algo_build(a ? &algo_allreduce_dbtree : &algo_allreduce_nccltree, 16, n, &o, &s, NULL), 0);
        engine_opts_t eo = {.link_stats = 1};
        engine_result_t r;
        cr_assert_eq(engine_run(&s, t, &eo, &r, NULL), 0);
        int busy = 0;
        net[a] = 0;
        for (int l = 0; l < topo_nlinks(t); l++) {
            const topo_dlink_t *d = topo_dlink(t, l);
            if (topo_node(t, d->src)->kind != NODE_NIC || topo_node(t, d->dst)->kind != NODE_SWITCH) continue;
            net[a] += r.link_bytes[l];
            busy += r.link_bytes[l] > 0;
        }
        if (a == 0) cr_expect_eq(busy, 16, "nccltree's 8 channels use %d NICs", busy);
        engine_result_free(&r);
    }
    cr_expect_eq(net[0], 2 * n, "nccltree: %llu bytes into the network", (unsigned long long)net[0]);
    cr_expect_eq(net[1], 4 * n, "dbtree: %llu bytes into the network", (unsigned long long)net[1]);
    topo_free(t);
}

/* The proxy's scan (cluster-a100's ll_scan, 5.2 ns a line): algo's LL
 * all-reduce of n bytes on one channel, with the machine's scan less with
 * none, closed form (predict) or simulated. */
static double scan_cost(topo_t *t, const char *algo, uint64_t n, proto_t pr, int predict) {
    run_req_t q = {.coll = COLL_ALLREDUCE, .algo = algo, .bytes = n, .proto = pr, .predict = predict, .opts = {.channels = 1}};
    run_out_t o;
    baton_err_t e = {0};
    double was = topo_params(t)->ll_scan, with, without;
    cr_assert_eq(run_collective(t, &q, &o, &e), 0, "%s: %s", algo, e.msg);
    with = o.time_s;
    engine_result_free(&o.eng);
    topo_params(t)->ll_scan = 0;
    cr_assert_eq(run_collective(t, &q, &o, &e), 0, "%s: %s", algo, e.msg);
    without = o.time_s;
    engine_result_free(&o.eng);
    topo_params(t)->ll_scan = was;
    return with - without;
}

/* NCCL's network proxy reads both flags of every 16-byte LL line of a step
 * before it posts the step (net.cc): a tree's send up and send down across
 * two nodes each wait for a channel's lines, 8 bytes of data a line, up to
 * the 4 KiB (512 lines) that land in one round; every one of a ring's 2(p -
 * 1) steps waits for its share's lines; the same in the closed form and the
 * simulator; nothing on one node or under LL128 and Simple. The 2 x 8 A100
 * log rises 4.64 us from 512 B to 4 KiB, which is where 5.2 ns comes from. */
Test(machines, nccls_proxy_reads_ll_lines_before_a_network_send) {
    topo_t *t = load("topologies/cluster-a100.yaml", NULL), *one = load("topologies/cluster-a100.yaml", "nodes=1");
    const double line = 5.2e-9;
    cr_assert_float_eq(topo_params(t)->ll_scan, line, 1e-15);
    for (int predict = 0; predict < 2; predict++) {
        cr_expect_float_eq(scan_cost(t, "dbtree", 512, PROTO_LL, predict), 2 * 64 * line, 1e-12);
        cr_expect_float_eq(scan_cost(t, "dbtree", 4096, PROTO_LL, predict), 2 * 512 * line, 1e-12);
        cr_expect_float_eq(scan_cost(t, "dbtree", 1 << 20, PROTO_LL, predict), 2 * 512 * line, 1e-12, "one round");
        cr_expect_float_eq(scan_cost(t, "ring", 16 * 1024, PROTO_LL, predict), 30 * 128 * line, 1e-12);
        cr_expect_eq(scan_cost(t, "dbtree", 4096, PROTO_LL128, predict), 0);
        cr_expect_eq(scan_cost(t, "ring", 1 << 20, PROTO_SIMPLE, predict), 0);
        cr_expect_eq(scan_cost(one, "dbtree", 4096, PROTO_LL, predict), 0, "no network on one node");
    }
    topo_free(t);
    topo_free(one);
}

/* nccltree's closed form on a machine it has seen (every message of a
 * steady step on the links, inside nodes and between them): within the band
 * measured against the simulator, 0.74-1.08 of its time on one H100 node and
 * on two nodes of A100 and H100, 64 KiB to 256 MiB (the slowest-pair view
 * it had first said 3.3 GB/s at 4 MiB where the simulator says 23.7). The
 * top of the band moved from 1.04 to 1.08 (2 x 8 A100, 256 MiB) when FIFO
 * began to serve a rank's channels that claim a link together in channel
 * order rather than in event order (sim/engine/engine.c, engine_claim): either is a
 * convention, and fair sharing gives 0.82 there. */
Test(machines, nccltree_closed_form_sees_nodes_and_network) {
    const char *files[] = {"topologies/hgx-h100.yaml", "topologies/cluster-a100.yaml", "topologies/cluster-h100.yaml"};
    for (int f = 0; f < 3; f++) {
        topo_t *t = load(files[f], NULL);
        for (uint64_t n = 64 << 10; n <= (256ull << 20); n *= 64) {
            run_req_t q = {.coll = COLL_ALLREDUCE, .algo = "nccltree", .bytes = n, .proto = PROTO_SIMPLE, .predict = 1};
            run_out_t closed, sim;
            baton_err_t e = {0};
            cr_assert_eq(run_collective(t, &q, &closed, &e), 0, "%s", e.msg);
            q.predict = 0;
            cr_assert_eq(run_collective(t, &q, &sim, &e), 0, "%s", e.msg);
            double ratio = sim.time_s / closed.time_s;
            cr_expect(ratio >= 0.70 && ratio <= 1.10, "%s n=%llu: simulated / closed form %.3f", files[f],
                      (unsigned long long)n, ratio);
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
    topo_t *t = load("topologies/cluster-a100.yaml", "channels=4");
    f = fopen("build/channels-written.yaml", "w");
    cr_assert_not_null(f);
    cr_assert_eq(topo_write_yaml(t, "written", f), 0);
    fclose(f);
    topo_free(t);
    t = load("build/channels-written.yaml", NULL);
    cr_expect_eq(topo_params_c(t)->channels, 4, "a written (calibrated) file keeps its channels");
    topo_free(t);
}

/* More leaves than a spine has ports: a 3-level tree (radix 8: 16 leaves of
 * 4 hosts in 4 pods) still has full bisection and routes everywhere. */
Test(machines, three_level_fat_tree_has_full_bisection) {
    topo_t *t = load_text("build/ft3-test.yaml", "name: ft3\nnodes:\n  - {name: \"h[0-63]\"}\ngenerate:\n"
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

/* In-switch reduction: every GPU sends each byte up once and receives the sum
 * once (link statistics say so exactly), the result is right for many rank
 * counts, and at 1 GiB it beats the ring by the ratio the byte counts predict. */
Test(machines, nvls_sends_each_byte_up_once) {
    topo_t *t = load("topologies/hgx-h100.yaml", NULL);
    cr_expect_eq(topo_nreducers(t), 1);
    sched_t s;
    uint64_t n = 64ull << 20;
    cr_assert_eq(algo_build(&algo_allreduce_nvls, 8, n, NULL, &s, NULL), 0);
    engine_opts_t o = {.link_stats = 1, .verify = VERIFY_SIGNATURE};
    engine_result_t r;
    baton_err_t e = {0};
    cr_assert_eq(engine_run(&s, t, &o, &r, &e), 0, "%s", e.msg);
    cr_expect_eq(r.verified, 1);
    for (int l = 0; l < topo_nlinks(t); l++)
        cr_expect_eq(r.link_bytes[l], n, "link %d carries %llu bytes", l, (unsigned long long)r.link_bytes[l]);
    double nvls = r.time_s;
    engine_result_free(&r);
    cr_assert_eq(algo_build(&algo_allreduce_ring, 8, n, NULL, &s, NULL), 0);
    engine_opts_t plain = {0};
    cr_assert_eq(engine_run(&s, t, &plain, &r, NULL), 0);
    double eff = topo_params_c(t)->nvls_eff;          /* the switch moves bytes at this share of the links */
    cr_expect_gt(r.time_s / nvls, 0.9 * 1.75 * eff, "ring %g s vs nvls %g s (2(p-1)/p x %g)", r.time_s, nvls, eff);
    cost_model_t m;
    cr_assert_eq(topo_cost_model(t, &m, NULL), 0);
    double f = algo_allreduce_nvls.cost(&m, 8, n, NULL);
    cr_expect(nvls >= 0.5 * f && nvls <= 2.5 * f, "sim %g, model %g", nvls, f);
    topo_free(t);
    /* any rank count, data mode */
    for (int p = 1; p <= 9; p++) {
        FILE *fp = fopen("build/nvls-test.yaml", "w");
        fprintf(fp, "name: n\nnodes:\n  - {name: \"g[0-%d]\"}\n  - {name: sw, kind: switch, reduce: true}\n"
                    "links:\n  - {a: \"g[0-%d]\", b: sw, bw: 10GB/s, latency: 1us}\n", p - 1, p - 1);
        fclose(fp);
        t = load("build/nvls-test.yaml", NULL);
        for (uint64_t bytes = 0; bytes < 3000; bytes += 999) {
            algo_opts_t po = {.pipeline = 3};
            cr_assert_eq(th_run(t, &algo_allreduce_nvls, bytes, &po, VERIFY_DATA, &r, &e), 0, "p=%d: %s", p, e.msg);
            cr_expect_eq(r.verified, 1);
        }
        topo_free(t);
    }
}

/* include: with replicate builds the same machine as name ranges do: the
 * same nodes, links and simulated time, node for node. */
Test(machines, include_replicates_a_node_file) {
    topo_t *a = load("topologies/cluster-a100.yaml", "nodes=3");
    topo_t *b = load("tests/data/machines/cluster-include.yaml", "nodes=3");
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

/* NVLSTree (nvlstree) on clusters with a reducing switch per node: the
 * result is right for 2-7 nodes of 2-3 GPUs (the double binary tree of the
 * nodes with one child, two children and three levels; one channel group,
 * tree 0 alone, and three, both trees), remainders included; each GPU moves
 * n + n/g bytes each way over its switch link and only n/g each way over
 * its NIC (link statistics, exactly), where a ring sends 2(p-1)/p n over
 * the NICs; and on cluster-h100 NCCL's plan runs it. */
Test(machines, nvlstree_reduces_in_each_node_and_trees_the_nodes) {
    const uint64_t sizes[] = {1, 37, 4099, 1 << 20};
    for (int nodes = 2; nodes <= 7; nodes++)
        for (int gpus = 2; gpus <= 3; gpus++)
            for (int z = 0; z < 4; z++)
                for (int ch = 1; ch <= 3; ch += 2) {
                    topo_t *t = small_cluster("nvls-cluster", nodes, gpus);
                    expect_allreduce_verifies(t, "nvlstree", sizes[z], ch, z == 3 ? 8 : 0);
                    topo_free(t);
                }
    const char *sets[] = {"nodes=2", "gpus=3"};
    topo_t *t = topo_yaml_load("tests/data/machines/nvls-cluster.yaml", sets, 2, NULL);
    cr_assert_not_null(t);
    uint64_t n = 3 * 4096 * 8, ring_max = 0;
    engine_opts_t eo = {.link_stats = 1};
    for (int a = 0; a < 2; a++) {
        run_req_t q = {.coll = COLL_ALLREDUCE, .algo = a ? "ring" : "nvlstree", .bytes = n, .proto = PROTO_SIMPLE,
                       .engine = &eo, .opts = {.channels = 1}};
        run_out_t o;
        cr_assert_eq(run_collective(t, &q, &o, NULL), 0);
        for (int l = 0; l < topo_nlinks(t); l++) {
            const topo_dlink_t *d = topo_dlink(t, l);
            node_kind_t ks = topo_node(t, d->src)->kind, kd = topo_node(t, d->dst)->kind;
            if (ks == NODE_GPU && kd == NODE_NIC && a == 0)
                cr_expect_eq(o.eng.link_bytes[l], n / 3, "nvlstree: GPU -> NIC carries n/g, not %llu",
                             (unsigned long long)o.eng.link_bytes[l]);
            if (ks == NODE_GPU && kd == NODE_NIC && a == 1 && o.eng.link_bytes[l] > ring_max) ring_max = o.eng.link_bytes[l];
            if (a == 0 && ((ks == NODE_GPU && kd == NODE_SWITCH) || (ks == NODE_SWITCH && kd == NODE_GPU)))
                cr_expect_eq(o.eng.link_bytes[l], n + n / 3, "switch link %s -> %s", topo_node(t, d->src)->name,
                             topo_node(t, d->dst)->name);
        }
        engine_result_free(&o.eng);
    }
    cr_expect_eq(ring_max, 2 * 5 * n / 6, "the ring's NIC carries 2(p-1)/p n: %llu", (unsigned long long)ring_max);
    topo_free(t);
    t = load("topologies/cluster-h100.yaml", "nodes=2");
    run_req_t q = {.coll = COLL_ALLREDUCE, .algo = "nccl", .bytes = 16ull << 30, .proto = RUN_PROTO_AUTO, .predict = 1};
    run_out_t o;
    cr_assert_eq(run_collective(t, &q, &o, NULL), 0);
    cr_expect_str_eq(o.algo->name, "nvlstree");
    cr_expect_eq(o.proto, PROTO_SIMPLE);
    q.algo = "nvls";
    baton_err_t e = {0};
    cr_expect_eq(run_collective(t, &q, &o, &e), BATON_EUNSUP);
    cr_expect(strstr(e.msg, "one per node") != NULL, "%s", e.msg);
    topo_free(t);
}

/* P2P off on a box whose GPUs each sit on their own root port: with the
 * host's staging rate (host_bw) every staged byte goes into a CPU's memory
 * and out again (link statistics), so p2p=false is slower than p2p=true,
 * where before both took the same route through the CPU; a written machine
 * keeps host_bw and not the memory nodes made from it. */
Test(machines, p2p_off_stages_through_host_memory) {
    double t[2];
    for (int off = 0; off < 2; off++) {
        const char *sets[] = {"switches=false", off ? "p2p=false" : "p2p=true", "host_bw=20GB/s"};
        baton_err_t e = {0};
        topo_t *tp = topo_yaml_load("topologies/pcie-8gpu.yaml", sets, 3, &e);
        cr_assert_not_null(tp, "%s", e.msg);
        engine_opts_t eo = {.link_stats = 1};
        run_req_t q = {.coll = COLL_ALLREDUCE, .algo = "ring", .bytes = 8 << 20, .proto = PROTO_SIMPLE, .engine = &eo,
                       .verify = 1};
        run_out_t o;
        cr_assert_eq(run_collective(tp, &q, &o, &e), 0, "%s", e.msg);
        cr_expect_eq(o.eng.verified, 1);
        uint64_t into_memory = 0, sent = 0;
        for (int l = 0; l < topo_nlinks(tp); l++) {
            const topo_dlink_t *d = topo_dlink(tp, l);
            if (topo_node(tp, d->dst)->hidden) into_memory += o.eng.link_bytes[l];
            if (topo_node(tp, d->src)->kind == NODE_GPU) sent += o.eng.link_bytes[l];
        }
        cr_expect_gt(sent, 0);
        if (off) cr_expect_eq(into_memory, sent, "every staged byte goes into memory once");
        else cr_expect_eq(into_memory, 0, "p2p: no host memory on the way");
        t[off] = o.time_s;
        engine_result_free(&o.eng);
        if (off) {
            FILE *f = fopen("build/p2p-off.yaml", "w");
            cr_assert_not_null(f);
            cr_assert_eq(topo_write_yaml(tp, "written", f), 0);
            fclose(f);
            topo_t *back = load("build/p2p-off.yaml", NULL);
            cr_expect_eq(topo_nnodes(back), topo_nnodes(tp), "the memory nodes are made again, not written twice");
            cr_expect_eq(topo_params_c(back)->host_bw, 20e9);
            topo_free(back);
        }
        topo_free(tp);
    }
    cr_expect_gt(t[1], 1.5 * t[0], "p2p off %g s, on %g s", t[1], t[0]);
}

/* NVLSTree with one NIC for a node's eight GPUs: every GPU's share of the
 * chain crosses that NIC, which then carries n each way (link statistics,
 * exactly), so the all-reduce takes at least n / 50 GB/s; the closed form
 * sees the shared NIC (its step is the busiest link's) and agrees with the
 * simulator within 15 % with one NIC a node and with eight. */
Test(machines, nvlstree_shares_a_node_nic) {
    uint64_t n = 64ull << 20;
    double t_sim[2];
    for (int one = 0; one < 2; one++) {
        topo_t *t = load("topologies/cluster-h100.yaml", one ? "nics=1" : "nics=8");
        engine_opts_t eo = {.link_stats = 1};
        run_req_t q = {.coll = COLL_ALLREDUCE, .algo = "nvlstree", .bytes = n, .proto = PROTO_SIMPLE, .engine = &eo};
        run_out_t o, c;
        baton_err_t e = {0};
        cr_assert_eq(run_collective(t, &q, &o, &e), 0, "%s", e.msg);
        q.predict = 1, q.engine = NULL;
        cr_assert_eq(run_collective(t, &q, &c, &e), 0, "%s", e.msg);
        t_sim[one] = o.time_s;
        cr_expect(c.time_s > 0.85 * o.time_s && c.time_s < 1.15 * o.time_s, "nics=%d: closed form %g s, simulated %g s",
                  one ? 1 : 8, c.time_s, o.time_s);
        for (int l = 0; one && l < topo_nlinks(t); l++) {
            const topo_dlink_t *d = topo_dlink(t, l);
            if (topo_node(t, d->src)->kind == NODE_NIC && topo_node(t, d->dst)->kind == NODE_SWITCH)
                cr_expect_eq(o.eng.link_bytes[l], n, "%s -> %s carries %llu", topo_node(t, d->src)->name,
                             topo_node(t, d->dst)->name, (unsigned long long)o.eng.link_bytes[l]);
        }
        engine_result_free(&o.eng);
        topo_free(t);
    }
    cr_expect_geq(t_sim[1], (double)n / 50e9, "one NIC: %g s", t_sim[1]);
    cr_expect_gt(t_sim[1], 3 * t_sim[0], "one NIC %g s, eight %g s", t_sim[1], t_sim[0]);
}

/* A single-port machine books its ports as it books links, keeping the
 * hole a later booking leaves (sim/engine/book.h): on uniform-8 (one port each way)
 * the double binary tree at 100 MB under FIFO is within 15 % of max-min fair
 * sharing (21.07 against 23.90 ms); with ports booked first come it took
 * 31.03 ms, 30 % above. */
Test(machines, single_port_fifo_backfills_its_ports) {
    topo_t *t = load("topologies/uniform-8.yaml", NULL);
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

/* nvlstree's closed form on t at n bytes within tol of its simulation under contention c. */
static void expect_nvlstree_near(topo_t *t, uint64_t n, contention_t c, double tol, const char *what) {
    double sim, ratio = closed_over_sim(t, "nvlstree", n, c, &sim);
    cr_expect(fabs(ratio - 1) < tol, "%s, %llu B: closed form / simulated %g (simulated %g s)", what,
              (unsigned long long)n, ratio, sim);
}

/* nvlstree's closed form against its simulation on 2 x 8 H100 (a NIC per
 * GPU), small calls to large, within 10 %: the node's half at each end of the pipeline
 * and the NVLink's (g + 1)/g n each way. Charging the whole fill at the
 * busier side's step put it 50 % above the simulator at 64 KiB, and NVLink
 * at n put it 11 % below at 1 GiB. */
Test(machines, nvlstree_closed_form_follows_its_simulation) {
    topo_t *t = load("topologies/cluster-h100.yaml", NULL);
    const uint64_t sizes[] = {64ull << 10, 1ull << 20, 16ull << 20, 256ull << 20};
    for (int z = 0; z < 4; z++) expect_nvlstree_near(t, sizes[z], CONTENTION_FIFO, 0.1, "2 nodes");
    topo_free(t);
    /* 4 and 5 nodes (the node tree two and three levels tall, both trees on
     * the channel groups): within 15 % of max-min fair sharing, and of FIFO
     * (7.82 ms at 1 GiB on 4 nodes, the formula 5.44, until a link kept the
     * hole a later-starting message left on it for the groups' sends that
     * meet on a NIC: sim/engine/book.h). */
    for (int nodes = 4; nodes <= 5; nodes++) {
        char set[32];
        snprintf(set, sizeof set, "nodes=%d", nodes);
        t = load("topologies/cluster-h100.yaml", set);
        expect_nvlstree_near(t, 4ull << 20, CONTENTION_FAIR, 0.15, set);
        expect_nvlstree_near(t, 64ull << 20, CONTENTION_FAIR, 0.15, set);
        expect_nvlstree_near(t, 4ull << 20, CONTENTION_FIFO, 0.15, set);
        expect_nvlstree_near(t, 1ull << 30, CONTENTION_FIFO, 0.05, set);
        topo_free(t);
    }
}

/* P2P off stages through host memory only inside a host: on a cluster of
 * PCIe servers a GPU reaches its neighbour through a CPU, and a GPU of the
 * other node through its NIC and no CPU (NCCL's network transport); the
 * rings verify. */
Test(machines, p2p_off_stages_only_inside_a_host) {
    topo_t *t = load("topologies/cluster-pcie.yaml", NULL);
    cr_assert_eq(topo_params_c(t)->p2p, 0);
    for (int d = 1; d < 4; d++) {
        topo_route_t r;
        cr_assert_eq(topo_route(t, 0, d, &r, NULL), 0);
        int cpus = 0, nics = 0;
        for (int i = 0; i < r.nlinks; i++) {
            node_kind_t k = topo_node(t, topo_dlink(t, r.links[i])->dst)->kind;
            cpus += k == NODE_CPU, nics += k == NODE_NIC;
        }
        if (d == 1) cr_expect(cpus >= 1 && nics == 0, "0 -> 1: %d CPUs, %d NICs", cpus, nics);
        else cr_expect(cpus == 0 && nics >= 1, "0 -> %d: %d CPUs, %d NICs", d, cpus, nics);
    }
    run_req_t q = {.coll = COLL_ALLREDUCE, .algo = "ring", .bytes = 4 * 1001, .proto = PROTO_SIMPLE, .verify = 1};
    run_out_t o;
    baton_err_t e = {0};
    cr_assert_eq(run_collective(t, &q, &o, &e), 0, "%s", e.msg);
    cr_expect_eq(o.eng.verified, 1);
    engine_result_free(&o.eng);
    topo_free(t);
}

/* PXN on a rail-optimized cluster whose spines carry an eighth of what its
 * leaves take in (16 nodes, oversubscription 8): a pairwise all-to-all sends
 * 105 of each GPU's 127 blocks to other nodes on other rails. With PXN each
 * goes over NVLink to the GPU on the destination's rail and out through its
 * NIC, so no byte crosses a spine and each GPU -> NVSwitch link carries
 * 7 + 105 blocks (link statistics, exactly); without it, 7, and the spines
 * carry the rest. Every GPU -> NIC link carries 120 blocks either way (its
 * own 15 to its rail plus 105 relayed, or all 120 of its own). PXN takes
 * under half the time; both verify. */
Test(machines, pxn_keeps_traffic_on_its_rail) {
    uint64_t n = 128ull << 20, block = n / 128;
    double time[2];
    for (int pxn = 0; pxn < 2; pxn++) {
        const char *sets[] = {"nodes=16", "oversubscription=8", pxn ? "pxn=true" : "pxn=false"};
        baton_err_t e = {0};
        topo_t *t = topo_yaml_load("topologies/cluster-h100.yaml", sets, 3, &e);
        cr_assert_not_null(t, "%s", e.msg);
        engine_opts_t eo = {.link_stats = 1};
        run_req_t q = {.coll = COLL_ALLTOALL, .algo = "pairwise", .bytes = n, .proto = PROTO_SIMPLE, .engine = &eo,
                       .verify = 1};
        run_out_t o;
        cr_assert_eq(run_collective(t, &q, &o, &e), 0, "%s", e.msg);
        cr_expect_eq(o.eng.verified, 1);
        uint64_t spine = 0;
        for (int l = 0; l < topo_nlinks(t); l++) {
            const topo_dlink_t *d = topo_dlink(t, l);
            node_kind_t ks = topo_node(t, d->src)->kind, kd = topo_node(t, d->dst)->kind;
            if (strstr(topo_node(t, d->src)->name, "spine") || strstr(topo_node(t, d->dst)->name, "spine"))
                spine += o.eng.link_bytes[l];
            if (ks == NODE_GPU && kd == NODE_SWITCH)
                cr_expect_eq(o.eng.link_bytes[l], (pxn ? 112 : 7) * block, "pxn=%d: %s -> switch carries %llu", pxn,
                             topo_node(t, d->src)->name, (unsigned long long)o.eng.link_bytes[l]);
            if (ks == NODE_GPU && kd == NODE_NIC)
                cr_expect_eq(o.eng.link_bytes[l], 120 * block, "pxn=%d: %s -> NIC carries %llu", pxn,
                             topo_node(t, d->src)->name, (unsigned long long)o.eng.link_bytes[l]);
        }
        if (pxn) cr_expect_eq(spine, 0, "PXN: %llu bytes crossed the spines", (unsigned long long)spine);
        else cr_expect_gt(spine, 0);
        time[pxn] = o.time_s;
        engine_result_free(&o.eng);
        topo_free(t);
    }
    cr_expect_lt(time[1], 0.5 * time[0], "PXN %g s, without %g s", time[1], time[0]);
}

static double coll_time(topo_t *t, coll_t c, uint64_t bytes, int predict) {
    baton_err_t e = {0};
    run_req_t q = {.coll = c, .algo = c == COLL_BROADCAST ? "chain" : "ring", .bytes = bytes, .proto = PROTO_SIMPLE,
                   .predict = predict};
    run_out_t o;
    cr_assert_eq(run_collective(t, &q, &o, &e), 0, "%s", e.msg);
    engine_result_free(&o.eng);
    return o.time_s;
}

/* P2P off, NCCL's SHM transport: a GPU that both writes staged data to host
 * memory and reads it (every rank of a ring) moves stage_bw each way, a
 * ceiling the links do not see: a large ring all-reduce on two RTX 2080 Ti
 * takes base + 2 steps + n / stage_bw (the logs: 4.0 GB/s, where one flow alone runs at
 * the links' 11.1), simulated and in closed form; a two-rank broadcast, one
 * flow one way, is the links' alone; with p2p on, or stage_bw 0, no ceiling;
 * on four GPUs the chain's middle ranks both read and write, so a broadcast
 * takes n / stage_bw too; a Simple transfer adds stage_latency a ring step
 * (its flag read back from host memory); the values survive writing. */
Test(machines, staged_duplex_runs_at_stage_bw) {
    topo_t *off = load("topologies/pcie-2gpu.yaml", "p2p=false"), *on = load("topologies/pcie-2gpu.yaml", NULL);
    double bw = topo_params_c(off)->stage_bw, base = topo_params_c(off)->proto[PROTO_SIMPLE].base_latency;
    double step = topo_params_c(off)->stage_lat;
    cr_assert_float_eq(bw, 3.9e9, 1);
    cr_assert_float_eq(step, 5e-6, 1e-15);
    uint64_t n = 256u << 20;
    for (int predict = 0; predict < 2; predict++) {
        double t = coll_time(off, COLL_ALLREDUCE, n, predict);
        cr_expect_float_eq(t, base + 2 * step + n / bw, 1e-9 * t, "predict %d: %g s", predict, t);
        double b = coll_time(off, COLL_BROADCAST, n, predict);
        cr_expect_lt(b, 0.5 * n / bw, "one flow: the links' rate, %g s", b);
        cr_expect_lt(coll_time(on, COLL_ALLREDUCE, n, predict), 0.5 * n / bw, "p2p on: no staging");
    }
    topo_free(on);
    const char *sets[] = {"gpus=4", "stage_bw=2GB/s", "stage_latency=7us"};
    baton_err_t e = {0};
    topo_t *box = topo_yaml_load("topologies/pcie-box.yaml", sets, 3, &e);
    cr_assert_not_null(box, "%s", e.msg);
    double b4 = coll_time(box, COLL_BROADCAST, n, 1);
    cr_expect_float_eq(b4, topo_params_c(box)->proto[PROTO_SIMPLE].base_latency + 3 * 7e-6 + n / 2e9, 1e-9 * b4,
                       "three chain steps of a staged Simple transfer");
    FILE *f = fopen("build/staged.yaml", "w");
    cr_assert_not_null(f);
    cr_assert_eq(topo_write_yaml(box, "written", f), 0);
    fclose(f);
    topo_t *back = load("build/staged.yaml", NULL);
    cr_expect_float_eq(topo_params_c(back)->stage_bw, 2e9, 1);
    cr_expect_float_eq(topo_params_c(back)->stage_lat, 7e-6, 1e-15);
    topo_free(back);
    topo_free(box);
    const char *bad[] = {"stage_bw=fast"};
    cr_expect_null(topo_yaml_load("topologies/pcie-box.yaml", bad, 1, &e));
    cr_expect(strstr(e.msg, "stage_bw") != NULL, "%s", e.msg);
    topo_free(off);
}

/* A sharp-cluster with `nodes` x `gpus` (tests/data/machines/sharp-cluster.yaml). */
static topo_t *sharp_cluster(int nodes, int gpus) { return small_cluster("sharp-cluster", nodes, gpus); }

/* The same whose nodes' switches do not reduce (no NVLS: collnet_ring only). */
static topo_t *sharp_cluster_without_nvls(int nodes, int gpus) {
    char set[3][32];
    snprintf(set[0], sizeof set[0], "nodes=%d", nodes);
    snprintf(set[1], sizeof set[1], "gpus=%d", gpus);
    snprintf(set[2], sizeof set[2], "nvls=false");
    const char *sets[] = {set[0], set[1], set[2]};
    topo_t *t = topo_yaml_load("tests/data/machines/sharp-cluster.yaml", sets, 3, NULL);
    cr_assert_not_null(t);
    return t;
}

/* CollNet (NCCL's NVLS across nodes with SHARP): the result is right for 2-6
 * nodes of 2-3 GPUs, one leaf per rail or leaves and a spine, remainders and
 * channels included. */
Test(machines, collnet_verifies_with_leaves_and_spines) {
    const uint64_t sizes[] = {1, 37, 4099, 1 << 20};
    for (int nvls = 0; nvls < 2; nvls++)
        for (int nodes = 2; nodes <= 6; nodes++)
            for (int gpus = 2; gpus <= 3; gpus++) {
                topo_t *t = sharp_cluster(nodes, gpus);
                if (!nvls) topo_free(t), t = sharp_cluster_without_nvls(nodes, gpus);
                cr_expect_eq(topo_params_c(t)->sharp.leaves, nodes > 4 ? 2 : 1);
                cr_expect_eq(topo_params_c(t)->sharp.first, nvls ? nodes : 0);
                for (int z = 0; z < 4; z++)
                    for (int ch = 1; ch <= 3; ch += 2) {
                        if (nvls) expect_allreduce_verifies(t, "collnet", sizes[z], ch, z == 3 ? 8 : 0);
                        expect_allreduce_verifies(t, "collnet_ring", sizes[z], ch, z == 3 ? 8 : 0);
                    }
                topo_free(t);
            }
}

/* Where CollNet's bytes go (link statistics, exactly): n/g each way over
 * every NIC and its leaf link whatever the number of nodes, the leaf's sum
 * once to its rail's spine and nowhere else, n + n/g each way between a GPU
 * and its node's switch. At link rate in the fabric: the NVLS efficiency
 * (0.5 here) is for the node's switch only, so a NIC's busy time is its
 * bytes at the route's 50 GB/s. */
Test(machines, collnet_sends_a_block_per_gpu_through_the_fabric) {
    topo_t *t = sharp_cluster(5, 3);
    uint64_t n = 3 * 4096 * 8, to_spine = 0;
    engine_opts_t eo = {.link_stats = 1};
    run_req_t q = {.coll = COLL_ALLREDUCE, .algo = "collnet", .bytes = n, .proto = PROTO_SIMPLE, .engine = &eo,
                   .opts = {.channels = 1}};
    run_out_t o;
    baton_err_t e = {0};
    cr_assert_eq(run_collective(t, &q, &o, &e), 0, "%s", e.msg);
    for (int l = 0; l < topo_nlinks(t); l++) {
        const topo_dlink_t *d = topo_dlink(t, l);
        const topo_node_t *a = topo_node(t, d->src), *b = topo_node(t, d->dst);
        uint64_t x = o.eng.link_bytes[l];
        if ((a->kind == NODE_GPU && b->kind == NODE_NIC) || (a->kind == NODE_NIC && b->kind == NODE_SWITCH)) {
            cr_expect_eq(x, n / 3, "%s -> %s carries %llu", a->name, b->name, (unsigned long long)x);
            cr_expect_float_eq(o.eng.link_busy[l], (double)x / 50e9, 1e-12, "%s -> %s", a->name, b->name);
        }
        if ((a->kind == NODE_GPU && b->kind == NODE_SWITCH) || (a->kind == NODE_SWITCH && b->kind == NODE_GPU))
            cr_expect_eq(x, n + n / 3, "%s -> %s carries %llu", a->name, b->name, (unsigned long long)x);
        if (strstr(a->name, "leaf") && strstr(b->name, "spine")) {
            int spine = atoi(strstr(b->name, "spine") + 5);
            cr_expect(x == 0 || spine < 3, "%s -> %s: only rail spines add", a->name, b->name);
            to_spine += x;
        }
    }
    cr_expect_eq(to_spine, 3 * 2 * n / 3, "every leaf sends its sum up once: %llu", (unsigned long long)to_spine);
    engine_result_free(&o.eng);
    topo_free(t);
    t = sharp_cluster_without_nvls(5, 3);             /* collnet_ring: the node's ring, 2 (g - 1)/g n each way */
    q.algo = "collnet_ring";
    cr_assert_eq(run_collective(t, &q, &o, &e), 0, "%s", e.msg);
    for (int l = 0; l < topo_nlinks(t); l++) {
        const topo_dlink_t *d = topo_dlink(t, l);
        const topo_node_t *a = topo_node(t, d->src), *b = topo_node(t, d->dst);
        uint64_t x = o.eng.link_bytes[l];
        if ((a->kind == NODE_GPU && b->kind == NODE_NIC) || (a->kind == NODE_NIC && b->kind == NODE_SWITCH))
            cr_expect_eq(x, n / 3, "ring: %s -> %s carries %llu", a->name, b->name, (unsigned long long)x);
        if ((a->kind == NODE_GPU && b->kind == NODE_SWITCH) || (a->kind == NODE_SWITCH && b->kind == NODE_GPU))
            cr_expect_eq(x, 2 * 2 * n / 3, "ring: %s -> %s carries %llu", a->name, b->name, (unsigned long long)x);
    }
    engine_result_free(&o.eng);
    topo_free(t);
}

/* On cluster-h100 with `sharp=true` NCCL's plan runs CollNet at 1 GiB (it
 * moves n/g over a NIC where a ring moves 2(p-1)/p n), its closed form is
 * within 5 % of the simulator from 64 MiB, and its time does not grow with
 * the nodes; without SHARP it says what it needs and -a nccl never picks it;
 * a machine written flat keeps its reducing fabric. */
Test(machines, collnet_is_nccls_plan_where_the_fabric_reduces) {
    const char *sh[] = {"sharp=true", "nodes=4"}, *plain[] = {"sharp=false", "nodes=4"};
    topo_t *t = topo_yaml_load("topologies/cluster-h100.yaml", sh, 2, NULL), *u;
    cr_assert_not_null(t);
    run_req_t q = {.coll = COLL_ALLREDUCE, .algo = "nccl", .bytes = 1ull << 30, .proto = RUN_PROTO_AUTO, .predict = 1};
    run_out_t o, c;
    baton_err_t e = {0};
    cr_assert_eq(run_collective(t, &q, &o, &e), 0, "%s", e.msg);
    cr_expect(strncmp(o.algo->name, "collnet", 7) == 0, "-a nccl at 1 GiB: %s", o.algo->name);   /* NVLS or ring inside */
    cr_expect_eq(o.proto, PROTO_SIMPLE);
    for (uint64_t n = 64ull << 20; n <= 256ull << 20; n <<= 2) {
        double sim, ratio = closed_over_sim(t, "collnet", n, CONTENTION_FIFO, &sim);
        cr_expect(fabs(ratio - 1) < 0.05, "%llu B: closed form / simulated %g", (unsigned long long)n, ratio);
    }
    FILE *f = fopen("build/sharp-flat.yaml", "w");
    cr_assert_not_null(f);
    cr_assert_eq(topo_write_yaml(t, "written", f), 0);
    fclose(f);
    u = load("build/sharp-flat.yaml", NULL);
    run_req_t s = {.coll = COLL_ALLREDUCE, .algo = "collnet", .bytes = 1 << 20, .proto = PROTO_SIMPLE};
    cr_assert_eq(run_collective(t, &s, &o, &e), 0, "%s", e.msg);
    cr_assert_eq(run_collective(u, &s, &c, &e), 0, "flat: %s", e.msg);
    cr_expect_eq(c.time_s, o.time_s, "flat %g s, generated %g s", c.time_s, o.time_s);
    engine_result_free(&o.eng);
    engine_result_free(&c.eng);
    topo_free(u);
    topo_free(t);
    t = topo_yaml_load("topologies/cluster-h100.yaml", plain, 2, NULL);
    cr_assert_not_null(t);
    cr_assert_eq(run_collective(t, &q, &o, &e), 0, "%s", e.msg);
    cr_expect(strncmp(o.algo->name, "collnet", 7) != 0, "no SHARP, yet %s", o.algo->name);
    q.algo = "collnet";
    cr_expect_eq(run_collective(t, &q, &o, &e), BATON_EUNSUP);
    cr_expect(strstr(e.msg, "sharp: true") != NULL, "%s", e.msg);
    topo_free(t);
}

/* On A100 nodes (no NVLS) with SHARP, collnet_ring: the nodes' rings around
 * the fabric's sums. NCCL's plan runs it at 1 GiB; no row that reduces in a
 * node's switch takes a fabric's leaf for one (nvls refuses, saying why); the
 * closed form is within 10 % of the simulator from 64 MiB; the time does not
 * grow from 2 to 16 nodes, where the ring's does. */
Test(machines, collnet_ring_where_the_nodes_have_no_nvls) {
    double t_ring[2], t_cr[2];
    for (int i = 0; i < 2; i++) {
        const char *sets[] = {"sharp=true", i ? "nodes=16" : "nodes=2"};
        topo_t *t = topo_yaml_load("topologies/cluster-a100.yaml", sets, 2, NULL);
        cr_assert_not_null(t);
        baton_err_t e = {0};
        run_req_t q = {.coll = COLL_ALLREDUCE, .algo = "nccl", .bytes = 1ull << 30, .proto = RUN_PROTO_AUTO, .predict = 1};
        run_out_t o;
        cr_assert_eq(run_collective(t, &q, &o, &e), 0, "%s", e.msg);
        cr_expect_str_eq(o.algo->name, "collnet_ring");
        q.algo = "nvls";
        cr_expect_eq(run_collective(t, &q, &o, &e), BATON_EUNSUP);
        cr_expect(strstr(e.msg, "fabric") != NULL, "%s", e.msg);
        for (uint64_t n = 64ull << 20; n <= 256ull << 20; n <<= 2) {
            double ratio = closed_over_sim(t, "collnet_ring", n, CONTENTION_FIFO, &t_cr[i]);
            cr_expect(fabs(ratio - 1) < 0.10, "%llu B: closed form / simulated %g", (unsigned long long)n, ratio);
        }
        run_req_t r = {.coll = COLL_ALLREDUCE, .algo = "ring", .bytes = 256ull << 20, .proto = PROTO_SIMPLE};
        cr_assert_eq(run_collective(t, &r, &o, &e), 0, "%s", e.msg);
        t_ring[i] = o.time_s;
        engine_result_free(&o.eng);
        topo_free(t);
    }
    cr_expect_lt(t_cr[1], 1.05 * t_cr[0], "collnet_ring 16 nodes %g s, 2 nodes %g s", t_cr[1], t_cr[0]);
    cr_expect_gt(t_ring[1], 1.3 * t_ring[0], "ring 16 nodes %g s, 2 nodes %g s", t_ring[1], t_ring[0]);
}

/* CollNet's time stays flat with the node count where a ring's grows
 * (cluster-h100 with SHARP, 2 and 16 nodes, 256 MiB, simulated). */
Test(machines, collnet_time_does_not_grow_with_nodes) {
    double tc[2], tr[2];
    for (int i = 0; i < 2; i++) {
        const char *sets[] = {"sharp=true", i ? "nodes=16" : "nodes=2"};
        topo_t *t = topo_yaml_load("topologies/cluster-h100.yaml", sets, 2, NULL);
        cr_assert_not_null(t);
        for (int a = 0; a < 2; a++) {
            run_req_t q = {.coll = COLL_ALLREDUCE, .algo = a ? "ring" : "collnet", .bytes = 256ull << 20,
                           .proto = PROTO_SIMPLE};
            run_out_t o;
            cr_assert_eq(run_collective(t, &q, &o, NULL), 0);
            (a ? tr : tc)[i] = o.time_s;
            engine_result_free(&o.eng);
        }
        topo_free(t);
    }
    cr_expect_lt(tc[1], 1.02 * tc[0], "collnet 16 nodes %g s, 2 nodes %g s", tc[1], tc[0]);
    cr_expect_gt(tr[1], 1.3 * tr[0], "ring 16 nodes %g s, 2 nodes %g s", tr[1], tr[0]);
    cr_expect_lt(tc[1], tr[1]);
}

/* nccl_env: what the machine's NCCL is told (NCCL_ALGO, NCCL_PROTO, NCCL's
 * list syntax): -a nccl picks within it (nvls/Simple at 256 MiB on hgx-h100
 * without), -a auto does not, a written file keeps it, and a name NCCL does
 * not have is an error at its line. */
Test(machines, nccl_env_binds_nccls_pick) {
    topo_t *t = load_text("build/env-test.yaml", "name: envbox\nextends: \"../topologies/hgx-h100.yaml\"\n"
                          "nccl_env: {NCCL_ALGO: \"Ring\", NCCL_PROTO: \"^LL128\"}\n");
    run_req_t q = {.coll = COLL_ALLREDUCE, .algo = "nccl", .bytes = 256u << 20, .proto = RUN_PROTO_AUTO, .predict = 1};
    run_out_t o;
    baton_err_t e = {0};
    for (int i = 0; i < 2; i++) {
        cr_assert_eq(run_collective(t, &q, &o, &e), 0, "%s", e.msg);
        cr_expect_str_eq(o.algo->name, "ring");
        cr_expect_neq(o.proto, PROTO_LL128);
        q.bytes = 64u << 10;
    }
    q.algo = "auto", q.bytes = 256u << 20;
    cr_assert_eq(run_collective(t, &q, &o, &e), 0, "%s", e.msg);
    cr_expect_str_neq(o.algo->name, "ring", "-a auto is baton's catalogue, not NCCL");
    FILE *f = fopen("build/env-written.yaml", "w");
    cr_assert_not_null(f);
    cr_assert_eq(topo_write_yaml(t, "written", f), 0);
    fclose(f);
    topo_free(t);
    t = load("build/env-written.yaml", NULL);
    cr_expect_str_eq(topo_params_c(t)->nccl_env[0], "Ring");
    cr_expect_str_eq(topo_params_c(t)->nccl_env[1], "^LL128");
    topo_free(t);
    f = fopen("build/env-bad.yaml", "w");
    cr_assert_not_null(f);
    fputs("name: envbox\nextends: \"../topologies/hgx-h100.yaml\"\nnccl_env: {NCCL_ALGO: \"Ring,Rign\"}\n", f);
    fclose(f);
    cr_expect_null(topo_yaml_load("build/env-bad.yaml", NULL, 0, &e));
    cr_expect(strstr(e.msg, "env-bad.yaml:3:23: NCCL_ALGO 'Ring,Rign': a name NCCL does not have") != NULL, "%s", e.msg);
    /* what a person sees: the plan says so, and both its columns run the ring */
    th_says("plan -t tests/data/nccl-env.yaml -c allreduce --sizes 1GiB", 0,
            "NCCL is told (nccl_env): NCCL_ALGO=Ring NCCL_PROTO=^LL128", 1);
    th_says("plan -t tests/data/nccl-env.yaml -c allreduce --sizes 1GiB", 0, "ring/Simple", 1);
    th_says("topo tests/data/nccl-env.yaml", 0, "nccl_env       NCCL_ALGO=Ring NCCL_PROTO=^LL128", 1);
}

/* NCCL's ring broadcast and reduce run on every channel, each channel's
 * chain leaving the node by its own NIC (pipeline.c): on two H100 nodes
 * (eight 400 Gb/s NICs each) 1 GiB moves at more than four NICs' rate,
 * where one channel's chain is held to one NIC's; the closed form within
 * 20 % of the simulator, which queues the channels on shared routes. */
static double chain_time(topo_t *t, coll_t c, uint64_t n, int channels, int predict) {
    run_req_t q = {.coll = c, .algo = "chain", .bytes = n, .proto = PROTO_SIMPLE, .predict = predict,
                   .opts = {.channels = channels}};
    run_out_t o;
    baton_err_t e = {0};
    cr_assert_eq(run_collective(t, &q, &o, &e), 0, "%s", e.msg);
    engine_result_free(&o.eng);
    return o.time_s;
}

Test(machines, ring_broadcast_and_reduce_run_on_every_channel) {
    topo_t *t = load("topologies/cluster-h100.yaml", NULL);
    const double nic = 50e9, gib = 1073741824.0;
    for (int i = 0; i < 2; i++) {
        coll_t c = i ? COLL_REDUCE : COLL_BROADCAST;
        double all = chain_time(t, c, 1u << 30, 0, 1), one = chain_time(t, c, 1u << 30, 1, 1);
        cr_expect(gib / all > 4 * nic, "%s on the machine's channels: %.1f GB/s", coll_name(c), gib / all / 1e9);
        cr_expect(gib / one < nic, "%s on one channel: %.1f GB/s", coll_name(c), gib / one / 1e9);
        double closed = chain_time(t, c, 64u << 20, 0, 1), sim = chain_time(t, c, 64u << 20, 0, 0);
        cr_expect(fabs(closed / sim - 1) < 0.2, "%s 64 MiB: closed form %g s, simulated %g s", coll_name(c), closed, sim);
    }
    topo_free(t);
}

/* All-to-all under -a nccl is NCCL's grouped sends, whose protocol is NCCL's
 * rule, not the fastest: LL while a peer's message is at most 16 KiB
 * (NCCL_P2P_LL_THRESHOLD), Simple above. On hgx-h100 LL's closed form is
 * the faster at 512 KiB (64 KiB a peer), yet NCCL runs Simple. */
Test(machines, alltoall_takes_nccls_p2p_protocol) {
    th_says("predict -t topologies/hgx-h100.yaml -c alltoall -a nccl -s 128KiB", 0, "protocol LL ", 1);
    th_says("predict -t topologies/hgx-h100.yaml -c alltoall -a nccl -s 512KiB", 0,
            "protocol Simple (NCCL's p2p rule: LL while a peer's message is at most 16 KiB)", 1);
    th_says("predict -t topologies/hgx-h100.yaml -c alltoall -a direct --proto LL -s 512KiB", 0, "protocol LL", 1);
}
