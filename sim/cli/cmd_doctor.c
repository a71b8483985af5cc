/* cmd_doctor.c - `baton doctor`: a log against its machine, and what
 * changed (validate/doctor.h). */
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../models/gpu.h"
#include "../../topologies/units.h"
#include "../answer/report.h"
#include "cmd_doctor.h"

enum { EXIT_FAIL_BELOW = 3, EXIT_CANNOT_TELL = 4, EXIT_BROKEN = 5 };

static const char help[] =
    "usage: baton doctor -t MACHINE --nccl-tests LOG [LOG...] [--json] [--fail-below PCT] [--set K=V ...]\n"
    "\n"
    "Is this nccl-tests log what the machine should give? Per size the measured time\n"
    "and busbw against the expected (baton expect) with its band; a verdict at the\n"
    "largest sizes (the top quarter of the log's sizes): healthy, below or above, and\n"
    "the shortfall of busbw; \"cannot tell\" within a band wider than 30 %, where\n"
    "baton's own error would hide a NIC at half rate. Below, the causes: structural changes to the machine\n"
    "(fewer NICs, a network rate cap, the socket transport, GPUDirect RDMA off, slower\n"
    "PCIe, NVLink links down, NVLS off, PXN off, fewer channels, an algorithm or\n"
    "protocol forced, one slow GPU or node), each re-predicted over its values and\n"
    "ranked by its MAPE on the log, with the value the log implies, what to check,\n"
    "and what the log's NCCL_DEBUG=INFO lines and its command line say of it. Causes\n"
    "within 1 point of MAPE of the first are a tie: the times cannot tell them apart,\n"
    "and doctor prints the group with what tells each apart; a cause the log says\n"
    "happened goes first where its error is within the band of the best's. PXN off,\n"
    "where it moves the largest sizes less than the band, is said to be unseen.\n"
    "  -t MACHINE          the healthy machine the log ran on (its --set values too)\n"
    "      --nccl-tests LOG  one or more logs (each judged alone), text or nccl-tests' JSON (-J)\n"
    "      --json          verdict, shortfall_pct, causes [{cause, mape_pct, value, check}],\n"
    "                      tie_group [{id, tell}], pxn_unseen, rows\n"
    "      --fail-below PCT  exit 3 when a log's busbw at the largest sizes is more than\n"
    "                      PCT % below the band's low edge (health checks; examples/),\n"
    "                      4 where it cannot tell (and none is below)\n"
    "  -c, --coll C        what a log ran where it names no test\n"
    "A log whose rows returned wrong results (#wrong) or that holds an NCCL failure\n"
    "is broken, whatever its times: verdict broken, exit 5.\n"
    "exit: 0 judged, 1 bad input, 2 bad usage, 3 --fail-below tripped, 4 --fail-below cannot judge,\n"
    "      5 a broken run\n"
    "example:\n"
    "  baton doctor -t cluster-h100 --nccl-tests run.txt --fail-below 10\n";

typedef struct {
    const char *topo, *coll;
    const char *logs[CMD_MAX_LOGS];
    int nlogs, json;
    double fail_below;           /* < 0: not given */
    cmd_sets_t sets;
} doc_args_t;

topo_t *cmd_doc_load(void *ctx, const char *const *sets, int nsets, baton_err_t *e) {
    const cmd_doc_loader_t *ld = ctx;
    const char *all[80];
    int k = 0;
    for (int i = 0; i < ld->sets->n; i++) {
        size_t n = strcspn(ld->sets->v[i], "=");
        int replaced = 0;
        for (int j = 0; j < nsets; j++) replaced |= !strncmp(sets[j], ld->sets->v[i], n) && sets[j][n] == '=';
        if (!replaced) all[k++] = ld->sets->v[i];
    }
    for (int j = 0; j < nsets && k < 80; j++) all[k++] = sets[j];
    return cmd_load_topo(ld->name, all, k, e);
}

static int parse(int argc, char **argv, doc_args_t *a) {
    static const struct option opts[] = {
        {"topo", required_argument, 0, 't'}, {"nccl-tests", required_argument, 0, 'n'}, {"json", no_argument, 0, 'j'},
        {"fail-below", required_argument, 0, 'F'}, {"set", required_argument, 0, 'S'}, {"coll", required_argument, 0, 'c'},
        {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    int ch;
    char *end;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":t:c:h", opts, NULL)) != -1) {
        switch (ch) {
        case 't': a->topo = optarg; break;
        case 'c': a->coll = optarg; break;
        case 'n': if (cmd_add_log("doctor", a->logs, &a->nlogs, CMD_MAX_LOGS, optarg)) return EXIT_USAGE; break;
        case 'j': a->json = 1; break;
        case 'F':
            a->fail_below = strtod(optarg, &end);
            if (end == optarg || *end || !(a->fail_below >= 0 && a->fail_below < 100))   /* NaN too */
                return cmd_usage("doctor", "--fail-below PCT: a percentage from 0 up to (not including) 100, not '%s'",
                                 optarg);
            break;
        case 'S': if (cmd_add_set("doctor", &a->sets, optarg)) return EXIT_USAGE; break;
        case 'h': fputs(help, stdout); return 1;
        case ':': return cmd_usage("doctor", "option %s needs a value", argv[optind - 1]);
        default: return cmd_usage("doctor", "unknown option '%s'", argv[optind - 1]);
        }
    }
    while (optind < argc)
        if (cmd_add_log("doctor", a->logs, &a->nlogs, CMD_MAX_LOGS, argv[optind++])) return EXIT_USAGE;
    if (!a->topo) return cmd_usage("doctor", "missing -t MACHINE");
    if (a->nlogs == 0) return cmd_usage("doctor", "missing --nccl-tests LOG");
    return 0;
}

/* Warnings about one log, kept for --json. */
typedef struct {
    char text[8][800];
    int n;
    char broken[800];       /* the run did not complete correctly (wrong results, an NCCL failure): why; "" if not */
} doc_said_t;

__attribute__((format(printf, 2, 3)))
static void warn(doc_said_t *w, const char *fmt, ...) {
    char msg[800];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "baton doctor: warning: %s\n", msg);
    if (w->n < 8) snprintf(w->text[w->n++], sizeof w->text[0], "%s", msg);
}

/* The log read and checked against machine t: samples, INFO facts, warnings. */
static int read_log(const doc_args_t *a, const char *path, topo_t *t, cal_sample_t **s, int *n, ni_info_t *info,
                    doc_said_t *w, baton_err_t *e) {
    nt_log_t log;
    int rc = nt_parse(path, topo_whole_ranks(t), &log, e);     /* the machine's rank count where the log says none */
    if (rc < 0) return rc;
    if (log.stated_ranks == 0)
        warn(w, "%s does not say how many ranks ran (%s): taken as %s's %d", path, nt_ranks_unsaid(&log),
             topo_name(t), topo_whole_ranks(t));
    else log.ranks = log.stated_ranks;
    if (a->coll && log.coll_guessed) {
        int c = coll_parse(a->coll);
        if (c < 0) { nt_free(&log); return err_set(e, BATON_EINVAL, "-c %s: not a collective", a->coll); }
        if (!nt_columns_allow(&log, (coll_t)c))
            warn(w, "%s: -c %s, but its columns are %s's (redop and root): read as asked", path, a->coll,
                 coll_name(log.coll));
        log.coll = (coll_t)c;
    }
    if (log.ranks != topo_whole_ranks(t)) {
        char scale[128];              /* the parameters that size the machine, to match the log's ranks */
        cmd_scale_params(t, scale, sizeof scale);
        int r = log.ranks;
        nt_free(&log);
        return err_set(e, BATON_EINVAL, "%s ran on %d ranks; %s has %d: not a log of this machine%s%s%s", path, r,
                       topo_name(t), topo_whole_ranks(t), scale[0] ? " (size it to the log's: " : "", scale,
                       scale[0] ? ")" : "");
    }
    const topo_params_t *tp = topo_params_c(t);
    const char *fam = log.device[0] ? gpu_family_of_device(log.device) : NULL;
    if (fam && tp->has_gpu && tp->gpu.family[0] && strcmp(fam, tp->gpu.family))
        warn(w, "%s ran on %s (%s); %s's GPU is %s (%s): the expectation is another GPU's", path, log.device, fam,
             topo_name(t), tp->gpu.name, tp->gpu.family);
    char noise[768];
    if (nt_noise_text(&log, path, noise, sizeof noise)) warn(w, "%s", noise);
    for (int k = 0; nt_timing_text(&log, path, k, noise, sizeof noise); k++) warn(w, "%s", noise);
    if ((rc = ni_read(path, info, e)) < 0) { nt_free(&log); return rc; }
    int cut = log.nrows && ni_truncated(info, log.rows[log.nrows - 1].bytes);
    if (cut)
        warn(w, "%s: cut short? its header says maxBytes %llu, the last row is %llu bytes, and no \"# Avg bus bandwidth\" "
             "line closes it: the largest sizes are missing", path, (unsigned long long)info->max_bytes,
             (unsigned long long)log.rows[log.nrows - 1].bytes);
    for (int k = 0; k < 2 - cut; k++)             /* lines among the rows that are none; no closing lines */
        if (nt_whole_text(&log, path, k, noise, sizeof noise)) warn(w, "%s", noise);
    for (int k = 0; k < 2; k++)                   /* a row cut off, a second sweep: left out */
        if (nt_skipped_text(&log, path, k, noise, sizeof noise)) warn(w, "%s", noise);
    if (log.wrong_rows) warn(w, "%s:%d: #wrong is not 0 in %d rows: a broken collective's times", path, log.wrong_line, log.wrong_rows);
    if (log.wrong_rows)          /* a run that returned wrong data is broken, however fast */
        snprintf(w->broken, sizeof w->broken, "%d rows returned wrong results (#wrong, line %d)", log.wrong_rows,
                 log.wrong_line);
    else if (log.failed_line)
        snprintf(w->broken, sizeof w->broken, "the run failed (line %d: \"%s\")", log.failed_line, log.failed_text);
    rc = cal_samples(&log, s, n, e);
    nt_free(&log);
    if (rc == 0 && *n == 0) { free(*s); *s = NULL; rc = err_set(e, BATON_EINVAL, "%s: no rows with a time", path); }
    return rc;
}

static void print_rows(const doc_report_t *r) {
    printf("%10s %12s %12s %10s %10s  %-19s %s\n", "size", "measured", "expected", "busbw", "expected", "band (GB/s)", "");
    for (int i = 0; i < r->nrows; i++) {
        const doc_row_t *w = &r->rows[i];
        char sz[32], m[32], x[32], band[48];
        units_fmt_size(w->bytes, sz, sizeof sz);
        units_fmt_time(w->meas_s, m, sizeof m);
        units_fmt_time(w->exp.time_s, x, sizeof x);
        snprintf(band, sizeof band, "%.4g - %.4g", w->exp.busbw_lo, w->exp.busbw_hi);
        const char *mark = w->meas_busbw < w->exp.busbw_lo ? "below" : w->meas_busbw > w->exp.busbw_hi ? "above" : "";
        printf("%10s %12s %12s %10.4g %10.4g  %-19s %s\n", sz, m, x, w->meas_busbw, w->exp.busbw_GBps, band, mark);
    }
}

/* The log's INFO facts, each with the cause it bears on. */
static void print_facts(const ni_info_t *info) {
    if (info->n == 0) return;
    printf("the log's own lines (NCCL_DEBUG=INFO, its command) say:\n");
    for (int i = 0; i < info->n; i++) {
        const ni_fact_t *f = &info->fact[i];
        printf("  line %d: %s  [%s: %s]\n", f->line, f->text, doc_cause_name(f->cause),
               f->supports > 0 ? "happened" : f->supports < 0 ? "did not happen" : "a count");
    }
}

/* PXN off, where the machine has it and the log's largest sizes do not show it. */
static void print_unseen(const doc_report_t *r) {
    if (r->pxn_unseen == 1)
        printf("PXN off cannot be seen in this log: it moves its largest sizes by %.1f %%, inside the band (rings "
               "and trees leave a node through the sending GPU's own NIC; the fabric carries cross-rail sends at "
               "full rate); what shows it: %s\n", r->pxn_change_pct, doc_cause_tell("pxn"));
}

static void print_report(const doc_args_t *a, const char *path, const topo_t *t, const doc_report_t *r,
                         const ni_info_t *info, const doc_said_t *w, coll_t coll) {
    char from[32], sets[512] = "";
    for (int i = 0; i < a->sets.n; i++)
        snprintf(sets + strlen(sets), sizeof sets - strlen(sets), " --set %s", a->sets.v[i]);
    units_fmt_size(r->large_from, from, sizeof from);
    printf("%s against %s (%d ranks)\n", path, topo_name(t), topo_whole_ranks(t));
    for (int i = 0; i < w->n; i++) printf("warning: %s\n", w->text[i]);   /* here too: a script reads stdout */
    printf("band: %s\n", r->band.source);
    print_rows(r);
    if (w->broken[0])
        printf("verdict: broken: %s; whatever its times, this machine needs looking at before it runs jobs\n"
               "the times alone:   ", w->broken);
    else printf("verdict: ");
    printf("%s: busbw at >= %s is %.1f %% %s the machine's (measured / expected %.3f; the band's low edge %+.1f %%)\n",
           r->verdict == DOC_UNSURE ? "cannot tell" : doc_verdict_name(r->verdict), from,
           r->shortfall_pct >= 0 ? r->shortfall_pct : -r->shortfall_pct,
           r->shortfall_pct >= 0 ? "below" : "above", r->ratio, r->band_lo_pct);
    print_facts(info);
    if (r->verdict == DOC_BELOW && r->sim_rows > 0 && r->sim_ratio >= 1 + r->band_lo_pct / 100 &&
        r->sim_ratio <= 1 + r->band.large_hi_pct / 100)
        printf("but: at these sizes baton's simulator answers slower than its formula (predict prints both); against "
               "the simulator the log is %.1f %% %s, inside the band: the shortfall may be the formula's, not the "
               "machine's\n", 100 * fabs(1 - r->sim_ratio), r->sim_ratio <= 1 ? "below" : "above");
    if (r->verdict == DOC_ABOVE)
        printf("faster than baton's machine: the file understates it (baton calibrate fits it to this log)\n");
    if (r->verdict == DOC_UNSURE)
        printf("cannot tell: the band's low edge (%+.0f %%) is baton's own error on this machine's logs at this scale, "
               "wider than %.0f %%: a cause as large as NICs at half rate would stay inside it. A calibration on a "
               "healthy run of this machine (baton calibrate) narrows it\n", r->band_lo_pct, DOC_WIDEST_BAND);
    print_unseen(r);
    if (r->verdict != DOC_BELOW) return;
    printf("causes, ranked by their error on this log (MAPE over all sizes; the healthy machine's %.1f %%, %d machines "
           "tried)%s:\n", r->healthy_mape, r->tried, info->info_lines ? "; the log's NCCL_DEBUG=INFO lines weighed" : "");
    for (int i = 0; i < r->ncauses && i < 6; i++) {
        const doc_cause_t *c = &r->cause[i];
        printf("%2d. %s%s: %s\n    MAPE %.1f %% (>= %s: %.1f %%)\n", i + 1, c->tie ? "(as well) " : "", c->name, c->value,
               c->mape_pct, from, c->mape_large_pct);
        if (c->evidence[0])
            printf("    the log %s: %s\n", c->said > 0 ? "says so" : c->said < 0 ? "says not" : "says", c->evidence);
        printf("    check: %s\n    reproduce: baton expect -t %s%s -c %s --cause %s%s%s --format nccl-tests\n", c->check,
               a->topo, sets, coll_name(coll), c->change.id, c->change.arg[0] ? "=" : "", c->change.arg);
    }
    if (r->ncauses == 0 || !r->explained)
        printf("no cause explains it: %s; baton's model lacks what happened (a congested or shared fabric, "
               "a library other than the machine's, host interference)\n",
               r->ncauses == 0 ? "none of the changes brings the prediction closer to the log"
                               : "the best still misses the largest sizes by more than the band");
    else if (r->ntied > 1) {
        printf("a tie: ");
        for (int i = 0; i < r->ntied; i++) printf("%s%s", i ? (i + 1 < r->ntied ? ", " : " and ") : "", r->cause[i].change.id);
        printf(" fit the times alike (within %.0f point of MAPE): this log cannot tell them apart; what does:\n", DOC_TIE_PTS);
        for (int i = 0; i < r->ntied; i++) printf("    %s: %s\n", r->cause[i].change.id, doc_cause_tell(r->cause[i].change.id));
    }
}


static void print_json(const char *path, const topo_t *t, const doc_report_t *r, const ni_info_t *info,
                       const doc_said_t *w, int first) {
    char esc[2048], esc2[1024], esc3[2048], esc4[1700];
    printf("%s{\"log\":\"%s\",\"machine\":\"%s\",\"ranks\":%d,\"verdict\":\"%s\",\"times_verdict\":\"%s\",\"broken\":\"%s\",\"shortfall_pct\":%.4f,\"simulator_ratio\":%.6f,\"ratio\":%.6f,"
           "\"largest_from_bytes\":%llu,\"band\":{\"kind\":\"%s\",\"source\":\"%s\",\"low_pct\":%.4f,\"high_pct\":%.4f,"
           "\"large_low_pct\":%.4f,\"large_high_pct\":%.4f},\"healthy_mape_pct\":%.4f,\"explained\":%s,\"info_lines\":%d,"
           "\"causes\":[", first ? "" : ",", report_json_escape(path, esc, sizeof esc),
           report_json_escape(topo_name(t), esc2, sizeof esc2), topo_whole_ranks(t),
           w->broken[0] ? "broken" : doc_verdict_name(r->verdict), doc_verdict_name(r->verdict),
           report_json_escape(w->broken, esc4, sizeof esc4), r->shortfall_pct, r->sim_ratio, r->ratio, (unsigned long long)r->large_from, r->band.kind,
           report_json_escape(r->band.source, esc3, sizeof esc3), r->band.lo_pct, r->band.hi_pct, r->band.large_lo_pct,
           r->band.large_hi_pct, r->healthy_mape, r->verdict == DOC_BELOW && r->explained ? "true" : "false", info->info_lines);
    for (int i = 0; i < r->ncauses; i++) {
        const doc_cause_t *c = &r->cause[i];
        printf("%s{\"cause\":\"%s\",\"id\":\"%s\",\"mape_pct\":%.4f,\"mape_large_pct\":%.4f,\"value\":\"%s\",", i ? "," : "",
               c->name, c->change.id, c->mape_pct, c->mape_large_pct, report_json_escape(c->value, esc, sizeof esc));
        printf("\"check\":\"%s\",\"tie\":%s,\"said\":%d,", report_json_escape(c->check, esc, sizeof esc),
               c->tie ? "true" : "false", c->said);
        printf("\"evidence\":\"%s\",\"expect\":\"--cause %s%s%s\"}", report_json_escape(c->evidence, esc, sizeof esc),
               c->change.id, c->change.arg[0] ? "=" : "", c->change.arg);
    }
    printf("],\"tie_group\":[");
    for (int i = 0; r->ntied > 1 && i < r->ntied; i++)
        printf("%s{\"id\":\"%s\",\"tell\":\"%s\"}", i ? "," : "", r->cause[i].change.id,
               report_json_escape(doc_cause_tell(r->cause[i].change.id), esc, sizeof esc));
    printf("],\"pxn_unseen\":%s,\"pxn_change_pct\":%.4f,", r->pxn_unseen == 1 ? "true" : r->pxn_unseen == 0 ? "false" : "null",
           r->pxn_change_pct);
    printf("\"rows\":[");
    for (int i = 0; i < r->nrows; i++) {
        const doc_row_t *x = &r->rows[i];
        printf("%s{\"bytes\":%llu,\"line\":%d,\"measured_us\":%.6g,\"expected_us\":%.6g,\"fast_us\":%.6g,\"slow_us\":%.6g,"
               "\"measured_busbw_GBps\":%.6g,\"expected_busbw_GBps\":%.6g,\"busbw_low_GBps\":%.6g,\"busbw_high_GBps\":%.6g,"
               "\"algorithm\":\"%s\",\"protocol\":\"%s\"}", i ? "," : "", (unsigned long long)x->bytes, x->line,
               x->meas_s * 1e6, x->exp.time_s * 1e6, x->exp.fast_s * 1e6, x->exp.slow_s * 1e6, x->meas_busbw,
               x->exp.busbw_GBps, x->exp.busbw_lo, x->exp.busbw_hi, x->exp.algo, proto_name(x->exp.proto));
    }
    printf("],\"evidence\":[");
    for (int i = 0; i < info->n; i++)
        printf("%s{\"cause\":\"%s\",\"line\":%d,\"says\":%d,\"value\":%d,\"text\":\"%s\"}", i ? "," : "",
               info->fact[i].cause, info->fact[i].line, info->fact[i].supports, info->fact[i].value,
               report_json_escape(info->fact[i].text, esc, sizeof esc));
    printf("],\"warnings\":[");
    for (int i = 0; i < w->n; i++) printf("%s\"%s\"", i ? "," : "", report_json_escape(w->text[i], esc, sizeof esc));
    printf("]}");
}

/* One log: judged, printed; *tripped where --fail-below trips (1), or
 * cannot judge (2, where none trips). */
static int one_log(const doc_args_t *a, cmd_doc_loader_t *ld, topo_t *t, const char *path, int first, int *tripped,
                   baton_err_t *e) {
    cal_sample_t *s = NULL;
    int n = 0;
    ni_info_t info;
    doc_said_t w = {0};
    doc_report_t r = {0};
    cal_req_t q = {.algo = "nccl", .proto = RUN_PROTO_AUTO};
    int rc = read_log(a, path, t, &s, &n, &info, &w, e);
    if (rc == 0) rc = doc_examine(cmd_doc_load, ld, t, &q, s, n, &info, &r, e);
    if (rc == 0 && a->json) print_json(path, t, &r, &info, &w, first);
    else if (rc == 0) print_report(a, path, t, &r, &info, &w, n > 0 ? s[0].coll : COLL_ALLREDUCE);
    if (rc == 0 && a->fail_below >= 0 && r.ratio < (1 + r.band_lo_pct / 100) * (1 - a->fail_below / 100)) {
        if (*tripped != 3) *tripped = 1;
        fprintf(stderr, "baton doctor: %s: busbw at the largest sizes %.1f %% below the machine's, more than %g %% below "
                "the band (--fail-below): exit 3\n", path, r.shortfall_pct, a->fail_below);
    } else if (rc == 0 && a->fail_below >= 0 && r.verdict == DOC_UNSURE) {
        if (*tripped == 0) *tripped = 2;
        fprintf(stderr, "baton doctor: %s: baton's error on this machine's logs (the band's low edge %+.0f %%) is too wide "
                "to judge (--fail-below): exit 4 unless another log trips\n", path, r.band_lo_pct);
    }
    if (rc == 0 && w.broken[0]) {
        *tripped = 3;
        fprintf(stderr, "baton doctor: %s: broken: %s: exit 5\n", path, w.broken);
    }
    doc_free(&r);
    free(s);
    return rc;
}

int cmd_doctor(int argc, char **argv) {
    doc_args_t a = {.fail_below = -1};
    int rc = parse(argc, argv, &a), tripped = 0;
    if (rc) return rc == 1 ? EXIT_OK : rc;
    baton_err_t e = {0};
    cmd_doc_loader_t ld = {.name = a.topo, .sets = &a.sets};
    topo_t *t = cmd_doc_load(&ld, NULL, 0, &e);
    if (t == NULL) return cmd_fail("doctor", &e);
    if (a.json && a.nlogs > 1) printf("[");
    for (int i = 0; rc == 0 && i < a.nlogs; i++) {
        rc = one_log(&a, &ld, t, a.logs[i], i == 0, &tripped, &e);
        if (rc == 0 && !a.json && i + 1 < a.nlogs) printf("\n");
    }
    if (a.json && rc == 0) printf(a.nlogs > 1 ? "]\n" : "\n");
    topo_free(t);
    if (rc < 0) return cmd_fail("doctor", &e);
    return tripped == 3 ? EXIT_BROKEN : tripped == 1 ? EXIT_FAIL_BELOW : tripped == 2 ? EXIT_CANNOT_TELL : EXIT_OK;
}
