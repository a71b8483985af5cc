/* cmd_concurrent.c - `baton concurrent`: several collectives in one run. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../topologies/topo.h"
#include "../../topologies/units.h"
#include "../answer/concurrent.h"
#include "../answer/run.h"
#include "cmd.h"

static const char help[] =
    "usage: baton concurrent -t TOPO.yaml [options] SPEC [SPEC...]\n"
    "\n"
    "Runs the collectives together in one simulation: they share the machine's\n"
    "ports, links and reduce engines as they would on it, and each pays what\n"
    "its GPUs and hosts add (protocol ceilings, staging, NCCL's proxy thread)\n"
    "as `baton sim` charges it alone. Each SPEC is one quoted list of key=value:\n"
    "  c=allreduce  the collective (default allreduce)\n"
    "  a=ring       its algorithm (default ring; `baton algos`)\n"
    "  s=64MiB      its size (required)\n"
    "  ranks=0-3    the machine ranks it runs on, in its rank order (0,2,4 or\n"
    "               0-3,8-11; default all)\n"
    "  start=10us   when it starts (default 0), or with after=K this long after\n"
    "               collective K (counted from 0, an earlier one) has ended\n"
    "  p=LL128      its protocol (default: --proto's)\n"
    "  channels=N   rings side by side (ring only; default 1)\n"
    "  root=R       broadcast and reduce: the root's place in ranks= (root=2\n"
    "               ranks=4-7 is machine rank 6; default 0)\n"
    "\n"
    "  -t, --topo FILE      the machine\n"
    "      --proto P        none, LL, LL128 or Simple for those that name none (default Simple)\n"
    "      --contention M   fifo (default), fair or none\n"
    "      --verify         prove every collective's result\n"
    "      --set K=V        override a topology parameter\n"
    "      --json           one JSON object\n\n"
    "example (two TP groups of 4 on one box, then a reduce-scatter over all 8):\n"
    "  baton concurrent -t hgx-h100 'a=ring s=64MiB ranks=0-3' 'a=ring s=64MiB ranks=4-7'\n"
    "      'c=reducescatter s=256MiB after=0'\n";

typedef struct {
    const char *topo;
    int proto, json, verify;
    contention_t contention;
    cmd_sets_t sets;
} conc_args_t;

static int parse(int argc, char **argv, conc_args_t *a) {
    static const struct option opts[] = {
        {"topo", required_argument, 0, 't'}, {"proto", required_argument, 0, 'P'},
        {"contention", required_argument, 0, 'M'}, {"verify", no_argument, 0, 'v'},
        {"set", required_argument, 0, 'S'}, {"json", no_argument, 0, 'j'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    int ch;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":t:h", opts, NULL)) != -1) {
        switch (ch) {
        case 't': a->topo = optarg; break;
        case 'P':
            a->proto = cmd_parse_proto(optarg);
            if (a->proto < 0 || a->proto == RUN_PROTO_AUTO) return cmd_usage("concurrent", "--proto must be none, LL, LL128 or Simple");
            break;
        case 'M':
            if (cmd_parse_contention(optarg) < 0)
                return cmd_usage("concurrent", "--contention must be fifo, fair or none, not '%s'", optarg);
            a->contention = (contention_t)cmd_parse_contention(optarg);
            break;
        case 'v': a->verify = 1; break;
        case 'S': if (cmd_add_set("concurrent", &a->sets, optarg)) return EXIT_USAGE; break;
        case 'j': a->json = 1; break;
        case 'h': fputs(help, stdout); return 1;
        case ':': return cmd_usage("concurrent", "option %s needs a value", argv[optind - 1]);
        default: return cmd_usage("concurrent", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (!a->topo) return cmd_usage("concurrent", "missing -t TOPO.yaml");
    if (optind >= argc) return cmd_usage("concurrent", "give at least one collective, e.g. 's=64MiB ranks=0-3'");
    return 0;
}

/* Member k's start (after the one it waits for, where it does), its time
 * and its bus bandwidth: what the table and the JSON both say. */
static double begin_of(const conc_coll_t *c, int k) {
    return c[k].after >= 0 ? c[c[k].after].end_s + c[k].start_s : c[k].start_s;
}

static double busbw_of(const conc_coll_t *c, int k) {
    double dt = c[k].end_s - begin_of(c, k);
    return dt > 0 ? c[k].bytes * run_busbw_factor(c[k].coll, c[k].nranks) / dt / 1e9 : 0;
}

static void text(const char *topo, const conc_coll_t *c, int n, const engine_result_t *r) {
    char sz[32], t0[32], t1[32], d[32];
    printf("%d collectives together on %s: %s%s\n", n, topo, r->verified ? "verified, " : "",
           "times from the start of the run");
    printf("  #  collective      algorithm   size        ranks  start       end         time        busbw GB/s\n");
    for (int k = 0; k < n; k++) {
        double begin = begin_of(c, k), dt = c[k].end_s - begin;
        units_fmt_size(c[k].bytes, sz, sizeof sz);
        units_fmt_time(begin, t0, sizeof t0);
        units_fmt_time(c[k].end_s, t1, sizeof t1);
        units_fmt_time(dt, d, sizeof d);
        char al[48];                              /* its own protocol, where it names one */
        snprintf(al, sizeof al, "%s%s%s", c[k].algo, c[k].own_proto ? "/" : "", c[k].own_proto ? proto_name(c[k].proto) : "");
        printf("  %-2d %-15s %-11s %-11s %-6d %-11s %-11s %-11s %.4g\n", k, coll_name(c[k].coll), al, sz,
               c[k].nranks, t0, t1, d, busbw_of(c, k));
    }
    units_fmt_time(r->time_s, t1, sizeof t1);
    printf("  all done at %s\n", t1);
}

static void json(const conc_coll_t *c, int n, const engine_result_t *r) {
    printf("{\"time_s\":%.9g,\"verified\":%s,\"collectives\":[", r->time_s, r->verified ? "true" : "false");
    for (int k = 0; k < n; k++)
        printf("%s{\"collective\":\"%s\",\"algorithm\":\"%s\",\"protocol\":\"%s\",\"bytes\":%llu,\"ranks\":%d,"
               "\"start_s\":%.9g,\"end_s\":%.9g,\"time_s\":%.9g,\"busbw_GBps\":%.6g}", k ? "," : "", coll_name(c[k].coll),
               c[k].algo, proto_name(c[k].proto), (unsigned long long)c[k].bytes, c[k].nranks, begin_of(c, k), c[k].end_s,
               c[k].end_s - begin_of(c, k), busbw_of(c, k));
    printf("]}\n");
}

int cmd_concurrent(int argc, char **argv) {
    conc_args_t a = {.proto = PROTO_SIMPLE};
    int rc = parse(argc, argv, &a), n = argc - optind;
    if (rc) return rc == 1 ? EXIT_OK : rc;
    baton_err_t e = {0};
    topo_t *t = cmd_load_topo(a.topo, a.sets.v, a.sets.n, &e);
    if (t == NULL) return cmd_fail("concurrent", &e);
    conc_coll_t *c = calloc((size_t)n, sizeof *c);
    int32_t **ranks = calloc((size_t)n, sizeof *ranks);
    engine_result_t r = {0};
    rc = c && ranks ? 0 : err_set(&e, BATON_ENOMEM, "out of memory");
    for (int k = 0; k < n && rc == 0; k++)
        if ((rc = conc_parse(argv[optind + k], topo_nranks(t), &c[k], &ranks[k], &e)) < 0) err_prefix(&e, "collective %d: ", k);
    if (rc == 0) {
        if (topo_params_c(t)->no_protocols) a.proto = PROTO_NONE;
        conc_opts_t o = {.proto = (proto_t)a.proto, .contention = a.contention, .verify = a.verify};
        rc = conc_run(t, c, n, &o, &r, &e);
    }
    if (rc == 0 && a.json) json(c, n, &r);
    else if (rc == 0) text(topo_name(t), c, n, &r);
    for (int k = 0; ranks && k < n; k++) free(ranks[k]);
    free(ranks);
    free(c);
    engine_result_free(&r);
    topo_free(t);
    return rc == 0 ? EXIT_OK : cmd_fail("concurrent", &e);
}
