/* cmd_replay.c - `baton replay`: a Chakra execution trace run on a machine
 * (sim/replay/replay.h). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../models/proto.h"
#include "../../topologies/units.h"
#include "../answer/choice.h"
#include "../replay/replay.h"
#include "../answer/report.h"
#include "../answer/run.h"
#include "cmd.h"

static const char help[] =
    "usage: baton replay -t MACHINE [options] TRACE.0.et TRACE.1.et ...\n"
    "\n"
    "Run a Chakra execution trace (MLCommons' format: a file per rank, NAME.RANK.et)\n"
    "on a machine: each rank's nodes in dependency order, compute nodes for their\n"
    "duration_micros (one GPU kernel and one host node at a time per rank),\n"
    "collectives when the last of their ranks reaches them, sends and receives\n"
    "paired by (source, destination, tag), each timed by the simulator on the\n"
    "machine. Prints the step's time and where the slowest rank's went: compute,\n"
    "transport (communication no kernel hides, waiting for peers included),\n"
    "overhead (host nodes no kernel or communication hides); memory the trace\n"
    "cannot tell apart from compute. Ranks come from the files' names (NAME.3.et is\n"
    "rank 3), else from their order; trace rank r runs on machine rank r.\n"
    "\n"
    "options:\n"
    "  -t, --topo MACHINE  a machine: a YAML file or a shipped name\n"
    "  -a, --algo NAME     the collectives' algorithm: nccl (default: NCCL's plan,\n"
    "                      as baton sim -a nccl), auto, or a row (baton algos)\n"
    "      --proto P       auto (default), LL, LL128, Simple or none\n"
    "      --contention M  fifo (default), fair or none\n"
    "      --alone         time each communication alone, even where it overlaps\n"
    "                      another (faster; the step then ignores their sharing)\n"
    "      --set K=V       override a machine parameter (repeatable)\n"
    "      --trace FILE    the replay as a Perfetto / Chrome trace (ui.perfetto.dev):\n"
    "                      a process per rank, tracks for kernels, host, communication\n"
    "      --json          one JSON object\n"
    "  -h, --help          this text\n"
    "\n"
    "A collective over every rank of the machine is timed as baton sim times it;\n"
    "over fewer, its ranks alone (ring, chain or pairwise unless -a names a row);\n"
    "a send as a two-rank chain. Those that then overlap in time are simulated\n"
    "together, each from its own start, so that they share links and ports; each\n"
    "one's time alone is stretched by what sharing cost it there, and the trace is\n"
    "walked again with those times until they settle (8 rounds at most).\n"
    "\n"
    "example:\n"
    "  baton export --chakra -c allreduce -s 1MB -p 8 -o /tmp/t\n"
    "  baton replay -t hgx-h100 /tmp/t/baton.*.et --trace replay.json\n";

typedef struct rp_args {
    const char *topo, *algo, *trace;
    int json, proto, contention, algo_given, alone;
    cmd_sets_t sets;
    char **files;
    int nfiles;
} rp_args_t;

static int parse(int argc, char **argv, rp_args_t *a) {
    static const struct option opts[] = {
        {"topo", required_argument, 0, 't'}, {"algo", required_argument, 0, 'a'}, {"proto", required_argument, 0, 'P'},
        {"contention", required_argument, 0, 'M'}, {"set", required_argument, 0, 'S'}, {"trace", required_argument, 0, 'T'},
        {"json", no_argument, 0, 'j'}, {"alone", no_argument, 0, 'A'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    int ch;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":t:a:h", opts, NULL)) != -1) {
        switch (ch) {
        case 't': a->topo = optarg; break;
        case 'a': a->algo = optarg; a->algo_given = 1; break;
        case 'T': if (cmd_out_file("replay", "--trace", optarg, &a->trace)) return EXIT_USAGE; break;
        case 'j': a->json = 1; break;
        case 'A': a->alone = 1; break;
        case 'S': if (cmd_add_set("replay", &a->sets, optarg)) return EXIT_USAGE; break;
        case 'P':
            if ((a->proto = cmd_parse_proto(optarg)) < 0)
                return cmd_usage("replay", "--proto must be none, LL, LL128, Simple or auto, not '%s'", optarg);
            break;
        case 'M':
            if ((a->contention = cmd_parse_contention(optarg)) < 0)
                return cmd_usage("replay", "--contention must be fifo, fair or none, not '%s'", optarg);
            break;
        case 'h': fputs(help, stdout); return -1;
        case ':': return cmd_usage("replay", "option %s needs a value", argv[optind - 1]);
        default: return cmd_usage("replay", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (!a->topo) return cmd_usage("replay", "missing -t MACHINE");
    if (optind >= argc) return cmd_usage("replay", "no trace files (NAME.0.et NAME.1.et ...)");
    a->files = argv + optind;
    a->nfiles = argc - optind;
    if (a->algo_given && !run_is_auto(a->algo)) {
        int any = 0;
        for (int c = 0; c < COLL_COUNT; c++) any |= algo_find((coll_t)c, a->algo) != NULL;
        if (!any) return cmd_usage("replay", "-a: no algorithm '%s' (nccl, auto or a row `baton algos` lists)", a->algo);
    }
    return 0;
}

/* The rank in a name NAME.RANK.et, or -1. */
static long name_rank(const char *path) {
    size_t n = strlen(path);
    if (n < 5 || strcmp(path + n - 3, ".et")) return -1;
    size_t i = n - 3, j = i;
    while (j > 0 && path[j - 1] >= '0' && path[j - 1] <= '9') j--;
    if (j == i || j == 0 || path[j - 1] != '.' || i - j > 7) return -1;
    return strtol(path + j, NULL, 10);
}

/* Files in rank order: by their names where every one says its rank (each
 * of 0 .. n-1 once), else as given. */
static int order(const rp_args_t *a, const char **names) {
    int by_name = 1;
    for (int i = 0; i < a->nfiles; i++) names[i] = NULL;
    for (int i = 0; i < a->nfiles && by_name; i++) by_name = name_rank(a->files[i]) >= 0;
    for (int i = 0; i < a->nfiles; i++) {
        if (!by_name) { names[i] = a->files[i]; continue; }
        long r = name_rank(a->files[i]);
        if (r >= a->nfiles)
            return cmd_usage("replay", "%s says rank %ld, but there %s only %d file%s (ranks 0..%d)", a->files[i], r,
                             a->nfiles == 1 ? "is" : "are", a->nfiles, a->nfiles == 1 ? "" : "s", a->nfiles - 1);
        if (names[r]) return cmd_usage("replay", "%s and %s both say rank %ld", names[r], a->files[i], r);
        names[r] = a->files[i];
    }
    return 0;
}

static const char *comm_what(const replay_comm_t *c, char *b, size_t n) {
    if (c->p2p) snprintf(b, n, "send %d -> %d", c->ranks[0], c->ranks[1]);
    else snprintf(b, n, "%s", chakra_coll_name(c->comm_type));
    return b;
}

/* Sends alike but for their ranks are one line: the first of them says
 * how many (0 for the others, which are not printed) and the range of
 * their times shared (*lo, *hi; 0 where none was). */
static int alike_sends(const replay_out_t *o, int i, double *lo, double *hi) {
    const replay_comm_t *c = &o->comm[i];
    int n = 0;
    for (int j = 0; j < o->ncomm; j++) {
        const replay_comm_t *d = &o->comm[j];
        if (!d->p2p || d->bytes != c->bytes || d->each_s != c->each_s || d->proto != c->proto || strcmp(d->algo, c->algo)) continue;
        if (j < i) return 0;
        n += d->count;
        if (d->shared_hi_s > 0 && (*hi == 0 || d->shared_hi_s > *hi)) *hi = d->shared_hi_s;
        if (d->shared_lo_s > 0 && (*lo == 0 || d->shared_lo_s < *lo)) *lo = d->shared_lo_s;
    }
    return n;
}

/* "; shared 1.2 ms to 1.5 ms" where some ran slower beside others, else "". */
static const char *shared_range(double lo, double hi, char *b, size_t n) {
    char x[32], y[32];
    if (hi <= 0) return b[0] = 0, b;
    units_fmt_time(lo, x, sizeof x);
    units_fmt_time(hi, y, sizeof y);
    if (lo == hi) snprintf(b, n, "; shared %s", x);
    else snprintf(b, n, "; shared %s to %s", x, y);
    return b;
}

/* What the replay did with communications that overlapped. */
static void overlap_note(const replay_out_t *o) {
    unsigned long long k = o->overlapped, n = o->insts;
    if (k == 0) return;
    if (o->rounds == 0) {
        printf("  note        %llu of the %llu communications ran while another did: each is timed as if it had\n"
               "              the machine to itself (--alone)\n", k, n);
        return;
    }
    printf("  shared      %llu of the %llu communications ran while another did: simulated together, %s\n", k, n,
           o->settled ? "settled" : "not settled");
    printf("              after %d round%s (%u joint run%s in the last)%s\n", o->rounds, o->rounds == 1 ? "" : "s", o->chains,
           o->chains == 1 ? "" : "s", o->settled ? "" : ": the last round's times");
    if (o->apart)
        printf("              %u of them %s timed alone all the same: a joint run cannot take the row, or times\n"
               "              it more than 10 %% apart from `baton sim` (a whole machine's searched rings)\n", o->apart,
               o->apart == 1 ? "is" : "are");
}

static void text(const rp_args_t *a, const topo_t *t, const replay_out_t *o) {
    const replay_rank_t *k = &o->rank[o->critical];
    double v[5] = {k->compute_s, k->transport_s, k->overhead_s, k->idle_s, k->wait_s}, s = o->step_s > 0 ? o->step_s : 1;
    char b[6][32], sz[32], what[64];
    for (int i = 0; i < 5; i++) units_fmt_time(v[i], b[i], sizeof b[i]);
    units_fmt_time(o->step_s, b[5], sizeof b[5]);
    printf("replay of %d rank%s (%s ...; %llu nodes) on %s (%d ranks)\n", o->nranks, o->nranks > 1 ? "s" : "", a->files[0],
           (unsigned long long)o->nodes, topo_name(t), topo_nranks(t));
    printf("  step        %s (rank %d ends last)\n", b[5], o->critical);
    printf("  bucket      time         share    (rank %d)\n", o->critical);
    printf("  compute     %-12s %5.1f %%  GPU kernels (COMP_NODE durations)\n", b[0], 100 * v[0] / s);
    printf("  memory      -                    in compute: a kernel's duration holds its HBM time\n");
    printf("  transport   %-12s %5.1f %%  communication no kernel hides, %s of it waiting for peers\n", b[1], 100 * v[1] / s,
           b[4]);
    printf("  overhead    %-12s %5.1f %%  host nodes (is_cpu_op) nothing else hides\n", b[2], 100 * v[2] / s);
    if (k->idle_s > 0) printf("  idle        %-12s %5.1f %%  nothing running\n", b[3], 100 * v[3] / s);
    for (int i = 0, line = 0; i < o->ncomm; i++) {
        const replay_comm_t *c = &o->comm[i];
        double lo = c->p2p ? 0 : c->shared_lo_s, hi = c->p2p ? 0 : c->shared_hi_s;
        int count = c->p2p ? alike_sends(o, i, &lo, &hi) : c->count;
        char each[32], sh[80];
        if (count == 0) continue;
        units_fmt_size(c->bytes, sz, sizeof sz);
        units_fmt_time(c->each_s, each, sizeof each);
        char on[32] = "";
        if (!c->p2p) snprintf(on, sizeof on, " on %d rank%s", c->nranks, c->nranks == 1 ? "" : "s");
        if (!c->p2p && c->bytes == 0 && c->each_s == 0) {
            printf("  %-11s %d x %s of 0 B%s (empty: NCCL discards it without a launch, 0 s)\n", line++ ? "" : "comm",
                   count, comm_what(c, what, sizeof what), on);
            continue;
        }
        printf("  %-11s %d x %s of %s%s (%s/%s, %s each%s%s)\n", line++ ? "" : "comm", count,
               c->p2p ? (count == 1 ? "send/recv pair" : "send/recv pairs") : comm_what(c, what, sizeof what), sz, on, c->algo,
               proto_name((proto_t)c->proto), each, hi > 0 ? " alone" : "", shared_range(lo, hi, sh, sizeof sh));
    }
    overlap_note(o);
    if (o->untimed) printf("  untimed     %llu node%s of kinds without a time (memory, metadata, others): instant\n",
                           (unsigned long long)o->untimed, o->untimed == 1 ? "" : "s");
    if (a->trace) printf("  timeline    %s (open in ui.perfetto.dev)\n", a->trace);
}

static void json(const topo_t *t, const replay_out_t *o) {
    char esc[512], what[64];
    const replay_rank_t *k = &o->rank[o->critical];
    printf("{\"machine\":\"%s\",\"ranks\":%d,\"nodes\":%llu,\"untimed\":%llu,\"step_s\":%.9g,\"critical_rank\":%d,"
           "\"communications\":%llu,\"overlapped\":%llu,\"shared_rounds\":%d,\"settled\":%s,\"apart\":%u,\"compute_s\":%.9g,\"memory_s\":null,\"transport_s\":%.9g,\"wait_s\":%.9g,\"overhead_s\":%.9g,\"idle_s\":%.9g,"
           "\"comm\":[",
           report_json_escape(topo_name(t), esc, sizeof esc), o->nranks, (unsigned long long)o->nodes,
           (unsigned long long)o->untimed, o->step_s, o->critical, (unsigned long long)o->insts,
           (unsigned long long)o->overlapped, o->rounds, o->rounds == 0 || o->settled ? "true" : "false", o->apart, k->compute_s, k->transport_s, k->wait_s, k->overhead_s,
           k->idle_s);
    for (int i = 0; i < o->ncomm; i++) {
        const replay_comm_t *c = &o->comm[i];
        printf("%s{\"what\":\"%s\",\"bytes\":%llu,\"ranks\":%d,\"count\":%d,\"algorithm\":\"%s\",\"protocol\":\"%s\","
               "\"each_s\":%.9g,\"shared_min_s\":%.9g,\"shared_max_s\":%.9g}", i ? "," : "", comm_what(c, what, sizeof what),
               (unsigned long long)c->bytes, c->nranks, c->count, c->algo, proto_name((proto_t)c->proto), c->each_s,
               c->shared_hi_s > 0 ? c->shared_lo_s : c->each_s, c->shared_hi_s > 0 ? c->shared_hi_s : c->each_s);
    }
    printf("],\"per_rank\":[");
    for (int r = 0; r < o->nranks; r++) {
        const replay_rank_t *x = &o->rank[r];
        printf("%s{\"rank\":%d,\"end_s\":%.9g,\"compute_s\":%.9g,\"transport_s\":%.9g,\"wait_s\":%.9g,\"overhead_s\":%.9g,"
               "\"idle_s\":%.9g}", r ? "," : "", r, x->end_s, x->compute_s, x->transport_s, x->wait_s, x->overhead_s, x->idle_s);
    }
    printf("]}\n");
}

static int run(const rp_args_t *a, topo_t *t, const char **names, chakra_et_t *et, baton_err_t *e) {
    for (int r = 0; r < a->nfiles; r++)
        if (chakra_read(names[r], &et[r], e) < 0) return -1;
    replay_req_t q = {.algo = a->algo, .proto = a->proto, .contention = (contention_t)a->contention, .alone = a->alone};
    replay_out_t o;
    int rc = replay_run(t, et, names, a->nfiles, &q, &o, e);
    if (rc == 0 && a->trace) {
        char *js = replay_trace_json(&o);
        rc = js ? cmd_write_file(a->trace, js, strlen(js), e) : err_set(e, BATON_ENOMEM, "out of memory for the timeline");
        free(js);
    }
    if (rc == 0) {
        if (a->json) json(t, &o);
        else text(a, t, &o);
    }
    replay_free(&o);
    return rc;
}

int cmd_replay(int argc, char **argv) {
    rp_args_t a = {.proto = RUN_PROTO_AUTO, .algo = CHOICE_DEFAULT};
    int rc = parse(argc, argv, &a);
    if (rc) return rc < 0 ? EXIT_OK : rc;
    const char **names = calloc((size_t)a.nfiles, sizeof *names);
    chakra_et_t *et = calloc((size_t)a.nfiles, sizeof *et);
    if (names == NULL || et == NULL) { free(names); free(et); fputs("baton replay: out of memory\n", stderr); return EXIT_INPUT; }
    if ((rc = order(&a, names)) == 0) {
        baton_err_t e = {0};
        topo_t *t = cmd_load_topo(a.topo, a.sets.v, a.sets.n, &e);
        rc = t == NULL || run(&a, t, names, et, &e) < 0 ? cmd_fail("replay", &e) : EXIT_OK;
        topo_free(t);
    }
    for (int r = 0; r < a.nfiles; r++) chakra_free(&et[r]);
    free(et);
    free(names);
    return rc;
}
