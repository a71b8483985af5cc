/* cmd_select.c - `baton select`: which algorithm wins at which size. */
#include <getopt.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "../../algorithms/algo.h"
#include "../../algorithms/msccl.h"
#include "../../topologies/topo_yaml.h"
#include "cmd.h"
#include "../answer/plot.h"
#include "../answer/report.h"
#include "../answer/select.h"
#include "../../util/par.h"

static const char help[] =
    "usage: baton select -t TOPO.yaml -c COLL[,COLL...] [--sizes 8B:1GiB[:x2]] [options]\n"
    "\n"
    "For every collective and size: the winning algorithm and protocol, its time and\n"
    "busbw, the next best and how much slower it is, and the sizes where the winner\n"
    "changes (crossovers); --wide shows every algorithm's time, --format csv/json\n"
    "every algorithm's time, algbw and busbw.\n"
    "\n"
    "  -t, --topo FILE        topology\n"
    "  -c, --coll LIST        allreduce,reducescatter,allgather,broadcast,reduce,alltoall\n"
    "      --sizes SPEC       LO:HI[:xF] (geometric, default x2) or a list 1KiB,1MiB\n"
    "                         (default 8B:1GiB); nccl-tests sizes (the whole buffer).\n"
    "                         A range is LO, LO*F, ... up to HI, as nccl-tests -b -e -f:\n"
    "                         HI only if it is on that grid; if not (8B:1GiB:x16 ends\n"
    "                         at 128 MiB) a note on stderr says where it ends\n"
    "      --algos LIST       only these algorithms\n"
    "      --proto P          auto (default: each algorithm with its fastest\n"
    "                         protocol), LL, LL128, Simple, or none\n"
    "      --model M          auto (default: the closed form where it is exact, the\n"
    "                         simulator where it is an approximation and the run is\n"
    "                         small), closed, or des (simulate everything)\n"
    "      --contention M     fifo, fair or none, for simulated cells\n"
    "      --format F         table (default), csv, json, or nccl-tuner (NCCL's example\n"
    "                         tuner plugin CSV; only algorithms NCCL has; --proto auto\n"
    "                         unless given)\n"
    "      --wide             a column per algorithm (as wide as the catalogue)\n"
    "      --tuner-wildcards  nccl-tuner rows for any node and rank count (-1)\n"
    "      --tuner-channels K nccl-tuner rows bind K channels (default -1, NCCL's own count,\n"
    "                         which NCCL's example plugin runs on one channel: give K for it)\n"
    "      --vs-nccl          also what NCCL runs (-a nccl) and how much slower it is\n"
    "                         than the winner (* above 5 %): where NCCL_ALGO/NCCL_PROTO\n"
    "                         or a tuner plugin would pay\n"
    "      --plot FILE.png    also draw time and busbw against size (needs gnuplot; FILE.svg: an SVG)\n"
    "  -o, --output FILE      write there (whole or not at all) instead of stdout\n"
    "      --fold N           a cluster of N nodes or more (default " CMD_FOLD_NODES_S ") is built\n"
    "                         only where its routes differ, as predict's --fold; 0: never\n"
    "      --root R, --group G, --pipeline K, --set K=V   as for baton sim\n\n"
    "example:\n"
    "  baton select -t hgx-h100 -c allreduce,allgather --sizes 8B:1GiB:x8 --vs-nccl\n";

typedef struct {
    const char *topo, *colls, *sizes, *algos, *format, *plot, *output;
    int proto, model, wide, vs_nccl, wildcards, proto_given, fold, tuner_channels;
    contention_t contention;
    algo_opts_t opts;
    cmd_sets_t sets;
} select_args_t;

static int parse_enum(const char *v, const char *const *names, int n) {
    for (int i = 0; i < n; i++)
        if (strcasecmp(v, names[i]) == 0) return i;
    return -1;
}

static int parse(int argc, char **argv, select_args_t *a) {
    static const struct option opts[] = {
        {"topo", required_argument, 0, 't'}, {"coll", required_argument, 0, 'c'},
        {"sizes", required_argument, 0, 's'}, {"algos", required_argument, 0, 'a'},
        {"proto", required_argument, 0, 'P'}, {"model", required_argument, 0, 'm'},
        {"contention", required_argument, 0, 'M'}, {"format", required_argument, 0, 'f'},
        {"plot", required_argument, 0, 'p'}, {"output", required_argument, 0, 'o'},
        {"root", required_argument, 0, 'R'}, {"group", required_argument, 0, 'G'},
        {"pipeline", required_argument, 0, 'K'}, {"set", required_argument, 0, 'S'},
        {"wide", no_argument, 0, 'W'}, {"vs-nccl", no_argument, 0, 'N'}, {"tuner-wildcards", no_argument, 0, 'X'},
        {"tuner-channels", required_argument, 0, 'Y'},
        {"fold", required_argument, 0, 'F'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    static const char *const models[] = {"auto", "closed", "des"}, *const cont[] = {"fifo", "fair", "none"};
    int ch;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":t:c:o:h", opts, NULL)) != -1) {
        switch (ch) {
        case 't': a->topo = optarg; break;
        case 'c': a->colls = optarg; break;
        case 's': a->sizes = optarg; break;
        case 'a': a->algos = optarg; break;
        case 'f': a->format = optarg; break;
        case 'p':
            a->plot = optarg;
            if (plot_format_of(optarg) < 0) return cmd_usage("select", "--plot %s: name the picture FILE.png or FILE.svg", optarg);
            break;
        case 'o': if (cmd_out_file("select", "-o", optarg, &a->output)) return EXIT_USAGE; break;
        case 'R': if (cmd_root_arg("select", optarg, &a->opts.root)) return EXIT_USAGE; break;
        case 'G': if (cmd_int_arg("select", "--group", optarg, 1, 1 << 24, &a->opts.group)) return EXIT_USAGE; break;
        case 'K': if (cmd_int_arg("select", "--pipeline", optarg, 1, 1 << 24, &a->opts.pipeline)) return EXIT_USAGE; break;
        case 'S': if (cmd_add_set("select", &a->sets, optarg)) return EXIT_USAGE; break;
        case 'W': a->wide = 1; break;
        case 'N': a->vs_nccl = 1; break;
        case 'X': a->wildcards = 1; break;
        case 'Y': if (cmd_int_arg("select", "--tuner-channels", optarg, 1, 64, &a->tuner_channels)) return EXIT_USAGE; break;
        case 'F': if (cmd_fold_arg("select", optarg, &a->fold)) return EXIT_USAGE; break;
        case 'P':
            a->proto = cmd_parse_proto(optarg);
            a->proto_given = 1;
            if (a->proto < 0) return cmd_usage("select", "--proto must be none, LL, LL128, Simple or auto");
            break;
        case 'm':
            if ((a->model = parse_enum(optarg, models, 3)) < 0) return cmd_usage("select", "--model must be auto, closed or des");
            break;
        case 'M': {
            int m = parse_enum(optarg, cont, 3);
            if (m < 0) return cmd_usage("select", "--contention must be fifo, fair or none");
            a->contention = (contention_t)m;
            break;
        }
        case 'h': fputs(help, stdout); return 1;
        case ':': return cmd_usage("select", "option %s needs a value", argv[optind - 1]);
        default: return cmd_usage("select", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc) return cmd_usage("select", "unexpected argument '%s'", argv[optind]);
    if (!a->topo) return cmd_usage("select", "missing -t TOPO.yaml");
    if (!a->colls) return cmd_usage("select", "missing -c COLLECTIVE[,...]");
    if (parse_enum(a->format, (const char *const[]){"table", "csv", "json", "nccl-tuner"}, 4) < 0)
        return cmd_usage("select", "--format must be table, csv, json or nccl-tuner");
    if (strcmp(a->format, "nccl-tuner") == 0 && a->proto == PROTO_NONE)
        return cmd_usage("select", "--format nccl-tuner writes NCCL's protocols: --proto auto, LL, LL128 or Simple, not none");
    if (strcmp(a->format, "nccl-tuner") && (a->tuner_channels || a->wildcards))
        return cmd_usage("select", "--tuner-channels and --tuner-wildcards shape --format nccl-tuner's rows: give it");
    if (strcmp(a->format, "nccl-tuner") == 0 && strstr(a->colls, "alltoall"))
        return cmd_usage("select", "--format nccl-tuner: NCCL's tuner picks no algorithm for alltoall (it runs as "
                         "point-to-point sends); leave it out");
    return 0;
}

/* Split a comma list in place into at most max words. */
static int words(char *s, const char **out, int max) {
    int n = 0;
    for (char *tok = strtok(s, ","); tok && n < max; tok = strtok(NULL, ",")) out[n++] = tok;
    return n;
}

/* Text to a file (whole or not at all) or to stdout. */
static int emit(const char *text, const char *path, baton_err_t *e) {
    if (path == NULL) return fputs(text, stdout) < 0 ? err_set(e, BATON_EIO, "stdout: cannot write: %s", strerror(errno)) : 0;
    return cmd_write_file(path, text, strlen(text), e);
}

/* The table's last line on a folded cluster: how few nodes answered. */
static char *folded_line(char *text, const topo_t *t) {
    char line[192];
    int n = cmd_folded_line(t, "folded: ", line, sizeof line);
    size_t len = strlen(text);
    char *grown = realloc(text, len + (size_t)n + 1);
    if (grown == NULL) { free(text); return NULL; }
    memcpy(grown + len, line, (size_t)n + 1);
    return grown;
}

static char *render(const select_table_t *tab, const select_args_t *a, const topo_t *t, int nnodes, int channels) {
    if (!strcmp(a->format, "csv")) return report_select_csv(tab);
    if (!strcmp(a->format, "json")) return report_select_json(tab);
    if (!strcmp(a->format, "nccl-tuner")) return report_select_tuner(tab, nnodes, channels, a->wildcards, a->tuner_channels);
    char *text = report_select_table(tab, a->wide, a->vs_nccl);
    return text && topo_fold_ranks(t) ? folded_line(text, t) : text;
}

/* A machine calibrated under one rule (-a nccl) answers for the others on
 * its fitted values, which no log checked for them: say so. */
static void fitted_note(const topo_t *t) {
    const topo_calib_t *k = &topo_params_c(t)->calib;
    char fitted[160];
    if (!k->present || strcmp(k->algo, "auto") == 0) return;
    cmd_fitted_rule(k, fitted, sizeof fitted);
    fprintf(stderr, "baton select: note: %s was calibrated with %s; the other algorithms' times use its fitted values, "
            "which no log checked for them (--vs-nccl adds NCCL's column)\n", topo_name(t), fitted);
}

static int run(select_args_t *a, select_req_t *q, char *colls, char *algos) {
    baton_err_t e = {0};
    const char *cw[COLL_COUNT], *aw[64], *why;
    int nc = words(colls, cw, COLL_COUNT);
    for (int i = 0; i < nc; i++) {
        int c = coll_parse(cw[i]);
        if (c < 0) return cmd_usage("select", "unknown collective '%s'%s", cw[i], coll_hint(cw[i]));
        q->colls[q->ncolls++] = (coll_t)c;
    }
    if (algos) { q->algos = aw; q->nalgos = words(algos, aw, 64); }
    for (int i = 0; i < q->nalgos; i++) {          /* a name no asked collective has is a typo, not an empty row */
        int found = msccl_is(aw[i]);
        for (int c = 0; c < q->ncolls && !found; c++) found = algo_find(q->colls[c], aw[i]) != NULL;
        if (!found)
            return cmd_usage("select", "--algos: no algorithm '%s' for %s%s (see `baton algos -c %s`)", aw[i], a->colls,
                             algo_hint(q->colls[0], aw[i]), coll_name(q->colls[0]));
    }
    uint64_t *sizes;
    if (select_parse_sizes(a->sizes, &sizes, &q->nsizes, &why) < 0) return cmd_usage("select", "--sizes %s: %s", a->sizes, why);
    cmd_sizes_note("select", a->sizes, sizes, q->nsizes);
    q->sizes = sizes;
    topo_t *t = cmd_load_topo_folded(a->topo, a->sets.v, a->sets.n, a->fold, &e);
    if (t) fitted_note(t);
    select_table_t tab = {0};
    char *text = NULL;
    int rc = t ? select_run(t, q, &tab, &e) : -1;
    int whole = cmd_unfold(rc, &t, a->topo, a->sets.v, a->sets.n, &e);   /* a cell needs every rank */
    if (whole) select_free(&tab), rc = whole > 0 ? select_run(t, q, &tab, &e) : -1;
    int won = 0;
    for (int i = 0; rc == 0 && i < tab.nrows; i++) won |= tab.rows[i].winner >= 0;
    if (rc == 0 && !won && !strcmp(a->format, "nccl-tuner"))      /* a file of comments alone: NCCL would run untuned */
        rc = err_set(&e, BATON_EINVAL, "--format nccl-tuner: no size has a row NCCL runs%s, so the file would hold no "
                     "rule; leave --algos out, or name rows NCCL has (baton algos lists them)",
                     q->nalgos ? " among --algos" : "");
    int g = t ? topo_params_c(t)->group_size : 0, nnodes = g > 0 && t ? topo_whole_ranks(t) / g : 1;
    algo_opts_t used = q->opts;
    if (t) form_opts(t, &used);                  /* the channels the times assumed */
    if (rc == 0 && !(text = render(&tab, a, t, nnodes, used.channels > 0 ? used.channels : 1))) rc = err_set(&e, BATON_ENOMEM, "out of memory");
    if (rc == 0) rc = emit(text, a->output, &e);
    if (rc == 0 && a->plot) rc = plot_select(&tab, a->plot, &e);
    free(text);
    select_free(&tab);
    topo_free(t);
    free(sizes);
    return rc < 0 ? cmd_fail("select", &e) : EXIT_OK;
}

int cmd_select(int argc, char **argv) {
    select_args_t a = {.sizes = "8B:1GiB", .format = "table", .proto = RUN_PROTO_AUTO, .fold = CMD_FOLD_NODES};
    int rc = parse(argc, argv, &a);
    if (rc) return rc == 1 ? EXIT_OK : rc;
    char colls[256], algos[1024];
    snprintf(colls, sizeof colls, "%s", a.colls);
    if (a.algos) snprintf(algos, sizeof algos, "%s", a.algos);
    int tuner = !strcmp(a.format, "nccl-tuner");
    select_req_t q = {.proto = tuner && a.proto == PROTO_NONE ? RUN_PROTO_AUTO : a.proto, .model = a.model,
                      .nccl_only = tuner, .opts = a.opts, .contention = a.contention, .vs_nccl = a.vs_nccl,
                      .jobs = a.model == SELECT_CLOSED ? 1 : par_jobs()};   /* formulas take less than a fork */
    return run(&a, &q, colls, a.algos ? algos : NULL);
}
