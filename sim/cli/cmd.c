/* cmd.c - what the subcommands share: usage and error messages, --set
 * lists, whole-or-nothing output files, --proto values, and finding a
 * machine by name. The only helpers of the command line; main.c dispatches. */
#define _XOPEN_SOURCE 700           /* realpath */
#include <dirent.h>
#include <stdarg.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "../../util/progress.h"
#include "../../util/suggest.h"
#include "../../topologies/find.h"
#include "../../topologies/topo_yaml.h"
#include "../../topologies/units.h"
#include "../answer/run.h"
#include "../answer/select.h"
#include "cmd.h"
#include "../../util/wfile.h"
#include "../teach/lesson.h"

int cmd_usage(const char *cmd, const char *fmt, ...) {
    va_list ap;
    fprintf(stderr, "baton %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n(see: baton %s --help)\n", cmd);
    return EXIT_USAGE;
}

void cmd_sizes_note(const char *cmd, const char *spec, const uint64_t *sizes, int n) {
    char note[256];
    if (select_sizes_note(spec, sizes, n, note, sizeof note)) fprintf(stderr, "baton %s: note: --sizes %s: %s\n", cmd, spec, note);
}

/* The installed machines (topologies/find.c). */
static const char *share_dir(char *buf, size_t n) { return topo_find_share(buf, n); }

/* The search path, one directory after another: topologies/find.c, which a
 * calibrated machine's `extends: NAME` shares. */
static int find_topo(const char *name, char *path, size_t n) { return topo_find(name, path, n); }

int cmd_find_topo(const char *name, char *path, size_t n) { return find_topo(name, path, n); }

int cmd_scale_params(const topo_t *t, char *buf, size_t n) {
    static const char *const scale[] = {"nodes", "racks", "trays", "gpus"};
    int nodes = 0;
    buf[0] = 0;
    for (int i = 0; i < topo_nparams(t); i++) {
        const char *k, *v;
        topo_param_at(t, i, &k, &v);
        for (size_t j = 0; j < sizeof scale / sizeof *scale; j++)
            if (!strcmp(k, scale[j]) && strlen(buf) < n)
                snprintf(buf + strlen(buf), n - strlen(buf), "%s--set %s=N", buf[0] ? " or " : "", k);
        nodes |= !strcmp(k, "nodes");
    }
    return nodes;
}

int cmd_node_ranks(const topo_t *t) {
    int r = topo_whole_ranks(t), g = topo_params_c(t)->group_size;
    return g > 0 && g < r && r % g == 0 ? g : r;
}

int cmd_calibrated_rule(const char *cmd, const topo_t *t, cmd_rule_t *r) {
    const topo_calib_t *k = &topo_params_c(t)->calib;
    char mine[96], fitted[160];
    if (!k->present) return 0;
    if (!r->algo_given && k->algo[0]) *r->algo = r->keep, snprintf(r->keep, CMD_RULE_LEN, "%s", k->algo);
    if (!r->proto_given && cmd_parse_proto(k->proto) >= 0) *r->proto = cmd_parse_proto(k->proto);
    int c = k->contention[0] ? cmd_parse_contention(k->contention) : -1;
    if (r->contention && !r->contention_given && c >= 0 && (c != CONTENTION_FAIR || r->fair_ok)) *r->contention = c;
    const char *pn = *r->proto == RUN_PROTO_AUTO ? "auto" : proto_name((proto_t)*r->proto);
    snprintf(mine, sizeof mine, "-a %s --proto %s --model %s%s%s", *r->algo, pn, r->model,
             r->contention ? " --contention " : "", r->contention ? engine_contention_name((contention_t)*r->contention) : "");
    cmd_fitted_rule(k, fitted, sizeof fitted);
    if (!strcmp(fitted, mine)) return 0;
    fprintf(stderr, "baton %s: warning: %s was calibrated with %s; this runs %s, which it was not fitted for\n", cmd,
            topo_name(t), fitted, mine);
    return 1;
}

int cmd_nccl_env_text(const topo_t *t, char *b, size_t n) {
    const topo_params_t *tp = topo_params_c(t);
    int k = snprintf(b, n, "%s%s%s%s", tp->nccl_env[0][0] ? " NCCL_ALGO=" : "", tp->nccl_env[0],
                     tp->nccl_env[1][0] ? " NCCL_PROTO=" : "", tp->nccl_env[1]);
    for (int i = 0; i < 4 && k >= 0 && (size_t)k < n; i++)
        if (tp->nccl_nch[i]) k += snprintf(b + k, n - (size_t)k, " %s=%d", topo_nccl_bounds[i], tp->nccl_nch[i]);
    if (k >= 0 && (size_t)k < n && tp->p2p_ll_max != TOPO_P2P_LL_MAX)
        k += snprintf(b + k, n - (size_t)k, " NCCL_P2P_LL_THRESHOLD=%d", tp->p2p_ll_max);
    if (k >= 0 && (size_t)k < n && tp->p2p_net_ll) snprintf(b + k, n - (size_t)k, " NCCL_ALLOC_P2P_NET_LL_BUFFERS=1");
    return b[0] != '\0';
}

void cmd_fitted_rule(const topo_calib_t *k, char *b, size_t n) {
    snprintf(b, n, "-a %s --proto %s --model %s%s%s", k->algo, k->proto, k->model, k->contention[0] ? " --contention " : "",
             k->contention);
}

/* The shipped machines' names in the search path, for did-you-mean. */
static void nearest_machine(const char *name, char *hint, size_t n) {
    static char names[64][64];
    const char *cands[65];
    int k = 0;
    char share[4096], repo[4096];
    const char *dirs[] = {"topologies", share_dir(share, sizeof share), topo_find_repo(repo, sizeof repo)};
    for (int d = 0; d < 3; d++) {
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

int cmd_unfold(int rc, topo_t **t, const char *name, const char *const *sets, int nsets, baton_err_t *e) {
    if (rc != BATON_EWHOLE || *t == NULL || !topo_fold_ranks(*t)) return 0;
    topo_free(*t);
    *e = (baton_err_t){0};
    return (*t = cmd_load_topo(name, sets, nsets, e)) ? 1 : -1;
}

int cmd_folded_line(const topo_t *t, const char *prefix, char *buf, size_t n) {
    buf[0] = '\0';
    if (!topo_fold_ranks(t) && topo_fold_whole_why(t)) {
        int k = snprintf(buf, n, "%sno: %s\n", prefix, topo_fold_whole_why(t));
        return k < 0 ? 0 : k >= (int)n ? (int)n - 1 : k;
    }
    if (!topo_fold_ranks(t)) return 0;
    int k = snprintf(buf, n, "%s%d of its %d nodes built, one for each way routes differ (--fold 0: all)\n", prefix,
                     topo_fold_witnesses(t), topo_fold_nodes(t));
    return k < 0 ? 0 : k >= (int)n ? (int)n - 1 : k;
}

int cmd_int_arg(const char *cmd, const char *opt, const char *v, int lo, int hi, int *out) {
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (end == v || *end || errno || x < lo || x > hi)
        return cmd_usage(cmd, "%s must be a whole number from %d to %d, not '%s'", opt, lo, hi, v);
    *out = (int)x;
    return 0;
}

int cmd_root_arg(const char *cmd, const char *v, int *out) {
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (end == v || *end || errno || x < 0 || x > 1 << 30)
        return cmd_usage(cmd, "--root must be a rank: a whole number from 0 to the machine's ranks - 1, not '%s'", v);
    *out = (int)x;
    return 0;
}

int cmd_fold_arg(const char *cmd, const char *v, int *out) { return cmd_int_arg(cmd, "--fold", v, 0, 1 << 24, out); }

int cmd_out_file(const char *cmd, const char *opt, const char *v, const char **out) {
    if (v[0] == '-')
        return cmd_usage(cmd, "%s needs a file name, not the option '%s' (a file named so: ./%s)", opt, v, v);
    *out = v;
    return 0;
}

/* A file that loads as it is may fail with the command line's values (a
 * range `n[0-${nodes-1}]` at nodes=0): say which were given. */
static void with_sets(baton_err_t *e, const char *const *sets, int nsets) {
    size_t at = strlen(e->msg);
    at += (size_t)snprintf(e->msg + at, sizeof e->msg - at, " (with");
    for (int i = 0; i < nsets && at < sizeof e->msg; i++)
        at += (size_t)snprintf(e->msg + at, sizeof e->msg - at, " --set %s", sets[i]);
    if (at < sizeof e->msg) snprintf(e->msg + at, sizeof e->msg - at, ")");
}

/* p2p: false stages GPU-to-GPU traffic through the nearest CPU node
 * (topo_route.c); a machine with none keeps its direct links, which a
 * user who set it would not guess. */
static void warn_unstaged(const topo_t *t, const char *name) {
    if (topo_params_c(t)->p2p) return;
    for (int i = 0; i < topo_nnodes(t); i++)
        if (topo_node(t, i)->kind == NODE_CPU) return;
    fprintf(stderr, "baton: warning: %s: p2p=false changes nothing on this machine: it has no CPU node to stage "
                    "GPU-to-GPU traffic through, so the GPUs keep their direct links\n", name);
}

topo_t *cmd_load_topo_folded(const char *name, const char *const *sets, int nsets, int fold, baton_err_t *e) {
    char path[4096], hint[128];
    size_t len = strlen(name);
    int file_like = strchr(name, '/') || (len > 5 && strcmp(name + len - 5, ".yaml") == 0);
    if (!find_topo(name, path, sizeof path) && file_like) return topo_yaml_load(name, sets, nsets, e);   /* "cannot open" */
    if (!find_topo(name, path, sizeof path)) {
        nearest_machine(name, hint, sizeof hint);
        char share[4096], repo[4096];
        err_set(e, BATON_EIO, "no topology '%s': not a file, and no %s.yaml in ., topologies/, $BATON_PATH, %s%s%s%s",
                name, name, share_dir(share, sizeof share), topo_find_repo(repo, sizeof repo)[0] ? " or " : "", repo, hint);
        return NULL;
    }
    topo_t *t = fold > 0 ? topo_yaml_load_folded(path, sets, nsets, fold, e) : topo_yaml_load(path, sets, nsets, e);
    if (t == NULL && nsets > 0 && e && !strstr(e->msg, "--set")) with_sets(e, sets, nsets);
    if (t) warn_unstaged(t, name);
    return t;
}

topo_t *cmd_load_topo(const char *name, const char *const *sets, int nsets, baton_err_t *e) {
    return cmd_load_topo_folded(name, sets, nsets, 0, e);
}

int cmd_sizes_ascend(const char *cmd, const char *spec, const uint64_t *sizes, int n) {
    for (int i = 1; i < n; i++)
        if (sizes[i] <= sizes[i - 1])
            return cmd_usage(cmd, "--sizes %s: --format nccl-tests writes a run's rows, and nccl-tests runs each size once, "
                             "upward (baton's reader refuses a log that goes back): give them ascending", spec);
    return 0;
}

int cmd_add_log(const char *cmd, const char **logs, int *n, int max, const char *path) {
    if (*n == max) return cmd_usage(cmd, "at most %d logs in one run ('%s' is one more): run it again on the rest", max, path);
    logs[(*n)++] = path;
    return 0;
}

int cmd_add_set(const char *cmd, cmd_sets_t *s, const char *arg) {
    if (s->n == (int)(sizeof s->v / sizeof s->v[0])) return cmd_usage(cmd, "too many --set options");
    if (strchr(arg, '=') == NULL) return cmd_usage(cmd, "--set %s: write --set name=value", arg);
    s->v[s->n++] = arg;
    return 0;
}

int cmd_write_lesson(const char *cmd, struct lesson_out *l, const char *html_path, const char *states_path) {
    size_t n = strlen(l->html);
    baton_err_t e = {0};
    int rc = cmd_write_file(html_path, l->html, n, &e);
    if (rc == 0 && states_path && (rc = cmd_write_file(states_path, l->states, strlen(l->states), &e)) < 0)
        remove(html_path);              /* both or neither */
    if (rc == 0) printf("wrote %s: %d run%s, %zu KB; open it in a browser (no network needed)\n", html_path, l->runs,
                        l->runs == 1 ? "" : "s", (n + 1023) / 1024);
    lesson_free(l);
    return rc == 0 ? EXIT_OK : cmd_fail(cmd, &e);
}

int cmd_write_file_error(const char *path, baton_err_t *e) {
    int why = errno;
    return err_set(e, BATON_EIO, "%s: cannot write%s%s", path, why ? ": " : "", why ? strerror(why) : "");
}

int cmd_write_file(const char *path, const char *text, size_t len, baton_err_t *e) {
    errno = 0;
    return wfile_write(path, text, len) == 0 ? 0 : cmd_write_file_error(path, e);
}

int cmd_parse_proto(const char *arg) {
    return strcasecmp(arg, "auto") == 0 ? RUN_PROTO_AUTO : proto_parse(arg);
}

int cmd_parse_contention(const char *arg) {
    for (int c = CONTENTION_FIFO; c <= CONTENTION_NONE; c++)
        if (!strcmp(arg, engine_contention_name((contention_t)c))) return c;
    return -1;
}

int cmd_fail(const char *cmd, const baton_err_t *e) {
    progress_end();                         /* the message on a line of its own */
    fprintf(stderr, "baton %s: %s\n", cmd, e->msg[0] ? e->msg : err_str(e->code));
    return EXIT_INPUT;
}

void cmd_seen_text(const topo_calib_t *k, char *b, size_t n) {
    size_t at = 0;
    b[0] = '\0';
    for (int i = 0; i < k->nseen && at < n; i++) {
        char lo[32], hi[32];
        units_fmt_size(k->seen[i].min, lo, sizeof lo);
        units_fmt_size(k->seen[i].max, hi, sizeof hi);
        at += (size_t)snprintf(b + at, n - at, "%s%s on %d ranks, %s-%s", i ? "; " : "", coll_name((coll_t)k->seen[i].coll),
                               k->seen[i].ranks, lo, hi);
        if (k->seen[i].gpus_per_thread > 1 && at < n)
            at += (size_t)snprintf(b + at, n - at, " with -g %d", k->seen[i].gpus_per_thread);
    }
}
