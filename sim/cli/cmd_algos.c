/* cmd_algos.c - `baton algos`: the registry, with formulas and requirements. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "../../algorithms/algo.h"
#include "cmd.h"
#include "../answer/report.h"

static const char help[] =
    "usage: baton algos [-c COLLECTIVE] [--json]\n"
    "\n"
    "List every (collective, algorithm) with its closed-form cost (a = alpha per\n"
    "message, b = beta per byte, g = gamma per byte reduced, n = bytes, p = ranks),\n"
    "what it requires, and the port model the formula is exact for.\n\n"
    "example:\n"
    "  baton algos -c allreduce\n";

int cmd_algos(int argc, char **argv) {
    static const struct option opts[] = {{"coll", required_argument, 0, 'c'}, {"json", no_argument, 0, 'j'},
                                         {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    int ch, json = 0, coll = -1;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":c:h", opts, NULL)) != -1) {
        if (ch == 'c' && (coll = coll_parse(optarg)) < 0) return cmd_usage("algos", "unknown collective '%s'%s", optarg, coll_hint(optarg));
        else if (ch == 'j') json = 1;
        else if (ch == 'h') { fputs(help, stdout); return EXIT_OK; }
        else if (ch == ':') return cmd_usage("algos", "option %s needs a value", argv[optind - 1]);
        else if (ch != 'c') return cmd_usage("algos", "unknown option '%s'", argv[optind - 1]);
    }
    if (optind < argc) return cmd_usage("algos", "unexpected argument '%s'", argv[optind]);
    if (json) {
        char *s = report_algos_json(coll);
        if (s == NULL) return cmd_fail("algos", &(baton_err_t){BATON_ENOMEM, "out of memory"});
        puts(s);
        free(s);
        return EXIT_OK;
    }
    const algo_t *const *rows = algo_all();
    for (int c = 0; c < COLL_COUNT; c++) {          /* grouped by collective */
        if (coll >= 0 && c != coll) continue;
        printf("%s%s\n", c > 0 && coll < 0 ? "\n" : "", coll_name((coll_t)c));
        for (int i = 0; rows[i]; i++) {
            if ((int)rows[i]->coll != c) continue;
            printf("  %-18s %s\n", rows[i]->name, rows[i]->idea);
            printf("  %-18s cost      %s\n", "", rows[i]->cost_text);
            printf("  %-18s requires  %s\n", "", rows[i]->requires);
            printf("  %-18s exactness %s\n", "", rows[i]->port_model);
        }
    }
    return EXIT_OK;
}
