/* main.c - `baton`: dispatch to a subcommand (the helpers they share: cmd.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


#include "../../util/progress.h"
#include "../../util/suggest.h"
#include "cmd.h"
#include "cmd_doctor.h"

#ifndef BATON_VERSION
#define BATON_VERSION "0.4.0"
#endif

static const char usage[] =
    "baton - how long will this collective take on this machine, and why?\n"
    "\n"
    "usage: baton COMMAND [options]    (baton help COMMAND, or baton COMMAND --help)\n"
    "       baton --version\n"
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
    "  concurrent several collectives in one simulation, sharing the machine\n"
    "  step      where a model's step goes: compute, memory, transport, overhead\n"
    "  gpus      the GPUs baton knows: peak FLOP/s, HBM, launch cost\n"
    "  sweep     one collective over a grid of topology parameters and sizes\n"
    "  validate  the model against nccl-tests logs: error per size, MAPE\n"
    "  calibrate fit the topology to nccl-tests logs; write the calibrated file\n"
    "  expect    the nccl-tests table a machine should give, with its band\n"
    "  doctor    is this nccl-tests log healthy? if not, its likely causes, ranked\n"
    "  export    a catalogue algorithm as MSCCL XML (--msccl); a small Chakra\n"
    "            trace (--chakra)\n"
    "  replay    a Chakra execution trace on a machine: the step's time, where it\n"
    "            went, a timeline\n"
    "\n"
    "Every command that reads a topology takes --set name=value (repeatable) to\n"
    "override the file's parameters or its values (ports, reduce_bw, channels,\n"
    "launch, stage_bw, ...); baton topo FILE lists both.\n"
    "\n"
    "example:\n"
    "  baton sim -t topologies/hgx-h100.yaml -c allreduce -a ring -s 1GiB --verify\n";

/* The subcommands; predict and calibrate share sim's and validate's code. */
static int run_sim(int argc, char **argv) { return cmd_sim(argc, argv, 0); }
static int run_predict(int argc, char **argv) { return cmd_sim(argc, argv, 1); }
static int run_validate(int argc, char **argv) { return cmd_validate(argc, argv, 0); }
static int run_calibrate(int argc, char **argv) { return cmd_validate(argc, argv, 1); }

static const struct { const char *name; int (*fn)(int, char **); } commands[] = {
    {"sim", run_sim}, {"predict", run_predict}, {"kids", cmd_kids}, {"topo", cmd_topo}, {"plan", cmd_plan},
    {"algos", cmd_algos}, {"select", cmd_select}, {"tp", cmd_tp}, {"concurrent", cmd_concurrent}, {"step", cmd_step}, {"gpus", cmd_gpus}, {"sweep", cmd_sweep},
    {"validate", run_validate}, {"calibrate", run_calibrate}, {"expect", cmd_expect}, {"doctor", cmd_doctor}, {"export", cmd_export},
    {"replay", cmd_replay},
};
#define NCOMMANDS ((int)(sizeof commands / sizeof commands[0]))

static int find_command(const char *name) {
    for (int i = 0; i < NCOMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0) return i;
    return -1;
}

static int unknown_command(const char *name) {
    const char *names[NCOMMANDS + 1];
    for (int i = 0; i < NCOMMANDS; i++) names[i] = commands[i].name;
    names[NCOMMANDS] = NULL;
    /* Only the suggestion and where to look: the whole usage would bury it. */
    fprintf(stderr, "baton: unknown command '%s'%s\n(see: baton --help)\n", name, suggest_hint(name, names));
    return EXIT_USAGE;
}

/* Does the command line ask for JSON (--json, --format json or jsonl)?
 * Then no progress line, even forced: a script reads that output. */
static int json_asked(int argc, char **argv) {
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--json") || !strncmp(argv[i], "--format=json", 13) ||
            (!strcmp(argv[i], "--format") && i + 1 < argc && !strncmp(argv[i + 1], "json", 4)))
            return 1;
    return 0;
}

/* What a command printed reached standard output whole, or its exit says
 * it did not: a full disk under `baton sweep ... > whole.csv` must not leave
 * a cut file and exit 0. A command's own failure keeps its code. */
static int output_written(const char *name, int rc) {
    errno = 0;
    if (fflush(stdout) == 0 && !ferror(stdout)) return rc;
    fprintf(stderr, "baton %s: cannot write standard output%s%s: what it printed is incomplete\n", name,
            errno ? ": " : "", errno ? strerror(errno) : "");
    return rc ? rc : EXIT_INPUT;
}

/* The command, with a progress line on stderr while it works (util/progress.h). */
static int run_command(int i, int argc, char **argv) {
    progress_begin(stderr, progress_wanted(isatty(STDERR_FILENO), json_asked(argc, argv), getenv("BATON_NO_PROGRESS"),
                                           getenv("BATON_PROGRESS")));
    int rc = commands[i].fn(argc, argv);
    progress_end();
    return output_written(commands[i].name, rc);
}

int main(int argc, char **argv) {
    if (argc < 2) { fputs(usage, stderr); return EXIT_USAGE; }
    const char *c = argv[1];
    if (!strcmp(c, "--version") || !strcmp(c, "version")) {
        printf("baton %s\n", BATON_VERSION);
        return output_written("--version", EXIT_OK);
    }
    if (!strcmp(c, "-h") || !strcmp(c, "--help") || (!strcmp(c, "help") && argc == 2)) {
        fputs(usage, stdout);
        return output_written("--help", EXIT_OK);
    }
    if (!strcmp(c, "help")) {                            /* baton help CMD = baton CMD --help */
        int i = find_command(argv[2]);
        if (i < 0) return unknown_command(argv[2]);
        char *args[] = {argv[2], "--help", NULL};
        return output_written(commands[i].name, commands[i].fn(2, args));
    }
    int i = find_command(c);
    return i < 0 ? unknown_command(c) : run_command(i, argc - 1, argv + 1);
}
