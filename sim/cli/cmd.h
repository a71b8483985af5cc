/* cmd.h - the subcommands. Each returns the process exit status:
 * 0 success, 1 bad input (a file, a case the model cannot do), 2 bad usage. */
#ifndef BATON_CMD_H
#define BATON_CMD_H

#include <stddef.h>
#include <stdint.h>

#include "../../util/err.h"

enum { EXIT_OK = 0, EXIT_INPUT = 1, EXIT_USAGE = 2 };

int cmd_sim(int argc, char **argv, int predict);
int cmd_kids(int argc, char **argv);
int cmd_topo(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_algos(int argc, char **argv);
int cmd_select(int argc, char **argv);
int cmd_tp(int argc, char **argv);
int cmd_concurrent(int argc, char **argv);
int cmd_step(int argc, char **argv);
int cmd_gpus(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_validate(int argc, char **argv, int calibrate);
int cmd_export(int argc, char **argv);
int cmd_replay(int argc, char **argv);

/* --sizes SPEC: where a range's HI is not on its grid, a note on stderr
 * ("baton CMD: note: --sizes SPEC: ..."; select_sizes_note). */
void cmd_sizes_note(const char *cmd, const char *spec, const uint64_t *sizes, int n);

/* --set name=value overrides, collected from the command line. */
typedef struct cmd_sets {
    const char *v[64];
    int n;
} cmd_sets_t;

/* -t NAME: the file NAME if it exists, else NAME or NAME.yaml in the current
 * directory, in topologies/ under it, in each directory of $BATON_PATH
 * (colon-separated), in the installed share directory, then in the clone's
 * topologies/ beside the binary (<exe dir>/../topologies); the loaded
 * machine, or NULL with an error naming where it looked (and the nearest
 * name found there). */
struct topo;
struct topo *cmd_load_topo(const char *name, const char *const *sets, int nsets, baton_err_t *e);
/* The same, folded where it is a cluster of at least `fold` nodes (0: never;
 * topo_yaml_load_folded). */
struct topo *cmd_load_topo_folded(const char *name, const char *const *sets, int nsets, int fold, baton_err_t *e);
#define CMD_FOLD_NODES 16384        /* predict, plan and select fold clusters this large by default */
#define CMD_FOLD_NODES_S "16384"
/* After a run on *t returned rc: where *t is folded and rc is BATON_EWHOLE
 * (something needs every rank), *t is replaced by the whole cluster and 1
 * is returned (run again); 0 if not; -1 if the whole does not load (e says
 * why, *t is NULL). */
int cmd_unfold(int rc, struct topo **t, const char *name, const char *const *sets, int nsets, baton_err_t *e);
/* On a folded *t, "PREFIX<witnesses> of its <nodes> nodes built, ..." and a
 * newline into buf (the line a folded answer ends with); its length, 0
 * (buf empty) if t is not folded. */
int cmd_folded_line(const struct topo *t, const char *prefix, char *buf, size_t n);
/* A whole-number option's value, lo..hi, into *out; a usage error
 * (EXIT_USAGE) naming opt if it is not one ("5x", "nan", "" and "2.5" are not). */
int cmd_int_arg(const char *cmd, const char *opt, const char *v, int lo, int hi, int *out);
/* --root R: a rank, whose upper end is the machine's (checked once it is
 * loaded); a usage error (EXIT_USAGE) if not a whole number from 0. */
int cmd_root_arg(const char *cmd, const char *v, int *out);
/* --fold N's value into *out (0 .. 2^24); a usage error (EXIT_USAGE) if not. */
int cmd_fold_arg(const char *cmd, const char *v, int *out);
/* An output file's name v for option opt into *out; a usage error
 * (EXIT_USAGE) if it reads as an option (a word that starts with '-', "-"
 * too: no output here is stdout): getopt takes the word after --link-stats
 * as its file whatever it is, so `--link-stats --no-symmetric` would write a
 * file named --no-symmetric and drop the option. A file so named: ./-x. */
int cmd_out_file(const char *cmd, const char *opt, const char *v, const char **out);

/* Where -t NAME's file is (the search above): 1 and path, or 0. */
int cmd_find_topo(const char *name, char *path, size_t n);
/* The parameters that size machine t ("--set nodes=N or --set gpus=N"),
 * for a log of another rank count; "" where it has none. 1 where `nodes`
 * is one of them (validate sizes a machine to a log's ranks by it). */
int cmd_scale_params(const struct topo *t, char *buf, size_t n);

/* The ranks on each of t's nodes: its group_size where that splits the
 * ranks into nodes, else all of them (one node). A log's hosts are read
 * against it (validate), and baton's own logs name hosts by it. */
int cmd_node_ranks(const struct topo *t);

/* What a calibration's fitted sizes covered (its record's `seen:`), where
 * its band holds: "allreduce on 16 ranks, 8 B-8 GiB; ..." into b. */
struct topo_calib;
void cmd_seen_text(const struct topo_calib *k, char *b, size_t n);

/* What a command runs under, as options, for a calibrated machine's record
 * to complete (cmd_calibrated_rule); the pointers are the command's own. */
#define CMD_RULE_LEN 32
typedef struct cmd_rule {
    const char **algo;         /* -a */
    int algo_given;
    int *proto;                /* --proto: PROTO_* or RUN_PROTO_AUTO */
    int proto_given;
    const char *model;         /* closed, des or nccl */
    int *contention;           /* the simulator's contention_t; NULL for the closed forms */
    int contention_given;
    int fair_ok;               /* 0: the run's other options exclude fair sharing */
    char *keep;                /* CMD_RULE_LEN bytes the record's algorithm is copied into: the record
                                  may be freed or written over while *algo is in use */
} cmd_rule_t;

/* A calibrated machine's rule: -a, --proto and the simulator's --contention
 * the command line did not give become the ones it was fitted with (not fair
 * sharing where !fair_ok); then, if the rule still differs from its record
 * (algorithm, protocol, model, contention), say so on stderr and return 1:
 * its predictions, and its band, are only what it was fitted for. 0
 * otherwise, and for machines that are not calibrated. */
int cmd_calibrated_rule(const char *cmd, const struct topo *t, cmd_rule_t *r);

/* A calibration's rule as options: "-a nccl --proto auto --model des
 * --contention fair" into b. */
void cmd_fitted_rule(const struct topo_calib *k, char *b, size_t n);

/* What the machine's NCCL is told (`nccl_env:`) as " NCCL_ALGO=Ring
 * NCCL_PROTO=^LL128" into b; 0 (and b empty) where it says nothing. */
int cmd_nccl_env_text(const struct topo *t, char *b, size_t n);


/* --format nccl-tests's sizes (spec, parsed into sizes) run upward, each
 * once, as nccl-tests' do; else a usage error (EXIT_USAGE). */
int cmd_sizes_ascend(const char *cmd, const char *spec, const uint64_t *sizes, int n);

/* The logs one validate, calibrate or doctor run reads; one more is a
 * usage error (never dropped unsaid). */
#define CMD_MAX_LOGS 64
int cmd_add_log(const char *cmd, const char **logs, int *n, int max, const char *path);

/* Remember one --set; EXIT_USAGE (after printing) when there are too many. */
int cmd_add_set(const char *cmd, cmd_sets_t *s, const char *arg);

/* Write len bytes of text to path whole or not at all (a temporary name
 * beside it, then rename); 0, or -1 with e saying "PATH: cannot write: why". */
int cmd_write_file(const char *path, const char *text, size_t len, baton_err_t *e);
/* "PATH: cannot write: <errno's reason>" into e, as cmd_write_file says it; -1. */
int cmd_write_file_error(const char *path, baton_err_t *e);

/* A teaching page (sim/teach/lesson.h) to html_path and, if states_path, the
 * states a browser test checks it against; a line saying what was written.
 * Frees the lesson. EXIT_OK or EXIT_INPUT. */
struct lesson_out;
int cmd_write_lesson(const char *cmd, struct lesson_out *l, const char *html_path, const char *states_path);

/* --proto's value: PROTO_NONE..PROTO_SIMPLE, RUN_PROTO_AUTO for "auto", or -1. */
int cmd_parse_proto(const char *arg);
/* "fifo", "fair", "none" -> contention_t; -1 otherwise. */
int cmd_parse_contention(const char *arg);

/* Print "baton CMD: message" to stderr and return EXIT_USAGE (main.c). */
int cmd_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Print a library error to stderr and return EXIT_INPUT (main.c). */
int cmd_fail(const char *cmd, const baton_err_t *e);

#endif
