/* main.c - `baton`: dispatch to a subcommand. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cmd.h"
#include "run.h"

static const char usage[] =
    "baton - how long will this collective take on this machine, and why?\n"
    "\n"
    "usage: baton COMMAND [options]    (baton COMMAND --help for details)\n"
    "\n"
    "commands:\n"
    "  sim       simulate a collective on a topology (discrete-event, byte-accurate)\n"
    "  predict   the same question answered by the algorithm's closed form\n"
    "  kids      the candy kids: naive 24 s, tree 16 s, ring 6 s, with their tables\n"
    "  topo      summarise or check a topology file\n"
    "  plan      NCCL's plan on the machine: paths, rings, and per size what runs\n"
    "  algos     list the algorithms with their cost formulas and requirements\n"
    "  select    which algorithm wins at which size: tables, crossovers, NCCL tuner\n"
    "            files, plots\n"
    "  tp        what tensor parallelism costs a transformer's forward pass\n"
    "  sweep     one collective over a grid of topology parameters and sizes\n"
    "  validate  the model against nccl-tests logs: error per size, MAPE\n"
    "  calibrate fit the topology to nccl-tests logs; write the calibrated file\n"
    "\n"
    "Every command that reads a topology takes --set name=value (repeatable) to\n"
    "override the file's parameters (baton topo FILE lists them) or ports,\n"
    "reduce_bw, max_inflight and group_size.\n"
    "\n"
    "example:\n"
    "  baton sim -t topologies/hgx-h100.yaml -c allreduce -a ring -s 1GiB --verify\n";

int cmd_usage(const char *cmd, const char *fmt, ...) {
    va_list ap;
    fprintf(stderr, "baton %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n(see: baton %s --help)\n", cmd);
    return EXIT_USAGE;
}

int cmd_add_set(const char *cmd, cmd_sets_t *s, const char *arg) {
    if (s->n == (int)(sizeof s->v / sizeof s->v[0])) return cmd_usage(cmd, "too many --set options");
    if (strchr(arg, '=') == NULL) return cmd_usage(cmd, "--set %s: write --set name=value", arg);
    s->v[s->n++] = arg;
    return 0;
}

int cmd_write_file(const char *path, const char *text, size_t len) {
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (f == NULL) return -1;
    int ok = fwrite(text, 1, len, f) == len;
    if (fclose(f) != 0) ok = 0;
    if (ok && rename(tmp, path) == 0) return 0;
    remove(tmp);
    return -1;
}

int cmd_parse_proto(const char *arg) {
    return strcasecmp(arg, "auto") == 0 ? RUN_PROTO_AUTO : proto_parse(arg);
}

int cmd_fail(const char *cmd, const baton_err_t *e) {
    fprintf(stderr, "baton %s: %s\n", cmd, e->msg[0] ? e->msg : err_str(e->code));
    return EXIT_INPUT;
}

int main(int argc, char **argv) {
    if (argc < 2) { fputs(usage, stderr); return EXIT_USAGE; }
    const char *c = argv[1];
    if (!strcmp(c, "-h") || !strcmp(c, "--help") || !strcmp(c, "help")) { fputs(usage, stdout); return EXIT_OK; }
    if (!strcmp(c, "sim")) return cmd_sim(argc - 1, argv + 1, 0);
    if (!strcmp(c, "predict")) return cmd_sim(argc - 1, argv + 1, 1);
    if (!strcmp(c, "kids")) return cmd_kids(argc - 1, argv + 1);
    if (!strcmp(c, "topo")) return cmd_topo(argc - 1, argv + 1);
    if (!strcmp(c, "plan")) return cmd_plan(argc - 1, argv + 1);
    if (!strcmp(c, "algos")) return cmd_algos(argc - 1, argv + 1);
    if (!strcmp(c, "select")) return cmd_select(argc - 1, argv + 1);
    if (!strcmp(c, "tp")) return cmd_tp(argc - 1, argv + 1);
    if (!strcmp(c, "sweep")) return cmd_sweep(argc - 1, argv + 1);
    if (!strcmp(c, "validate")) return cmd_validate(argc - 1, argv + 1, 0);
    if (!strcmp(c, "calibrate")) return cmd_validate(argc - 1, argv + 1, 1);
    fprintf(stderr, "baton: unknown command '%s'\n\n%s", c, usage);
    return EXIT_USAGE;
}
