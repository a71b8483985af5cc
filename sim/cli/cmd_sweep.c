/* cmd_sweep.c - `baton sweep`: a grid over topology parameters and sizes. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "../../topologies/topo_yaml.h"
#include "../../util/par.h"
#include "../../util/progress.h"
#include "cmd.h"
#include "../answer/report.h"
#include "../answer/select.h"

static const char help[] =
    "usage: baton sweep -t TOPO.yaml -c COLL [-a ALGO|auto] --sizes SPEC --set K=V1,V2,... [options]\n"
    "\n"
    "Run one collective over a grid: every combination of the listed parameter\n"
    "values (the first --set varies slowest) times every size. One row per point.\n"
    "\n"
    "  -t, --topo FILE     topology\n"
    "  -c, --coll NAME     collective\n"
    "  -a, --algo NAME     algorithm, or auto (default; a calibrated machine's: the\n"
    "                      rule it was fitted with, and --proto and --model too)\n"
    "      --sizes SPEC    LO:HI[:xF] or a list (default 1MiB)\n"
    "      --set K=V[,V]   a parameter and its values (repeatable)\n"
    "      --proto P       auto (default), LL, LL128, Simple, none\n"
    "      --model M       closed, des, or auto (default: the closed form on uniform\n"
    "                      machines, the simulator elsewhere)\n"
    "      --contention M  the simulator's: fifo (default), fair or none (a calibrated\n"
    "                      machine's: the one it was fitted with)\n"
    "      --format F      csv (default) or jsonl (one JSON object per line)\n"
    "      --shard I/N     only the I-th of N equal parts of the grid (1-based); the\n"
    "                      parts' outputs, concatenated in order, equal the whole\n"
    "  -o, --output FILE   write there (whole or not at all) instead of stdout\n"
    "      --fold N        a cluster of N nodes or more (default " CMD_FOLD_NODES_S ") is built only\n"
    "                      where its routes differ, as predict's --fold; 0: never\n"
    "The points run over worker processes, one per processor (BATON_JOBS=N sets\n"
    "how many; 1: none); the output is the same. A progress line goes to stderr\n"
    "when it is a terminal (BATON_NO_PROGRESS=1: never).\n\n"
    "example:\n"
    "  baton sweep -t cluster-h100 -c allreduce --set nodes=2,4,8 --set nic_bw=200Gb/s,400Gb/s --sizes 1MiB,1GiB\n";

typedef struct {
    char *name;
    char *values[64];
    int n;
} axis_t;

typedef struct {
    const char *topo, *coll, *algo, *sizes, *format, *output;
    int proto, model, shard, nshards, fold;
    int algo_given, proto_given;
    int contention, contention_given;   /* contention_t */
    char fitted_algo[CMD_RULE_LEN];   /* a calibrated machine's rule (cmd_calibrated_rule) */
    axis_t axes[8];
    int naxes;
} sweep_args_t;

static int add_axis(sweep_args_t *a, char *arg) {
    char *eq = strchr(arg, '=');
    if (eq == NULL || eq == arg) return cmd_usage("sweep", "--set %s: write --set name=value[,value...]", arg);
    if (a->naxes == 8) return cmd_usage("sweep", "at most 8 --set parameters");
    *eq = '\0';
    for (int i = 0; i < a->naxes; i++)           /* one column a parameter: its values in one --set */
        if (strcmp(a->axes[i].name, arg) == 0)
            return cmd_usage("sweep", "--set %s given twice: list its values in one (--set %s=A,B,...)", arg, arg);
    axis_t *x = &a->axes[a->naxes++];
    x->name = arg;
    for (char *v = eq + 1;; v++) {               /* split at commas; an empty value is a typo, not a skip */
        char *c = strchr(v, ',');
        if (c) *c = '\0';
        if (*v == '\0') return cmd_usage("sweep", "--set %s: an empty value in its list", arg);
        if (x->n == 64) return cmd_usage("sweep", "--set %s: at most 64 values", arg);
        x->values[x->n++] = v;
        if (c == NULL) return 0;
        v = c;
    }
}

static int parse(int argc, char **argv, sweep_args_t *a) {
    static const struct option opts[] = {
        {"topo", required_argument, 0, 't'}, {"coll", required_argument, 0, 'c'}, {"algo", required_argument, 0, 'a'},
        {"sizes", required_argument, 0, 's'}, {"set", required_argument, 0, 'S'}, {"proto", required_argument, 0, 'P'},
        {"model", required_argument, 0, 'm'}, {"format", required_argument, 0, 'f'}, {"shard", required_argument, 0, 'x'},
        {"output", required_argument, 0, 'o'}, {"fold", required_argument, 0, 'F'}, {"help", no_argument, 0, 'h'},
        {"contention", required_argument, 0, 'M'},
        {0, 0, 0, 0}};
    int ch;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":t:c:a:o:h", opts, NULL)) != -1) {
        switch (ch) {
        case 't': a->topo = optarg; break;
        case 'c': a->coll = optarg; break;
        case 'a': a->algo = optarg, a->algo_given = 1; break;
        case 's': a->sizes = optarg; break;
        case 'f': a->format = optarg; break;
        case 'o': if (cmd_out_file("sweep", "-o", optarg, &a->output)) return EXIT_USAGE; break;
        case 'S': if (add_axis(a, optarg)) return EXIT_USAGE; break;
        case 'F': if (cmd_fold_arg("sweep", optarg, &a->fold)) return EXIT_USAGE; break;
        case 'P':
            a->proto = cmd_parse_proto(optarg), a->proto_given = 1;
            if (a->proto < 0) return cmd_usage("sweep", "--proto must be none, LL, LL128, Simple or auto");
            break;
        case 'm':
            a->model = !strcmp(optarg, "auto") ? SELECT_AUTO : !strcmp(optarg, "closed") ? SELECT_CLOSED : !strcmp(optarg, "des") ? SELECT_DES : -1;
            if (a->model < 0) return cmd_usage("sweep", "--model must be auto, closed or des");
            break;
        case 'M':
            if ((a->contention = cmd_parse_contention(optarg)) < 0)
                return cmd_usage("sweep", "--contention must be fifo, fair or none, not '%s'", optarg);
            a->contention_given = 1;
            break;
        case 'x': {
            int used = 0;          /* %n: nothing may follow N ("1/2/3" is not a shard) */
            if (sscanf(optarg, "%d/%d%n", &a->shard, &a->nshards, &used) != 2 || optarg[used] || a->nshards < 1 ||
                a->shard < 1 || a->shard > a->nshards)
                return cmd_usage("sweep", "--shard I/N with 1 <= I <= N, not '%s'", optarg);
            break;
        }
        case 'h': fputs(help, stdout); return 1;
        case ':': return cmd_usage("sweep", "option %s needs a value", argv[optind - 1]);
        default: return cmd_usage("sweep", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc) return cmd_usage("sweep", "unexpected argument '%s'", argv[optind]);
    if (!a->topo || !a->coll) return cmd_usage("sweep", "needs -t TOPO.yaml and -c COLLECTIVE");
    if (strcmp(a->format, "csv") && strcmp(a->format, "jsonl")) return cmd_usage("sweep", "--format must be csv or jsonl");
    return 0;
}

/* Grid point i: the value index of each axis (first axis slowest), then the size. */
static void point(const sweep_args_t *a, long i, int nsizes, int *idx, int *size) {
    *size = (int)(i % nsizes);
    i /= nsizes;
    for (int k = a->naxes - 1; k >= 0; k--) { idx[k] = (int)(i % a->axes[k].n); i /= a->axes[k].n; }
}

/* The --set values of the point with value indices idx, into sets and sv. */
static void point_sets(const sweep_args_t *a, const int *idx, char sets[8][200], const char **sv) {
    for (int k = 0; k < a->naxes; k++) {
        snprintf(sets[k], sizeof sets[k], "%s=%s", a->axes[k].name, a->axes[k].values[idx[k]]);
        sv[k] = sets[k];
    }
}

/* One point's answer, or why there is none (err.code). Plain data: it
 * comes back from a worker process (util/par.h). */
typedef struct {
    int ranks, simulated;
    const char *algo;        /* the catalogue's name (static) */
    proto_t proto;
    double time_s, algbw_GBps, busbw_GBps;
    baton_err_t err;
} sweep_row_t;

typedef struct {
    const sweep_args_t *a;
    const uint64_t *sizes;
    int nsizes;
    coll_t coll;
    long first;              /* the batch's first point */
} sweep_ctx_t;

/* Point first + i of the grid; a point that fails keeps its error in its
 * row, so the rows before it are printed as they would be one at a time. */
static int compute_row(void *ctx, int i, void *out, baton_err_t *unused) {
    (void)unused;
    const sweep_ctx_t *c = ctx;
    const sweep_args_t *a = c->a;
    sweep_row_t *w = out;
    char sets[8][200];
    const char *sv[8];
    int idx[8], size;
    point(a, c->first + i, c->nsizes, idx, &size);
    point_sets(a, idx, sets, sv);
    *w = (sweep_row_t){0};
    topo_t *t = cmd_load_topo_folded(a->topo, sv, a->naxes, a->fold, &w->err);
    if (t == NULL) return 0;
    cost_model_t m;
    run_req_t q = {.coll = c->coll, .algo = a->algo, .bytes = c->sizes[size], .proto = a->proto,
                   .contention = (contention_t)a->contention};
    run_out_t r;
    int rc = topo_cost_model(t, &m, &w->err), whole;
    q.predict = a->model == SELECT_CLOSED || (a->model == SELECT_AUTO && m.uniform);
    if (rc == 0) rc = run_collective(t, &q, &r, &w->err);
    if ((whole = cmd_unfold(rc, &t, a->topo, sv, a->naxes, &w->err)) != 0)     /* the row needs every rank */
        rc = whole > 0 ? run_collective(t, &q, &r, &w->err) : -1;
    if (rc == 0) {
        *w = (sweep_row_t){.ranks = r.ranks, .simulated = r.simulated, .algo = r.algo->name, .proto = r.proto,
                           .time_s = r.time_s, .algbw_GBps = r.algbw_GBps, .busbw_GBps = r.busbw_GBps};
        engine_result_free(&r.eng);
    } else if (w->err.code == 0)
        err_set(&w->err, BATON_EINVAL, "point %ld cannot run", c->first + i);
    if (t) topo_free(t);
    return 0;
}

static void print_row(FILE *f, const sweep_args_t *a, long i, int nsizes, const uint64_t *sizes, const sweep_row_t *w) {
    int idx[8], size, json = !strcmp(a->format, "jsonl");
    point(a, i, nsizes, idx, &size);
    if (json) fputc('{', f);
    for (int k = 0; k < a->naxes; k++) {               /* the user's --set values */
        char esc[512];
        const char *v = a->axes[k].values[idx[k]];
        fprintf(f, json ? "\"%s\":\"%s\"," : "%.0s%s,", a->axes[k].name, json ? report_json_escape(v, esc, sizeof esc) : v);
    }
    fprintf(f, json ? "\"ranks\":%d,\"bytes\":%llu,\"algorithm\":\"%s\",\"protocol\":\"%s\",\"model\":\"%s\","
                      "\"time_s\":%.9g,\"algbw_GBps\":%.6g,\"busbw_GBps\":%.6g}\n"
                    : "%d,%llu,%s,%s,%s,%.9g,%.6g,%.6g\n",
            w->ranks, (unsigned long long)sizes[size], w->algo, proto_name(w->proto), w->simulated ? "des" : "closed",
            w->time_s, w->algbw_GBps, w->busbw_GBps);
}

/* Will the sweep simulate? --model des does, closed does not, and auto
 * does where the machine is not uniform (its first point's, as the file and
 * the first values give it; a point that cannot load says why later). */
static int simulates(const sweep_args_t *a) {
    if (a->model != SELECT_AUTO) return a->model == SELECT_DES;
    char sets[8][200];
    const char *sv[8];
    const int first[8] = {0};
    point_sets(a, first, sets, sv);
    topo_t *t = cmd_load_topo_folded(a->topo, sv, a->naxes, a->fold, NULL);
    cost_model_t m;
    int sim = t && topo_cost_model(t, &m, NULL) == 0 && !m.uniform;
    if (t) topo_free(t);
    return sim;
}

/* The points run in batches over worker processes where they simulate
 * (BATON_JOBS: on a cluster, seconds a point), each batch printed in order
 * once it is done: the output is the one-at-a-time output, and the progress
 * bar moves. Closed forms take microseconds a point, less than a fork: 320
 * points of hgx-h100 took 0.03 s in one process, 0.12 s over two workers. */
#define SWEEP_BATCH_PER_JOB 8
static int sweep(const sweep_args_t *a, FILE *f, baton_err_t *e) {
    uint64_t *sizes;
    int nsizes, coll = coll_parse(a->coll), jobs = simulates(a) ? par_jobs() : 1;
    const char *why;
    if (coll < 0) return err_set(e, BATON_EINVAL, "unknown collective '%s'%s", a->coll, coll_hint(a->coll));
    if (select_parse_sizes(a->sizes, &sizes, &nsizes, &why) < 0) return err_set(e, BATON_EINVAL, "--sizes %s: %s", a->sizes, why);
    cmd_sizes_note("sweep", a->sizes, sizes, nsizes);
    long total = nsizes;
    for (int k = 0; k < a->naxes; k++) total *= a->axes[k].n;
    long lo = total * (a->shard - 1) / a->nshards, hi = total * a->shard / a->nshards, batch = SWEEP_BATCH_PER_JOB * jobs;
    if (a->shard == 1 && !strcmp(a->format, "csv")) {
        for (int k = 0; k < a->naxes; k++) fprintf(f, "%s,", a->axes[k].name);
        fprintf(f, "ranks,bytes,algorithm,protocol,model,time_s,algbw_GBps,busbw_GBps\n");
    }
    sweep_row_t *rows = malloc((size_t)batch * sizeof *rows);
    int rc = rows ? 0 : err_set(e, BATON_ENOMEM, "out of memory");
    for (long i = lo; i < hi && rc == 0; i += batch) {
        sweep_ctx_t c = {.a = a, .sizes = sizes, .nsizes = nsizes, .coll = (coll_t)coll, .first = i};
        int n = (int)(hi - i < batch ? hi - i : batch);
        progress_stage("point", i - lo, hi - lo);
        rc = par_map(n, sizeof *rows, rows, compute_row, &c, jobs, e);
        for (int j = 0; j < n && rc == 0; j++) {
            if (rows[j].err.code) rc = err_set(e, rows[j].err.code, "%s", rows[j].err.msg);
            else print_row(f, a, i + j, nsizes, sizes, &rows[j]);
        }
    }
    free(rows);
    free(sizes);
    return rc;
}

/* A calibrated machine answers under the rule it was fitted with: -a,
 * --proto and --model auto default to it, and another says so
 * (cmd_calibrated_rule). The machine as the file gives it; a row that cannot
 * load says why itself. */
static void calibrated_rule(sweep_args_t *a) {
    topo_t *t = cmd_load_topo_folded(a->topo, NULL, 0, a->fold, NULL);
    if (t == NULL) return;
    const topo_calib_t *k = &topo_params_c(t)->calib;
    if (k->present && a->model == SELECT_AUTO) a->model = strcmp(k->model, "des") ? SELECT_CLOSED : SELECT_DES;
    cmd_rule_t rule = {.algo = &a->algo, .algo_given = a->algo_given, .proto = &a->proto, .proto_given = a->proto_given,
                       .model = a->model == SELECT_DES ? "des" : "closed",
                       .contention = a->model == SELECT_DES ? &a->contention : NULL,
                       .contention_given = a->contention_given, .fair_ok = 1, .keep = a->fitted_algo};
    cmd_calibrated_rule("sweep", t, &rule);
    topo_free(t);
}

int cmd_sweep(int argc, char **argv) {
    sweep_args_t a = {.algo = "auto", .sizes = "1MiB", .format = "csv", .shard = 1, .nshards = 1, .proto = RUN_PROTO_AUTO,
                      .fold = CMD_FOLD_NODES};
    int rc = parse(argc, argv, &a);
    if (rc) return rc == 1 ? EXIT_OK : rc;
    calibrated_rule(&a);
    uint64_t *sizes = NULL;
    int nsizes;
    const char *why;
    if (coll_parse(a.coll) < 0) return cmd_usage("sweep", "unknown collective '%s'%s", a.coll, coll_hint(a.coll));
    if (select_parse_sizes(a.sizes, &sizes, &nsizes, &why) < 0) return cmd_usage("sweep", "--sizes %s: %s", a.sizes, why);
    free(sizes);                                 /* usage errors (2) before anything runs; sweep reads them again */
    if (a.contention_given && a.model == SELECT_CLOSED)
        return cmd_usage("sweep", "--contention is the simulator's: use it with --model des or auto");
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    baton_err_t e = {0};
    if (f == NULL) return cmd_fail("sweep", &(baton_err_t){BATON_ENOMEM, "out of memory"});
    rc = sweep(&a, f, &e);
    fclose(f);
    if (rc == 0 && a.output) {
        rc = cmd_write_file(a.output, buf, len, &e);
    } else if (rc == 0) {
        fwrite(buf, 1, len, stdout);
    }
    free(buf);
    return rc < 0 ? cmd_fail("sweep", &e) : EXIT_OK;
}
