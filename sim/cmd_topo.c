/* cmd_topo.c - `baton topo FILE [--check]`: what the file describes. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "../topologies/topo_yaml.h"
#include "../topologies/units.h"
#include "cmd.h"

static const char help[] =
    "usage: baton topo TOPO.yaml [--check]\n"
    "\n"
    "Print a summary of the topology: ranks, nodes by kind, links, each rank's\n"
    "injection bandwidth, and the uniform alpha/beta/gamma a closed form sees.\n"
    "With --check only validate the file (exit 0 if it is fine, 1 with a\n"
    "file:line:col message if not).\n";

static void summary(topo_t *t, const cost_model_t *m) {
    int kinds[NODE_KIND_COUNT] = {0};
    for (int i = 0; i < topo_nnodes(t); i++) kinds[topo_node(t, i)->kind]++;
    printf("topology %s: %d ranks, %d nodes (", topo_name(t), topo_nranks(t), topo_nnodes(t));
    for (int k = 0, first = 1; k < NODE_KIND_COUNT; k++)
        if (kinds[k]) { printf("%s%d %s", first ? "" : ", ", kinds[k], topo_kind_name((node_kind_t)k)); first = 0; }
    printf("), %d full-duplex links\n", topo_nlinks(t) / 2);
    const topo_params_t *p = topo_params_c(t);
    if (p->ports == 0) printf("  ports per rank  unlimited (multi-port)\n");
    else printf("  ports per rank  %d%s\n", p->ports, p->ports == 1 ? " (single-port)" : "");
    if (p->reduce_bw > 0) printf("  reduce          %.4g GB/s\n", p->reduce_bw / 1e9);
    else printf("  reduce          free (reduce_bw 0)\n");
    printf("  sends in flight %d per stream (max_inflight)\n", p->max_inflight);
    for (int r = 0; r < topo_nranks(t); r++) {
        int node = topo_rank_node(t, r);
        double inj = 0;
        for (int l = 0; l < topo_nlinks(t); l++)
            if (topo_dlink(t, l)->src == node) inj += topo_dlink(t, l)->bw;
        printf("  rank %-4d %-12s injection %.4g GB/s\n", r, topo_rank_name(t, r), inj / 1e9);
    }
    char a[64];
    units_fmt_time(m->alpha, a, sizeof a);
    printf("  closed forms see alpha %s, bandwidth %.4g GB/s\n", a, m->beta > 0 ? 1e-9 / m->beta : 0);
}

int cmd_topo(int argc, char **argv) {
    static const struct option opts[] = {{"check", no_argument, 0, 'c'},
                                         {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    int ch, check = 0;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (ch == 'c') check = 1;
        else if (ch == 'h') { fputs(help, stdout); return EXIT_OK; }
        else return cmd_usage("topo", "unknown option '%s'", argv[optind - 1]);
    }
    if (optind != argc - 1) return cmd_usage("topo", "expected one topology file");
    baton_err_t e = {0};
    topo_t *t = topo_yaml_load(argv[optind], &e);
    if (t == NULL) return cmd_fail("topo", &e);
    cost_model_t m;
    if (topo_cost_model(t, &m, &e) < 0) { topo_free(t); return cmd_fail("topo", &e); }
    if (check) printf("%s: ok (%d ranks)\n", argv[optind], topo_nranks(t));
    else summary(t, &m);
    topo_free(t);
    return EXIT_OK;
}
