/* cmd_expect.c - `baton expect`: the nccl-tests table a machine should give,
 * with its band (validate/expect.h); `--cause` prints a sick machine's
 * (validate/doctor.h), as `baton doctor` tries them. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../topologies/units.h"
#include "../../validate/doctor.h"
#include "../answer/report.h"
#include "../answer/select.h"
#include "cmd.h"
#include "cmd_doctor.h"

static const char help[] =
    "usage: baton expect -t MACHINE -c COLL [--sizes SPEC] [--format table|nccl-tests|json]\n"
    "                    [--cause ID[=VALUE]] [--set K=V ...]\n"
    "\n"
    "The nccl-tests table this machine should produce (-a nccl, the closed forms, as\n"
    "validate predicts): per size the time, algbw and busbw, and the band a healthy\n"
    "run falls in: the machine's calibration's where it has one, else baton's\n"
    "measured error on that kind of machine (the fidelity table; the source is\n"
    "printed). Put it beside a run, or give the run to baton doctor.\n"
    "  -c, --coll C       allreduce (default), allgather, reducescatter, broadcast, reduce,\n"
    "                     alltoall\n"
    "      --sizes SPEC   LO:HI[:xF] or a list (default 8B:8GiB:x2, nccl-tests -b 8 -e 8G -f 2)\n"
    "      --format F     table (default), nccl-tests (a log baton's reader and doctor read\n"
    "                     back: out-of-place and in-place at the predicted time), json\n"
    "      --cause ID[=V] the machine with one of doctor's causes (one): nics=K,\n"
    "                     netcap=SHARE, socket=GB/s[/us], gdr, pcie=SHARE, nvlink=LINKS, nvls,\n"
    "                     pxn, channels=K, algo=NAME, proto=NAME, slowgpu=SHARE,\n"
    "                     slownode=SHARE (a sick log for doctor: --format nccl-tests)\n"
    "      --set K=V      override a topology parameter\n"
    "example:\n"
    "  baton expect -t cluster-h100 -c allreduce --sizes 1MiB:16GiB:x4\n";

typedef struct {
    const char *topo, *coll, *sizes, *format;
    const char *cause;           /* --cause ID[=V], one at a time, or NULL */
    cmd_sets_t sets;
} ex_args_t;

static int parse(int argc, char **argv, ex_args_t *a) {
    static const struct option opts[] = {
        {"topo", required_argument, 0, 't'}, {"coll", required_argument, 0, 'c'}, {"sizes", required_argument, 0, 's'},
        {"format", required_argument, 0, 'f'}, {"cause", required_argument, 0, 'C'}, {"set", required_argument, 0, 'S'},
        {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    int ch;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":t:c:s:h", opts, NULL)) != -1) {
        switch (ch) {
        case 't': a->topo = optarg; break;
        case 'c': a->coll = optarg; break;
        case 's': a->sizes = optarg; break;
        case 'f': a->format = optarg; break;
        case 'C': if (a->cause) return cmd_usage("expect", "one --cause at a time"); a->cause = optarg; break;
        case 'S': if (cmd_add_set("expect", &a->sets, optarg)) return EXIT_USAGE; break;
        case 'h': fputs(help, stdout); return 1;
        case ':': return cmd_usage("expect", "option %s needs a value", argv[optind - 1]);
        default: return cmd_usage("expect", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc) return cmd_usage("expect", "unexpected argument '%s'", argv[optind]);
    if (!a->topo) return cmd_usage("expect", "missing -t MACHINE");
    if (strcmp(a->format, "table") && strcmp(a->format, "nccl-tests") && strcmp(a->format, "json"))
        return cmd_usage("expect", "--format must be table, nccl-tests or json");
    return 0;
}

static void print_table(const topo_t *t, coll_t coll, const ex_band_t *b, const ex_row_t *r, int n, const ex_args_t *a) {
    printf("%s: %s on %d ranks, as NCCL should run it (-a nccl, closed forms)%s", topo_name(t), coll_name(coll),
           topo_whole_ranks(t), a->cause ? "; with" : "");
    if (a->cause) printf(" --cause %s", a->cause);
    printf("\nband: %s\n", b->source);
    printf("%10s %12s %10s %10s  %-21s %12s %12s  %s\n", "size", "time", "algbw", "busbw", "busbw band (GB/s)",
           "fastest", "slowest", "algorithm");
    for (int i = 0; i < n; i++) {
        char sz[32], tm[32], lo[32], hi[32], band[48];
        units_fmt_size(r[i].bytes, sz, sizeof sz);
        units_fmt_time(r[i].time_s, tm, sizeof tm);
        units_fmt_time(r[i].fast_s, lo, sizeof lo);
        units_fmt_time(r[i].slow_s, hi, sizeof hi);
        snprintf(band, sizeof band, "%.4g - %.4g", r[i].busbw_lo, r[i].busbw_hi);
        printf("%10s %12s %10.4g %10.4g  %-21s %12s %12s  %s/%s\n", sz, tm, r[i].algbw_GBps, r[i].busbw_GBps, band, lo, hi,
               r[i].algo, proto_name(r[i].proto));
    }
}

static void print_json(const topo_t *t, coll_t coll, const ex_band_t *b, const ex_row_t *r, int n) {
    char esc[1536];
    printf("{\"machine\":\"%s\",\"collective\":\"%s\",\"ranks\":%d,", report_json_escape(topo_name(t), esc, sizeof esc),
           coll_name(coll), topo_whole_ranks(t));
    printf("\"band\":{\"kind\":\"%s\",\"source\":\"%s\",\"low_pct\":%.4f,\"high_pct\":%.4f,\"large_low_pct\":%.4f,"
           "\"large_high_pct\":%.4f},\"rows\":[", b->kind, report_json_escape(b->source, esc, sizeof esc), b->lo_pct,
           b->hi_pct, b->large_lo_pct, b->large_hi_pct);
    for (int i = 0; i < n; i++)
        printf("%s{\"bytes\":%llu,\"time_us\":%.6g,\"fast_us\":%.6g,\"slow_us\":%.6g,\"algbw_GBps\":%.6g,\"busbw_GBps\":%.6g,"
               "\"busbw_low_GBps\":%.6g,\"busbw_high_GBps\":%.6g,\"algorithm\":\"%s\",\"protocol\":\"%s\"}", i ? "," : "",
               (unsigned long long)r[i].bytes, r[i].time_s * 1e6, r[i].fast_s * 1e6, r[i].slow_s * 1e6, r[i].algbw_GBps,
               r[i].busbw_GBps, r[i].busbw_lo, r[i].busbw_hi, r[i].algo, proto_name(r[i].proto));
    printf("]}\n");
}

/* The machine, with --cause applied where given (q and the samples' masks too). */
static topo_t *sick_machine(const ex_args_t *a, cmd_doc_loader_t *ld, cal_req_t *q, cal_sample_t *s, int n, baton_err_t *e) {
    topo_t *t = cmd_doc_load(ld, NULL, 0, e), *m = NULL;
    doc_change_t c;
    if (t == NULL || a->cause == NULL) return t;
    int rc = doc_change_parse(t, a->cause, &c, e);
    if (rc == 0) rc = doc_change_apply(cmd_doc_load, ld, &c, &m, q, s, n, e);
    topo_free(t);
    return rc == 0 ? m : NULL;
}

/* The samples as nccl-tests runs them where each rank has its own part
 * (coll_whole_bytes); those of 0 bytes left out, with a note. Returns the
 * samples kept (0 leaves every size out: none was a whole part a rank). */
static int per_rank_sizes(cal_sample_t *s, int n, coll_t c, int p) {
    uint64_t unit = 1;
    int k = 0, dropped = 0;
    for (int i = 0; i < n; i++) {
        uint64_t b = coll_whole_bytes(c, p, s[i].bytes, &unit);
        if (b == 0) { dropped++; continue; }
        s[i].bytes = b;
        if (k == 0 || s[k - 1].bytes != b) s[k++] = s[i];
    }
    if (dropped)
        fprintf(stderr, "baton expect: note: %s on %d ranks runs nothing below %llu bytes (nccl-tests gives each rank %s): "
                "%d size%s left out\n", c == COLL_ALLTOALL ? "an all-to-all" : c == COLL_ALLGATHER ? "an all-gather" :
                "a reduce-scatter", p, (unsigned long long)unit, c == COLL_ALLTOALL ? "a whole float a peer" :
                "a multiple of 16 bytes", dropped, dropped == 1 ? "" : "s");
    return k;
}

int cmd_expect(int argc, char **argv) {
    ex_args_t a = {.coll = "allreduce", .sizes = "8B:8GiB:x2", .format = "table"};
    int rc = parse(argc, argv, &a);
    if (rc) return rc == 1 ? EXIT_OK : rc;
    int c = coll_parse(a.coll);
    if (c < 0) return cmd_usage("expect", "-c %s: allreduce, allgather, reducescatter, broadcast, reduce or alltoall", a.coll);
    uint64_t *sizes;
    int n, asked;
    const char *why;
    if (select_parse_sizes(a.sizes, &sizes, &n, &why) < 0) return cmd_usage("expect", "--sizes %s: %s", a.sizes, why);
    asked = n;
    cmd_sizes_note("expect", a.sizes, sizes, n);
    if (!strcmp(a.format, "nccl-tests") && cmd_sizes_ascend("expect", a.sizes, sizes, n)) {
        free(sizes);
        return EXIT_USAGE;
    }
    baton_err_t e = {0};
    cmd_doc_loader_t ld = {.name = a.topo, .sets = &a.sets};
    cal_req_t q = {.algo = "nccl", .proto = RUN_PROTO_AUTO};
    cal_sample_t *s = calloc((size_t)n + 1, sizeof *s);
    ex_row_t *r = calloc((size_t)n + 1, sizeof *r);
    topo_t *t = NULL;
    rc = s && r ? 0 : err_set(&e, BATON_ENOMEM, "out of memory");
    for (int i = 0; rc == 0 && i < n; i++) s[i] = (cal_sample_t){.coll = (coll_t)c, .bytes = sizes[i], .gpus_per_thread = 1};
    if (rc == 0 && (t = sick_machine(&a, &ld, &q, s, n, &e)) == NULL) rc = e.code ? e.code : BATON_EINVAL;
    int parts = c == COLL_ALLTOALL || c == COLL_ALLGATHER || c == COLL_REDUCE_SCATTER;
    if (rc == 0 && parts && (n = per_rank_sizes(s, n, (coll_t)c, topo_whole_ranks(t))) == 0)
        rc = err_set(&e, BATON_EINVAL, "--sizes %s: every size is below %s on %d ranks", a.sizes,
                     c == COLL_ALLTOALL ? "one float a peer" : "16 bytes a rank", topo_whole_ranks(t));
    ex_band_t b;
    if (rc == 0) ex_band(t, (coll_t)c, 0, &b);
    if (rc == 0 && a.cause)            /* a sick machine's band is the healthy one's */
        snprintf(b.source + strlen(b.source), sizeof b.source - strlen(b.source), "; the machine with --cause");
    for (int i = 0; rc == 0 && i < n; i++) rc = ex_row(t, &q, &s[i], &b, &r[i], &e);
    if (rc == 0 && !strcmp(a.format, "table")) print_table(t, (coll_t)c, &b, r, n, &a);
    if (rc == 0 && !strcmp(a.format, "json")) print_json(t, (coll_t)c, &b, r, n);
    if (rc == 0 && !strcmp(a.format, "nccl-tests")) {
        nt_log_t log;
        rc = ex_log(r, n, (coll_t)c, topo_whole_ranks(t), &log, &e);
        nt_set_step(&log, sizes, asked);            /* the sizes asked: whole elements a rank round some down */
        log.per_host = cmd_node_ranks(t);
        if (rc == 0) (void)nt_write(&log, stdout);      /* a failed write: main.c's output_written says it */
        free(log.rows);
    }
    topo_free(t);
    free(s);
    free(r);
    free(sizes);
    return rc < 0 ? cmd_fail("expect", &e) : EXIT_OK;
}
