/* cmd_validate.c - `baton validate` and `baton calibrate` on nccl-tests logs:
 * the help, the options and the run's steps. What the steps use lives
 * beside it (cmd_validate.h): reading the logs (cmd_validate_logs.c), the
 * table and the fit as printed (cmd_validate_table.c), and what a
 * calibration does around its fit (cmd_validate_fit.c). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../../util/par.h"
#include "../../util/progress.h"
#include "../../util/wfile.h"
#include "cmd_validate.h"

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
    "      --ranks N          the logs' rank count, when a log does not say (default:\n"
    "                         the machine's, with a warning; an error where a log\n"
    "                         says otherwise, unless --force-ranks)\n"
    "      --force-ranks      take --ranks N over what a log says\n"
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

static int parse(int argc, char **argv, cmd_val_args_t *a, const char *cmd) {
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
        case 'V':
            if (cmd_int_arg(cmd, "--cv", optarg, 0, 4096, &a->cv)) return EXIT_USAGE;
            if (a->cv == 1) return cmd_usage(cmd, "--cv K: 0 (none) or 2..4096 folds");
            break;
        case 'c': a->coll = optarg; break;
        case 's': a->sizes = optarg; break;
        case 'l': if (cmd_out_file(cmd, "--log", optarg, &a->log_out)) return EXIT_USAGE; break;
        case 'F': a->force_ranks = 1; break;
        case 'C': if (cmd_int_arg(cmd, "--channels", optarg, 1, 64, &a->channels)) return EXIT_USAGE; break;
        case 'R': if (cmd_int_arg(cmd, "--reps", optarg, 1, 1000, &a->reps)) return EXIT_USAGE; break;
        case 't': a->topo = optarg; break;
        case 'n': if (cmd_add_log(cmd, a->logs, &a->nlogs, CMD_MAX_LOGS, optarg)) return EXIT_USAGE; break;
        case 'r': if (cmd_int_arg(cmd, "--ranks", optarg, 1, 1 << 24, &a->ranks)) return EXIT_USAGE; break;
        case 'a': a->algo = optarg; a->algo_given = 1; break;
        case 'o': if (cmd_out_file(cmd, "-o", optarg, &a->out)) return EXIT_USAGE; break;
        case 'H': {
            baton_err_t he = {0};
            if (cmd_val_hold_spec(optarg, &he) < 0) return cmd_usage(cmd, "%s", he.msg);
            a->hold = optarg;
            break;
        }
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
    while (optind < argc)                                     /* LOG... after --nccl-tests */
        if (cmd_add_log(cmd, a->logs, &a->nlogs, CMD_MAX_LOGS, argv[optind++])) return EXIT_USAGE;
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

/* The simulator's fit takes minutes on 16 ranks: say how far it is, on a
 * terminal, in one line it overwrites. */
static void show_progress(void *ctx, long trials, int sizes) {
    (void)ctx, (void)sizes;
    progress_stage("calibrate: trial", trials, 0);
}

/* A calibrated machine runs under the model it was fitted with unless told
 * otherwise (-a, --proto and --contention: cmd_calibrated_rule). */
static void adopt_model(cmd_val_args_t *a, const topo_t *t) {
    const topo_calib_t *k = &topo_params_c(t)->calib;
    if (k->present && !a->model_given) a->des = !strcmp(k->model, "des"), a->nccl_model = !strcmp(k->model, "nccl");
}

static int run(cmd_val_args_t *a, const char *cmd) {
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
                       .model = cmd_val_model(a), .contention = a->des ? &a->contention : NULL,
                       .contention_given = a->contention_given, .fair_ok = 1, .keep = a->fitted_algo};
    if (t) cmd_calibrated_rule(cmd, t, &rule);
    struct stat st;
    if (t && a->out && stat(a->out, &st) == 0 && topo_read_from(t, (unsigned long long)st.st_dev, (unsigned long long)st.st_ino)) {
        err_set(&e, BATON_EINVAL, "-o %s: %s is read from it (it is the machine, or one it extends): the "
                "calibration extends the machine, so it goes to another file", a->out, topo_name(t));
        topo_free(t);
        return cmd_fail(cmd, &e);
    }
    if (t && a->out && wfile_can_write(a->out) < 0) {      /* before a fit of minutes, not after */
        cmd_write_file_error(a->out, &e);
        topo_free(t);
        return cmd_fail(cmd, &e);
    }
    cmd_val_machines_t ms = {.t = t};
    int n = 0, rc = !t ? -1 : host ? cmd_val_measure(a, t, &s, &n, &file_of, &e) : cmd_val_load(a, &ms, &s, &n, &file_of, &e);
    cal_req_t q = {.algo = host && !a->algo_given ? "ring" : a->algo, .proto = host ? PROTO_NONE : a->proto,
                   .des = a->des, .contention = a->contention, .nccl_model = a->nccl_model, .opts = {.channels = a->channels},
                   .fit_efficiency = a->fit_eff, .jobs = par_jobs(),
                   .progress = a->calibrate && a->des && progress_on() ? show_progress : NULL};
    cmd_val_extra_t x = {.cv_mape = -1, .args = a,
                         .logged = rc == 0 && cmd_val_follows_logs(a) ? cmd_val_logged_samples(t, s, n) : 0};
    for (int i = 0; rc == 0 && i < n; i++) x.forced += s[i].nccl_algos || s[i].protos;
    if (rc == 0 && a->nccl_model && (a->calibrate || host))
        rc = err_set(&e, BATON_EINVAL, "--model nccl is NCCL's fixed tables: nothing to fit (use closed or des)");
    cal_fit_t f;
    double in_sample = -1;
    if (rc == 0 && a->hold) rc = cmd_val_hold_out(a->hold, s, n, &e);
    if (rc == 0 && host && !a->json) {                    /* before: the topology's own numbers */
        printf("measured on %d threads; the model of %s before fitting:\n", topo_nranks(t), topo_name(t));
        rc = cmd_val_table(t, &q, s, n, file_of, 0, &x, &in_sample, &e);
        if (rc == 0) printf("\nafter fitting it to the measurements%s:\n", a->hold ? " outside the held-out sizes" : "");
    }
    if (rc == 0 && a->calibrate && a->cv > 0) rc = cmd_val_cross_validate(a, &q, s, n, &x, &e);
    cal_pred_t *before = NULL;                    /* the plan on the file's values, to name what the fit moves */
    if (rc == 0 && (a->calibrate || host) && (before = malloc(((size_t)n + 1) * sizeof *before)) == NULL)
        rc = err_set(&e, BATON_ENOMEM, "out of memory");
    if (rc == 0 && before && cal_predict_all(t, &q, s, n, -1, before, &e) < 0) rc = e.code ? e.code : BATON_EINVAL;
    x.before = before;
    x.file_of = file_of;
    if (rc == 0 && (a->calibrate || host)) rc = cal_fit(t, &q, s, n, &f, &e);
    if (rc == 0 && (a->calibrate || host)) x.fit = &f;
    if (q.progress) progress_end();                          /* the progress line, gone */
    if (rc == 0) rc = cmd_val_table(t, &q, s, n, file_of, a->json, &x, &in_sample, &e);
    if (rc == 0 && (a->calibrate || host) && !a->json) cmd_val_print_fit(a, &f, &x, s, n);
    if (rc == 0 && a->calibrate) rc = cmd_val_judge_physical(a, &f, &e);
    if (rc == 0 && a->out) rc = cmd_val_write_calibrated(a, &q, t, &f, &x, s, n, in_sample, &e);   /* the table's */
    if (rc == 0 && a->out && !a->json) printf("-> %s\n", a->out);      /* written: only now */
    free(before);
    free((void *)x.after);
    free(s);
    free(file_of);
    for (int i = 0; i < ms.nother; i++) topo_free(ms.other[i]);
    topo_free(t);
    cmd_val_said_free(a);
    return rc < 0 ? cmd_fail(cmd, &e) : EXIT_OK;
}

int cmd_validate(int argc, char **argv, int calibrate) {
    const char *cmd = calibrate ? "calibrate" : "validate";
    cmd_val_args_t a = {.algo = "nccl", .proto = RUN_PROTO_AUTO, .calibrate = calibrate, .cv = -1};
    int rc = parse(argc, argv, &a, cmd);
    if (rc) return rc == 1 ? EXIT_OK : rc;
    baton_err_t e = {0};
    if (a.tuner && tunerfile_read(a.tuner, &a.tuner_tab, &e) < 0) {
        if (a.tuner_env) err_prefix(&e, "NCCL_TUNER_CONFIG_FILE (unset it, or give --tuner FILE): ");
        return cmd_fail(cmd, &e);
    }
    rc = run(&a, cmd);
    tuner_csv_free(&a.tuner_tab);
    return rc;
}
