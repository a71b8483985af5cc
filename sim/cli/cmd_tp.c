/* cmd_tp.c - `baton tp`: what tensor parallelism costs a transformer. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../../topologies/topo_yaml.h"
#include "../../topologies/units.h"
#include "cmd.h"
#include "../../models/llm.h"
#include "../answer/choice.h"
#include "../answer/tp.h"

static const char help[] =
    "usage: baton tp -t TOPO.yaml (--preset NAME | --layers L --hidden H) [options]\n"
    "\n"
    "Megatron-style tensor parallelism: two all-reduces per layer in the forward\n"
    "pass (after attention, after the MLP), each of tokens x hidden elements.\n"
    "Reports the all-reduces per pass, their size, the algorithm and protocol\n"
    "chosen (as `baton step` chooses it: -a), and the communication time.\n"
    "\n"
    "  -t, --topo FILE      the tensor-parallel group's machine (its ranks = --tp)\n"
    "      --tp N           tensor-parallel degree: the topology's ranks (the machine\n"
    "                       file is the tensor-parallel group; another N is refused)\n"
    "      --preset NAME    a model shape: 7b (28 x 3584), 8b (32 x 4096),\n"
    "                       70b (80 x 8192), 405b (126 x 16384), or any model\n"
    "                       `baton gpus` lists (`baton step` for all four buckets)\n"
    "      --layers L, --hidden H   or give the shape\n"
    "      --tokens N       tokens per forward pass (decode: the batch; prefill:\n"
    "                       batch x prompt length; default 1)\n"
    "      --phase P        decode (default) or prefill: only labels the output\n"
    "      --dtype D        bf16 (default), fp16, fp32, fp8\n"
    "      --compute-ms X   compute time of one forward pass, for the share\n"
    "  -a, --algo A         all-reduce algorithm: nccl (default: NCCL's algorithms\n"
    "                       and protocol rules, the fastest simulated, as `baton\n"
    "                       step` times it), auto (baton's lowest closed form of\n"
    "                       any row, e.g. oneshot) or a row (`baton algos`); on a\n"
    "                       calibrated machine the rule it was fitted with\n"
    "      --proto P        none, LL, LL128, Simple or auto (default auto)\n"
    "      --set K=V        override a topology parameter\n"
    "      --json           one JSON object\n\n"
    "example:\n"
    "  baton tp -t hgx-h100 --preset 70b --tokens 1 --phase decode --compute-ms 20\n";

typedef struct {
    const char *topo, *preset, *phase, *dtype, *algo;
    int tp, layers, hidden, proto, json, algo_given, proto_given;
    char fitted_algo[CMD_RULE_LEN];   /* a calibrated machine's rule (cmd_calibrated_rule) */
    uint64_t tokens;
    double compute_ms;
    cmd_sets_t sets;
} tp_args_t;

static int parse(int argc, char **argv, tp_args_t *a) {
    static const struct option opts[] = {
        {"topo", required_argument, 0, 't'}, {"tp", required_argument, 0, 'n'},
        {"preset", required_argument, 0, 'p'}, {"layers", required_argument, 0, 'l'},
        {"hidden", required_argument, 0, 'H'}, {"tokens", required_argument, 0, 'k'},
        {"phase", required_argument, 0, 'f'}, {"dtype", required_argument, 0, 'd'},
        {"compute-ms", required_argument, 0, 'c'}, {"algo", required_argument, 0, 'a'},
        {"proto", required_argument, 0, 'P'}, {"set", required_argument, 0, 'S'},
        {"json", no_argument, 0, 'j'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    int ch;
    char *end;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":t:a:h", opts, NULL)) != -1) {
        switch (ch) {
        case 't': a->topo = optarg; break;
        case 'n': a->tp = (int)strtol(optarg, &end, 10); if (*end || a->tp < 1) return cmd_usage("tp", "--tp must be a positive number"); break;
        case 'p': a->preset = optarg; break;
        case 'l': a->layers = (int)strtol(optarg, &end, 10); if (*end || a->layers < 1) return cmd_usage("tp", "--layers must be a positive number"); break;
        case 'H': a->hidden = (int)strtol(optarg, &end, 10); if (*end || a->hidden < 1) return cmd_usage("tp", "--hidden must be a positive number"); break;
        case 'k':                   /* strtoull takes "-1" as 2^64 - 1: a sign is refused first */
            a->tokens = strchr(optarg, '-') ? 0 : strtoull(optarg, &end, 10);
            if (a->tokens < 1 || *end || a->tokens > (1ull << 30))
                return cmd_usage("tp", "--tokens must be a whole number from 1 to %llu, not '%s'", 1ull << 30, optarg);
            break;
        case 'f': a->phase = optarg; break;
        case 'd': a->dtype = optarg; break;
        case 'c':
            a->compute_ms = strtod(optarg, &end);
            if (end == optarg || *end || !(a->compute_ms >= 0 && a->compute_ms <= 1e9))
                return cmd_usage("tp", "--compute-ms must be milliseconds from 0 to 1e9, not '%s'", optarg);
            break;
        case 'a': a->algo = optarg, a->algo_given = 1; break;
        case 'P':
            a->proto = cmd_parse_proto(optarg), a->proto_given = 1;
            if (a->proto < 0) return cmd_usage("tp", "--proto must be none, LL, LL128, Simple or auto");
            break;
        case 'S': if (cmd_add_set("tp", &a->sets, optarg)) return EXIT_USAGE; break;
        case 'j': a->json = 1; break;
        case 'h': fputs(help, stdout); return 1;
        case ':': return cmd_usage("tp", "option %s needs a value", argv[optind - 1]);
        default: return cmd_usage("tp", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc) return cmd_usage("tp", "unexpected argument '%s'", argv[optind]);
    if (!a->topo) return cmd_usage("tp", "missing -t TOPO.yaml");
    if (a->preset) {
        const llm_t *m = llm_find(a->preset);       /* models/llm.c: 7b, 8b, 70b, 405b or a full name */
        if (m == NULL) return cmd_usage("tp", "unknown preset '%s' (7b, 8b, 70b, 405b, or a model `baton gpus` lists)", a->preset);
        if (!a->layers) a->layers = m->layers;
        if (!a->hidden) a->hidden = m->hidden;
    }
    if (!a->layers || !a->hidden) return cmd_usage("tp", "give --preset, or --layers and --hidden");
    if (strcmp(a->phase, "decode") && strcmp(a->phase, "prefill")) return cmd_usage("tp", "--phase is decode or prefill");
    if (!tp_dtype_bytes(a->dtype)) return cmd_usage("tp", "--dtype must be bf16, fp16, fp32 or fp8");
    return 0;
}

static void text(const tp_args_t *a, const char *topo, const tp_result_t *r) {
    char sz[64], t1[64], t2[64];
    units_fmt_size(r->bytes, sz, sizeof sz);
    units_fmt_time(r->ar.time_s, t1, sizeof t1);
    units_fmt_time(r->comm_s, t2, sizeof t2);
    printf("tensor parallel on %s: tp %d, %d layers, hidden %d, %s, %s with %llu token(s) per pass\n", topo,
           r->ar.ranks, a->layers, a->hidden, a->dtype, a->phase, (unsigned long long)a->tokens);
    printf("  all-reduces per forward pass  %d (2 per layer: after attention, after the MLP)\n", r->allreduces);
    printf("  bytes each                    %s (%llu tokens x %d x %d B)\n", sz, (unsigned long long)a->tokens, a->hidden,
           tp_dtype_bytes(a->dtype));
    const char *why = a->algo == a->fitted_algo ? " (the machine's fitted rule)"
                      : !strcmp(a->algo, "nccl") ? (a->algo_given ? " (NCCL's algorithms, -a nccl)" : " (NCCL's algorithms: -a nccl, the default)")
                      : r->ar.auto_picked ? " (lowest predicted time)" : r->ar.proto_auto ? " (its fastest protocol)" : "";
    printf("  algorithm                     %s/%s%s\n", r->ar.algo->name, proto_name(r->ar.proto), why);
    printf("  time each                     %s (simulated), busbw %.4g GB/s\n", t1, r->ar.busbw_GBps);
    printf("  communication per pass        %s", t2);
    if (!strcmp(a->phase, "decode") && a->tokens > 1) printf(" (%s per token of the batch)", (units_fmt_time(r->comm_s / a->tokens, t1, sizeof t1), t1));
    printf("\n");
    if (a->compute_ms > 0)
        printf("  share of the pass             %.1f %% (with %.4g ms of compute)\n",
               100 * r->comm_s / (r->comm_s + a->compute_ms * 1e-3), a->compute_ms);
}

static void json(const tp_args_t *a, const tp_result_t *r) {
    printf("{\"tp\":%d,\"layers\":%d,\"hidden\":%d,\"tokens\":%llu,\"dtype\":\"%s\",\"phase\":\"%s\","
           "\"allreduces\":%d,\"bytes\":%llu,\"algorithm\":\"%s\",\"protocol\":\"%s\",\"allreduce_time_s\":%.9g,"
           "\"comm_time_s\":%.9g", r->ar.ranks, a->layers, a->hidden, (unsigned long long)a->tokens, a->dtype, a->phase,
           r->allreduces, (unsigned long long)r->bytes, r->ar.algo->name, proto_name(r->ar.proto), r->ar.time_s, r->comm_s);
    if (a->compute_ms > 0) printf(",\"comm_share\":%.6g", r->comm_s / (r->comm_s + a->compute_ms * 1e-3));
    printf("}\n");
}

int cmd_tp(int argc, char **argv) {
    tp_args_t a = {.phase = "decode", .dtype = "bf16", .algo = CHOICE_DEFAULT, .proto = RUN_PROTO_AUTO, .tokens = 1};
    int rc = parse(argc, argv, &a);
    if (rc) return rc == 1 ? EXIT_OK : rc;
    baton_err_t e = {0};
    topo_t *t = cmd_load_topo(a.topo, a.sets.v, a.sets.n, &e);
    if (t == NULL) return cmd_fail("tp", &e);
    cmd_rule_t rule = {.algo = &a.algo, .algo_given = a.algo_given, .proto = &a.proto, .proto_given = a.proto_given,
                       .model = "des", .keep = a.fitted_algo};      /* picked by the closed forms, timed simulated */
    cmd_calibrated_rule("tp", t, &rule);
    if (a.tp && a.tp != topo_nranks(t)) {
        err_set(&e, BATON_EINVAL, "--tp %d but %s has %d ranks: describe the tensor-parallel group's machine", a.tp,
                a.topo, topo_nranks(t));
        topo_free(t);
        return cmd_fail("tp", &e);
    }
    tp_result_t r;
    if (tp_run(t, a.layers, a.hidden, a.tokens, tp_dtype_bytes(a.dtype), a.algo, a.proto, &r, &e) < 0) {
        topo_free(t);
        return cmd_fail("tp", &e);
    }
    if (a.json) json(&a, &r);
    else text(&a, topo_name(t), &r);
    topo_free(t);
    return EXIT_OK;
}
