/* test_step.c - the four buckets (sim/answer/step.c), model shapes (models/llm.c),
 * GPU specs in machine files, and collectives at the same time
 * (algorithms/group.c, sim/answer/concurrent.c). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sim/answer/concurrent.h"
#include "../sim/answer/run.h"
#include "../sim/answer/step.h"
#include "../topologies/topo_yaml.h"
#include "helpers.h"

/* Parameter counts the model cards publish (config.json shapes give them to
 * the 0.1 %): Llama 3 8B 8.03 B, 70B 70.6 B, Llama 3.1 405B 405.9 B (the
 * cards' "8B / 70B / 405B" rounded), Qwen2.5-7B 7.61 B (its card), Mixtral
 * 8x7B 46.7 B total and 12.9 B active (Mistral's announcement). */
Test(step, model_shapes_have_their_published_sizes) {
    struct { const char *name; double total, active; } want[] = {
        {"llama3-8b", 8.03e9, 8.03e9}, {"llama3-70b", 70.6e9, 70.6e9}, {"llama3-405b", 405.9e9, 405.9e9},
        {"qwen2.5-7b", 7.61e9, 7.61e9}, {"mixtral-8x7b", 46.7e9, 12.9e9}};
    for (int i = 0; i < 5; i++) {
        const llm_t *m = llm_find(want[i].name);
        cr_assert_not_null(m, "%s", want[i].name);
        cr_expect_null(llm_check(m), "%s", want[i].name);
        cr_expect(fabs(llm_params(m) / want[i].total - 1) < 0.002, "%s: %.4g params, published %.4g", m->name,
                  llm_params(m), want[i].total);
        cr_expect(fabs(llm_active_params(m) / want[i].active - 1) < 0.002, "%s: %.4g active", m->name, llm_active_params(m));
    }
    cr_expect_eq(llm_find("70b"), llm_find("llama3-70b"));
    const llm_t *q = llm_find("qwen2.5-7b");             /* the seed post's model: 28 layers, hidden 3584 */
    cr_expect(q->layers == 28 && q->hidden == 3584 && q->heads == 28 && q->kv_heads == 4 && q->ffn == 18944);
    const llm_t *l = llm_find("llama3-70b");             /* Meta's config.json */
    cr_expect(l->layers == 80 && l->hidden == 8192 && l->heads == 64 && l->kv_heads == 8 && l->ffn == 28672 && l->vocab == 128256);
}

static const char *tiny_machine =
    "name: tiny\n"
    "gpu: {name: testgpu, bf16: 100TFLOPS, fp8: 0FLOPS, hbm_bw: 1TB/s, hbm: 16GB, launch: 5us, graph_launch: 1us}\n"
    "nodes: [{name: g0}, {name: g1}, {name: sw, kind: switch}]\n"
    "links: [{a: \"g[0-1]\", b: sw, bw: 100GB/s, latency: 1us}]\n";

static topo_t *write_and_load(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    return th_load(path, NULL);
}

/* A decode step by hand: 2 layers, hidden 1024, 8 heads of 128 (no GQA), MLP
 * 4096, vocabulary 1000, batch 1, 1,023 tokens of context, bf16, one GPU.
 *   attention params 4 x 1024^2 = 4,194,304; MLP 3 x 1024 x 4096 = 12,582,912
 *   matmul FLOPs 2 x (4,194,304 + 12,582,912) x 2 layers + head 2 x 1000 x 1024
 *     = 67,108,864 + 2,048,000 = 69,156,864
 *   attention FLOPs 4 x 1,024 keys x 8 x 128 x 2 layers = 8,388,608
 *   weight bytes 2 B x the same parameters = 69,156,864
 *   KV bytes 2 (K, V) x 8 x 128 x 2 B x 1,024 tokens x 2 layers = 8,388,608
 *   activations, elements per layer: matmuls in + out: qkv 1024 + 3072, o 1024
 *     + 1024, gate-up 1024 + 8192, down 4096 + 1024 = 20,480; elementwise: 2
 *     norms with residual 8 x 1024, rope 2 x 2048, silu x up 3 x 4096 = 24,576;
 *     attention's Q and output 2,048: 47,104 x 2 B x 2 layers = 188,416; the
 *     head's in and out (1024 + 1000) x 2 B = 4,048; bytes 77,545,472 + 192,464
 *   kernels 9 per layer x 2 + 4 per pass = 22 */
Test(step, buckets_match_a_hand_computed_decode) {
    topo_t *t = write_and_load("build/tiny-step.yaml", tiny_machine);
    cr_assert(topo_params_c(t)->has_gpu);
    llm_t m = {.name = "tiny", .layers = 2, .hidden = 1024, .heads = 8, .kv_heads = 8, .head_dim = 128, .ffn = 4096, .vocab = 500};
    m.vocab = 1000;
    step_req_t q = {.m = &m, .gpu = &topo_params_c(t)->gpu, .phase = STEP_DECODE, .batch = 1, .seq = 1023, .tp = 1,
                    .proto = RUN_PROTO_AUTO};
    step_defaults(&q);
    step_out_t o;
    baton_err_t e = {0};
    cr_assert_eq(step_run(t, &q, &o, &e), 0, "%s", e.msg);
    cr_expect_eq(o.flops, 69156864.0 + 8388608.0);
    cr_expect_eq(o.bytes, 69156864.0 + 8388608.0 + 188416.0 + 4048.0);
    cr_expect_eq(o.kernels, 22);
    cr_expect_float_eq(o.compute_s, 77545472.0 / (0.6 * 100e12), 1e-15);
    cr_expect_float_eq(o.memory_s, 77737936.0 / (0.8 * 1e12), 1e-15);
    cr_expect_float_eq(o.overhead_s, 22 * 5e-6, 1e-15);
    cr_expect_eq(o.ncomm, 0, "one GPU: no collectives");
    cr_expect_float_eq(o.roofline_s, o.memory_s, 1e-15, "decode at batch 1 is all memory");
    cr_expect_float_eq(o.step_s, o.memory_s + o.overhead_s, 1e-15);
    cr_expect_eq(step_bound(&o), 3, "22 launches of 5 us outweigh 97 us of memory");
    q.graphs = 1;
    cr_assert_eq(step_run(t, &q, &o, &e), 0);
    cr_expect_float_eq(o.overhead_s, 22 * 1e-6, 1e-15, "CUDA graphs: the graph launch cost");
    cr_expect_eq(step_bound(&o), 1, "with CUDA graphs memory bounds it");
    /* Prefill of 256 tokens: weights 69,156,864; new K and V 2 layers x 4,096 B
     * x 256 = 2,097,152; FlashAttention's two query blocks read 128 and 256
     * keys' K and V again: 2 x 384 x 4,096 = 3,145,728; activations 256 x
     * 47,104 x 2 B x 2 layers = 48,234,496; the head (last token) 4,048. */
    q.phase = STEP_PREFILL, q.seq = 256, q.graphs = 0;
    cr_assert_eq(step_run(t, &q, &o, &e), 0);
    cr_expect_eq(o.bytes, 69156864.0 + 2097152.0 + 3145728.0 + 48234496.0 + 4048.0);
    topo_free(t);
}

/* Tensor parallel 8 on an HGX H100: 160 all-reduces of batch x hidden x 2 B,
 * each as long as `baton sim -a nccl` makes it; decode at batch 1 is bound
 * by memory, prefill of 8 K tokens by compute (the seed post's question). */
Test(step, tensor_parallel_transport_is_the_simulated_allreduce) {
    topo_t *t = th_load("topologies/hgx-h100.yaml", NULL);
    step_req_t q = {.m = llm_find("llama3-70b"), .gpu = &topo_params_c(t)->gpu, .phase = STEP_DECODE, .batch = 1,
                    .seq = 4096, .tp = 8, .proto = RUN_PROTO_AUTO};
    step_defaults(&q);
    step_out_t o;
    baton_err_t e = {0};
    cr_assert_eq(step_run(t, &q, &o, &e), 0, "%s", e.msg);
    cr_assert_eq(o.ncomm, 1);
    cr_expect_eq(o.comm[0].count, 160);
    cr_expect_eq(o.comm[0].bytes, 8192 * 2);
    run_req_t rq = {.coll = COLL_ALLREDUCE, .algo = "nccl", .bytes = 8192 * 2, .proto = RUN_PROTO_AUTO};
    run_out_t ro;
    cr_assert_eq(run_collective(t, &rq, &ro, &e), 0);
    cr_expect_eq(o.comm[0].each_s, ro.time_s);
    cr_expect_float_eq(o.transport_s, 160 * ro.time_s, 1e-12);
    engine_result_free(&ro.eng);
    cr_expect_eq(step_bound(&o), 1, "70B decode at batch 1: memory");
    cr_expect_float_eq(o.weights_bytes, llm_params(q.m) * 2 / 8, o.weights_bytes * 1e-4, "all but the norms' weights");
    q.phase = STEP_PREFILL;
    q.seq = 8192;
    cr_assert_eq(step_run(t, &q, &o, &e), 0);
    cr_expect_eq(step_bound(&o), 0, "prefill of 8 K tokens: compute");
    cr_expect_eq(o.comm[0].bytes, 8192ull * 8192 * 2);
    topo_free(t);
}

/* The trace's slices end exactly where the step does. */
Test(step, trace_covers_the_step) {
    topo_t *t = th_load("topologies/hgx-h100.yaml", NULL);
    step_req_t q = {.m = llm_find("mixtral-8x7b"), .gpu = &topo_params_c(t)->gpu, .phase = STEP_DECODE, .batch = 16,
                    .seq = 2048, .tp = 4, .dp = 2, .ep = 4, .proto = RUN_PROTO_AUTO};
    step_defaults(&q);
    step_out_t o;
    baton_err_t e = {0};
    cr_assert_eq(step_run(t, &q, &o, &e), 0, "%s", e.msg);
    cr_expect_eq(o.ncomm, 2, "tp all-reduce and ep all-to-all");
    char *js = step_trace_json(&q, &o), *p = js;
    cr_assert_not_null(js);
    double end = 0, ts, dur;
    while ((p = strstr(p, "\"ts\":")) && sscanf(p, "\"ts\":%lf,\"dur\":%lf", &ts, &dur) == 2) {
        end = fmax(end, ts + dur);
        p++;
    }
    cr_expect(fabs(end * 1e-6 / o.step_s - 1) < 0.01, "trace ends at %.6g s, the step at %.6g s", end * 1e-6, o.step_s);
    free(js);
    topo_free(t);
}

/* Two all-reduces on disjoint GPUs of an NVSwitch box take exactly the time
 * of one; one that waits for the first starts when it ends (plus its delay). */
Test(concurrent, disjoint_groups_take_the_time_of_one) {
    topo_t *t = th_load("topologies/hgx-h100.yaml", NULL);
    int32_t a[4] = {0, 1, 2, 3}, b[4] = {4, 5, 6, 7};
    conc_coll_t c[3] = {{.coll = COLL_ALLREDUCE, .algo = "ring", .bytes = 64 << 20, .nranks = 4, .ranks = a, .after = -1},
                        {.coll = COLL_ALLREDUCE, .algo = "ring", .bytes = 64 << 20, .nranks = 4, .ranks = b, .after = -1},
                        {.coll = COLL_ALLREDUCE, .algo = "ring", .bytes = 64 << 20, .nranks = 4, .ranks = a, .after = 0,
                         .start_s = 5e-6}};
    conc_opts_t o = {.proto = PROTO_SIMPLE};
    engine_result_t r;
    baton_err_t e = {0};
    cr_assert_eq(conc_run(t, c, 1, &o, &r, &e), 0, "%s", e.msg);
    double alone = c[0].end_s;
    engine_result_free(&r);
    cr_assert_eq(conc_run(t, c, 3, &o, &r, &e), 0, "%s", e.msg);
    cr_expect_eq(c[0].end_s, alone);
    cr_expect_eq(c[1].end_s, alone);
    cr_expect_float_eq(c[2].end_s, 2 * alone + 5e-6, 1e-12, "after the first, 5 us later");
    cr_expect_float_eq(r.time_s, c[2].end_s, 1e-15);
    engine_result_free(&r);
    topo_free(t);
}

/* An in-switch all-reduce on node 1 reduces in node 1's NVSwitch: it takes
 * what node 0's takes (it named node 0's switch, which node 1 cannot reach),
 * and step's tensor-parallel groups on two nodes run NVLS as on one. */
Test(concurrent, nvls_reduces_in_its_own_nodes_switch) {
    cJSON *a = th_cli_json("concurrent -t cluster-b200 --json 'a=nvls s=128MiB ranks=0-7'");
    cJSON *b = th_cli_json("concurrent -t cluster-b200 --json 'a=nvls s=128MiB ranks=8-15'");
    cJSON *both = th_cli_json("concurrent -t cluster-b200 --json 'a=nvls s=128MiB ranks=8-15' 'a=nvls s=128MiB ranks=0-7'");
    double t0 = th_jnum(a, "time_s");
    cr_expect(t0 > 0);
    cr_expect_eq(th_jnum(b, "time_s"), t0);
    cr_expect_eq(th_jnum(both, "time_s"), t0, "two nodes' switches side by side");
    cJSON_Delete(a), cJSON_Delete(b), cJSON_Delete(both);
    th_says("step -t cluster-b200 --model llama3-70b --phase prefill --batch 2 --tp 8 --dp 2", 0,
            "(8 ranks, 2 groups at once, nvls/Simple", 1);
}

/* A one-rank member sends nothing: it costs nothing, as a one-rank sim
 * does, and the run ends with its last member, whatever the protocol;
 * --json says each member's start, end, time and busbw as the table does. */
Test(concurrent, a_one_rank_member_costs_nothing) {
    cJSON *j = th_cli_json("concurrent -t hgx-h100 --json 's=1MiB ranks=0' 's=1KiB ranks=1 start=3us'");
    cJSON *c = cJSON_GetObjectItemCaseSensitive(j, "collectives");
    cr_expect_eq(th_jnum(cJSON_GetArrayItem(c, 0), "end_s"), 0);
    cr_expect_float_eq(th_jnum(cJSON_GetArrayItem(c, 1), "end_s"), 3e-6, 1e-15);
    cr_expect_float_eq(th_jnum(j, "time_s"), 3e-6, 1e-15, "all done with its last member");
    cJSON_Delete(j);
    j = th_cli_json("concurrent -t hgx-h100 --json 's=1MiB ranks=0-3' 's=1MiB ranks=4-7 start=3us'");
    c = cJSON_GetObjectItemCaseSensitive(j, "collectives");
    cJSON *second = cJSON_GetArrayItem(c, 1);
    cr_expect_float_eq(th_jnum(second, "start_s"), 3e-6, 1e-15);
    cr_expect_float_eq(th_jnum(second, "time_s"), th_jnum(second, "end_s") - 3e-6, 1e-15);
    cr_expect_float_eq(th_jnum(second, "busbw_GBps"), 1048576 * 1.5 / th_jnum(second, "time_s") / 1e9, 1e-3);
    cr_expect_float_eq(th_jnum(j, "time_s"), th_jnum(second, "end_s"), 1e-15);
    cJSON_Delete(j);
}

/* Each collective may run its own protocol (a TP all-reduce in LL128 while a
 * DP reduce-scatter runs Simple): on disjoint GPUs each ends exactly when it
 * ends alone under its protocol, which differ; the run ends with the later,
 * and both verify. */
Test(concurrent, each_member_runs_its_own_protocol) {
    topo_t *t = th_load("topologies/hgx-h100.yaml", NULL);
    int32_t a[4] = {0, 1, 2, 3}, b[4] = {4, 5, 6, 7};
    conc_coll_t c[2] = {{.coll = COLL_ALLREDUCE, .algo = "ring", .bytes = 4 << 20, .nranks = 4, .ranks = a, .after = -1},
                        {.coll = COLL_REDUCE_SCATTER, .algo = "ring", .bytes = 4 << 20, .nranks = 4, .ranks = b, .after = -1}};
    double alone[2];
    engine_result_t r;
    baton_err_t e = {0};
    for (int k = 0; k < 2; k++) {
        conc_opts_t o = {.proto = k ? PROTO_SIMPLE : PROTO_LL128};
        cr_assert_eq(conc_run(t, &c[k], 1, &o, &r, &e), 0, "%s", e.msg);
        alone[k] = c[k].end_s;
        engine_result_free(&r);
    }
    c[0].own_proto = 1, c[0].proto = PROTO_LL128;
    conc_opts_t o = {.proto = PROTO_SIMPLE, .verify = 1};
    cr_assert_eq(conc_run(t, c, 2, &o, &r, &e), 0, "%s", e.msg);
    cr_expect_eq(r.verified, 1);
    cr_expect_eq(c[0].end_s, alone[0], "LL128 beside Simple: %g s, alone %g s", c[0].end_s, alone[0]);
    cr_expect_eq(c[1].end_s, alone[1], "Simple beside LL128: %g s, alone %g s", c[1].end_s, alone[1]);
    cr_expect_eq(r.time_s, fmax(alone[0], alone[1]));
    engine_result_free(&r);
    c[0].own_proto = 0;                          /* both under Simple: the all-reduce's time changes */
    cr_assert_eq(conc_run(t, c, 2, &o, &r, &e), 0, "%s", e.msg);
    cr_expect_neq(c[0].end_s, alone[0]);
    engine_result_free(&r);
    topo_free(t);
}

/* NVLS's rate reads the domain a run reduces over (topo_nvls_share): four
 * ranks of hgx-h100's eight on its switch move their bytes at
 * nvls_efficiency x 4/3, all eight at x 8/7, so at 1 GiB (bandwidth-bound)
 * the eight take (4/3)/(8/7) = 7/6 the four's time, where a machine-wide
 * domain would give both the same. */
Test(concurrent, an_nvls_group_is_a_domain_of_its_own_ranks) {
    cJSON *four = th_cli_json("concurrent -t hgx-h100 --json 'a=nvls s=1GiB ranks=0-3'");
    cJSON *eight = th_cli_json("concurrent -t hgx-h100 --json 'a=nvls s=1GiB ranks=0-7'");
    double r = th_jnum(eight, "time_s") / th_jnum(four, "time_s");
    cr_expect(fabs(r - 7.0 / 6) < 0.01, "eight ranks take %g x four's time", r);
    cJSON_Delete(four), cJSON_Delete(eight);
}

/* Two sends that cross one thin link at once: about twice the time of one
 * under fair sharing; under FIFO the second waits for the first. */
Test(concurrent, a_shared_link_takes_twice_as_long) {
    topo_t *t = write_and_load("build/two-switches.yaml",
                               "name: two-switches\nprotocols: none\n"
                               "nodes: [{name: \"g[0-3]\"}, {name: s0, kind: switch}, {name: s1, kind: switch}]\n"
                               "links:\n  - {a: \"g[0-1]\", b: s0, bw: 100GB/s, latency: 1us}\n"
                               "  - {a: \"g[2-3]\", b: s1, bw: 100GB/s, latency: 1us}\n"
                               "  - {a: s0, b: s1, bw: 10GB/s, latency: 1us}\n");
    int32_t a[2] = {0, 2}, b[2] = {1, 3};
    conc_coll_t c[2] = {{.coll = COLL_BROADCAST, .algo = "naive", .bytes = 100 << 20, .nranks = 2, .ranks = a, .after = -1},
                        {.coll = COLL_BROADCAST, .algo = "naive", .bytes = 100 << 20, .nranks = 2, .ranks = b, .after = -1}};
    engine_result_t r;
    baton_err_t e = {0};
    for (int fair = 0; fair < 2; fair++) {
        conc_opts_t o = {.proto = PROTO_NONE, .contention = fair ? CONTENTION_FAIR : CONTENTION_FIFO};
        cr_assert_eq(conc_run(t, c, 1, &o, &r, &e), 0, "%s", e.msg);
        double alone = c[0].end_s;
        engine_result_free(&r);
        cr_expect_float_eq(alone, 3e-6 + (100 << 20) / 10e9, 1e-12, "3 hops, the thin link's rate");
        cr_assert_eq(conc_run(t, c, 2, &o, &r, &e), 0, "%s", e.msg);
        double last = fmax(c[0].end_s, c[1].end_s), first = fmin(c[0].end_s, c[1].end_s);
        cr_expect(fabs(last / alone - 2) < 0.01, "%s: the later ends at %.4g x alone", fair ? "fair" : "fifo", last / alone);
        if (fair) cr_expect(fabs(first / alone - 2) < 0.01, "fair: both end together (%.4g x)", first / alone);
        else cr_expect_float_eq(first, alone, 1e-12, "fifo: the first goes at full rate");
        engine_result_free(&r);
    }
    for (int i = 0; i < 2; i++) c[i] = (conc_coll_t){.coll = COLL_ALLREDUCE, .algo = "ring", .bytes = 64 << 20, .nranks = 2,
                                                     .ranks = i ? b : a, .after = -1};
    conc_opts_t o = {.proto = PROTO_NONE, .contention = CONTENTION_FAIR};   /* two all-reduces, both across it */
    cr_assert_eq(conc_run(t, c, 1, &o, &r, &e), 0, "%s", e.msg);
    double alone = c[0].end_s;
    engine_result_free(&r);
    cr_assert_eq(conc_run(t, c, 2, &o, &r, &e), 0, "%s", e.msg);
    cr_expect(fabs(c[0].end_s / alone - 2) < 0.02 && fabs(c[1].end_s / alone - 2) < 0.02,
              "all-reduces: %.4g and %.4g x alone", c[0].end_s / alone, c[1].end_s / alone);
    engine_result_free(&r);
    topo_free(t);
}

/* Training on a cluster: the data-parallel reduce-scatter and all-gather run
 * over tp x pp groups at once, of the parameters a GPU holds, and overlapping
 * them with the backward pass hides at most their time. */
Test(step, training_syncs_data_parallel_groups) {
    topo_t *t = th_load("topologies/cluster-h100.yaml", "nodes=4");
    step_req_t q = {.m = llm_find("llama3-8b"), .gpu = &topo_params_c(t)->gpu, .phase = STEP_TRAIN, .batch = 16,
                    .seq = 2048, .tp = 8, .dp = 2, .pp = 2, .proto = RUN_PROTO_AUTO};
    step_defaults(&q);
    cr_expect_eq(q.microbatches, 8, "batch 16 / dp 2 / micro-batch 1, as Megatron");
    step_out_t o;
    baton_err_t e = {0};
    cr_assert_eq(step_run(t, &q, &o, &e), 0, "%s", e.msg);
    int dp = 0;
    for (int i = 0; i < o.ncomm; i++) {
        if (o.comm[i].kind != STEP_DP_RS && o.comm[i].kind != STEP_DP_AG) continue;
        dp++;
        cr_expect_eq(o.comm[i].ranks, 2);
        cr_expect_eq(o.comm[i].groups, 16, "tp x pp groups");
        cr_expect(fabs(o.comm[i].bytes / (o.weights_bytes) - 1) < 1e-9, "%s of the weights a GPU holds", o.comm[i].what);
        cr_expect_gt(o.comm[i].each_s, (double)o.comm[i].bytes / 2 / 50e9, "%s crosses a 400 Gb/s NIC", o.comm[i].what);
    }
    cr_expect_eq(dp, 2, "reduce-scatter and all-gather");
    cr_expect(o.hidden_s > 0 && o.hidden_s <= o.transport_s, "hides %.4g of %.4g s", o.hidden_s, o.transport_s);
    double dp_alone = 0;                     /* sharing the machine with the all-reduces cannot speed them up */
    for (int i = 0; i < o.ncomm; i++) if (o.comm[i].kind >= STEP_DP_RS) dp_alone += o.comm[i].each_s;
    cr_expect_geq(o.dp_shared_s, dp_alone * (1 - 1e-9), "together %.6g s, alone %.6g s", o.dp_shared_s, dp_alone);
    cr_expect_geq(o.tp_slowdown_s, 0);
    cr_expect(o.overlap_step_s < o.step_s && o.overlap_step_s >= o.step_s - dp_alone,
              "overlapped %.6g s, not %.6g s, hides at most the DP time", o.overlap_step_s, o.step_s);
    cr_expect_eq(o.comm[0].count, (8 + 2 - 1) * 16 * 4, "tp: 4 all-reduces per layer, 16 layers a stage, 9 slots");
    topo_free(t);
}

/* A pipeline stage's send runs NCCL's send/recv protocols: LL up to 16 KiB
 * (NCCL_P2P_LL_THRESHOLD), Simple above, never LL128 (the chain that times
 * it ran LL128 for a 512 MiB training send, 0.3 % faster by its closed form);
 * across nodes Simple at every size, as a network connection has no LL
 * buffers (net.cc, NCCL_ALLOC_P2P_NET_LL_BUFFERS 0). --proto still decides
 * when given. tp 8 on 8-GPU nodes: each stage a node; tp 2 on one node: the
 * stages share it. */
Test(step, a_stage_send_runs_nccls_p2p_protocols) {
    const struct { const char *machine; step_phase_t phase; int batch, seq, tp, proto; int want; } c[] = {
        {"nodes=4", STEP_TRAIN, 64, 4096, 8, RUN_PROTO_AUTO, PROTO_SIMPLE},     /* 512 MiB */
        {"nodes=4", STEP_DECODE, 1, 4096, 8, RUN_PROTO_AUTO, PROTO_SIMPLE},     /* 16 KiB: one token of 8192 x bf16 */
        {"nodes=1", STEP_DECODE, 1, 4096, 2, RUN_PROTO_AUTO, PROTO_LL},         /* the same, inside a node */
        {"nodes=1", STEP_DECODE, 2, 4096, 2, RUN_PROTO_AUTO, PROTO_SIMPLE},     /* 32 KiB */
        {"nodes=4", STEP_TRAIN, 64, 4096, 8, PROTO_LL128, PROTO_LL128}};
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        topo_t *t = th_load("topologies/cluster-h100.yaml", c[i].machine);
        step_req_t q = {.m = llm_find("llama3-70b"), .gpu = &topo_params_c(t)->gpu, .phase = c[i].phase,
                        .batch = c[i].batch, .seq = c[i].seq, .tp = c[i].tp, .pp = 4, .proto = c[i].proto};
        step_defaults(&q);
        step_out_t o;
        baton_err_t e = {0};
        cr_assert_eq(step_run(t, &q, &o, &e), 0, "%s", e.msg);
        int seen = 0;
        for (int k = 0; k < o.ncomm; k++) {
            if (o.comm[k].kind != STEP_PP) continue;
            seen = 1;
            cr_expect_eq(o.comm[k].proto, c[i].want, "case %zu: %llu B ran %s", i, (unsigned long long)o.comm[k].bytes,
                         proto_name((proto_t)o.comm[k].proto));
        }
        cr_expect(seen, "case %zu: a pp send", i);
        topo_free(t);
    }
}

/* Collectives of every kind on overlapping rank lists, in any order, verify in
 * data mode, each against its own contract: ranks 1, 2, 3, 5, 7 and all 8. */
Test(concurrent, every_member_verifies) {
    topo_t *t = th_load("topologies/hgx-h100.yaml", NULL);
    int32_t one[1] = {6}, two[2] = {7, 0}, three[3] = {5, 1, 3}, five[5] = {4, 2, 0, 6, 1}, seven[7] = {1, 2, 3, 4, 5, 6, 7},
            all[8] = {3, 1, 4, 0, 5, 7, 2, 6};
    conc_coll_t c[] = {
        {.coll = COLL_ALLREDUCE, .algo = "ring", .bytes = 1000, .nranks = 1, .ranks = one, .after = -1},
        {.coll = COLL_BROADCAST, .algo = "binomial", .bytes = 777, .nranks = 2, .ranks = two, .root = 1, .after = -1},
        {.coll = COLL_REDUCE_SCATTER, .algo = "ring", .bytes = 999, .nranks = 3, .ranks = three, .channels = 2, .after = -1},
        {.coll = COLL_ALLGATHER, .algo = "bruck", .bytes = 1005, .nranks = 5, .ranks = five, .after = 1},
        {.coll = COLL_ALLTOALL, .algo = "pairwise", .bytes = 7 * 14 * 3, .nranks = 7, .ranks = seven, .after = -1, .start_s = 1e-6},
        {.coll = COLL_ALLREDUCE, .algo = "nvls", .bytes = 4096, .nranks = 8, .ranks = all, .after = -1},
        {.coll = COLL_REDUCE, .algo = "binomial", .bytes = 3001, .nranks = 8, .ranks = all, .root = 5, .after = 2}};
    int n = sizeof c / sizeof c[0];
    conc_opts_t o = {.proto = PROTO_SIMPLE, .verify = 1};
    engine_result_t r;
    baton_err_t e = {0};
    cr_assert_eq(conc_run(t, c, n, &o, &r, &e), 0, "%s", e.msg);
    cr_expect_eq(r.verified, 1);
    cr_expect_eq(c[0].end_s, 0, "one rank sends nothing and costs nothing");
    for (int k = 1; k < n; k++) cr_expect(c[k].end_s > 0 && c[k].end_s <= r.time_s, "collective %d ended", k);
    cr_expect(c[3].end_s > c[1].end_s && c[6].end_s > c[2].end_s, "the waiting ones end after what they wait for");
    engine_result_free(&r);
    int32_t twice[2] = {3, 3};
    conc_coll_t bad = {.coll = COLL_ALLREDUCE, .algo = "ring", .bytes = 64, .nranks = 2, .ranks = twice, .after = -1};
    cr_expect_lt(conc_run(t, &bad, 1, &o, &r, &e), 0, "a rank named twice");
    cr_expect(strstr(e.msg, "twice") != NULL, "%s", e.msg);
    topo_free(t);
}

/* ---- what the GPUs and hosts add, in a run of several (issue 47) ------ */

/* One collective's time as `sim` gives it (run_collective, a named row on
 * `channels` channels), and the part its links took. */
static double sim_time(topo_t *t, coll_t c, const char *algo, proto_t pr, uint64_t n, int channels, double *links) {
    run_req_t q = {.coll = c, .algo = algo, .bytes = n, .proto = pr, .opts = {.channels = channels}, .symmetric = -1};
    run_out_t o;
    baton_err_t e = {0};
    cr_assert_eq(run_collective(t, &q, &o, &e), 0, "%s %s: %s", coll_name(c), algo, e.msg);
    engine_result_free(&o.eng);
    *links = o.links_s;
    return o.time_s;
}

/* A collective alone in a run of several takes what `sim` gives it, where
 * the GPU and host add to its links' time: the staging through host memory
 * (pcie-box), the proxy's LL scan (cluster-a100, cluster-mi355x), the proxy
 * thread's operations, matches and inline copies (polaris's all-to-all) and
 * the TCP stack's messages (polaris on sockets). step and replay time their
 * groups so; they took the links' time alone (pcie-box 17.5 ms against 89.5,
 * polaris's 8 KiB all-to-all on 8 nodes 21.5 us against 162.4). */
Test(concurrent, a_member_pays_what_its_gpus_and_hosts_add) {
    struct { const char *machine, *sets; coll_t c; const char *algo; proto_t pr; uint64_t n; int ch; } k[] = {
        {"pcie-box", NULL, COLL_ALLREDUCE, "ring", PROTO_SIMPLE, 256u << 20, 1},
        {"cluster-a100", "nodes=2", COLL_ALLREDUCE, "ring", PROTO_LL, 256u << 10, 2},
        {"cluster-mi355x", "nodes=2", COLL_ALLGATHER, "ring", PROTO_LL, 1u << 20, 4},
        {"polaris", "nodes=8", COLL_ALLTOALL, "direct", PROTO_SIMPLE, 8u << 10, 1},
        {"polaris", "nodes=2,socket=true", COLL_ALLTOALL, "direct", PROTO_SIMPLE, 64u << 10, 1},
    };
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        char path[64];
        snprintf(path, sizeof path, "topologies/%s.yaml", k[i].machine);
        topo_t *t = th_load(path, k[i].sets);
        double links, want = sim_time(t, k[i].c, k[i].algo, k[i].pr, k[i].n, k[i].ch, &links);
        cr_assert_gt(want, 1.05 * links, "%s: the case must add to the links (%g s against %g)", k[i].machine, want, links);
        conc_coll_t c = {.coll = k[i].c, .bytes = k[i].n, .nranks = topo_nranks(t), .channels = k[i].ch, .after = -1};
        snprintf(c.algo, sizeof c.algo, "%s", k[i].algo);
        int32_t *r = malloc((size_t)c.nranks * sizeof *r);
        for (int j = 0; j < c.nranks; j++) r[j] = j;
        c.ranks = r;
        conc_opts_t o = {.proto = k[i].pr};
        engine_result_t res;
        baton_err_t e = {0};
        cr_assert_eq(conc_run(t, &c, 1, &o, &res, &e), 0, "%s", e.msg);
        cr_expect_float_eq(c.end_s, want, 1e-12 * want, "%s %s: %.9g s in a run of several, %.9g alone", k[i].machine,
                           k[i].algo, c.end_s, want);
        engine_result_free(&res);
        free(r);
        topo_free(t);
    }
}

/* The proxy's work follows where a member's ranks are: an all-to-all on
 * one GPU of each of 8 Polaris nodes pays its 14 connections a rank
 * (7 peers, both ways) x proxy_op_latency (10 us more each moves it 140
 * us: the floor binds), where counting by its own rank numbers (two nodes
 * of 4) would give 8; and a second one waiting for it starts when it ends,
 * floor included, and takes what it takes alone. */
Test(concurrent, a_members_proxy_work_follows_its_ranks) {
    topo_t *t = th_load("topologies/polaris.yaml", "nodes=8,proxy_op_latency=20us");
    topo_t *t0 = th_load("topologies/polaris.yaml", "nodes=8,proxy_op_latency=10us");
    int32_t spread[8];
    for (int j = 0; j < 8; j++) spread[j] = 4 * j;
    conc_coll_t c[2] = {{.coll = COLL_ALLTOALL, .algo = "direct", .bytes = 8 * 64, .nranks = 8, .ranks = spread, .after = -1},
                        {.coll = COLL_ALLTOALL, .algo = "direct", .bytes = 8 * 64, .nranks = 8, .ranks = spread, .after = 0}};
    conc_opts_t o = {.proto = PROTO_SIMPLE};
    engine_result_t r;
    baton_err_t e = {0};
    double end[2][2];
    for (int m = 0; m < 2; m++) {
        cr_assert_eq(conc_run(m ? t0 : t, c, 2, &o, &r, &e), 0, "%s", e.msg);
        end[m][0] = c[0].end_s, end[m][1] = c[1].end_s;
        engine_result_free(&r);
    }
    cr_expect_float_eq(end[0][0] - end[1][0], 14 * 10e-6, 1e-12, "spread: %.6g us more, want 140", 1e6 * (end[0][0] - end[1][0]));
    cr_expect_float_eq(end[0][1] - end[0][0], end[0][0], 1e-12, "the second after the first: %.6g us, the first %.6g",
                       1e6 * (end[0][1] - end[0][0]), 1e6 * end[0][0]);
    topo_free(t);
    topo_free(t0);
}

/* Staging through host memory (p2p off) is paid where two of a call's
 * ranks share a host: a 256 MiB ring all-reduce on two GPUs of one
 * cluster-pcie node takes what sim gives the one-node machine, and on one
 * GPU of each of two nodes the same as with staging off (stage_bw 0): its
 * bytes cross the NICs, not a host's memory. No protocol at all stages at
 * the copies' own rate (it was infinite). */
Test(concurrent, staging_is_paid_where_ranks_share_a_host) {
    topo_t *t = th_load("topologies/cluster-pcie.yaml", "nodes=2");
    topo_t *t0 = th_load("topologies/cluster-pcie.yaml", "nodes=2,stage_bw=0");
    topo_t *t1 = th_load("topologies/cluster-pcie.yaml", "nodes=1");
    int g = topo_params_c(t)->group_size;
    cr_assert_geq(g, 2);
    int32_t same[2] = {0, 1}, apart[2] = {0, g};
    conc_coll_t c = {.coll = COLL_ALLREDUCE, .algo = "ring", .bytes = 256u << 20, .nranks = 2, .after = -1};
    conc_opts_t o = {.proto = PROTO_SIMPLE};
    engine_result_t r;
    baton_err_t e = {0};
    double end[3];
    for (int k = 0; k < 3; k++) {
        c.ranks = k == 0 ? same : apart;
        cr_assert_eq(conc_run(k == 2 ? t0 : t, &c, 1, &o, &r, &e), 0, "%s", e.msg);
        end[k] = c.end_s;
        engine_result_free(&r);
    }
    cr_expect_float_eq(end[1], end[2], 1e-12 * end[2], "apart: %.6g ms, unstaged %.6g", 1e3 * end[1], 1e3 * end[2]);
    cr_assert_eq(topo_nranks(t1), 2);
    double links, want = sim_time(t1, COLL_ALLREDUCE, "ring", PROTO_SIMPLE, 256u << 20, 1, &links);
    cr_expect_float_eq(end[0], want, 1e-12 * want, "same host: %.6g ms, sim %.6g", 1e3 * end[0], 1e3 * want);
    cr_expect_gt(end[0], 1.5 * end[1], "staged %.6g ms against %.6g", 1e3 * end[0], 1e3 * end[1]);
    o.proto = PROTO_NONE;
    c.ranks = same;
    cr_assert_eq(conc_run(t, &c, 1, &o, &r, &e), 0, "%s", e.msg);
    double none = sim_time(t1, COLL_ALLREDUCE, "ring", PROTO_NONE, 256u << 20, 1, &links);
    cr_expect(isfinite(none) && none > links, "no protocol, sim: %g s, links %g", none, links);
    cr_expect_float_eq(c.end_s, none, 1e-12 * none, "no protocol: %.6g ms, sim %.6g", 1e3 * c.end_s, 1e3 * none);
    engine_result_free(&r);
    topo_free(t);
    topo_free(t0);
    topo_free(t1);
}

/* Two calls alike but for where their ranks sit pay their own host terms:
 * an all-to-all on one GPU of each of 8 Polaris nodes (14 operations a
 * rank) beside the same one on two nodes' 8 GPUs (8), each bound by the
 * proxy's floor, ends as it does alone (conc_run reuses an earlier member's
 * terms only where the members' ranks share nodes alike). */
Test(concurrent, members_alike_but_placed_apart_pay_their_own) {
    topo_t *t = th_load("topologies/polaris.yaml", "nodes=16,proxy_op_latency=20us");
    int32_t spread[8], packed[8];
    for (int j = 0; j < 8; j++) spread[j] = 4 * j, packed[j] = 32 + j;
    conc_coll_t c[2] = {{.coll = COLL_ALLTOALL, .algo = "direct", .bytes = 8 * 64, .nranks = 8, .ranks = spread, .after = -1},
                        {.coll = COLL_ALLTOALL, .algo = "direct", .bytes = 8 * 64, .nranks = 8, .ranks = packed, .after = -1}};
    conc_opts_t o = {.proto = PROTO_SIMPLE};
    engine_result_t r;
    baton_err_t e = {0};
    double alone[2];
    for (int k = 0; k < 2; k++) {
        cr_assert_eq(conc_run(t, &c[k], 1, &o, &r, &e), 0, "%s", e.msg);
        alone[k] = c[k].end_s;
        engine_result_free(&r);
    }
    cr_assert_gt(alone[0] - alone[1], 5 * 20e-6, "spread %.6g us, packed %.6g: 6 operations a rank apart", 1e6 * alone[0],
                 1e6 * alone[1]);
    cr_assert_eq(conc_run(t, c, 2, &o, &r, &e), 0, "%s", e.msg);
    cr_expect_float_eq(c[0].end_s, alone[0], 1e-12, "spread: %.6g us, alone %.6g", 1e6 * c[0].end_s, 1e6 * alone[0]);
    cr_expect_float_eq(c[1].end_s, alone[1], 1e-12, "packed: %.6g us, alone %.6g", 1e6 * c[1].end_s, 1e6 * alone[1]);
    engine_result_free(&r);
    topo_free(t);
}

/* Training on a whole NVL72 rack: the overlap run (the DP collectives with
 * 64 TP all-reduces a TP group one after another) needs more channels a
 * rank than a group has (SCHED_GROUP_MAX_CHANNELS), which made the command
 * fail with "a group of 592 collectives needs 36866 channels". The chain is
 * halved until it fits and said; the step answers. */
Test(step, a_whole_nvl72_rack_trains_with_a_shorter_chain_said) {
    char *out = NULL;
    int rc = th_cli("step -t gb200-nvl72 --model llama3-70b --phase train --batch 9 --seq 4096", &out, 1);
    cr_expect_eq(rc, 0, "%s", out);
    cr_expect(strstr(out, "(32 all-reduces a TP group beside them, not 64: a rank's channels in one run ran out)"), "%s", out);
    free(out);
    rc = th_cli("step -t hgx-h100 --model llama3-8b --phase train --batch 8 --seq 2048", &out, 1);
    cr_expect_eq(rc, 0, "%s", out);
    cr_expect(strstr(out, "beside them, not") == NULL, "a chain that fits is not said: %s", out);
    free(out);
}

/* What a new-user sweep found in step: with pipelining the compute line's
 * FLOPs are the critical path's, bubble included, so it says the bubble
 * and what a GPU executes (the same as the critical path without pp); a
 * datasheet's 80 GB is 80 GiB (85.9e9 bytes: nvidia-smi shows 79.6 GiB), so
 * 81.4 GB of weights and KV cache fit an H100 (it said DOES NOT FIT);
 * concurrent refuses 0 bytes as sim does. */
Test(step, pipelines_say_the_bubble_and_capacity_is_gib) {
    const char *base = "step -t cluster-h100 --set nodes=4 --model llama3-8b --phase train --batch 16 --seq 2048 --tp 8 --json";
    char cmd[256];
    snprintf(cmd, sizeof cmd, "%s --dp 4 --pp 1", base);
    cJSON *one = th_cli_json(cmd);
    snprintf(cmd, sizeof cmd, "%s --dp 1 --pp 4", base);
    cJSON *four = th_cli_json(cmd);
    cr_expect_eq(th_jnum(one, "flops_executed"), th_jnum(one, "flops"), "no pipeline: no bubble");
    cr_expect_lt(th_jnum(four, "flops_executed"), th_jnum(four, "flops"), "the bubble is not executed");
    cJSON_Delete(one);
    cJSON_Delete(four);
    char *out = NULL;
    cr_expect_eq(th_cli("step -t cluster-h100 --set nodes=4 --model llama3-8b --phase train --batch 16 --seq 2048 --tp 8 "
                        "--dp 1 --pp 4", &out, 1), 0);
    cr_expect(strstr(out, "slots, 3 of them the bubble (pp - 1)") != NULL, "%s", out);
    free(out);
    cr_expect_eq(th_cli("step -t hgx-h100 --model llama3-70b --batch 380 --seq 4096", &out, 1), 0);
    cr_expect(strstr(out, "(of 80 GiB, 85.9 GB)") != NULL && strstr(out, "DOES NOT FIT") == NULL, "%s", out);
    free(out);
    cr_expect_eq(th_cli("step -t hgx-h100 --model llama3-70b --batch 420 --seq 4096", &out, 1), 0);
    cr_expect(strstr(out, "DOES NOT FIT") != NULL, "%s", out);
    free(out);
    th_says("concurrent -t hgx-h100 's=0'", 1, "NCCL discards an empty collective", 1);
}
