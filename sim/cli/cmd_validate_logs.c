/* cmd_validate_logs.c - validate's and calibrate's samples: the nccl-tests
 * logs read, each on the machine of its rank count, and what the command
 * says about them as it reads (another GPU, other hosts, NCCL_ALGO set, how
 * the rows were timed, NCCL's TUNING lines, a tuner file); or the host
 * backend's timings. Apart from the command (cmd_validate.c): the many ways
 * a log can differ from the machine it is held against are one concept. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../models/gpu.h"
#include "../../topologies/knobs.h"
#include "../../validate/host.h"
#include "../answer/report.h"
#include "../answer/select.h"
#include "cmd_validate.h"

/* A warning or note about the logs: on stderr as it happens, and kept for
 * --json ("messages"), where a script reads what a person would see. */
__attribute__((format(printf, 3, 4)))
static void say(cmd_val_args_t *a, const char *kind, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "baton %s: %s: %s\n", cmd_val_name(a), kind, msg);
    size_t n = strlen(kind) + strlen(msg) + 3;
    char *kept = a->nsaid < CMD_VAL_MAX_SAID ? malloc(n) : NULL;
    if (kept == NULL) return;
    snprintf(kept, n, "%s: %s", kind, msg);
    a->said[a->nsaid++] = kept;
}

void cmd_val_json_said(const cmd_val_args_t *a) {
    char esc[2048];
    printf(",\"messages\":[");
    for (int i = 0; i < a->nsaid; i++)
        printf("%s\"%s\"", i ? "," : "", report_json_escape(a->said[i], esc, sizeof esc));
    printf("]");
}

void cmd_val_said_free(cmd_val_args_t *a) {
    for (int i = 0; i < a->nsaid; i++) free(a->said[i]);
    a->nsaid = 0;
}

/* The machine a log of `ranks` ranks ran on: the topology itself, or (a
 * cluster file, `group_size` GPUs a node) the same file with --set
 * nodes=ranks/group_size, loaded once per node count; NULL if neither. */
static topo_t *machine_for(const cmd_val_args_t *a, cmd_val_machines_t *ms, int ranks, const char *log) {
    int g = topo_params_c(ms->t)->group_size, k = 0;
    if (ranks == topo_nranks(ms->t)) return ms->t;
    for (int i = 0; i < ms->nother; i++)
        if (topo_nranks(ms->other[i]) == ranks) return ms->other[i];
    if (g < 1 || ranks % g || ms->nother == CAL_MAX_MACHINES - 1) return NULL;
    const char *sets[65];
    char nodes[32];
    for (int i = 0; i < a->sets.n; i++)
        if (strncmp(a->sets.v[i], "nodes=", 6)) sets[k++] = a->sets.v[i];
    snprintf(nodes, sizeof nodes, "nodes=%d", ranks / g);
    sets[k++] = nodes;
    baton_err_t ignored = {0};
    topo_t *m = cmd_load_topo(a->topo, sets, k, &ignored);    /* no `nodes` parameter: not a cluster */
    if (m == NULL || topo_nranks(m) != ranks) { topo_free(m); return NULL; }
    fprintf(stderr, "baton %s: %s ran on %d ranks: %s with --set %s\n", cmd_val_name(a), log, ranks, topo_name(ms->t), nodes);
    return ms->other[ms->nother++] = m;
}

/* The plan log's TUNING lines give, as rules for machine `on` (a->logged). */
static void read_logged_plan(cmd_val_args_t *a, const nt_log_t *log, const char *path, const topo_t *on) {
    if (!cmd_val_follows_logs(a)) return;
    tuningplan_rules(log, topo_whole_ranks(on), a->logged, &a->nlogged, TOPO_MAX_LIB_RULES);
    if (log->tuning_skipped)
        say(a, "warning", "%s:%d: %s (%d such line%s): those sizes keep -a nccl's plan", path, log->tuning_skipped_line,
            log->tuning_skipped_why, log->tuning_skipped, log->tuning_skipped > 1 ? "s" : "");
    for (int i = 0; i < log->nplan; i++)
        if (log->plan[i].disagree)
            say(a, "warning", "%s:%d: NCCL's TUNING lines name more than one plan for %llu bytes; the first is kept", path,
                log->plan[i].line, (unsigned long long)log->plan[i].bytes);
}

int cmd_val_logged_samples(const topo_t *t, const cal_sample_t *s, int n) {
    int k = 0;
    for (int i = 0; i < n; i++) k += tuningplan_rule(t, &s[i]) != NULL;
    return k;
}

int cmd_val_apply_tuner(const cmd_val_args_t *a, topo_t *t, char *why, size_t n, baton_err_t *e) {
    why[0] = '\0';
    return a->tuner && cmd_val_follows_logs(a) ? tunerfile_apply(t, &a->tuner_tab, a->tuner, why, n, e) : 0;
}

/* cmd_val_apply_tuner on t, saying what it did. */
static int tune(cmd_val_args_t *a, topo_t *t, baton_err_t *e) {
    char why[512];
    int k = cmd_val_apply_tuner(a, t, why, sizeof why, e);
    if (k < 0) return k;
    if (a->tuner && !cmd_val_follows_logs(a))
        say(a, "note", "%s (NCCL_TUNER_CONFIG_FILE) is not followed: -a %s%s is not NCCL's choice", a->tuner, a->algo,
            a->nccl_model ? " --model nccl" : "");
    else if (a->tuner)
        say(a, "note", "%s%s: %d of its %d row%s fit%s %s: -a nccl takes the first that fits a size (NCCL's own choice where "
            "none does), as NCCL with NCCL's example tuner plugin", a->tuner, a->tuner_env ? " (NCCL_TUNER_CONFIG_FILE)" : "",
            k, a->tuner_tab.n, a->tuner_tab.n > 1 ? "s" : "", k == 1 ? "s" : "", topo_name(t));
    if (why[0])
        say(a, "warning", "%s: rows %s cannot run (NCCL's cost table marks them IGNORE), passed over: %s", a->tuner,
            topo_name(t), why);
    return k;
}

void cmd_val_apply_logged_plan(const cmd_val_args_t *a, topo_t *t, int quiet) {
    char why[1024];
    tuningplan_apply(t, a->logged, a->nlogged, why, sizeof why);
    if (why[0] && !quiet)
        fprintf(stderr, "baton %s: warning: %s has no row for what NCCL's TUNING lines say it ran (%s): -a nccl plans "
                "those sizes\n", cmd_val_name(a), topo_name(t), why);
}

/* major.minor of an NCCL version ("2.19" of "2.19.3+cuda12.3"). */
static void minor_of(const char *v, char *out, size_t n) {
    int major, minor;
    if (sscanf(v, "%d.%d", &major, &minor) == 2) snprintf(out, n, "%d.%d", major, minor);
    else snprintf(out, n, "%s", v);
}

/* Note the log's NCCL version; warn where a calibrated machine's logs ran
 * another major.minor (its plan, protocols and latencies differ by version). */
static void note_version(cmd_val_args_t *a, const topo_t *t, const nt_log_t *log, const char *path) {
    const char *v = log->nccl_version, *rec = topo_params_c(t)->calib.nccl;
    char mine[32];
    if (!v[0]) return;
    minor_of(v, mine, sizeof mine);
    if (rec[0] && !strstr(rec, mine))
        say(a, "warning", "%s ran NCCL %s; %s was calibrated on logs of NCCL %s (its plan and protocols differ by version)",
            path, v, topo_name(t), rec);
    int major = 0, minor = 0, patch = 0, used = topo_params_c(t)->lib.nccl_version;
    if (sscanf(v, "%d.%d.%d", &major, &minor, &patch) >= 2) {      /* one baton has no rules for: say whose it follows */
        int lv = major * 10000 + minor * 100 + patch;
        char lo[16], hi[16], own[16];
        knobs_version_text(TOPO_NCCL_OLDEST, lo, sizeof lo);
        knobs_version_text(TOPO_NCCL_TABLES, hi, sizeof hi);
        knobs_version_text(used ? used : TOPO_NCCL_TABLES, own, sizeof own);
        if (lv < TOPO_NCCL_OLDEST || lv > TOPO_NCCL_TABLES)
            say(a, "note", "%s ran NCCL %s, outside the versions whose rules baton knows (%s to %s): it is read with "
                "NCCL %s's", path, v, lo, hi, own);
    }
    if (strstr(a->nccl, v)) return;
    size_t at = strlen(a->nccl);
    if (at + strlen(v) + 3 < sizeof a->nccl) snprintf(a->nccl + at, sizeof a->nccl - at, "%s%s", at ? ", " : "", v);
}

/* What a log ran: the test it names, else -c, else what its columns say,
 * with a note where that is all_gather_perf's columns, which alltoall_perf
 * prints too (redop none, root -1, a rank's count). */
static int logged_collective(cmd_val_args_t *a, nt_log_t *log, const char *path, baton_err_t *e) {
    int c = a->coll ? coll_parse(a->coll) : -1;
    if (a->coll && c < 0) return err_set(e, BATON_EINVAL, "-c %s: not a collective%s", a->coll, coll_hint(a->coll));
    if (c >= 0 && !log->coll_guessed && log->coll != (coll_t)c)
        return err_set(e, BATON_EINVAL, "%s is a log of %s (it names its test); -c says %s", path, coll_name(log->coll),
                       coll_name((coll_t)c));
    if (c >= 0 && !nt_columns_allow(log, (coll_t)c))
        say(a, "warning", "%s: -c %s, but its columns are %s's (redop and root): read as asked", path, a->coll,
            coll_name(log->coll));
    if (c >= 0) log->coll = (coll_t)c;
    else if (log->coll_named)
        say(a, "note", "%s names no test: read as an alltoall from its file name (alltoall_perf's columns are "
            "all_gather_perf's); -c allgather if it was that", path);
    else if (log->coll_guessed && log->coll == COLL_ALLGATHER)
        say(a, "note", "%s names no test (all_gather_perf, ...): read as an allgather from its columns, which "
            "alltoall_perf prints too; -c alltoall if it was that", path);
    return 0;
}

/* A log of another GPU generation than the machine's (an A100 log against
 * hgx-h100) is answered, but likely by mistake: say so. */
static void other_gpu(cmd_val_args_t *a, const topo_t *t, const nt_log_t *log, const char *path) {
    const topo_params_t *tp = topo_params_c(t);
    const char *fam = log->device[0] ? gpu_family_of_device(log->device) : NULL;
    if (fam == NULL || !tp->has_gpu || !tp->gpu.family[0] || strcmp(fam, tp->gpu.family) == 0) return;
    say(a, "warning", "%s ran on %s (%s); %s's GPU is %s (%s): is this the machine it ran on?", path, log->device, fam,
        topo_name(t), tp->gpu.name, tp->gpu.family);
}

/* A log whose Rank lines put its ranks on other hosts than the machine
 * puts them on nodes (16 ranks on 4 hosts against 8-GPU nodes) is answered
 * for a machine it did not run on: say so. A pod or container per GPU names
 * each GPU's host alone, hence a warning, not an error. */
static void other_hosts(cmd_val_args_t *a, const topo_t *on, const nt_log_t *log, const char *path) {
    int r = topo_whole_ranks(on), nodes = r / cmd_node_ranks(on);
    int hosts = log->nccl_nodes ? log->nccl_nodes : log->hosts;       /* NCCL's own word first */
    if (hosts <= 0 || hosts == nodes || log->ranks != r) return;
    char each[48] = "";
    if (log->nccl_nodes == 0 && log->per_host > 0)
        snprintf(each, sizeof each, ", %d GPU%s each", log->per_host, log->per_host > 1 ? "s" : "");
    say(a, "warning", "%s ran on %d %s%s; %s puts its %d ranks on %d node%s of %d: is this the machine it ran on?", path,
        hosts, log->nccl_nodes ? (hosts > 1 ? "nodes (NCCL's nNodes)" : "node (NCCL's nNodes)")
            : hosts > 1 ? "hosts" : "host", each, topo_name(on), r, nodes, nodes > 1 ? "s" : "", r / nodes);
}

/* NCCL_ALGO and NCCL_PROTO the log says were set: -a nccl (and --proto
 * auto) run only what they leave NCCL; a list baton cannot read is named. */
static void note_env(cmd_val_args_t *a, const nt_log_t *log, const char *path) {
    const nt_env_t *x[2] = {&log->env_algo, &log->env_proto};
    const char *var[2] = {"NCCL_ALGO", "NCCL_PROTO"};
    int used[2] = {strcmp(a->algo, "nccl") == 0, a->proto == RUN_PROTO_AUTO};
    for (int i = 0; i < 2; i++) {
        if (x[i]->line == 0) continue;
        if (x[i]->unread)
            say(a, "warning", "%s:%d: %s=%s, which baton cannot read: it plans as if it were not set", path, x[i]->line,
                var[i], x[i]->list);
        else if (x[i]->mask && used[i])
            say(a, "note", "%s:%d: %s=%s set: %s picks only among what it leaves NCCL", path, x[i]->line, var[i],
                x[i]->list, i == 0 ? "-a nccl" : "--proto auto");
        else if (x[i]->mask)
            say(a, "note", "%s:%d: %s=%s set; %s given here instead", path, x[i]->line, var[i], x[i]->list,
                i == 0 ? "-a" : "--proto");
    }
}

/* How nccl-tests timed the rows, where baton's one launched call is not
 * it: -m N groups N calls an iteration and divides the time among them
 * (NCCL runs a group's calls together, sharing what one call waits), and
 * -G replays the iterations as CUDA graphs (no host launch a call, so -g's
 * launches are not added: cal_samples); -w 0 times the first calls, which
 * set up NCCL's connections. */
static void note_timing(cmd_val_args_t *a, const nt_log_t *log, const char *path) {
    char noise[512];
    if (nt_noise_text(log, path, noise, sizeof noise)) say(a, "note", "%s", noise);
    for (int k = 0; k < 2; k++)
        if (nt_whole_text(log, path, k, noise, sizeof noise)) say(a, "warning", "%s", noise);
    for (int k = 0; k < 2; k++)
        if (nt_skipped_text(log, path, k, noise, sizeof noise)) say(a, "warning", "%s", noise);
    char caveat[768];
    for (int k = 0; nt_timing_text(log, path, k, caveat, sizeof caveat); k++) say(a, "warning", "%s", caveat);
    if (log->graph && log->gpus_per_thread > 1)
        say(a, "note", "%s:%d: graph %d (nccl-tests -G): the calls were replayed as CUDA graphs, so the %d GPUs one "
            "thread drives are not launched in turn each call", path, log->header_line, log->graph, log->gpus_per_thread);
}

/* A run doctor calls broken: rows whose #wrong is not 0, or nccl-tests'
 * failure line. calibrate refuses it: a fit to a broken collective's times
 * writes a machine that is as broken, under a band and MAPE that look fine.
 * validate scores what is a measurement of the machine: the #wrong rows are
 * left out of its MAPE (wrong data, however fast, times nothing), the rows
 * before a failure kept; each said. */
static int broken_run(cmd_val_args_t *a, nt_log_t *log, const char *path, baton_err_t *e) {
    char why[512];
    for (int k = 0; k < 2; k++) {
        if (!nt_broken_text(log, path, k, why, sizeof why)) continue;
        if (a->calibrate)
            return err_set(e, BATON_EINVAL, "%s; doctor calls this run broken, and calibrate fits only runs that completed "
                           "with right results: rerun it, or leave this log out", why);
        if (k == 1) {
            say(a, "warning", "%s; doctor calls this run broken: the rows before it are scored", why);
            continue;
        }
        say(a, "warning", "%s; doctor calls this run broken: %s left out of the MAPE", why,
            log->wrong_rows > 1 ? "they are" : "it is");
        nt_drop_wrong(log);
        if (log->nrows == 0) return err_set(e, BATON_EINVAL, "%s: every row has #wrong above 0: nothing to score", path);
    }
    return 0;
}

/* The logs' NCCL_ALGO / NCCL_PROTO, kept where every log says the same (a
 * calibration records them: the machine's NCCL is told so, `nccl_env:`). */
static void same_env(cmd_val_args_t *a, const nt_log_t *log) {
    const nt_env_t *x[2] = {&log->env_algo, &log->env_proto};
    for (int i = 0; i < 2; i++) {
        const char *v = x[i]->line && !x[i]->unread ? x[i]->list : "";
        if (a->env_logs == 0) snprintf(a->env[i], sizeof a->env[i], "%s", v);
        else if (strcmp(a->env[i], v)) a->env_mixed = 1;
    }
    a->env_logs++;
}

int cmd_val_load(cmd_val_args_t *a, cmd_val_machines_t *ms, cal_sample_t **all, int *n, const char ***file_of, baton_err_t *e) {
    topo_t *t = ms->t;
    int cap = 0;
    *all = NULL;
    *n = 0;
    *file_of = NULL;
    for (int i = 0; i < a->nlogs; i++) {
        nt_log_t log;
        cal_sample_t *s;
        int m, rc = nt_parse(a->logs[i], a->ranks > 0 ? a->ranks : topo_whole_ranks(t), &log, e);
        if (rc < 0) return rc;
        if (a->ranks == 0 && log.stated_ranks > 0) log.ranks = log.stated_ranks;
        else if (a->ranks == 0)     /* the machine, as -t and --set give it, speaks for a log that says nothing */
            say(a, "warning", "%s does not say how many ranks ran (%s): taken as %s's %d (--ranks N to say otherwise)",
                a->logs[i], nt_ranks_unsaid(&log), topo_name(t), topo_whole_ranks(t));
        if ((rc = logged_collective(a, &log, a->logs[i], e)) < 0) { nt_free(&log); return rc; }
        if (a->ranks > 0 && log.stated_ranks > 0 && log.stated_ranks != a->ranks && !a->force_ranks) {
            int said = log.stated_ranks;
            nt_free(&log);
            return err_set(e, BATON_EINVAL, "%s says it ran on %d ranks; --ranks %d disagrees (--force-ranks to take %d "
                           "anyway)", a->logs[i], said, a->ranks, a->ranks);
        }
        topo_t *on = machine_for(a, ms, log.ranks, a->logs[i]);
        if (on == NULL) {       /* not --ranks: it speaks for a log, not for the machine */
            int g = topo_params_c(t)->group_size, ranks = log.ranks;
            nt_free(&log);
            char scale[128];
            int nodes = cmd_scale_params(t, scale, sizeof scale);
            if (!nodes && scale[0])
                return err_set(e, BATON_EINVAL, "%s ran on %d ranks but %s has %d: size it to the log's (%s)", a->logs[i],
                               ranks, topo_name(t), topo_nranks(t), scale);
            if (!nodes)
                return err_set(e, BATON_EINVAL, "%s ran on %d ranks but %s has %d and no `nodes` parameter to match it: "
                               "use a machine of %d GPUs, or a cluster file (topologies/cluster-*.yaml)", a->logs[i], ranks,
                               topo_name(t), topo_nranks(t), ranks);
            if (g < 1 || ranks % g)
                return err_set(e, BATON_EINVAL, "%s ran on %d ranks, which is not a whole number of %s's %d-GPU nodes%s",
                               a->logs[i], ranks, topo_name(t), g, strstr(scale, "gpus")
                               ? " (--set gpus=N sets the GPUs a node, --set nodes=N the nodes)" : "");
            return err_set(e, BATON_EINVAL, "%s ran on %d ranks: %s with --set nodes=%d does not load, or the logs "
                           "name more than %d node counts", a->logs[i], ranks, topo_name(t), ranks / g, CAL_MAX_MACHINES);
        }
        other_gpu(a, t, &log, a->logs[i]);
        other_hosts(a, on, &log, a->logs[i]);
        note_env(a, &log, a->logs[i]);
        same_env(a, &log);
        if ((rc = broken_run(a, &log, a->logs[i], e)) < 0) { nt_free(&log); return rc; }
        note_timing(a, &log, a->logs[i]);
        read_logged_plan(a, &log, a->logs[i], on);
        note_version(a, t, &log, a->logs[i]);
        rc = cal_samples(&log, &s, &m, e);
        for (int k = 0; rc == 0 && k < m; k++) s[k].machine = on == t ? NULL : on;
        nt_free(&log);
        if (rc < 0) return rc;
        cap = *n + m;
        cal_sample_t *g = realloc(*all, (size_t)cap * sizeof *g + 1);
        const char **f = realloc(*file_of, (size_t)cap * sizeof *f + 1);
        if (g) *all = g;
        if (f) *file_of = f;
        if (!g || !f) { free(s); return err_set(e, BATON_ENOMEM, "out of memory"); }
        for (int k = 0; k < m; k++) { (*all)[*n + k] = s[k]; (*file_of)[*n + k] = a->logs[i]; }
        *n += m;
        free(s);
    }
    if (tune(a, t, e) < 0) return -1;
    for (int i = 0; i < ms->nother; i++) if (tune(a, ms->other[i], e) < 0) return -1;
    cmd_val_apply_logged_plan(a, t, 0);
    for (int i = 0; i < ms->nother; i++) cmd_val_apply_logged_plan(a, ms->other[i], 0);
    return 0;
}

int cmd_val_measure(const cmd_val_args_t *a, topo_t *t, cal_sample_t **all, int *n, const char ***file_of, baton_err_t *e) {
    int coll = coll_parse(a->coll ? a->coll : "allreduce");
    const algo_t *al = coll < 0 ? NULL : algo_find((coll_t)coll, !run_is_auto(a->algo) ? a->algo : "ring");
    uint64_t *sizes;
    int ns;
    const char *why;
    if (al == NULL) return err_set(e, BATON_EINVAL, "no such collective or algorithm for the host backend");
    if (select_parse_sizes(a->sizes ? a->sizes : "4KiB:16MiB:x2", &sizes, &ns, &why) < 0) return err_set(e, BATON_EINVAL, "--sizes: %s", why);
    int reps = a->reps ? a->reps : 7;          /* each size timed reps times after one warm-up (host.h) */
    nt_log_t log = {.coll = (coll_t)coll, .ranks = topo_nranks(t), .type = "int8", .threads = topo_nranks(t),
                    .per_host = topo_nranks(t), .warmup_iters = 1, .iters = reps};   /* a thread a rank, one process */
    nt_set_step(&log, sizes, ns);
    log.rows = calloc((size_t)ns, sizeof *log.rows);
    int rc = log.rows ? 0 : err_set(e, BATON_ENOMEM, "out of memory");
    for (int i = 0; i < ns && rc == 0; i++) {
        host_result_t hr = {0};
        rc = host_run(al, topo_nranks(t), sizes[i], NULL, reps, &hr, e);
        log.rows[log.nrows++] = (nt_row_t){.bytes = sizes[i], .count = sizes[i], .oop_us = hr.median_s * 1e6, .ip_us = -1, .line = i + 1};
    }
    if (rc == 0 && a->log_out) {
        char *text = NULL;                          /* whole or not at all: built, then renamed in */
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        int ok = f && nt_write(&log, f) == 0;
        if (f && fclose(f) != 0) ok = 0;
        if (!ok) rc = err_set(e, BATON_ENOMEM, "out of memory");
        else rc = cmd_write_file(a->log_out, text, len, e);
        free(text);
    }
    if (rc == 0) rc = cal_samples(&log, all, n, e);
    if (rc == 0 && (*file_of = calloc((size_t)*n + 1, sizeof **file_of)) == NULL) rc = err_set(e, BATON_ENOMEM, "out of memory");
    for (int i = 0; rc == 0 && i < *n; i++) (*file_of)[i] = "host";
    free(log.rows);
    free(sizes);
    return rc;
}
