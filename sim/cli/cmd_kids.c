/* cmd_kids.c - `baton kids`: the candy story told by the simulator. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../topologies/topo_yaml.h"
#include "cmd.h"
#include "../teach/kids.h"
#include "../teach/lesson.h"

static const char help[] =
    "usage: baton kids [--method naive|tree|ring|all] [--kids N | -t TOPO.yaml]\n"
    "                  [--html FILE [--ops] [--states FILE]]\n"
    "\n"
    "Four kids each counted four colours of candy; all of them need the totals.\n"
    "One number to one person at a time, one second per number. The simulator\n"
    "runs each method on the kids' topology (default candy-kids, the shipped file)\n"
    "with the story's counts (Anna 1 2 3 4, Ben 10 20 30 40, ...) and prints how\n"
    "long it takes, who handed what to whom, and each kid's load. Data mode\n"
    "proves that every kid ends with 1111 2222 3333 4444.\n"
    "\n"
    "  -m, --method NAME   naive, tree, ring or all (default all)\n"
    "  -t, --topo FILE     the kids' topology\n"
    "      --kids N        N kids (2..64) instead, everyone in earshot: the post's\n"
    "                      20 kids make Anna hear 76 numbers (naive 152 s), 64 kids\n"
    "                      pair up in 12 rounds\n"
    "      --set K=V       override a topology parameter\n"
    "      --html FILE     a page to step through in a browser instead (one file,\n"
    "                      no network): the methods side by side on one clock,\n"
    "                      each kid's numbers and who hands what to whom; keys:\n"
    "                      right/left step, space play, Home/End (up to 16 kids)\n"
    "      --ops           with --html: the operations on 4 GPUs x 4 chunks instead\n"
    "                      (broadcast, reduce, reduce-scatter, all-gather, all-reduce,\n"
    "                      all-to-all): each one's contract, then any algorithm of\n"
    "                      the catalogue performing it\n"
    "      --states FILE   with --html: the simulator's buffers after every step\n"
    "                      (JSON; what the browser test holds the page to)\n"
    "  -h, --help          this text\n\n"
    "example:\n"
    "  baton kids --method ring\n"
    "  baton kids --html kids.html\n";

static int tell(const char *method, topo_t *t) {
    kids_run_t k;
    baton_err_t e = {0};
    if (kids_run(t, method, &k, &e) < 0) { kids_run_free(&k); return cmd_fail("kids", &e); }
    char *text = kids_format(&k, t);
    kids_run_free(&k);
    if (text == NULL) return cmd_fail("kids", &(baton_err_t){BATON_ENOMEM, "out of memory"});
    fputs(text, stdout);
    free(text);
    return EXIT_OK;
}

/* --html: the story (or the operations) as a page to step through. */
static int page(topo_t *t, const char *const *methods, int n, int ops, const char *html, const char *states) {
    lesson_out_t l;
    baton_err_t e = {0};
    int rc = ops ? lesson_ops(t, &l, &e) : lesson_kids(t, methods, n, &l, &e);
    topo_free(t);
    if (rc < 0) return cmd_fail("kids", &e);
    return cmd_write_lesson("kids", &l, html, states);
}

int cmd_kids(int argc, char **argv) {
    static const struct option opts[] = {{"method", required_argument, 0, 'm'},
                                         {"topo", required_argument, 0, 't'},
                                         {"set", required_argument, 0, 'S'}, {"kids", required_argument, 0, 'k'},
                                         {"html", required_argument, 0, 'H'}, {"ops", no_argument, 0, 'O'},
                                         {"states", required_argument, 0, 'X'},
                                         {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    cmd_sets_t sets = {0};
    const char *method = "all", *path = "candy-kids", *html = NULL, *states = NULL;   /* shipped: the search path */
    int ch, nkids = 0, ops = 0;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":m:t:h", opts, NULL)) != -1) {
        if (ch == 'm') method = optarg;
        else if (ch == 't') path = optarg;
        else if (ch == 'k') {
            char *end;
            long k = strtol(optarg, &end, 10);
            if (end == optarg || *end || k < 2 || k > KIDS_MAX) return cmd_usage("kids", "--kids must be 2..%d, not '%s'", KIDS_MAX, optarg);
            nkids = (int)k;
        }
        else if (ch == 'S') { if (cmd_add_set("kids", &sets, optarg)) return EXIT_USAGE; }
        else if (ch == 'H') { if (cmd_out_file("kids", "--html", optarg, &html)) return EXIT_USAGE; }
        else if (ch == 'O') ops = 1;
        else if (ch == 'X') { if (cmd_out_file("kids", "--states", optarg, &states)) return EXIT_USAGE; }
        else if (ch == 'h') { fputs(help, stdout); return EXIT_OK; }
        else if (ch == ':') return cmd_usage("kids", "option %s needs a value", argv[optind - 1]);
        else return cmd_usage("kids", "unknown option '%s'", argv[optind - 1]);
    }
    if (optind < argc) return cmd_usage("kids", "unexpected argument '%s'", argv[optind]);
    if ((ops || states) && html == NULL) return cmd_usage("kids", "--ops and --states go with --html FILE");
    if (ops && strcmp(method, "all") != 0) return cmd_usage("kids", "--ops shows every algorithm: no --method");
    static const char *const all[] = {"naive", "tree", "ring", NULL};
    int one = strcmp(method, "all") != 0;
    if (one && strcmp(method, "naive") && strcmp(method, "tree") && strcmp(method, "ring"))
        return cmd_usage("kids", "unknown method '%s' (naive, tree, ring or all)", method);
    baton_err_t e = {0};
    topo_t *t = nkids ? kids_machine(nkids, &e) : cmd_load_topo(path, sets.v, sets.n, &e);
    if (t == NULL) return cmd_fail("kids", &e);
    if (html) return page(t, one ? &method : all, one ? 1 : 3, ops, html, states);
    char *premise = kids_premise(t);
    if (premise) fputs(premise, stdout), putchar('\n');
    free(premise);
    int rc = EXIT_OK;
    for (int i = 0; rc == EXIT_OK && (one ? i < 1 : all[i] != NULL); i++) {
        if (i) putchar('\n');
        rc = tell(one ? method : all[i], t);
    }
    topo_free(t);
    return rc;
}
