/* main.c - `baton`: dispatch to a subcommand. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <dirent.h>
#include <stdlib.h>
#include <unistd.h>

#include "../topologies/topo_yaml.h"

#include "../models/suggest.h"
#include "cmd.h"
#include "run.h"

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

#ifndef BATON_SHARE
#define BATON_SHARE "/usr/local/share/baton"
#endif

/* The installed machines: PREFIX/share/baton/topologies beside the binary's
 * PREFIX/bin (so an install anywhere finds its own), else BATON_SHARE's. */
static const char *share_dir(char *buf, size_t n) {
    char exe[4096];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len > 0) {
        exe[len] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash && slash - exe >= 4 && strncmp(slash - 4, "/bin", 4) == 0) {
            snprintf(buf, n, "%.*s/share/baton/topologies", (int)(slash - 4 - exe), exe);
            if (access(buf, R_OK) == 0) return buf;
        }
    }
    snprintf(buf, n, "%s/topologies", BATON_SHARE);
    return buf;
}

/* Does dir/name or dir/name.yaml exist? Then path holds it. */
static int try_dir(const char *dir, size_t len, const char *name, char *path, size_t n) {
    static const char *const ext[] = {"", ".yaml"};
    for (int k = 0; k < 2; k++) {
        snprintf(path, n, "%.*s%s%s%s", (int)len, dir, len ? "/" : "", name, ext[k]);
        if (access(path, R_OK) == 0) return 1;
    }
    return 0;
}

/* The search path, one directory after another (len 0: the name as given). */
static int find_topo(const char *name, char *path, size_t n) {
    if (try_dir("", 0, name, path, n)) return 1;
    if (strchr(name, '/')) return 0;                     /* a path that is not there */
    if (try_dir("topologies", 10, name, path, n)) return 1;
    for (const char *p = getenv("BATON_PATH"); p && *p;) {
        size_t len = strcspn(p, ":");
        if (len && try_dir(p, len, name, path, n)) return 1;
        p += len + (p[len] == ':');
    }
    char share[4096];
    return try_dir(share, strlen(share_dir(share, sizeof share)), name, path, n);
}

/* The shipped machines' names in the search path, for did-you-mean. */
static void nearest_machine(const char *name, char *hint, size_t n) {
    static char names[64][64];
    const char *cands[65];
    int k = 0;
    char share[4096];
    const char *dirs[] = {"topologies", share_dir(share, sizeof share)};
    for (int d = 0; d < 2; d++) {
        DIR *dir = opendir(dirs[d]);
        for (struct dirent *de; dir && k < 64 && (de = readdir(dir)) != NULL;) {
            size_t len = strlen(de->d_name);
            if (len > 5 && len < 64 && strcmp(de->d_name + len - 5, ".yaml") == 0) {
                snprintf(names[k], sizeof names[k], "%.*s", (int)(len - 5), de->d_name);
                cands[k] = names[k];
                k++;
            }
        }
        if (dir) closedir(dir);
    }
    cands[k] = NULL;
    snprintf(hint, n, "%s", suggest_hint(name, cands));
}

topo_t *cmd_load_topo(const char *name, const char *const *sets, int nsets, baton_err_t *e) {
    char path[4096], hint[128];
    size_t len = strlen(name);
    int file_like = strchr(name, '/') || (len > 5 && strcmp(name + len - 5, ".yaml") == 0);
    if (!find_topo(name, path, sizeof path) && file_like) return topo_yaml_load(name, sets, nsets, e);   /* "cannot open" */
    if (!find_topo(name, path, sizeof path)) {
        nearest_machine(name, hint, sizeof hint);
        char share[4096];
        err_set(e, BATON_EIO, "no topology '%s': not a file, and no %s.yaml in ., topologies/, $BATON_PATH or %s%s",
                name, name, share_dir(share, sizeof share), hint);
        return NULL;
    }
    return topo_yaml_load(path, sets, nsets, e);
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

/* The subcommands; predict and calibrate share sim's and validate's code. */
static int run_sim(int argc, char **argv) { return cmd_sim(argc, argv, 0); }
static int run_predict(int argc, char **argv) { return cmd_sim(argc, argv, 1); }
static int run_validate(int argc, char **argv) { return cmd_validate(argc, argv, 0); }
static int run_calibrate(int argc, char **argv) { return cmd_validate(argc, argv, 1); }

static const struct { const char *name; int (*fn)(int, char **); } commands[] = {
    {"sim", run_sim}, {"predict", run_predict}, {"kids", cmd_kids}, {"topo", cmd_topo}, {"plan", cmd_plan},
    {"algos", cmd_algos}, {"select", cmd_select}, {"tp", cmd_tp}, {"sweep", cmd_sweep},
    {"validate", run_validate}, {"calibrate", run_calibrate},
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
    fprintf(stderr, "baton: unknown command '%s'%s\n\n%s", name, suggest_hint(name, names), usage);
    return EXIT_USAGE;
}

int main(int argc, char **argv) {
    if (argc < 2) { fputs(usage, stderr); return EXIT_USAGE; }
    const char *c = argv[1];
    if (!strcmp(c, "--version") || !strcmp(c, "version")) { printf("baton %s\n", BATON_VERSION); return EXIT_OK; }
    if (!strcmp(c, "-h") || !strcmp(c, "--help") || (!strcmp(c, "help") && argc == 2)) { fputs(usage, stdout); return EXIT_OK; }
    if (!strcmp(c, "help")) {                            /* baton help CMD = baton CMD --help */
        int i = find_command(argv[2]);
        if (i < 0) return unknown_command(argv[2]);
        char *args[] = {argv[2], "--help", NULL};
        return commands[i].fn(2, args);
    }
    int i = find_command(c);
    return i < 0 ? unknown_command(c) : commands[i].fn(argc - 1, argv + 1);
}
