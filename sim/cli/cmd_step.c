/* cmd_step.c - `baton step`: where a model's step spends its time. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../topologies/topo.h"
#include "../../topologies/topo_yaml.h"
#include "../../topologies/units.h"
#include "../answer/run.h"
#include "../answer/report.h"
#include "../../util/suggest.h"
#include "../answer/choice.h"
#include "../answer/step.h"
#include "cmd.h"

static const char help[] =
    "usage: baton step -t TOPO.yaml --model NAME [options]\n"
    "\n"
    "The four buckets of one step of a transformer on the machine: compute\n"
    "(FLOPs over the GPU's peak), memory (HBM bytes over its bandwidth),\n"
    "transport (the collectives, simulated on the machine, all groups at once)\n"
    "and overhead (kernel launches); which bounds the step, and by how much.\n"
    "\n"
    "  -t, --topo FILE      the machine; its `gpu:` gives peak, HBM and launch cost\n"
    "  -m, --model NAME     llama3-8b, llama3-70b, llama3-405b, qwen2.5-7b,\n"
    "                       mixtral-8x7b (or 8b, 70b, 405b, 7b), or a model file\n"
    "                       (YAML: name, layers, hidden, heads, kv_heads, head_dim,\n"
    "                       ffn, vocab, experts, top_k, tied)\n"
    "      --phase P        decode (default), prefill or train\n"
    "      --batch N        sequences in the step, all replicas (Megatron's global\n"
    "                       batch; default one per replica, train with --pp: 4 x pp\n"
    "                       microbatches per replica)\n"
    "      --seq N          decode: tokens already in the KV cache (default 4096);\n"
    "                       prefill, train: tokens per sequence (default 8192)\n"
    "      --tp N, --dp N, --pp N   tensor, data, pipeline parallel (default: tp\n"
    "                       within a node, the most of its GPUs that split the\n"
    "                       model's heads; pp 1; dp the ranks left); ranks in\n"
    "                       Megatron's order\n"
    "      --ep N           a MoE's experts over N ranks (default 1: split by tp)\n"
    "      --micro-batch N  train: sequences per microbatch (default 1)\n"
    "      --microbatches N train: per replica and step (default batch / dp /\n"
    "                       micro-batch, as Megatron)\n"
    "      --optimizer O    train: sharded (default: Adam's state divided over dp,\n"
    "                       gradients reduce-scattered and parameters all-gathered,\n"
    "                       as Megatron's distributed optimizer and ZeRO-1) or\n"
    "                       replicated (every replica holds it all; gradients\n"
    "                       all-reduced)\n"
    "  -a, --algo A         the collectives' algorithm: nccl (default: NCCL's\n"
    "                       algorithms and protocol rules, the fastest simulated,\n"
    "                       as `baton tp`), auto (baton's lowest closed form of any\n"
    "                       row) or a row (`baton algos`) for the collectives it\n"
    "                       does (the rest, and pipeline sends, stay NCCL's)\n"
    "      --dtype D        bf16 (default; fp16 is read as bf16: same bytes and peak) or fp8\n"
    "      --gpu NAME       another GPU than the machine's (`baton gpus`)\n"
    "      --compute-eff X  achieved share of peak FLOP/s (default 0.6)\n"
    "      --mem-eff X      achieved share of HBM bandwidth (default 0.8)\n"
    "      --recompute      train: full activation recomputation (the layers'\n"
    "                       forward again before their backward, as Megatron's\n"
    "                       --recompute-granularity full)\n"
    "      --graphs         launched as CUDA graphs (the GPU's graph_launch)\n"
    "      --proto P        none, LL, LL128, Simple or auto (default auto)\n"
    "      --contention M   fifo (default), fair or none\n"
    "      --set K=V        override a topology parameter\n"
    "      --trace FILE     the step's timeline (Perfetto / chrome://tracing JSON):\n"
    "                       launches, compute and communication, layer by layer\n"
    "      --json           one JSON object\n\n"
    "example:\n"
    "  baton step -t hgx-h100 --model llama3-70b --phase decode --batch 64 --seq 4096\n";

typedef struct {
    const char *topo, *model, *gpu, *trace, *algo;
    int json, proto_given, algo_given, optimizer_given;
    char fitted_algo[CMD_RULE_LEN];   /* a calibrated machine's rule (cmd_calibrated_rule) */
    step_req_t q;
    cmd_sets_t sets;
} step_args_t;

static int number(const char *opt, const char *v, int *out) {
    char *end;
    long x = strtol(v, &end, 10);
    if (end == v || *end || x < 1 || x > 1 << 24) return cmd_usage("step", "%s must be a whole number, at least 1", opt);
    *out = (int)x;
    return 0;
}

static int share(const char *opt, const char *v, double *out) {
    char *end;
    *out = strtod(v, &end);
    if (end == v || *end || !(*out > 0 && *out <= 1)) return cmd_usage("step", "%s is a share in (0, 1]", opt);
    return 0;
}

static int option(step_args_t *a, int ch, const char *v) {
    step_req_t *q = &a->q;
    switch (ch) {
    case 't': a->topo = v; return 0;
    case 'm': a->model = v; return 0;
    case 'g': a->gpu = v; return 0;
    case 'f':
        q->phase = !strcmp(v, "decode") ? STEP_DECODE : !strcmp(v, "prefill") ? STEP_PREFILL : !strcmp(v, "train") ? STEP_TRAIN : 9;
        return q->phase == 9 ? cmd_usage("step", "--phase is decode, prefill or train, not '%s'", v) : 0;
    case 'b': return number("--batch", v, &q->batch);
    case 's': return number("--seq", v, &q->seq);
    case '1': return number("--tp", v, &q->tp);
    case '2': return number("--dp", v, &q->dp);
    case '3': return number("--pp", v, &q->pp);
    case '4': return number("--ep", v, &q->ep);
    case '5': return number("--microbatches", v, &q->microbatches);
    case '6': return number("--micro-batch", v, &q->micro_batch);
    case 'o':
        a->optimizer_given = 1;
        q->optimizer = !strcmp(v, "sharded") ? STEP_OPT_SHARDED : !strcmp(v, "replicated") ? STEP_OPT_REPLICATED : 9;
        return (int)q->optimizer == 9 ? cmd_usage("step", "--optimizer is sharded or replicated, not '%s'", v) : 0;
    case 'a': a->algo = v, a->algo_given = 1; return 0;
    case 'd': {
        int d = gpu_dtype_parse(v);
        if (d < 0) return cmd_usage("step", "--dtype is bf16 (or fp16) or fp8, not '%s'", v);
        q->dtype = (gpu_dtype_t)d;
        return 0;
    }
    case 'c': return share("--compute-eff", v, &q->compute_eff);
    case 'e': return share("--mem-eff", v, &q->mem_eff);
    case 'G': q->graphs = 1; return 0;
    case 'R': q->recompute = 1; return 0;
    case 'P':
        a->proto_given = 1;
        if ((q->proto = cmd_parse_proto(v)) < 0) return cmd_usage("step", "--proto must be none, LL, LL128, Simple or auto");
        return 0;
    case 'M':
        if (cmd_parse_contention(v) < 0)
            return cmd_usage("step", "--contention must be fifo, fair or none, not '%s'", v);
        q->contention = (contention_t)cmd_parse_contention(v);
        return 0;
    case 'S': return cmd_add_set("step", &a->sets, v) ? EXIT_USAGE : 0;
    case 'j': a->json = 1; return 0;
    case 'T': return cmd_out_file("step", "--trace", v, &a->trace);
    }
    return cmd_usage("step", "unknown option");
}

/* -a's value: nccl, auto or a row of some collective (else a usage error). */
static int known_algo(const char *name) {
    const algo_t *const *all = algo_all();
    const char *cands[256];
    int k = 0;
    if (run_is_auto(name)) return 1;
    for (int c = 0; c < COLL_COUNT; c++)
        if (algo_find((coll_t)c, name)) return 1;     /* its aliases too ("tree") */
    for (int i = 0; all[i] && k < 254; i++) cands[k++] = all[i]->name;
    cands[k] = NULL;
    cmd_usage("step", "-a: no algorithm '%s' (nccl, auto or a row `baton algos` lists)%s", name, suggest_hint(name, cands));
    return 0;
}

static int parse(int argc, char **argv, step_args_t *a) {
    static const struct option opts[] = {
        {"topo", required_argument, 0, 't'}, {"model", required_argument, 0, 'm'}, {"gpu", required_argument, 0, 'g'},
        {"phase", required_argument, 0, 'f'}, {"batch", required_argument, 0, 'b'}, {"seq", required_argument, 0, 's'},
        {"tp", required_argument, 0, '1'}, {"dp", required_argument, 0, '2'}, {"pp", required_argument, 0, '3'},
        {"ep", required_argument, 0, '4'}, {"microbatches", required_argument, 0, '5'}, {"dtype", required_argument, 0, 'd'},
        {"compute-eff", required_argument, 0, 'c'}, {"mem-eff", required_argument, 0, 'e'}, {"graphs", no_argument, 0, 'G'},
        {"proto", required_argument, 0, 'P'}, {"contention", required_argument, 0, 'M'}, {"set", required_argument, 0, 'S'},
        {"json", no_argument, 0, 'j'}, {"trace", required_argument, 0, 'T'}, {"help", no_argument, 0, 'h'},
        {"micro-batch", required_argument, 0, '6'}, {"optimizer", required_argument, 0, 'o'}, {"recompute", no_argument, 0, 'R'}, {"algo", required_argument, 0, 'a'},
        {0, 0, 0, 0}};
    int ch, rc;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":t:m:a:h", opts, NULL)) != -1) {
        if (ch == 'h') { fputs(help, stdout); return 1; }
        if (ch == ':') return cmd_usage("step", "option %s needs a value", argv[optind - 1]);
        if (ch == '?') return cmd_usage("step", "unknown option '%s'", argv[optind - 1]);
        if ((rc = option(a, ch, optarg))) return rc;
    }
    if (optind < argc) return cmd_usage("step", "unexpected argument '%s'", argv[optind]);
    if (!a->topo) return cmd_usage("step", "missing -t TOPO.yaml");
    if (!a->model) return cmd_usage("step", "missing --model (llama3-70b, qwen2.5-7b, ... or a model file)");
    if (!a->q.seq) a->q.seq = a->q.phase == STEP_DECODE ? 4096 : 8192;
    if (a->algo_given && !known_algo(a->algo)) return EXIT_USAGE;
    if (a->q.recompute && a->q.phase != STEP_TRAIN) return cmd_usage("step", "--recompute is for train");
    if (a->optimizer_given && a->q.phase != STEP_TRAIN) return cmd_usage("step", "--optimizer is for train (inference keeps no optimizer state)");
    if (a->q.microbatches && a->q.micro_batch)
        return cmd_usage("step", "give --microbatches or --micro-batch, not both (batch = dp x micro-batch x microbatches)");
    return 0;
}

typedef struct { llm_t *m; char buf[256]; } file_ctx_t;

static const char *model_key(void *ctx, const char *k, const char *v) {
    file_ctx_t *f = ctx;
    return llm_set(f->m, k, v, f->buf, sizeof f->buf);
}

/* A built-in model, or a model file (errors name its line). */
static int load_model(const char *name, llm_t *out, baton_err_t *e) {
    const llm_t *m = llm_find(name);
    if (m) { *out = *m; return 0; }
    if (!strchr(name, '/') && !strstr(name, ".yaml"))
        return err_set(e, BATON_EINVAL, "unknown model '%s' (llama3-8b, llama3-70b, llama3-405b, qwen2.5-7b, mixtral-8x7b, "
                       "or a model file)", name);
    memset(out, 0, sizeof *out);
    file_ctx_t f = {.m = out};
    int rc = topo_yaml_scalars(name, model_key, &f, e);
    if (rc < 0) return rc;
    if (!out->head_dim && out->heads) out->head_dim = out->hidden / out->heads;
    if (!out->kv_heads) out->kv_heads = out->heads;
    if (!out->name[0]) snprintf(out->name, sizeof out->name, "%.31s", name);
    const char *bad = llm_check(out);
    return bad ? err_set(e, BATON_EINVAL, "%s: %s", name, bad) : 0;
}

static const char *const bucket_names[] = {"compute", "memory", "transport", "overhead"};

static void text_comm(const step_out_t *o) {
    char sz[32], t1[32];
    for (int i = 0; i < o->ncomm; i++) {
        const step_comm_t *c = &o->comm[i];
        units_fmt_size(c->bytes, sz, sizeof sz);
        units_fmt_time(c->each_s, t1, sizeof t1);
        printf("              %d x %s of %s (%d ranks, %d group%s at once, %s/%s, %s each)\n", c->count, c->what, sz,
               c->ranks, c->groups, c->groups > 1 ? "s" : "", c->algo, proto_name((proto_t)c->proto), t1);
    }
}

static void text(const step_args_t *a, const topo_t *t, const step_out_t *o) {
    const step_req_t *q = &a->q;
    char b[4][32], st[32];
    double v[4] = {o->compute_s, o->memory_s, o->transport_s, o->overhead_s}, sum = v[0] + v[1] + v[2] + v[3];
    printf("%s step of %s on %s (%d x %s), %s, batch %d, %s %d tokens\n", step_phase_name(q->phase), q->m->name,
           topo_name(t), topo_nranks(t), q->gpu->name, gpu_dtype_name(q->dtype), q->batch,
           q->phase == STEP_DECODE ? "context" : "sequences of", q->seq);
    printf("  layout      tp %d x dp %d x pp %d", q->tp, q->dp, q->pp);
    if (q->ep > 1) printf(", ep %d", q->ep);
    if (q->phase == STEP_TRAIN) printf(", %d microbatch%s of %d per replica", q->microbatches, q->microbatches > 1 ? "es" : "",
                                       q->micro_batch);
    int used = q->tp * q->dp * q->pp;              /* ep splits the tp x dp ranks, adds none */
    if (used < topo_nranks(t)) printf(" (%d of the %d GPUs; the rest idle)", used, topo_nranks(t));
    printf("\n");
    if (q->pp > 1 && q->m->layers % q->pp)         /* the step's slots each take the largest stage's layers */
        printf("  stages      %d layers in %d stages of up to %d: each pipeline slot takes the largest stage's time\n",
               q->m->layers, q->pp, (q->m->layers + q->pp - 1) / q->pp);
    printf("  per GPU     %.3g GB of weights", o->weights_bytes / 1e9);
    if (o->kv_bytes > 0) printf(", %.3g GB of KV cache", o->kv_bytes / 1e9);
    if (o->grad_bytes > 0) printf(", %.3g GB of gradients", o->grad_bytes / 1e9);
    if (o->optimizer_bytes > 0)
        printf(", %.3g GB of optimizer state (%s)", o->optimizer_bytes / 1e9,
               q->optimizer == STEP_OPT_SHARDED ? (q->dp > 1 ? "sharded over dp" : "sharded, dp 1") : "replicated");
    printf(" (of %.3g GiB, %.3g GB)%s\n", q->gpu->hbm_bytes / GPU_GIB, q->gpu->hbm_bytes / 1e9,
           step_resident(o) > q->gpu->hbm_bytes ? ": DOES NOT FIT" : "");
    for (int i = 0; i < 4; i++) units_fmt_time(v[i], b[i], sizeof b[i]);
    printf("  bucket      time         share\n");
    printf("  compute     %-12s %5.1f %%  %.4g GFLOP at %.0f %% of %.4g TFLOPS\n", b[0], 100 * v[0] / sum, o->flops / 1e9,
           100 * q->compute_eff, q->gpu->flops[q->dtype] / 1e12);
    if (q->pp > 1)                /* the critical path's slots are not all work: MFU wants what runs */
        printf("              on the critical path: %d pipeline slots, %d of them the bubble (pp - 1), where a\n"
               "              stage waits; a GPU of the last stage executes %.4g GFLOP\n", o->slots, q->pp - 1,
               o->flops_executed / 1e9);
    printf("  memory      %-12s %5.1f %%  %.4g GB at %.0f %% of %.4g GB/s\n", b[1], 100 * v[1] / sum, o->bytes / 1e9,
           100 * q->mem_eff, q->gpu->hbm_bw / 1e9);
    printf("  transport   %-12s %5.1f %%%s\n", b[2], 100 * v[2] / sum, o->ncomm ? "" : "  no collectives");
    text_comm(o);
    printf("  overhead    %-12s %5.1f %%  %d kernel launches at %.3g us (%s)\n", b[3], 100 * v[3] / sum, o->kernels,
           1e6 * (q->graphs ? q->gpu->graph_launch : q->gpu->launch), q->graphs ? "CUDA graph" : "no CUDA graph");
    int k = step_bound(o), next = -1;
    for (int i = 0; i < 4; i++) if (i != k && (next < 0 || v[i] > v[next])) next = i;
    printf("  bound by    %s, %.3gx the next (%s)\n", bucket_names[k], v[next] > 0 ? v[k] / v[next] : 0, bucket_names[next]);
    units_fmt_time(o->step_s, st, sizeof st);
    printf("  step        %s (matmuls and attention each the longer of compute and memory; transport and\n"
           "              overhead added, nothing overlapped)", st);
    if (q->phase != STEP_TRAIN) printf(", %.4g tokens/s", (q->phase == STEP_DECODE ? q->batch : o->tokens) / o->step_s);
    printf("\n");
    if (o->overlap_step_s > 0) {
        units_fmt_time(o->overlap_step_s, st, sizeof st);
        units_fmt_time(o->hidden_s, b[0], sizeof b[0]);
        units_fmt_time(o->dp_shared_s, b[1], sizeof b[1]);
        double slow = fabs(o->tp_slowdown_s) < 1e-9 * o->step_s ? 0 : o->tp_slowdown_s;   /* a difference's rounding, not time */
        units_fmt_time(slow, b[2], sizeof b[2]);
        printf("  overlapped  %s with the data-parallel collectives behind the backward pass (hides %s);\n"
               "              sharing the machine with its all-reduces they take %s and slow them by %s\n", st, b[0], b[1], b[2]);
        if (o->chain < o->chain_wanted)
            printf("              (%d all-reduces a TP group beside them, not %d: a rank's channels in one run ran out)\n",
                   o->chain, o->chain_wanted);
    }
}

static void json(const step_args_t *a, const topo_t *t, const step_out_t *o) {
    const step_req_t *q = &a->q;
    char machine[512], model[128];                 /* names from the user's files */
    printf("{\"machine\":\"%s\",\"gpu\":\"%s\",\"model\":\"%s\",\"phase\":\"%s\",\"batch\":%d,\"seq\":%d,\"dtype\":\"%s\","
           "\"tp\":%d,\"dp\":%d,\"pp\":%d,\"ep\":%d,\"flops\":%.9g,\"flops_executed\":%.9g,\"bytes\":%.9g,\"kernels\":%d,\"compute_s\":%.9g,"
           "\"memory_s\":%.9g,\"transport_s\":%.9g,\"overhead_s\":%.9g,\"roofline_s\":%.9g,\"step_s\":%.9g,\"bound\":\"%s\","
           "\"overlap_step_s\":%.9g,\"weights_bytes\":%.9g,\"kv_bytes\":%.9g,\"grad_bytes\":%.9g,\"optimizer_bytes\":%.9g,"
           "\"optimizer\":\"%s\",\"micro_batch\":%d,\"microbatches\":%d,\"fits\":%s,\"collectives\":[",
           report_json_escape(topo_name(t), machine, sizeof machine), q->gpu->name,
           report_json_escape(q->m->name, model, sizeof model),
           step_phase_name(q->phase), q->batch, q->seq, gpu_dtype_name(q->dtype), q->tp, q->dp, q->pp, q->ep, o->flops,
           o->flops_executed,
           o->bytes, o->kernels, o->compute_s, o->memory_s, o->transport_s, o->overhead_s, o->roofline_s, o->step_s,
           bucket_names[step_bound(o)], o->overlap_step_s, o->weights_bytes, o->kv_bytes, o->grad_bytes,
           o->optimizer_bytes, q->optimizer == STEP_OPT_SHARDED ? "sharded" : "replicated", q->micro_batch, q->microbatches,
           step_resident(o) > q->gpu->hbm_bytes ? "false" : "true");
    for (int i = 0; i < o->ncomm; i++)
        printf("%s{\"what\":\"%s\",\"bytes\":%llu,\"ranks\":%d,\"groups\":%d,\"count\":%d,\"algorithm\":\"%s\","
               "\"protocol\":\"%s\",\"each_s\":%.9g}", i ? "," : "", o->comm[i].what, (unsigned long long)o->comm[i].bytes,
               o->comm[i].ranks, o->comm[i].groups, o->comm[i].count, o->comm[i].algo,
               proto_name((proto_t)o->comm[i].proto), o->comm[i].each_s);
    printf("]}\n");
}

int cmd_step(int argc, char **argv) {
    step_args_t a = {.q = {.proto = RUN_PROTO_AUTO}, .algo = CHOICE_DEFAULT};
    int rc = parse(argc, argv, &a);
    if (rc) return rc == 1 ? EXIT_OK : rc;
    baton_err_t e = {0};
    llm_t m;
    if (load_model(a.model, &m, &e) < 0) return cmd_fail("step", &e);
    topo_t *t = cmd_load_topo(a.topo, a.sets.v, a.sets.n, &e);
    if (t == NULL) return cmd_fail("step", &e);
    a.q.m = &m;
    a.q.gpu = a.gpu ? gpu_find(a.gpu) : topo_params_c(t)->has_gpu ? &topo_params_c(t)->gpu : NULL;
    if (a.q.gpu == NULL) {
        topo_free(t);
        return a.gpu ? cmd_usage("step", "unknown GPU '%s' (`baton gpus` lists them)%s", a.gpu, gpu_hint(a.gpu))
                     : cmd_usage("step", "%s does not say its GPU (`gpu:` in the file); give --gpu", a.topo);
    }
    cmd_rule_t rule = {.algo = &a.algo, .algo_given = a.algo_given, .proto = &a.q.proto, .proto_given = a.proto_given,
                       .model = "des", .keep = a.fitted_algo};      /* as tp: the one choice (choice.h) */
    cmd_calibrated_rule("step", t, &rule);
    a.q.algo = a.algo;
    step_layout(&a.q, t);
    step_defaults(&a.q);
    step_out_t o;
    if ((rc = step_run(t, &a.q, &o, &e)) == 0 && a.trace) {
        char *js = step_trace_json(&a.q, &o);
        rc = js ? cmd_write_file(a.trace, js, strlen(js), &e) : err_set(&e, BATON_ENOMEM, "out of memory for the trace");
        free(js);
    }
    if (rc == 0) {
        if (a.json) json(&a, t, &o);
        else text(&a, t, &o);
    }
    topo_free(t);
    return rc == 0 ? EXIT_OK : cmd_fail("step", &e);
}

/* `baton gpus`: the built-in GPUs and models. */
static const char gpus_help[] =
    "usage: baton gpus [--json | -t MACHINE [--set K=V ...]]\n\n"
    "The GPUs a machine file may name (`gpu: NAME`) and the models `baton step` knows.\n"
    "      --json      one JSON object: gpus (FLOP/s, HBM bytes/s and bytes, launch seconds)\n"
    "                  and models (shapes, parameters, source)\n"
    "  -t, --topo M    the GPU of machine M instead: each number and where it comes from\n"
    "                  (the GPU table's or the machine file's own), and the machine's\n"
    "                  `launch`, a different cost from the GPU's kernel launch\n";

/* Two launch costs with one word: say which is which under the table. */
static const char gpus_launch_note[] =
    "\nlaunch us: the host's cost per kernel launched from a stream, one after another (graph us:\n"
    "inside a CUDA graph), the same estimate for every GPU (models/gpu.c: NVIDIA's CUDA Graphs\n"
    "post); `step` charges it per kernel, and a machine file may set its own (gpu: {like: ...,\n"
    "launch: ...}). Not a machine's `launch:` (2.8 us unless the file sets it; `baton topo`\n"
    "shows it, `baton gpus -t MACHINE` both): what one host thread adds for each further GPU\n"
    "it starts NCCL on in turn (nccl-tests -g N), measured on 8 x A100.\n";

/* Where a number of machine t's GPU comes from: the table's entry of that
 * name when it matches, else the machine file. */
static const char *gpu_source(const gpu_spec_t *known, double mine, double table) {
    return known && mine == table ? "the GPU table's" : "the machine file's";
}

static int gpus_of_machine(const char *name, const cmd_sets_t *sets) {
    baton_err_t e = {0};
    topo_t *t = cmd_load_topo(name, sets->v, sets->n, &e);
    if (t == NULL) return cmd_fail("gpus", &e);
    const topo_params_t *p = topo_params_c(t);
    const gpu_spec_t *g = &p->gpu, *k = p->has_gpu ? gpu_find(g->name) : NULL;
    if (!p->has_gpu) printf("%s does not say its GPU (no `gpu:` in the file)\n", topo_name(t));
    else {
        printf("%s's GPU: %s\n", topo_name(t), g->name);
        printf("  bf16         %9.1f TFLOPS  (%s)\n", g->flops[GPU_BF16] / 1e12, gpu_source(k, g->flops[GPU_BF16], k ? k->flops[GPU_BF16] : 0));
        printf("  fp8          %9.1f TFLOPS  (%s)\n", g->flops[GPU_FP8] / 1e12, gpu_source(k, g->flops[GPU_FP8], k ? k->flops[GPU_FP8] : 0));
        printf("  HBM          %9.0f GB/s    (%s)\n", g->hbm_bw / 1e9, gpu_source(k, g->hbm_bw, k ? k->hbm_bw : 0));
        printf("  HBM          %9.0f GiB     (%s)\n", g->hbm_bytes / GPU_GIB, gpu_source(k, g->hbm_bytes, k ? k->hbm_bytes : 0));
        printf("  kernel launch%9.2f us      (%s; `step`: per kernel from a stream)\n", g->launch * 1e6,
               gpu_source(k, g->launch, k ? k->launch : 0));
        printf("  graph launch %9.2f us      (%s; per kernel inside a CUDA graph)\n", g->graph_launch * 1e6,
               gpu_source(k, g->graph_launch, k ? k->graph_launch : 0));
    }
    printf("machine launch %9.2f us      (%s)\n"
           "  the machine's `launch`: what one host thread adds for each further GPU it starts\n"
           "  NCCL on (nccl-tests -g N), not a kernel launch\n", p->launch * 1e6,
           p->launch == TOPO_LAUNCH_DEFAULT ? "baton's default, measured on 8 x A100" : "the machine file's or --set");
    topo_free(t);
    return EXIT_OK;
}

int cmd_gpus(int argc, char **argv) {
    int json = 0;
    const char *topo = NULL;
    cmd_sets_t sets = {.n = 0};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) { fputs(gpus_help, stdout); return EXIT_OK; }
        if (!strcmp(argv[i], "--json")) json = 1;
        else if ((!strcmp(argv[i], "-t") || !strcmp(argv[i], "--topo")) && i + 1 < argc) topo = argv[++i];
        else if (!strcmp(argv[i], "--set") && i + 1 < argc && sets.n < 64) sets.v[sets.n++] = argv[++i];
        else return cmd_usage("gpus", "unexpected argument '%s'", argv[i]);
    }
    if (topo && json) return cmd_usage("gpus", "-t and --json: one at a time");
    if (sets.n && !topo) return cmd_usage("gpus", "--set needs -t MACHINE");
    if (topo) return gpus_of_machine(topo, &sets);
    if (json) {
        char *s = report_gpus_json();
        if (s == NULL) return cmd_fail("gpus", &(baton_err_t){BATON_ENOMEM, "out of memory"});
        puts(s);
        free(s);
        return EXIT_OK;
    }
    printf("gpu          bf16 TFLOPS  fp8 TFLOPS  HBM GB/s HBM GiB  launch us  graph us\n");
    for (int i = 0; gpu_at(i); i++) {
        const gpu_spec_t *g = gpu_at(i);
        printf("%-12s %11.1f %11.1f %9.0f %7.0f %10.2f %9.2f\n", g->name, g->flops[GPU_BF16] / 1e12, g->flops[GPU_FP8] / 1e12,
               g->hbm_bw / 1e9, g->hbm_bytes / GPU_GIB, g->launch * 1e6, g->graph_launch * 1e6);
    }
    fputs(gpus_launch_note, stdout);
    printf("\nmodel          layers  hidden  heads  kv  ffn     vocab   experts  params  active  source\n");
    for (int i = 0; llm_at(i); i++) {
        const llm_t *m = llm_at(i);
        printf("%-14s %6d %7d %6d %3d %6d %7d %5d/%-3d %6.2fB %6.2fB  %s\n", m->name, m->layers, m->hidden, m->heads,
               m->kv_heads, m->ffn, m->vocab, m->experts, m->top_k, llm_params(m) / 1e9, llm_active_params(m) / 1e9, m->source);
    }
    return EXIT_OK;
}
