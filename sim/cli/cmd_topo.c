/* cmd_topo.c - `baton topo FILE [--check] [--dot] [--set K=V]`. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../topologies/flow.h"
#include "../../topologies/import.h"
#include "../../topologies/knobs.h"
#include "../../topologies/topo_yaml.h"
#include "../../topologies/units.h"
#include "cmd.h"

static const char help[] =
    "usage: baton topo TOPO.yaml [--check | --dot] [--set K=V ...]\n"
    "       baton topo import nvsmi|nccl-xml FILE [-o OUT.yaml] [--name NAME] [--gpus FILE]\n"
    "\n"
    "Summarise the topology: its parameters and its values (ports, reduce_bw,\n"
    "channels, launch, stage_bw, ...: both override with --set), ranks, nodes\n"
    "by kind, link classes, each rank's injection bandwidth, the bisection\n"
    "bandwidth between the two halves of the ranks (a max-flow min cut), and the\n"
    "uniform alpha/beta/gamma the closed forms see.\n"
    "  --check   only validate (exit 0 if fine, 1 with file:line:col if not)\n"
    "  --dot     write the graph in Graphviz DOT to standard output\n"
    "\n"
    "import nvsmi FILE: a machine file from `nvidia-smi topo -m` output (FILE may be a\n"
    "log that holds the matrix): NV# pairs get # NVLinks, PIX/PXB pairs a PCIe switch,\n"
    "SYS pairs different sockets; bandwidths are parameters (nvlink_gbps, pcie_bw,\n"
    "sys_bw); device lines naming a GPU baton knows (nccl-tests', nvidia-smi -L's) add\n"
    "gpu:, arch: and reduce_bw; --gpus FILE reads them from `nvidia-smi -L` or `nvidia-smi\n"
    "-q` output kept beside the matrix (also: a second FILE after the first). What the\n"
    "files do not say and the machine assumes (NVLink at its line rate, the sockets'\n"
    "link; with no GPU named, a free reduction, PCIe Gen3, NCCL's Ampere tables) is\n"
    "written in the file's header and said on standard error, one warning each.\n"
    "Written to OUT.yaml (whole or not at all) or standard output.\n"
    "import nccl-xml FILE: the same from NCCL's topology XML (NCCL_TOPO_DUMP_FILE or an\n"
    "NCCL_TOPO_FILE): CPUs, PCIe switches and devices at their link speed, NICs,\n"
    "NVLinks to peers or to an NVSwitch.\n"
    "example:\n"
    "  baton topo hgx-h100\n"
    "  baton topo import nvsmi topo.txt -o mybox.yaml && baton plan -t mybox.yaml\n"
    "  nvidia-smi topo -m > topo.txt; nvidia-smi -L > gpus.txt\n"
    "  baton topo import nvsmi topo.txt --gpus gpus.txt -o mybox.yaml\n";

/* Each IMPORT_ASSUMED line of an imported machine (and the lines that
 * continue it, "#   ..."), as one warning on stderr. */
static void say_assumed(const char *yaml, const char *path) {
    size_t k = strlen(IMPORT_ASSUMED);
    for (const char *l = strstr(yaml, IMPORT_ASSUMED); l; l = strstr(l + k, IMPORT_ASSUMED)) {
        if (l != yaml && l[-1] != '\n') continue;
        fprintf(stderr, "baton topo import: warning: %s: assumed ", path);
        for (const char *p = l + k;;) {
            const char *nl = strchr(p, '\n');
            fwrite(p, 1, nl ? (size_t)(nl - p) : strlen(p), stderr);
            if (!nl || strncmp(nl + 1, "#   ", 4) != 0) break;
            fputc(' ', stderr);
            p = nl + 5;
        }
        fputc('\n', stderr);
    }
}

/* `baton topo import nvsmi FILE [-o OUT] [--name NAME]`. */
static int import_cmd(int argc, char **argv) {
    static const struct option opts[] = {{"output", required_argument, 0, 'o'}, {"name", required_argument, 0, 'n'},
                                         {"gpus", required_argument, 0, 'g'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    const char *out = NULL, *name = "imported", *gpus = NULL;
    int ch;
    optind = 1;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
        if (ch == 'o') { if (cmd_out_file("topo import", "-o", optarg, &out)) return EXIT_USAGE; }
        else if (ch == 'n') name = optarg;
        else if (ch == 'g') gpus = optarg;
        else if (ch == 'h') { fputs(help, stdout); return EXIT_OK; }
        else if (ch == ':') return cmd_usage("topo import", "option %s needs a value", argv[optind - 1]);
        else return cmd_usage("topo import", "unknown option '%s'", argv[optind - 1]);
    }
    int xml = optind + 2 == argc && strcmp(argv[optind], "nccl-xml") == 0;
    if (!xml && optind + 3 == argc && strcmp(argv[optind], "nvsmi") == 0 && gpus == NULL) gpus = argv[--argc];   /* FILE GPUS */
    if (optind + 2 != argc || (!xml && strcmp(argv[optind], "nvsmi") != 0))
        return cmd_usage("topo import", "expected: import nvsmi FILE [GPUS] or import nccl-xml FILE");
    if (xml && gpus) return cmd_usage("topo import", "--gpus is nvsmi's (NCCL's XML names its GPUs' architecture itself)");
    baton_err_t e = {0};
    char *yaml = NULL;
    int rc0 = xml ? import_nccl_xml(argv[optind + 1], name, &yaml, &e)
                  : import_nvsmi_gpus(argv[optind + 1], gpus, name, &yaml, &e);
    if (rc0 < 0) return cmd_fail("topo import", &e);
    say_assumed(yaml, argv[optind + 1]);
    if (strstr(yaml, IMPORT_NO_NVLINK))
        fprintf(stderr, "baton topo import: warning: %s names no NVLink (NCCL reads them from the driver); the "
                "machine is PCIe only: if its GPUs have NVLink, import NCCL_TOPO_DUMP_FILE's dump or `nvidia-smi "
                "topo -m`\n", argv[optind + 1]);
    int rc = EXIT_OK;
    if (out == NULL) fputs(yaml, stdout);
    else if (cmd_write_file(out, yaml, strlen(yaml), &e) < 0) rc = cmd_fail("topo import", &e);
    free(yaml);
    return rc;
}

static void params(const topo_t *t) {
    if (topo_nparams(t) == 0) return;
    printf("  parameters     ");
    for (int i = 0; i < topo_nparams(t); i++) {
        const char *n, *v;
        topo_param_at(t, i, &n, &v);
        printf("%s%s=%s", i ? ", " : "", n, v);
    }
    printf("\n");
}

/* The machine's values --set also takes (topologies/knobs.h), wrapped. */
static void values(const topo_t *t) {
    const char *indent = "                 ";      /* under the first value */
    int col = printf("  values         ");
    for (int i = 0; knobs_name(i); i++) {
        char v[48], item[96];
        knobs_format(topo_params_c(t), i, v, sizeof v);
        int w = snprintf(item, sizeof item, "%s=%s%s", knobs_name(i), v, knobs_name(i + 1) ? "," : "");
        if (i > 0 && col + 1 + w > 98) col = printf("\n%s", indent) - 2;
        else if (i > 0) col += printf(" ");
        col += printf("%s", item);
    }
    printf("\n");
}

/* Distinct (class, bandwidth, latency) among the full-duplex links; a
 * class's efficiency (link_efficiency:, calibration) beside it. */
static void link_classes(const topo_t *t) {
    int n = topo_nlinks(t) / 2, nc = 0;
    struct lc { char name[24]; double bw, lat, count; } *cls = calloc((size_t)n + 1, sizeof *cls);
    for (int l = 0; cls && l < n; l++) {
        const topo_dlink_t *d = topo_dlink(t, 2 * l);
        char name[24];
        int k = 0;
        topo_link_class(t, 2 * l, name, sizeof name);
        while (k < nc && !(cls[k].bw == d->bw && cls[k].lat == d->lat && !strcmp(cls[k].name, name))) k++;
        if (k == nc) { strcpy(cls[nc].name, name); cls[nc].bw = d->bw; cls[nc].lat = d->lat; nc++; }
        cls[k].count++;
    }
    for (int k = 0; k < nc; k++) {
        char lat[64], eff[48] = "";
        double e = topo_class_efficiency(t, cls[k].name);
        units_fmt_time(cls[k].lat, lat, sizeof lat);
        if (fabs(e - 1) > 1e-6) snprintf(eff, sizeof eff, "  (efficiency %.3g of %g GB/s)", e, cls[k].bw / e / 1e9);
        printf("  link class     %5.0f x %-13s %g GB/s, %s%s\n", cls[k].count, cls[k].name, cls[k].bw / 1e9, lat, eff);
    }
    free(cls);
}

/* A calibrated machine's record: the rule it was fitted under and its errors. */
static void calibration(const topo_t *t) {
    const topo_calib_t *k = &topo_params_c(t)->calib;
    if (!k->present) return;
    char rule[160];
    cmd_fitted_rule(k, rule, sizeof rule);
    printf("  calibration    %s", rule);
    if (k->mape_pct >= 0) printf(": MAPE %.2f %% in sample", k->mape_pct);
    if (k->cv_mape_pct >= 0) printf(", %.2f %% held out", k->cv_mape_pct);
    if (k->band_lo_pct < k->band_hi_pct) printf("; 90 %% of held-out errors in [%+.1f %%, %+.1f %%]", k->band_lo_pct, k->band_hi_pct);
    printf("\n");
    if (k->nccl[0]) printf("                 logs of NCCL %s\n", k->nccl);
    if (k->nseen) {
        char seen[512];
        cmd_seen_text(k, seen, sizeof seen);
        printf("                 fitted on %s (predictions there carry the band)\n", seen);
    }
}

static double injection(const topo_t *t, int r) {
    int node = topo_rank_node(t, r);
    double inj = 0;
    for (int l = 0; l < topo_nlinks(t); l++)
        if (topo_dlink(t, l)->src == node) inj += topo_dlink(t, l)->bw;
    return inj;
}

static void summary(topo_t *t, const cost_model_t *m) {
    int kinds[NODE_KIND_COUNT] = {0}, p = topo_nranks(t);
    for (int i = 0; i < topo_nnodes(t); i++) kinds[topo_node(t, i)->kind]++;
    printf("topology %s: %d ranks, %d nodes (", topo_name(t), p, topo_nnodes(t));
    for (int k = 0, first = 1; k < NODE_KIND_COUNT; k++)
        if (kinds[k]) { printf("%s%d %s", first ? "" : ", ", kinds[k], topo_kind_name((node_kind_t)k)); first = 0; }
    printf("), %d full-duplex links\n", topo_nlinks(t) / 2);
    params(t);
    values(t);
    const topo_params_t *tp = topo_params_c(t);
    if (tp->ports == 0) printf("  ports per rank unlimited (multi-port)\n");
    else printf("  ports per rank %d%s\n", tp->ports, tp->ports == 1 ? " (single-port)" : "");
    if (tp->reduce_bw > 0) printf("  reduce         %.4g GB/s\n", tp->reduce_bw / 1e9);
    else printf("  reduce         free (reduce_bw 0)\n");
    if (tp->group_size) printf("  groups         %d ranks each (%d groups)\n", tp->group_size, p / tp->group_size);
    if (tp->channels) printf("  channels       %d by default (rings side by side)\n", tp->channels);
    if (tp->ll_scan > 0)
        printf("  proxy          %.3g ns a line: NCCL's network proxy reads each LL line's flags before it sends (ll_scan)\n",
               tp->ll_scan * 1e9);
    int nodes_reduce = topo_nvls_reducers(t);
    if (nodes_reduce == 1) printf("  reduce in      1 switch (NVLS: -a nvls)\n");
    if (nodes_reduce > 1)
        printf("  reduce in      %d switches, one a node (NVLS: -a nvlstree%s)\n", nodes_reduce, tp->sharp.rails ? ", collnet" : "");
    if (tp->sharp.rails)
        printf("  SHARP          %d fabric switches reduce: %d rail%s x %d lea%s%s (collnet%s)\n",
               topo_nreducers(t) - tp->sharp.first, tp->sharp.rails, tp->sharp.rails > 1 ? "s" : "", tp->sharp.leaves,
               tp->sharp.leaves > 1 ? "ves" : "f", tp->sharp.leaves > 1 ? " and a spine each" : "",
               tp->sharp.first ? ", collnet_ring" : "_ring");
    link_classes(t);
    calibration(t);
    char env[320];
    if (cmd_nccl_env_text(t, env, sizeof env)) printf("  nccl_env      %s (-a nccl picks and sizes within them)\n", env);
    double lo = 1e300, hi = 0;
    for (int r = 0; r < p; r++) {
        double inj = injection(t, r);
        lo = inj < lo ? inj : lo;
        hi = inj > hi ? inj : hi;
    }
    if (p > 1) {
        printf("  injection      %.4g GB/s per rank%s", lo / 1e9, lo == hi ? "" : " (least)");
        if (lo != hi) printf(", %.4g GB/s (most)", hi / 1e9);
        printf("\n");
    }
    if (p > 1) {                  /* cut between nodes where there are two or more: not through a node's NVLink */
        int g = topo_params_c(t)->group_size, h = g > 1 && g < p && p % g == 0 ? p / g / 2 * g : p / 2;
        double b = flow_between_halves(t, h);
        printf("  bisection      %.4g GB/s per direction (ranks 0..%d vs %d..%d), %.4g GB/s per rank\n",
               b / 1e9, h - 1, h, p - 1, b / 1e9 / (h < p - h ? h : p - h));
    }
    char a[64];
    units_fmt_time(m->alpha, a, sizeof a);
    if (p < 2) {
        printf("  closed forms   one rank: every collective is free (nothing moves)\n");
        return;
    }
    printf("  closed forms   alpha %s, bandwidth %.4g GB/s, %s\n", a, 1e-9 / m->beta,
           m->ports == 1 ? "single-port" : "multi-port");
}

/* s inside a DOT quoted string: a quote would end it early and a backslash
 * escape what follows (\n in a label), so both are escaped. */
static void dot_esc(const char *s) {
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') putchar('\\');
        putchar(*s);
    }
}

static void dot(const topo_t *t) {
    printf("graph \""), dot_esc(topo_name(t)), printf("\" {\n  node [shape=box, fontsize=10];\n");
    for (int i = 0; i < topo_nnodes(t); i++) {
        const topo_node_t *n = topo_node(t, i);
        printf("  \""), dot_esc(n->name), printf(n->rank >= 0 ? "\" [shape=ellipse, label=\"" : "\" [label=\"");
        dot_esc(n->name);
        if (n->rank >= 0) printf("\\nrank %d\"];\n", n->rank);
        else printf("\\n%s\"];\n", topo_kind_name(n->kind));
    }
    for (int l = 0; l < topo_nlinks(t); l += 2) {
        const topo_dlink_t *d = topo_dlink(t, l);
        printf("  \""), dot_esc(topo_node(t, d->src)->name), printf("\" -- \""), dot_esc(topo_node(t, d->dst)->name);
        printf("\" [label=\"%g GB/s\"];\n", d->bw / 1e9);
    }
    printf("}\n");
}

int cmd_topo(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "import") == 0) return import_cmd(argc - 1, argv + 1);
    static const struct option opts[] = {{"check", no_argument, 0, 'c'}, {"dot", no_argument, 0, 'd'},
                                         {"set", required_argument, 0, 'S'},
                                         {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    int ch, check = 0, want_dot = 0;
    cmd_sets_t sets = {0};
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        if (ch == 'c') check = 1;
        else if (ch == 'd') want_dot = 1;
        else if (ch == 'S') { if (cmd_add_set("topo", &sets, optarg)) return EXIT_USAGE; }
        else if (ch == 'h') { fputs(help, stdout); return EXIT_OK; }
        else if (ch == ':') return cmd_usage("topo", "option %s needs a value", argv[optind - 1]);
        else return cmd_usage("topo", "unknown option '%s'", argv[optind - 1]);
    }
    if (optind != argc - 1) return cmd_usage("topo", "expected one topology file");
    if (check && want_dot) return cmd_usage("topo", "--check or --dot, not both");
    baton_err_t e = {0};
    topo_t *t = cmd_load_topo(argv[optind], sets.v, sets.n, &e);
    if (t == NULL) return cmd_fail("topo", &e);
    cost_model_t m;
    if (topo_cost_model(t, &m, &e) < 0) { topo_free(t); return cmd_fail("topo", &e); }
    if (check) printf("%s: ok (%d ranks)\n", argv[optind], topo_nranks(t));
    else if (want_dot) dot(t);
    else summary(t, &m);
    topo_free(t);
    return EXIT_OK;
}
