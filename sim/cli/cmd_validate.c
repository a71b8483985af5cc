/* cmd_validate.c - `baton validate` and `baton calibrate` on nccl-tests logs. */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <math.h>

#include "../../models/gpu.h"
#include "../../topologies/find.h"
#include "../../topologies/topo_write.h"
#include "../../topologies/topo_yaml.h"
#include "../../topologies/units.h"
#include "../../validate/calibrate.h"
#include "../../validate/logplan.h"
#include "../../validate/tuningplan.h"
#include "../../validate/tunerfile.h"
#include "../../validate/host.h"
#include "../../util/par.h"
#include "../../util/progress.h"
#include "../answer/report.h"
#include "../answer/select.h"
#include "cmd.h"

static const char help_validate[] =
    "usage: baton validate -t TOPO.yaml --nccl-tests LOG [LOG...] [options]\n"
    "\n"
    "The model's prediction for every row of nccl-tests logs against the measured\n"
    "time (the mean of out-of-place and in-place; the faster of the two, marked (*),\n"
    "where they run the same transfers and differ by more than a fifth): under each\n"
    "log's name, size, measured, predicted, error = (predicted - measured) / measured\n"
    "(+: the model is slower), the bus bandwidth of both times (nccl-tests' busbw),\n"
    "the algorithm and protocol; then the mean absolute percentage error (MAPE) over\n"
    "all sizes and over sizes >= 64 MiB. No fitting (see baton calibrate).\n";

static const char help_tuner[] =
    "      --tuner FILE       NCCL's example tuner CSV (baton select --format\n"
    "                         nccl-tuner): -a nccl takes its first row that fits a\n"
    "                         size and that NCCL can run there (algorithm, protocol,\n"
    "                         channels), NCCL's own choice where none does, as NCCL\n"
    "                         with the file loaded by its example tuner plugin;\n"
    "                         default $NCCL_TUNER_CONFIG_FILE\n";

static const char help_calibrate[] =
    "usage: baton calibrate -t TOPO.yaml --nccl-tests LOG [LOG...] -o OUT.yaml [options]\n"
    "\n"
    "Fit the machine to nccl-tests logs: each link class's efficiency (achieved /\n"
    "the file's rate, at most 1), the links' latency, the reduction rate and each\n"
    "protocol's latency, within physical bounds (robust least squares on relative\n"
    "error, GSL), each with its standard error; a parameter no log depends on keeps\n"
    "the file's value, one that ends at a bound is flagged. Writes a calibrated\n"
    "machine: `extends:` the original file and sets the fitted values, so every\n"
    "parameter (--set nodes=64, nic_bw=...) and flag still works, with a\n"
    "`calibration:` record (the rule it was fitted under, its error on sizes it\n"
    "did not see, and the band that gives predictions their error bars).\n"
    "`extends:` names a shipped machine by name (found as -t NAME is: ., topologies/,\n"
    "$BATON_PATH, the installed machines), any other file by its absolute path, so\n"
    "OUT.yaml can be copied elsewhere.\n"
    "      --self-contained  write OUT.yaml whole instead: the base's nodes and links\n"
    "                        with the fitted values, no extends: (no parameters left:\n"
    "                        --set nodes=... no longer applies to it)\n"
    "      --cv K            K-fold cross-validation (default 5, with --model des 0:\n"
    "                        each fold simulates every size again; 0: none; K at\n"
    "                        least the sizes: leave one out)\n"
    "      --hold-out LO:HI  fit without the sizes in [LO, HI] and report how well\n"
    "                        the fit predicts them; `middle`: the middle third of\n"
    "                        the sizes, `top`: the largest quarter\n"
    "      --fit-efficiency  also fit LL's and LL128's efficiency (better in sample,\n"
    "                        worse on held-out sizes of the shared logs: docs/decisions/\n"
    "                        calibration-bounds.md).\n"
    "                        With fewer than two sizes of 1 MiB or more on Simple the\n"
    "                        fit does so anyway and keeps the links at the file's values\n"
    "      --accept-unphysical  write a fit that is not physical anyway (a link efficiency\n"
    "                        below 0.5: by default calibrate says which mechanism the\n"
    "                        machine lacks and writes nothing; a value at its bound is\n"
    "                        named with its mechanism and written)\n";

static const char help_host[] =
    "\n"
    "baton validate --backend host [-c COLL] [-a ALGO] [--ranks N] [--sizes SPEC]\n"
    "               [--reps R] [--log OUT.txt] [--hold-out LO:HI] [-o OUT.yaml]\n"
    "  runs the schedule for real: N threads (default 4) moving and adding bytes in\n"
    "  shared memory, R timed repetitions (default 7, median) after a warm-up, every\n"
    "  result checked; writes the timings as an nccl-tests log (--log), compares\n"
    "  them with the model of the shipped machine `host`, fits it (held-out sizes\n"
    "  predicted) and writes the fitted topology (-o).\n";

static const char help_common[] =
    "\n"
    "  -t, --topo FILE        the machine the logs came from (its ranks = the logs')\n"
    "      --nccl-tests LOG   one or more logs (all_reduce_perf, all_gather_perf, ...),\n"
    "                         as text or as nccl-tests' JSON (-J FILE.json), told\n"
    "                         apart by their content;\n"
    "                         on a cluster file a log of other ranks runs at its own\n"
    "                         node count (--set nodes=ranks/group_size): one joint fit.\n"
    "                         Run with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING, a log\n"
    "                         says what NCCL ran at each size, and -a nccl follows it\n"
    "      --ranks N          the logs' rank count, when a log does not say (an error\n"
    "                         where a log says otherwise, unless --force-ranks)\n"
    "  -a, --algo A           algorithm (default nccl: what baton expects NCCL to run\n"
    "                         of ring, its trees, nvls, nvlstree, as the logs ran; all-to-all:\n"
    "                         its p2p schedule, pairwise; a calibrated\n"
    "                         machine's default is the rule it was fitted with)\n"
    "      --proto P          none, LL, LL128, Simple or auto (default auto)\n"
    "      --model M          closed (default), des: the simulator (calibrate then fits\n"
    "                         each link class's bandwidth apart; slower), or nccl:\n"
    "                         NCCL's own cost model on the machine (validate only);\n"
    "                         des simulates the sizes in worker processes, one per\n"
    "                         processor (BATON_JOBS=N sets how many; 1: none)\n"
    "      --contention M     the simulator's (--model des): fifo (default), fair or none\n"
    "      --channels C       rings side by side (NCCL uses several; see baton sim)\n"
    "      --set K=V          override a topology parameter\n"
    "      --json             JSON instead of the table (mape_pct, mape_large_pct, rows)\n"
    "  -c, --coll C           what a log ran where it names no test (the command line\n"
    "                         all_reduce_perf ...: baton reads it off the columns\n"
    "                         otherwise, where all_gather and alltoall look alike)\n";

#define VAL_MAX_SAID 64
typedef struct {
    const char *topo, *algo, *out, *hold, *backend, *coll, *sizes, *log_out;
    const char *logs[64];
    int nlogs, ranks, proto, json, des, nccl_model, calibrate, reps, channels, fit_eff, force_ranks, cv, contention;
    int standalone;          /* --self-contained: the calibration written whole, no extends: */
    int unphysical_ok;       /* --accept-unphysical: write a fit cal_unphysical flags */
    int algo_given, proto_given, model_given, contention_given;
    cmd_sets_t sets;
    char ranks_set[64];
    topo_lib_rule_t logged[TOPO_MAX_LIB_RULES];   /* the plan the logs' TUNING lines give (tuningplan.h) */
    int nlogged;
    char nccl[64];           /* the NCCL versions the logs state, distinct, ", " between */
    char fitted_algo[CMD_RULE_LEN];   /* a calibrated machine's rule (cmd_calibrated_rule) */
    char env[2][64];         /* NCCL_ALGO, NCCL_PROTO as the logs say they were set, if all say the same */
    int env_logs, env_mixed; /* logs read; 1: they differ (then nothing is recorded) */
    char *said[VAL_MAX_SAID];          /* what say() printed about the logs, for --json's "messages" */
    int nsaid;
    const char *tuner;       /* --tuner FILE (or $NCCL_TUNER_CONFIG_FILE): -a nccl follows its rows */
    int tuner_env;           /* 1: named by the environment, not the command line */
    tuner_table_t tuner_tab;
} val_args_t;

static int parse(int argc, char **argv, val_args_t *a, const char *cmd) {
    static const struct option opts[] = {
        {"topo", required_argument, 0, 't'}, {"nccl-tests", required_argument, 0, 'n'},
        {"ranks", required_argument, 0, 'r'}, {"algo", required_argument, 0, 'a'},
        {"proto", required_argument, 0, 'P'}, {"model", required_argument, 0, 'm'},
        {"set", required_argument, 0, 'S'}, {"json", no_argument, 0, 'j'}, {"output", required_argument, 0, 'o'},
        {"hold-out", required_argument, 0, 'H'}, {"backend", required_argument, 0, 'B'},
        {"coll", required_argument, 0, 'c'}, {"sizes", required_argument, 0, 's'},
        {"reps", required_argument, 0, 'R'}, {"log", required_argument, 0, 'l'},
        {"channels", required_argument, 0, 'C'}, {"force-ranks", no_argument, 0, 'F'}, {"fit-efficiency", no_argument, 0, 'E'},
        {"cv", required_argument, 0, 'V'}, {"contention", required_argument, 0, 'M'},
        {"self-contained", no_argument, 0, 'W'}, {"accept-unphysical", no_argument, 0, 'U'},
        {"tuner", required_argument, 0, 'T'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    int ch;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":t:a:o:c:h", opts, NULL)) != -1) {
        switch (ch) {
        case 'T': a->tuner = optarg; break;
        case 'B': a->backend = optarg; break;
        case 'M':
            if ((a->contention = cmd_parse_contention(optarg)) < 0)
                return cmd_usage(cmd, "--contention must be fifo, fair or none, not '%s'", optarg);
            a->contention_given = 1;
            break;
        case 'E': a->fit_eff = 1; break;
        case 'W': a->standalone = 1; break;
        case 'U': a->unphysical_ok = 1; break;
        case 'V': a->cv = atoi(optarg); if (a->cv < 0 || a->cv == 1 || a->cv > 4096) return cmd_usage(cmd, "--cv K: 0 (none) or 2..4096 folds"); break;
        case 'c': a->coll = optarg; break;
        case 's': a->sizes = optarg; break;
        case 'l': a->log_out = optarg; break;
        case 'F': a->force_ranks = 1; break;
        case 'C': a->channels = atoi(optarg); if (a->channels < 1 || a->channels > 64) return cmd_usage(cmd, "--channels must be 1..64"); break;
        case 'R': a->reps = atoi(optarg); if (a->reps < 1 || a->reps > 1000) return cmd_usage(cmd, "--reps must be 1..1000"); break;
        case 't': a->topo = optarg; break;
        case 'n': if (a->nlogs < 64) a->logs[a->nlogs++] = optarg; break;
        case 'r': a->ranks = atoi(optarg); if (a->ranks < 1) return cmd_usage(cmd, "--ranks must be positive"); break;
        case 'a': a->algo = optarg; a->algo_given = 1; break;
        case 'o': a->out = optarg; break;
        case 'H': a->hold = optarg; break;
        case 'j': a->json = 1; break;
        case 'S': if (cmd_add_set(cmd, &a->sets, optarg)) return EXIT_USAGE; break;
        case 'm':
            if (strcmp(optarg, "closed") && strcmp(optarg, "des") && strcmp(optarg, "nccl"))
                return cmd_usage(cmd, "--model must be closed, des or nccl");
            a->model_given = 1;
            a->des = !strcmp(optarg, "des");
            a->nccl_model = !strcmp(optarg, "nccl");
            break;
        case 'P':
            a->proto_given = 1;
            a->proto = cmd_parse_proto(optarg);
            if (a->proto < 0) return cmd_usage(cmd, "--proto must be none, LL, LL128, Simple or auto");
            break;
        case 'h':
            fputs(a->calibrate ? help_calibrate : help_validate, stdout);
            fputs(help_common, stdout);
            if (!a->calibrate) fputs(help_tuner, stdout);
            if (!a->calibrate) fputs(help_host, stdout);
            printf("\nexample:\n  baton %s -t dgx1-v100 -a nccl --nccl-tests "
                   "validate/logs/nccl-tests-extra/v100x8_dgx1_cubemesh_konnase_allreduce.txt%s\n",
                   a->calibrate ? "calibrate" : "validate", a->calibrate ? " -o dgx1-fitted.yaml" : "");
            return 1;
        case ':': return cmd_usage(cmd, "option %s needs a value", argv[optind - 1]);
        default: return cmd_usage(cmd, "unknown option '%s'", argv[optind - 1]);
        }
    }
    while (optind < argc && a->nlogs < 64) a->logs[a->nlogs++] = argv[optind++];   /* LOG... after --nccl-tests */
    if (a->backend) {
        if (strcmp(a->backend, "host")) return cmd_usage(cmd, "--backend host is the one this build has (cuda: validate/cuda/)");
        if (a->calibrate || a->nlogs) return cmd_usage(cmd, "--backend host measures; it takes no logs");
        if (a->ranks == 0) a->ranks = 4;
        if (!a->topo) {                  /* this computer: N threads */
            a->topo = "host";          /* shipped: found on the search path, as -t NAME is */
            snprintf(a->ranks_set, sizeof a->ranks_set, "ranks=%d", a->ranks);
            if (cmd_add_set(cmd, &a->sets, a->ranks_set)) return EXIT_USAGE;
        }
        return 0;
    }
    if (a->tuner && a->calibrate) return cmd_usage(cmd, "--tuner is validate's: a calibration fits NCCL's own choices");
    if (a->tuner && (a->nccl_model || strcmp(a->algo, "nccl")))
        return cmd_usage(cmd, "--tuner overrides NCCL's choice: it goes with -a nccl on baton's costs (not --model nccl)");
    if (!a->tuner && !a->calibrate && getenv("NCCL_TUNER_CONFIG_FILE") && *getenv("NCCL_TUNER_CONFIG_FILE"))
        a->tuner = getenv("NCCL_TUNER_CONFIG_FILE"), a->tuner_env = 1;
    if (!a->topo) return cmd_usage(cmd, "missing -t TOPO.yaml");
    if (a->nlogs == 0) return cmd_usage(cmd, "missing --nccl-tests LOG");
    if (a->calibrate && !a->out) return cmd_usage(cmd, "missing -o OUT.yaml");
    if (a->standalone && !a->out) return cmd_usage(cmd, "--self-contained is how -o OUT.yaml is written: give -o");
    if (a->cv < 0) a->cv = a->calibrate && !a->des ? 5 : 0;      /* the simulator's fits are slow: ask */
    if (a->cv > 0 && !a->calibrate) return cmd_usage(cmd, "--cv is calibrate's");
    return 0;
}

/* Does t's file have a `nodes` parameter (a cluster, machine_for's way to another rank count)? */
static int has_nodes(const topo_t *t) {
    for (int i = 0; i < topo_nparams(t); i++) {
        const char *n, *v;
        topo_param_at(t, i, &n, &v);
        if (!strcmp(n, "nodes")) return 1;
    }
    return 0;
}

/* The command's name, for what it says on stderr. */
static const char *cmd_of(const val_args_t *a) { return a->calibrate ? "calibrate" : "validate"; }

/* A warning or note about the logs: on stderr as it happens, and kept for
 * --json ("messages"), where a script reads what a person would see. */
__attribute__((format(printf, 3, 4)))
static void say(val_args_t *a, const char *kind, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "baton %s: %s: %s\n", cmd_of(a), kind, msg);
    size_t n = strlen(kind) + strlen(msg) + 3;
    char *kept = a->nsaid < VAL_MAX_SAID ? malloc(n) : NULL;
    if (kept == NULL) return;
    snprintf(kept, n, "%s: %s", kind, msg);
    a->said[a->nsaid++] = kept;
}

/* The messages say() kept, as a JSON member. */
static void json_said(const val_args_t *a) {
    char esc[2048];
    printf(",\"messages\":[");
    for (int i = 0; i < a->nsaid; i++)
        printf("%s\"%s\"", i ? "," : "", report_json_escape(a->said[i], esc, sizeof esc));
    printf("]");
}

static void said_free(val_args_t *a) {
    for (int i = 0; i < a->nsaid; i++) free(a->said[i]);
    a->nsaid = 0;
}

/* The machines of one run: the topology, and the same file at other node
 * counts for logs that ran on another number of nodes. */
typedef struct {
    topo_t *t;
    topo_t *other[CAL_MAX_MACHINES - 1];
    int nother;
} machines_t;

/* The machine a log of `ranks` ranks ran on: the topology itself, or (a
 * cluster file, `group_size` GPUs a node) the same file with --set
 * nodes=ranks/group_size, loaded once per node count; NULL if neither. */
static topo_t *machine_for(const val_args_t *a, machines_t *ms, int ranks, const char *log) {
    int g = topo_params_c(ms->t)->group_size, k = 0;
    if (ranks == topo_nranks(ms->t)) return ms->t;
    for (int i = 0; i < ms->nother; i++)
        if (topo_nranks(ms->other[i]) == ranks) return ms->other[i];
    if (g < 1 || ranks % g || ms->nother == CAL_MAX_MACHINES - 1) return NULL;
    const char *sets[65];
    char nodes[32];
    for (int i = 0; i < a->sets.n; i++)
        if (strncmp(a->sets.v[i], "nodes=", 6)) sets[k++] = a->sets.v[i];
    snprintf(nodes, sizeof nodes, "nodes=%d", ranks / g);
    sets[k++] = nodes;
    baton_err_t ignored = {0};
    topo_t *m = cmd_load_topo(a->topo, sets, k, &ignored);    /* no `nodes` parameter: not a cluster */
    if (m == NULL || topo_nranks(m) != ranks) { topo_free(m); return NULL; }
    fprintf(stderr, "baton %s: %s ran on %d ranks: %s with --set %s\n", cmd_of(a), log, ranks, topo_name(ms->t), nodes);
    return ms->other[ms->nother++] = m;
}

/* Does the run follow NCCL's word where a log gives it? -a nccl on baton's
 * costs (not NCCL's own model, whose plan is its own). */
static int follows_logs(const val_args_t *a) { return strcmp(a->algo, "nccl") == 0 && !a->nccl_model; }

/* The plan log's TUNING lines give, as rules for machine `on` (a->logged). */
static void read_logged_plan(val_args_t *a, const nt_log_t *log, const char *path, const topo_t *on) {
    if (!follows_logs(a)) return;
    tuningplan_rules(log, topo_whole_ranks(on), a->logged, &a->nlogged, TOPO_MAX_LIB_RULES);
    if (log->tuning_skipped)
        say(a, "warning", "%s:%d: %s (%d such line%s): those sizes keep -a nccl's plan", path, log->tuning_skipped_line,
            log->tuning_skipped_why, log->tuning_skipped, log->tuning_skipped > 1 ? "s" : "");
    for (int i = 0; i < log->nplan; i++)
        if (log->plan[i].disagree)
            say(a, "warning", "%s:%d: NCCL's TUNING lines name more than one plan for %llu bytes; the first is kept", path,
                log->plan[i].line, (unsigned long long)log->plan[i].bytes);
}

/* The samples whose machine follows a plan NCCL's lines gave. */
static int logged_samples(const topo_t *t, const cal_sample_t *s, int n) {
    int k = 0;
    for (int i = 0; i < n; i++) k += tuningplan_rule(t, &s[i]) != NULL;
    return k;
}

/* The tuner file's rows that fit machine t put first among its rules
 * (tunerfile.h), where -a nccl follows NCCL's choice; their count (0: no
 * file, or not followed), the rows t cannot run in why; < 0 on error. */
static int apply_tuner(const val_args_t *a, topo_t *t, char *why, size_t n, baton_err_t *e) {
    why[0] = '\0';
    return a->tuner && follows_logs(a) ? tunerfile_apply(t, &a->tuner_tab, a->tuner, why, n, e) : 0;
}

/* apply_tuner on t, saying what it did. */
static int tune(val_args_t *a, topo_t *t, baton_err_t *e) {
    char why[512];
    int k = apply_tuner(a, t, why, sizeof why, e);
    if (k < 0) return k;
    if (a->tuner && !follows_logs(a))
        say(a, "note", "%s (NCCL_TUNER_CONFIG_FILE) is not followed: -a %s%s is not NCCL's choice", a->tuner, a->algo,
            a->nccl_model ? " --model nccl" : "");
    else if (a->tuner)
        say(a, "note", "%s%s: %d of its %d row%s fit%s %s: -a nccl takes the first that fits a size (NCCL's own choice where "
            "none does), as NCCL with NCCL's example tuner plugin", a->tuner, a->tuner_env ? " (NCCL_TUNER_CONFIG_FILE)" : "",
            k, a->tuner_tab.n, a->tuner_tab.n > 1 ? "s" : "", k == 1 ? "s" : "", topo_name(t));
    if (why[0])
        say(a, "warning", "%s: rows %s cannot run (NCCL's cost table marks them IGNORE), passed over: %s", a->tuner,
            topo_name(t), why);
    return k;
}

/* Machine t follows the logged plan where it can run it (else a warning). */
static void apply_logged_plan(const val_args_t *a, topo_t *t, int quiet) {
    char why[1024];
    tuningplan_apply(t, a->logged, a->nlogged, why, sizeof why);
    if (why[0] && !quiet)
        fprintf(stderr, "baton %s: warning: %s has no row for what NCCL's TUNING lines say it ran (%s): -a nccl plans "
                "those sizes\n", cmd_of(a), topo_name(t), why);
}

/* major.minor of an NCCL version ("2.19" of "2.19.3+cuda12.3"). */
static void minor_of(const char *v, char *out, size_t n) {
    int major, minor;
    if (sscanf(v, "%d.%d", &major, &minor) == 2) snprintf(out, n, "%d.%d", major, minor);
    else snprintf(out, n, "%s", v);
}

/* Note the log's NCCL version; warn where a calibrated machine's logs ran
 * another major.minor (its plan, protocols and latencies differ by version). */
static void note_version(val_args_t *a, const topo_t *t, const nt_log_t *log, const char *path) {
    const char *v = log->nccl_version, *rec = topo_params_c(t)->calib.nccl;
    char mine[32];
    if (!v[0]) return;
    minor_of(v, mine, sizeof mine);
    if (rec[0] && !strstr(rec, mine))
        say(a, "warning", "%s ran NCCL %s; %s was calibrated on logs of NCCL %s (its plan and protocols differ by version)",
            path, v, topo_name(t), rec);
    if (strstr(a->nccl, v)) return;
    size_t at = strlen(a->nccl);
    if (at + strlen(v) + 3 < sizeof a->nccl) snprintf(a->nccl + at, sizeof a->nccl - at, "%s%s", at ? ", " : "", v);
}

/* The simulator's fit takes minutes on 16 ranks: say how far it is, on a
 * terminal, in one line it overwrites. */
static void show_progress(void *ctx, long trials, int sizes) {
    (void)ctx, (void)sizes;
    progress_stage("calibrate: trial", trials, 0);
}

/* What a log ran: the test it names, else -c, else what its columns say,
 * with a note where that is all_gather_perf's columns, which alltoall_perf
 * prints too (redop none, root -1, a rank's count). */
static int logged_collective(val_args_t *a, nt_log_t *log, const char *path, baton_err_t *e) {
    int c = a->coll ? coll_parse(a->coll) : -1;
    if (a->coll && c < 0) return err_set(e, BATON_EINVAL, "-c %s: not a collective%s", a->coll, coll_hint(a->coll));
    if (c >= 0 && !log->coll_guessed && log->coll != (coll_t)c)
        return err_set(e, BATON_EINVAL, "%s is a log of %s (it names its test); -c says %s", path, coll_name(log->coll),
                       coll_name((coll_t)c));
    if (c >= 0) log->coll = (coll_t)c;
    else if (log->coll_named)
        say(a, "note", "%s names no test: read as an alltoall from its file name (alltoall_perf's columns are "
            "all_gather_perf's); -c allgather if it was that", path);
    else if (log->coll_guessed && log->coll == COLL_ALLGATHER)
        say(a, "note", "%s names no test (all_gather_perf, ...): read as an allgather from its columns, which "
            "alltoall_perf prints too; -c alltoall if it was that", path);
    return 0;
}

/* A log of another GPU generation than the machine's (an A100 log against
 * hgx-h100) is answered, but likely by mistake: say so. */
static void other_gpu(val_args_t *a, const topo_t *t, const nt_log_t *log, const char *path) {
    const topo_params_t *tp = topo_params_c(t);
    const char *fam = log->device[0] ? gpu_family_of_device(log->device) : NULL;
    if (fam == NULL || !tp->has_gpu || !tp->gpu.family[0] || strcmp(fam, tp->gpu.family) == 0) return;
    say(a, "warning", "%s ran on %s (%s); %s's GPU is %s (%s): is this the machine it ran on?", path, log->device, fam,
        topo_name(t), tp->gpu.name, tp->gpu.family);
}

/* A log whose Rank lines put its ranks on other hosts than the machine
 * puts them on nodes (16 ranks on 4 hosts against 8-GPU nodes) is answered
 * for a machine it did not run on: say so. A pod or container per GPU names
 * each GPU's host alone, hence a warning, not an error. */
static void other_hosts(val_args_t *a, const topo_t *on, const nt_log_t *log, const char *path) {
    int r = topo_whole_ranks(on), g = topo_params_c(on)->group_size;
    int nodes = g > 0 && g < r && r % g == 0 ? r / g : 1;
    int hosts = log->nccl_nodes ? log->nccl_nodes : log->hosts;       /* NCCL's own word first */
    if (hosts <= 0 || hosts == nodes || log->ranks != r) return;
    char each[48] = "";
    if (log->nccl_nodes == 0 && log->per_host > 0)
        snprintf(each, sizeof each, ", %d GPU%s each", log->per_host, log->per_host > 1 ? "s" : "");
    say(a, "warning", "%s ran on %d %s%s; %s puts its %d ranks on %d node%s of %d: is this the machine it ran on?", path,
        hosts, log->nccl_nodes ? (hosts > 1 ? "nodes (NCCL's nNodes)" : "node (NCCL's nNodes)")
            : hosts > 1 ? "hosts" : "host", each, topo_name(on), r, nodes, nodes > 1 ? "s" : "", r / nodes);
}

/* NCCL_ALGO and NCCL_PROTO the log says were set: -a nccl (and --proto
 * auto) run only what they leave NCCL; a list baton cannot read is named. */
static void note_env(val_args_t *a, const nt_log_t *log, const char *path) {
    const nt_env_t *x[2] = {&log->env_algo, &log->env_proto};
    const char *var[2] = {"NCCL_ALGO", "NCCL_PROTO"};
    int used[2] = {strcmp(a->algo, "nccl") == 0, a->proto == RUN_PROTO_AUTO};
    for (int i = 0; i < 2; i++) {
        if (x[i]->line == 0) continue;
        if (x[i]->unread)
            say(a, "warning", "%s:%d: %s=%s, which baton cannot read: it plans as if it were not set", path, x[i]->line,
                var[i], x[i]->list);
        else if (x[i]->mask && used[i])
            say(a, "note", "%s:%d: %s=%s set: %s picks only among what it leaves NCCL", path, x[i]->line, var[i],
                x[i]->list, i == 0 ? "-a nccl" : "--proto auto");
        else if (x[i]->mask)
            say(a, "note", "%s:%d: %s=%s set; %s given here instead", path, x[i]->line, var[i], x[i]->list,
                i == 0 ? "-a" : "--proto");
    }
}

/* How nccl-tests timed the rows, where baton's one launched call is not
 * it: -m N groups N calls an iteration and divides the time among them
 * (NCCL runs a group's calls together, sharing what one call waits), and
 * -G replays the iterations as CUDA graphs (no host launch a call, so -g's
 * launches are not added: cal_samples); -w 0 times the first calls, which
 * set up NCCL's connections. */
static void note_timing(val_args_t *a, const nt_log_t *log, const char *path) {
    char noise[512];
    if (nt_noise_text(log, path, noise, sizeof noise)) say(a, "note", "%s", noise);
    if (log->agg_iters > 1)
        say(a, "warning", "%s:%d: agg iters %d (nccl-tests -m %d): each time is a group of %d calls divided among them, "
            "which NCCL runs together; baton times one call, so sizes where a call's latency dominates read slower "
            "than the log (and a fit's latencies take the grouping in)", path, log->header_line, log->agg_iters,
            log->agg_iters, log->agg_iters);
    if (log->warmup_none)
        say(a, "warning", "%s:%d: warmup iters 0 (nccl-tests -w 0): no untimed call comes first, so the first sizes "
            "timed on each algorithm include NCCL's setup (it connects at first use) and read high", path, log->header_line);
    if (log->graph && log->gpus_per_thread > 1)
        say(a, "note", "%s:%d: graph %d (nccl-tests -G): the calls were replayed as CUDA graphs, so the %d GPUs one "
            "thread drives are not launched in turn each call", path, log->header_line, log->graph, log->gpus_per_thread);
}

/* The logs' NCCL_ALGO / NCCL_PROTO, kept where every log says the same (a
 * calibration records them: the machine's NCCL is told so, `nccl_env:`). */
static void same_env(val_args_t *a, const nt_log_t *log) {
    const nt_env_t *x[2] = {&log->env_algo, &log->env_proto};
    for (int i = 0; i < 2; i++) {
        const char *v = x[i]->line && !x[i]->unread ? x[i]->list : "";
        if (a->env_logs == 0) snprintf(a->env[i], sizeof a->env[i], "%s", v);
        else if (strcmp(a->env[i], v)) a->env_mixed = 1;
    }
    a->env_logs++;
}

/* All logs' samples, each on the machine of its rank count. */
static int load(val_args_t *a, machines_t *ms, cal_sample_t **all, int *n, const char ***file_of, baton_err_t *e) {
    topo_t *t = ms->t;
    int cap = 0;
    *all = NULL;
    *n = 0;
    *file_of = NULL;
    for (int i = 0; i < a->nlogs; i++) {
        nt_log_t log;
        cal_sample_t *s;
        int m, rc = nt_parse(a->logs[i], a->ranks, &log, e);
        if (rc < 0) return rc;
        if ((rc = logged_collective(a, &log, a->logs[i], e)) < 0) { nt_free(&log); return rc; }
        if (a->ranks > 0 && log.stated_ranks > 0 && log.stated_ranks != a->ranks && !a->force_ranks) {
            int said = log.stated_ranks;
            nt_free(&log);
            return err_set(e, BATON_EINVAL, "%s says it ran on %d ranks; --ranks %d disagrees (--force-ranks to take %d "
                           "anyway)", a->logs[i], said, a->ranks, a->ranks);
        }
        topo_t *on = machine_for(a, ms, log.ranks, a->logs[i]);
        if (on == NULL) {       /* not --ranks: it speaks for a log, not for the machine */
            int g = topo_params_c(t)->group_size, ranks = log.ranks;
            nt_free(&log);
            if (!has_nodes(t))
                return err_set(e, BATON_EINVAL, "%s ran on %d ranks but %s has %d and no `nodes` parameter to match it: "
                               "use a machine of %d GPUs, or a cluster file (topologies/cluster-*.yaml)", a->logs[i], ranks,
                               topo_name(t), topo_nranks(t), ranks);
            if (g < 1 || ranks % g)
                return err_set(e, BATON_EINVAL, "%s ran on %d ranks, which is not a whole number of %s's %d-GPU nodes",
                               a->logs[i], ranks, topo_name(t), g);
            return err_set(e, BATON_EINVAL, "%s ran on %d ranks: %s with --set nodes=%d does not load, or the logs "
                           "name more than %d node counts", a->logs[i], ranks, topo_name(t), ranks / g, CAL_MAX_MACHINES);
        }
        other_gpu(a, t, &log, a->logs[i]);
        other_hosts(a, on, &log, a->logs[i]);
        note_env(a, &log, a->logs[i]);
        same_env(a, &log);
        if (log.wrong_rows)
            say(a, "warning", "%s:%d: #wrong is not 0 in %d row%s: the collective returned wrong data there, so %s time is "
                "a broken run's", a->logs[i], log.wrong_line, log.wrong_rows, log.wrong_rows > 1 ? "s" : "",
                log.wrong_rows > 1 ? "their" : "its");
        note_timing(a, &log, a->logs[i]);
        read_logged_plan(a, &log, a->logs[i], on);
        note_version(a, t, &log, a->logs[i]);
        rc = cal_samples(&log, &s, &m, e);
        for (int k = 0; rc == 0 && k < m; k++) s[k].machine = on == t ? NULL : on;
        nt_free(&log);
        if (rc < 0) return rc;
        cap = *n + m;
        cal_sample_t *g = realloc(*all, (size_t)cap * sizeof *g + 1);
        const char **f = realloc(*file_of, (size_t)cap * sizeof *f + 1);
        if (g) *all = g;
        if (f) *file_of = f;
        if (!g || !f) { free(s); return err_set(e, BATON_ENOMEM, "out of memory"); }
        for (int k = 0; k < m; k++) { (*all)[*n + k] = s[k]; (*file_of)[*n + k] = a->logs[i]; }
        *n += m;
        free(s);
    }
    if (tune(a, t, e) < 0) return -1;
    for (int i = 0; i < ms->nother; i++) if (tune(a, ms->other[i], e) < 0) return -1;
    apply_logged_plan(a, t, 0);
    for (int i = 0; i < ms->nother; i++) apply_logged_plan(a, ms->other[i], 0);
    return 0;
}

/* Measure on this computer's threads; the timings become a log (and samples). */
static int measure(const val_args_t *a, topo_t *t, cal_sample_t **all, int *n, const char ***file_of, baton_err_t *e) {
    int coll = coll_parse(a->coll ? a->coll : "allreduce");
    const algo_t *al = coll < 0 ? NULL : algo_find((coll_t)coll, !run_is_auto(a->algo) ? a->algo : "ring");
    uint64_t *sizes;
    int ns;
    const char *why;
    if (al == NULL) return err_set(e, BATON_EINVAL, "no such collective or algorithm for the host backend");
    if (select_parse_sizes(a->sizes ? a->sizes : "4KiB:16MiB:x2", &sizes, &ns, &why) < 0) return err_set(e, BATON_EINVAL, "--sizes: %s", why);
    nt_log_t log = {.coll = (coll_t)coll, .ranks = topo_nranks(t), .type = "int8"};
    log.rows = calloc((size_t)ns, sizeof *log.rows);
    int rc = log.rows ? 0 : err_set(e, BATON_ENOMEM, "out of memory");
    for (int i = 0; i < ns && rc == 0; i++) {
        host_result_t hr = {0};
        rc = host_run(al, topo_nranks(t), sizes[i], NULL, a->reps ? a->reps : 7, &hr, e);
        log.rows[log.nrows++] = (nt_row_t){.bytes = sizes[i], .count = sizes[i], .oop_us = hr.median_s * 1e6, .ip_us = -1, .line = i + 1};
    }
    if (rc == 0 && a->log_out) {
        char *text = NULL;                          /* whole or not at all: built, then renamed in */
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        int ok = f && nt_write(&log, f) == 0;
        if (f && fclose(f) != 0) ok = 0;
        if (!ok) rc = err_set(e, BATON_ENOMEM, "out of memory");
        else rc = cmd_write_file(a->log_out, text, len, e);
        free(text);
    }
    if (rc == 0) rc = cal_samples(&log, all, n, e);
    if (rc == 0 && (*file_of = calloc((size_t)*n + 1, sizeof **file_of)) == NULL) rc = err_set(e, BATON_ENOMEM, "out of memory");
    for (int i = 0; rc == 0 && i < *n; i++) (*file_of)[i] = "host";
    free(log.rows);
    free(sizes);
    return rc;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* --hold-out LO:HI, or `middle` (the middle third of the sizes, interpolating)
 * or `top` (the largest quarter: extrapolating), by the sizes' order. */
static int mark_held_out(const char *spec, cal_sample_t *s, int n, baton_err_t *e) {
    char lo_s[64], hi_s[64];
    uint64_t lo, hi;
    const char *why;
    const char *colon = strchr(spec, ':');
    if (!strcmp(spec, "middle") || !strcmp(spec, "top")) {
        uint64_t *b = malloc(((size_t)n + 1) * sizeof *b);
        if (b == NULL) return err_set(e, BATON_ENOMEM, "out of memory");
        for (int i = 0; i < n; i++) b[i] = s[i].bytes;
        qsort(b, (size_t)n, sizeof *b, cmp_u64);
        int top = !strcmp(spec, "top");
        lo = n ? b[top ? n - n / 4 : n / 3] : 0;
        hi = n ? b[top ? n - 1 : n - 1 - n / 3] : 0;
        free(b);
        if (n < 4) return err_set(e, BATON_EINVAL, "--hold-out %s needs at least 4 sizes", spec);
    } else {
        if (!colon || (size_t)(colon - spec) >= sizeof lo_s || strlen(colon + 1) >= sizeof hi_s)
            return err_set(e, BATON_EINVAL, "--hold-out LO:HI (e.g. 1MiB:64MiB), middle or top");
        memcpy(lo_s, spec, (size_t)(colon - spec));
        lo_s[colon - spec] = '\0';
        strcpy(hi_s, colon + 1);
        if (units_size(lo_s, &lo, &why) < 0 || units_size(hi_s, &hi, &why) < 0) return err_set(e, BATON_EINVAL, "--hold-out: %s", why);
        if (lo > hi) return err_set(e, BATON_EINVAL, "--hold-out %s: the first size is the smaller (LO:HI)", spec);
    }
    int held = 0;
    for (int i = 0; i < n; i++) held += s[i].held_out = s[i].bytes >= lo && s[i].bytes <= hi;
    /* holding out nothing or everything would report an in-sample error, or none, as held out */
    if (held == 0) return err_set(e, BATON_EINVAL, "--hold-out %s: no size of the logs is in it", spec);
    if (held == n) return err_set(e, BATON_EINVAL, "--hold-out %s: every size of the logs is in it, none is left to fit", spec);
    return 0;
}

/* What the calibration adds to the table's JSON and text. */
typedef struct {
    const cal_fit_t *fit;     /* NULL: nothing was fitted */
    double cv_mape;           /* -1: no cross-validation */
    double band_lo, band_hi;  /* % */
    int folds;
    int logged;               /* sizes whose plan the logs' TUNING lines gave */
    const val_args_t *args;   /* its messages about the logs (say), for JSON; NULL: none */
    int forced;               /* sizes whose logs say NCCL_ALGO or NCCL_PROTO was set */
    const cal_pred_t *before; /* each sample's prediction on the file's values (a fit's; NULL: none) */
    const cal_pred_t *after;  /* and on the fitted ones (the table's), once it is printed */
    const char **file_of;     /* each sample's log */
} val_extra_t;

/* Did the fit move sample i's plan (algorithm or protocol) from the one
 * the file's values give? */
static int moved(const val_extra_t *x, int i) {
    return x->before && x->after && (strcmp(x->before[i].algo, x->after[i].algo) || x->before[i].proto != x->after[i].proto);
}

/* Where sample j continues sample i's run of moved sizes: the same log,
 * moved the same way. */
static int same_move(const val_extra_t *x, int i, int j) {
    return x->file_of[i] == x->file_of[j] && !strcmp(x->before[i].algo, x->before[j].algo) &&
           x->before[i].proto == x->before[j].proto && !strcmp(x->after[i].algo, x->after[j].algo) &&
           x->after[i].proto == x->after[j].proto;
}

/* The sizes whose plan the fit moved: "SIZE[-SIZE]: from -> to" a line, a
 * run of sizes moved alike together (the log's name first when the table
 * has several); their count. */
static int print_moved(const val_extra_t *x, const cal_sample_t *s, int n, int nlogs) {
    int k = 0;
    for (int i = 0, j; i < n; i = j) {
        for (j = i + 1; j < n && moved(x, i) && moved(x, j) && same_move(x, i, j);) j++;
        if (!moved(x, i)) continue;
        char lo[32], hi[32];
        const char *base = strrchr(x->file_of[i], '/');
        units_fmt_size(s[i].bytes, lo, sizeof lo);
        units_fmt_size(s[j - 1].bytes, hi, sizeof hi);
        printf("        %s%s%s%s%s: %s/%s -> %s/%s\n", nlogs > 1 ? (base ? base + 1 : x->file_of[i]) : "",
               nlogs > 1 ? " " : "", lo, j - 1 > i ? "-" : "", j - 1 > i ? hi : "", x->before[i].algo,
               proto_name(x->before[i].proto), x->after[i].algo, proto_name(x->after[i].proto));
        k += j - i;
    }
    return k;
}

static void json_moved(const val_extra_t *x, const cal_sample_t *s, int n) {
    char esc[1024];
    printf(",\"replanned_sizes\":[");
    for (int i = 0, k = 0; i < n; i++)
        if (moved(x, i))
            printf("%s{\"log\":\"%s\",\"line\":%d,\"bytes\":%llu,\"from_algorithm\":\"%s\",\"from_protocol\":\"%s\","
                   "\"algorithm\":\"%s\",\"protocol\":\"%s\"}", k++ ? "," : "", report_json_escape(x->file_of[i], esc, sizeof esc),
                   s[i].line, (unsigned long long)s[i].bytes, x->before[i].algo, proto_name(x->before[i].proto),
                   x->after[i].algo, proto_name(x->after[i].proto));
    printf("]");
}

static void json_extra(const val_extra_t *x) {
    printf(",\"plan_logged_sizes\":%d", x->logged);
    if (x->args) json_said(x->args);
    if (x->cv_mape >= 0) printf(",\"cv_folds\":%d,\"cv_mape_pct\":%.4f,\"band_pct\":[%.4f,%.4f]", x->folds, x->cv_mape, x->band_lo, x->band_hi);
    if (x->fit == NULL) return;
    printf(",\"replanned\":%s,\"links_kept\":%s,\"parameters\":[", x->fit->replanned ? "true" : "false",
           x->fit->links_kept ? "true" : "false");
    for (int i = 0; i < x->fit->k; i++) {
        const cal_param_t *p = &x->fit->p[i];
        printf("%s{\"name\":\"%s\",\"value\":%.9g,\"given\":%.9g,\"rel_se\":%.6g,\"seen\":%s,\"kept\":%s,\"at_bound\":%s,\"low\":%.9g,\"high\":%.9g}",
               i ? "," : "", p->name, p->value, p->given, p->rel_se, p->seen ? "true" : "false", p->kept ? "true" : "false",
               p->at_bound ? "true" : "false",
               p->lo, p->hi);
    }
    printf("]");
    printf(",\"plan_read\":[");
    for (int i = 0; i < x->fit->nread; i++) {
        const topo_lib_rule_t *r = &x->fit->read[i];
        printf("%s{\"coll\":\"%s\",\"ranks\":%d,\"min\":%llu,\"max\":%llu,\"algorithm\":\"%s\",\"protocol\":\"%s\"}",
               i ? "," : "", coll_name((coll_t)r->coll), r->ranks, (unsigned long long)r->min, (unsigned long long)r->max,
               r->algo, proto_name((proto_t)r->proto));
    }
    printf("]");
}

/* One row of the table: the model's time for sample x, and where NCCL's
 * TUNING lines planned it, what -a nccl alone would have (*agree counts
 * the same). */
static int table_row(topo_t *t, const cal_req_t *q, const cal_sample_t *x, const cal_pred_t *pred, const char *file,
                     int json, int first, int *agree, baton_err_t *e) {
    int ranks = topo_nranks(x->machine ? x->machine : t);
    double factor = run_busbw_factor(x->coll, ranks) * (double)x->bytes / 1e9;   /* busbw = factor / time */
    double p = pred->time_s;
    const char *algo = pred->algo, *ga;
    proto_t pr = pred->proto, gp;
    char sz[32], m[32], pp[32], guess[64] = "";
    int said = tuningplan_guess(t, q, x, &ga, &gp, e), same = said > 0 && tuningplan_same(x->coll, algo, pr, ga, gp);
    if (said < 0) return -1;
    if (said) snprintf(guess, sizeof guess, "%s/%s", ga, proto_name(gp));
    *agree += same;
    double err = 100 * (p - x->meas_s) / x->meas_s;
    if (json) {
        char esc[8192];
        printf("%s{\"log\":\"%s\",\"line\":%d,\"collective\":\"%s\",\"bytes\":%llu,\"measured_s\":%.9g,\"predicted_s\":%.9g,"
               "\"error_pct\":%.4f,\"measured_busbw_GBps\":%.6g,\"predicted_busbw_GBps\":%.6g,\"ranks\":%d,"
               "\"algorithm\":\"%s\",\"protocol\":\"%s\",\"held_out\":%s,\"disturbed\":%s%s%s%s}",
               first ? "" : ",", report_json_escape(file, esc, sizeof esc), x->line, coll_name(x->coll), (unsigned long long)x->bytes, x->meas_s, p, err,
               factor / x->meas_s, p > 0 ? factor / p : 0, ranks, algo, proto_name(pr), x->held_out ? "true" : "false", x->disturbed ? "true" : "false",
               said ? ",\"nccl_said\":true,\"guess\":\"" : "", guess, said ? "\"" : "");
        return 0;
    }
    units_fmt_size(x->bytes, sz, sizeof sz);
    units_fmt_time(x->meas_s, m, sizeof m);
    units_fmt_time(p, pp, sizeof pp);
    if (first) printf("%s (%s on %d ranks)\n", file, coll_name(x->coll), ranks);   /* a log's rows under its name */
    printf("%10s %12s %12s %+7.1f%%  %14.4g  %15.4g  %s/%s%s%s%s%s%s%s\n", sz, m, pp, err, factor / x->meas_s,
           p > 0 ? factor / p : 0, algo, proto_name(pr), said ? " (NCCL's)" : "", said && !same ? " [-a nccl alone: " : "", said && !same ? guess : "",
           said && !same ? "]" : "", x->held_out ? "  (held out)" : "", x->disturbed ? "  (*)" : "");
    return 0;
}

/* Each log's own MAPE (file_of[i]: row i's log; load() puts one log's rows
 * together); their count, at most max. */
typedef struct { const char *file; double mape; int sizes; } val_log_mape_t;
static int per_log(const cal_sample_t *s, const cal_pred_t *p, int n, const char **file_of, val_log_mape_t *out, int max) {
    int k = 0;
    for (int i = 0, j; i < n && k < max; i = j) {
        for (j = i + 1; j < n && file_of[j] == file_of[i]; j++) {}
        out[k++] = (val_log_mape_t){.file = file_of[i], .mape = cal_mape_of(s + i, p + i, j - i, -1, 0), .sizes = j - i};
    }
    return k;
}

/* The table of every sample, then the MAPEs; *fitted the MAPE over the
 * samples a fit used (not held out), for the record. */
static int table(topo_t *t, const cal_req_t *q, const cal_sample_t *s, int n, const char **file_of, int json,
                 val_extra_t *x, double *fitted, baton_err_t *e) {
    cal_pred_t *p = malloc(((size_t)n + 1) * sizeof *p);    /* each size once: the simulator's take seconds */
    if (p == NULL) return err_set(e, BATON_ENOMEM, "out of memory");
    if (cal_predict_all(t, q, s, n, -1, p, e) < 0) { free(p); return e->code ? e->code : BATON_EINVAL; }
    double all = cal_mape_of(s, p, n, -1, 0), big = cal_mape_of(s, p, n, -1, 64ull << 20), held = cal_mape_of(s, p, n, 1, 0);
    *fitted = cal_mape_of(s, p, n, 0, 0);
    int disturbed = 0, agree = 0;
    if (!json)
        printf("error = (predicted - measured) / measured: + means the model is slower than measured, - faster\n"
               "busbw: nccl-tests' bus bandwidth in GB/s, size / time x 2(p-1)/p for all-reduce, (p-1)/p for\n"
               "       all-gather, reduce-scatter and all-to-all, 1 otherwise\n"
               "%10s %12s %12s %8s  %14s  %15s  %s\n", "size", "measured", "predicted", "error", "busbw measured",
               "busbw predicted", "model");
    else {
        char esc[512];
        printf("{\"topology\":\"%s\",\"ranks\":%d,\"error\":\"(predicted - measured) / measured: + means the model "
               "is slower\",\"rows\":[", report_json_escape(topo_name(t), esc, sizeof esc), topo_nranks(t));
    }
    for (int i = 0; i < n; i++) {
        int first = json ? i == 0 : i == 0 || file_of[i] != file_of[i - 1];   /* text: a log's heading */
        if (table_row(t, q, &s[i], &p[i], file_of[i], json, first, &agree, e) < 0) { free(p); return e->code; }
        disturbed += s[i].disturbed;
    }
    val_log_mape_t logs[64];
    int nl = per_log(s, p, n, file_of, logs, 64);
    free((void *)x->after);
    x->after = p;                                 /* the plan the fit gives, beside x->before's */
    if (json) {
        printf("],\"mape_pct\":%.4f,\"mape_large_pct\":%s", all, big >= 0 ? "" : "null");
        if (big >= 0) printf("%.4f", big);
        if (held >= 0) printf(",\"mape_held_out_pct\":%.4f", held);
        printf(",\"logs\":[");
        for (int j = 0; j < nl; j++) {
            char esc[1024];
            printf("%s{\"log\":\"%s\",\"sizes\":%d,\"mape_pct\":%.4f}", j ? "," : "",
                   report_json_escape(logs[j].file, esc, sizeof esc), logs[j].sizes, logs[j].mape);
        }
        printf("]");
        printf(",\"plan_guessed_same\":%d", agree);
        json_extra(x);
        if (x->fit && x->before) json_moved(x, s, n);
        printf("}\n");
        return 0;
    }
    if (disturbed)
        printf("(*) the faster of the log's two columns: the other ran the same transfers more than a fifth slower\n");
    for (int j = 0; nl > 1 && j < nl; j++)
        printf("%s: MAPE %.2f %% over %d sizes\n", logs[j].file, logs[j].mape, logs[j].sizes);
    printf("MAPE %.2f %% over %d sizes", all, n);
    if (big >= 0) printf(", %.2f %% for sizes >= 64 MiB", big);
    if (held >= 0) printf(", %.2f %% on the held-out sizes", held);
    printf("\n");
    if (x->logged)
        printf("plan: NCCL's own at %d size%s, as the logs' TUNING lines say (NCCL_DEBUG_SUBSYS=TUNING), where -a nccl "
               "alone plans %d the same; -a nccl's elsewhere\n", x->logged, x->logged > 1 ? "s" : "", agree);
    return 0;
}

/* A fresh copy of the machine for each fold of the cross-validation. */
static topo_t *fresh_machine(void *ctx, baton_err_t *e) {
    const val_args_t *a = ctx;
    topo_t *t = cmd_load_topo(a->topo, a->sets.v, a->sets.n, e);
    char why[512];
    if (t && apply_tuner(a, t, why, sizeof why, e) < 0) { topo_free(t); return NULL; }
    if (t) apply_logged_plan(a, t, 1);
    return t;
}

static int cross_validate(const val_args_t *a, const cal_req_t *q, cal_sample_t *s, int n, val_extra_t *x, baton_err_t *e) {
    cal_cv_t cv = {0};
    int rc = cal_cross_validate(fresh_machine, (void *)a, q, s, n, a->cv, &cv, e);
    if (rc == 0) x->cv_mape = cv.mape_pct, x->band_lo = cv.band_lo_pct, x->band_hi = cv.band_hi_pct, x->folds = cv.folds;
    return rc;
}

/* The date of the calibration record: $SOURCE_DATE_EPOCH when set (the
 * reproducible-builds convention: the same inputs, the same bytes), else today. */
static void record_date(char *buf, size_t n) {
    const char *env = getenv("SOURCE_DATE_EPOCH");
    time_t now = env && *env ? (time_t)strtoll(env, NULL, 10) : time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(buf, n, "%Y-%m-%d", &tm);
}

static const char *model_name(const val_args_t *a) { return a->des ? "des" : a->nccl_model ? "nccl" : "closed"; }

/* The calibrated machine: the original file extended (or, --self-contained,
 * written whole), the fit's values, the record. */
static int write_calibrated(const val_args_t *a, const cal_req_t *q, topo_t *t, const cal_fit_t *f, const val_extra_t *x,
                            const cal_sample_t *s, int n, double mape, baton_err_t *e) {
    char base[4096], rel[4096], date[32], stem[256], comment[8192];
    topo_calib_t *k = &topo_params(t)->calib;
    if (!cmd_find_topo(a->topo, base, sizeof base)) return err_set(e, BATON_EIO, "%s: cannot find it again", a->topo);
    if (topo_find_ref(base, rel, sizeof rel) < 0) return err_set(e, BATON_EIO, "%s: cannot resolve its path", base);
    *k = (topo_calib_t){.present = 1, .mape_pct = mape, .cv_mape_pct = x->cv_mape, .band_lo_pct = x->band_lo,
                        .band_hi_pct = x->band_hi};
    snprintf(k->algo, sizeof k->algo, "%s", q->algo);
    snprintf(k->nccl, sizeof k->nccl, "%s", a->nccl);
    for (int i = 0; i < 2 && !a->env_mixed && a->env_logs; i++)       /* what the logs' NCCL was told */
        if (a->env[i][0]) snprintf(topo_params(t)->nccl_env[i], sizeof topo_params(t)->nccl_env[i], "%s", a->env[i]);
    cal_record_seen(k, t, s, n);
    snprintf(k->proto, sizeof k->proto, "%s", q->proto == RUN_PROTO_AUTO ? "auto" : proto_name((proto_t)q->proto));
    snprintf(k->model, sizeof k->model, "%s", model_name(a));
    if (a->des) snprintf(k->contention, sizeof k->contention, "%s", engine_contention_name((contention_t)a->contention));
    snprintf(stem, sizeof stem, "%s", strrchr(a->out, '/') ? strrchr(a->out, '/') + 1 : a->out);
    if (strrchr(stem, '.')) *strrchr(stem, '.') = '\0';
    if (topo_rename(t, stem) < 0) return err_set(e, BATON_ENOMEM, "out of memory");
    record_date(date, sizeof date);
    int len = snprintf(comment, sizeof comment, "%s calibrated by `baton calibrate` (%s%s%s, -a %s --proto %s%s).\n"
                       "Fitted on %d sizes (value, one standard error, the file's value):\n", topo_name(t), model_name(a),
                       a->des ? " --contention " : "", k->contention, k->algo, k->proto, a->channels > 1 ? ", --channels" : "",
                       f->used);
    cal_fit_text(f, comment + len, sizeof comment - (size_t)len);
    if (comment[strlen(comment) - 1] == '\n') comment[strlen(comment) - 1] = '\0';
    /* --channels C ran the fit: the file keeps it (channels=C among its params), or it would not answer as fitted */
    const char *sets[sizeof a->sets.v / sizeof a->sets.v[0] + 1];
    char chans[32];
    int nsets = 0;
    for (int i = 0; i < a->sets.n; i++)
        if (a->channels == 0 || strncmp(a->sets.v[i], "channels=", 9)) sets[nsets++] = a->sets.v[i];
    if (a->channels > 0) snprintf(chans, sizeof chans, "channels=%d", a->channels), sets[nsets++] = chans;
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    int rc = !out ? -1 : a->standalone ? topo_write_standalone(t, a->logs, a->nlogs, date, comment, out)
                                       : topo_write_overlay(t, rel, sets, nsets, a->logs, a->nlogs, date, comment, out);
    if (out && fclose(out) != 0) rc = -1;
    if (rc < 0) err_set(e, BATON_ENOMEM, "out of memory");
    else rc = cmd_write_file(a->out, text, size, e);
    free(text);
    return rc;
}

/* A calibrated machine runs under the model it was fitted with unless told
 * otherwise (-a, --proto and --contention: cmd_calibrated_rule). */
static void adopt_model(val_args_t *a, const topo_t *t) {
    const topo_calib_t *k = &topo_params_c(t)->calib;
    if (k->present && !a->model_given) a->des = !strcmp(k->model, "des"), a->nccl_model = !strcmp(k->model, "nccl");
}

static void print_fit(const val_args_t *a, const cal_fit_t *f, const val_extra_t *x, const cal_sample_t *s, int n) {
    char fit[4096];
    int count = 0;
    cal_fit_text(f, fit, sizeof fit);
    printf("fitted on %d sizes (value, one standard error, the file's value):\n%s", f->used, fit);
    for (int i = 0; i < n; i++) count += moved(x, i);
    if (f->replanned && count)
        printf("plan: the fit moved NCCL's algorithm or protocol at %d size%s (a point or more better in\n"
               "      sample than keeping the plan the file's values give), from the file's to the fit's:\n",
               count, count > 1 ? "s" : "");
    else printf(f->replanned ? "plan: the fit moved NCCL's algorithm or protocol at some sizes (a point or more better in\n"
                               "      sample than keeping the plan the file's values give)\n"
                             : "plan: kept, each size on the algorithm and protocol the file's values give\n");
    if (f->replanned) print_moved(x, s, n, a->nlogs);
    if (x->forced)
        printf("      at %d size%s, within what the logs' NCCL_ALGO and NCCL_PROTO left NCCL (nothing read off\n"
               "      the times there)\n", x->forced, x->forced > 1 ? "s" : "");
    if (f->nread) printf("      read off the logs where -a nccl plans another (written as library rules):\n");
    for (int i = 0; i < f->nread; i++) {
        char rule[128];
        logplan_rule_text(&f->read[i], rule, sizeof rule);
        printf("        %s\n", rule);
    }
    if (f->links_kept)
        printf("links: kept at the file's efficiencies; fewer than two fitted sizes of 1 MiB or more ran Simple,\n"
               "       and LL's and LL128's sizes cannot tell a slow link from a slow protocol (their\n"
               "       efficiencies were fitted instead)\n");
    if (x->cv_mape >= 0)
        printf("cross-validated (%d folds): MAPE %.2f %% on sizes each fit did not see; 90 %% of errors within "
               "[%+.1f %%, %+.1f %%]\n", x->folds, x->cv_mape, x->band_lo, x->band_hi);
    fflush(stdout);                               /* warnings after the table, not inside it */
    int bound = 0;
    for (int i = 0; i < f->k; i++)
        if (f->p[i].at_bound)
            bound = 1, fprintf(stderr, "baton %s: warning: %s ends at its bound (%g): the model lacks something "
                               "these logs show, or the file's value is off\n", cmd_of(a),
                               f->p[i].name, f->p[i].value);
    if ((bound || f->nread) && x->logged == 0 && follows_logs(a))   /* a plan question the times cannot settle */
        fprintf(stderr, "baton %s: hint: run nccl-tests with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING and the log "
                "says which algorithm NCCL ran at each size; baton then follows it instead of guessing\n",
                cmd_of(a));
}

/* A fit that is not physical (cal_unphysical): say which mechanism each
 * such value stands for; with -o, refuse to write one with a link
 * efficiency below the floor unless told to. */
static int judge_physical(const val_args_t *a, const cal_fit_t *f, baton_err_t *e) {
    char why[2048];
    int hard, k = cal_unphysical(f, why, sizeof why, &hard);
    if (k == 0) return 0;
    fprintf(stderr, "baton %s: the fit is not physical: %d value%s stand%s in for a mechanism the machine lacks:\n%s",
            cmd_of(a), k, k > 1 ? "s" : "", k > 1 ? "" : "s", why);
    if (!a->out || hard == 0 || a->unphysical_ok) {
        if (a->out && hard) fprintf(stderr, "baton %s: written anyway (--accept-unphysical)\n", cmd_of(a));
        return 0;
    }
    return err_set(e, BATON_EINVAL, "%s not written: %d link efficienc%s below %.1f hide%s a missing mechanism, and "
                   "the fit would predict wrong elsewhere (other sizes, other node counts); model the mechanism, or "
                   "--accept-unphysical to write it anyway", a->out, hard, hard > 1 ? "ies" : "y", CAL_MIN_EFFICIENCY,
                   hard > 1 ? "" : "s");
}

static int run(val_args_t *a, const char *cmd) {
    baton_err_t e = {0};
    topo_t *t = cmd_load_topo(a->topo, a->sets.v, a->sets.n, &e);
    cal_sample_t *s = NULL;
    const char **file_of = NULL;
    int host = a->backend != NULL;
    if (t) adopt_model(a, t);
    if (t && a->contention_given && !a->des) {
        topo_free(t);
        return cmd_usage(cmd, "--contention is the simulator's: use it with --model des");
    }
    cmd_rule_t rule = {.algo = &a->algo, .algo_given = a->algo_given, .proto = &a->proto, .proto_given = a->proto_given,
                       .model = model_name(a), .contention = a->des ? &a->contention : NULL,
                       .contention_given = a->contention_given, .fair_ok = 1, .keep = a->fitted_algo};
    if (t) cmd_calibrated_rule(cmd, t, &rule);
    struct stat st;
    if (t && a->out && stat(a->out, &st) == 0 && topo_read_from(t, (unsigned long long)st.st_dev, (unsigned long long)st.st_ino)) {
        err_set(&e, BATON_EINVAL, "-o %s: %s is read from it (it is the machine, or one it extends): the "
                "calibration extends the machine, so it goes to another file", a->out, topo_name(t));
        topo_free(t);
        return cmd_fail(cmd, &e);
    }
    machines_t ms = {.t = t};
    int n = 0, rc = !t ? -1 : host ? measure(a, t, &s, &n, &file_of, &e) : load(a, &ms, &s, &n, &file_of, &e);
    cal_req_t q = {.algo = host && !a->algo_given ? "ring" : a->algo, .proto = host ? PROTO_NONE : a->proto,
                   .des = a->des, .contention = a->contention, .nccl_model = a->nccl_model, .opts = {.channels = a->channels},
                   .fit_efficiency = a->fit_eff, .jobs = par_jobs(),
                   .progress = a->calibrate && a->des && progress_on() ? show_progress : NULL};
    val_extra_t x = {.cv_mape = -1, .logged = rc == 0 && follows_logs(a) ? logged_samples(t, s, n) : 0, .args = a};
    for (int i = 0; rc == 0 && i < n; i++) x.forced += s[i].nccl_algos || s[i].protos;
    if (rc == 0 && a->nccl_model && (a->calibrate || host))
        rc = err_set(&e, BATON_EINVAL, "--model nccl is NCCL's fixed tables: nothing to fit (use closed or des)");
    cal_fit_t f;
    double in_sample = -1;
    if (rc == 0 && a->hold) rc = mark_held_out(a->hold, s, n, &e);
    if (rc == 0 && host && !a->json) {                    /* before: the topology's own numbers */
        printf("measured on %d threads; the model of %s before fitting:\n", topo_nranks(t), topo_name(t));
        rc = table(t, &q, s, n, file_of, 0, &x, &in_sample, &e);
        if (rc == 0) printf("\nafter fitting it to the measurements%s:\n", a->hold ? " outside the held-out sizes" : "");
    }
    if (rc == 0 && a->calibrate && a->cv > 0) rc = cross_validate(a, &q, s, n, &x, &e);
    cal_pred_t *before = NULL;                    /* the plan on the file's values, to name what the fit moves */
    if (rc == 0 && (a->calibrate || host) && (before = malloc(((size_t)n + 1) * sizeof *before)) == NULL)
        rc = err_set(&e, BATON_ENOMEM, "out of memory");
    if (rc == 0 && before && cal_predict_all(t, &q, s, n, -1, before, &e) < 0) rc = e.code ? e.code : BATON_EINVAL;
    x.before = before;
    x.file_of = file_of;
    if (rc == 0 && (a->calibrate || host)) rc = cal_fit(t, &q, s, n, &f, &e);
    if (rc == 0 && (a->calibrate || host)) x.fit = &f;
    if (q.progress) progress_end();                          /* the progress line, gone */
    if (rc == 0) rc = table(t, &q, s, n, file_of, a->json, &x, &in_sample, &e);
    if (rc == 0 && (a->calibrate || host) && !a->json) print_fit(a, &f, &x, s, n);
    if (rc == 0 && a->calibrate) rc = judge_physical(a, &f, &e);
    if (rc == 0 && a->out) rc = write_calibrated(a, &q, t, &f, &x, s, n, in_sample, &e);   /* the table's */
    if (rc == 0 && a->out && !a->json) printf("-> %s\n", a->out);      /* written: only now */
    free(before);
    free((void *)x.after);
    free(s);
    free(file_of);
    for (int i = 0; i < ms.nother; i++) topo_free(ms.other[i]);
    topo_free(t);
    said_free(a);
    return rc < 0 ? cmd_fail(cmd, &e) : EXIT_OK;
}

int cmd_validate(int argc, char **argv, int calibrate) {
    const char *cmd = calibrate ? "calibrate" : "validate";
    val_args_t a = {.algo = "nccl", .proto = RUN_PROTO_AUTO, .calibrate = calibrate, .cv = -1};
    int rc = parse(argc, argv, &a, cmd);
    if (rc) return rc == 1 ? EXIT_OK : rc;
    baton_err_t e = {0};
    if (a.tuner && tunerfile_read(a.tuner, &a.tuner_tab, &e) < 0) return cmd_fail(cmd, &e);
    rc = run(&a, cmd);
    tuner_csv_free(&a.tuner_tab);
    return rc;
}
