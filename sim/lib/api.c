/* api.c - libbaton's public interface (include/baton.h): a thin layer over
 * what the command line calls (run_collective, select_run, nt_parse,
 * cal_fit), with the command line's defaults, and errors as codes plus a
 * message, never printed. The shared library exports only these functions
 * (built with -fvisibility=hidden; BATON_API marks them). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "../../include/baton.h"
#include "../../topologies/find.h"
#include "../../topologies/topo_yaml.h"
#include "../../validate/calibrate.h"
#include "../../validate/nccltests.h"
#include "../../validate/tuningplan.h"
#include "../answer/run.h"
#include "../answer/report.h"
#include "../answer/select.h"

#ifndef BATON_VERSION
#define BATON_VERSION "0.4.0"
#endif

/* The public codes are the library's own (util/err.h). */
#define SAME(pub, own) ((int)(pub) == (int)(own))
_Static_assert(SAME(BATON_E_NOMEM, BATON_ENOMEM) && SAME(BATON_E_INVAL, BATON_EINVAL) && SAME(BATON_E_PARSE, BATON_EPARSE) &&
                   SAME(BATON_E_UNSUP, BATON_EUNSUP) && SAME(BATON_E_IO, BATON_EIO) && SAME(BATON_E_SCHED, BATON_ESCHED) &&
                   SAME(BATON_E_VERIFY, BATON_EVERIFY) && SAME(BATON_E_WHOLE, BATON_EWHOLE) && SAME(BATON_SUCCESS, BATON_OK),
               "include/baton.h's status codes are util/err.h's");
_Static_assert(sizeof(((baton_error *)0)->message) == sizeof(((baton_err_t *)0)->msg), "one message size");

struct baton_machine {
    topo_t *t;
};

struct baton_log {
    nt_log_t log;
};

/* The internal error into the caller's (if any); returns its code. */
static int fail(baton_error *err, const baton_err_t *e) {
    int code = e->code ? e->code : BATON_EINVAL;
    if (err) {
        err->code = code;
        snprintf(err->message, sizeof err->message, "%s", e->msg[0] ? e->msg : err_str(code));
    }
    return code;
}

static int fail_now(baton_error *err, int code, const char *what) {
    baton_err_t e = {0};
    err_set(&e, code, "%s", what);
    return fail(err, &e);
}

static void ok(baton_error *err) {
    if (err) err->code = 0, err->message[0] = '\0';
}

BATON_API const char *baton_strerror(int code) { return err_str(code); }

BATON_API const char *baton_version(void) { return BATON_VERSION; }

/* ---- machines -------------------------------------------------------------- */

BATON_API baton_machine *baton_machine_load(const char *name, const char *const *sets, int nsets, baton_error *err) {
    char path[4096], share[4096];
    baton_err_t e = {0};
    if (name == NULL || nsets < 0 || (nsets > 0 && sets == NULL)) {
        fail_now(err, BATON_EINVAL, "baton_machine_load: no machine name, or sets without values");
        return NULL;
    }
    size_t len = strlen(name);
    int file_like = strchr(name, '/') || (len > 5 && strcmp(name + len - 5, ".yaml") == 0);
    int found = topo_find(name, path, sizeof path);
    if (!found && !file_like) {
        err_set(&e, BATON_EIO, "no topology '%s': not a file, and no %s.yaml in ., topologies/, $BATON_PATH or %s", name,
                name, topo_find_share(share, sizeof share));
        fail(err, &e);
        return NULL;
    }
    baton_machine *m = calloc(1, sizeof *m);
    if (m == NULL) {
        fail_now(err, BATON_ENOMEM, "out of memory");
        return NULL;
    }
    m->t = topo_yaml_load(found ? path : name, sets, nsets, &e);   /* not found: "cannot open" */
    if (m->t == NULL) {
        free(m);
        fail(err, &e);
        return NULL;
    }
    ok(err);
    return m;
}

BATON_API void baton_machine_free(baton_machine *m) {
    if (m == NULL) return;
    topo_free(m->t);
    free(m);
}

BATON_API const char *baton_machine_name(const baton_machine *m) { return m ? topo_name(m->t) : NULL; }

BATON_API int baton_machine_ranks(const baton_machine *m) { return m ? topo_whole_ranks(m->t) : 0; }

/* ---- one collective -------------------------------------------------------- */

/* --proto's names: auto, none, LL, LL128, Simple (any case). */
static int parse_proto(const char *s) { return strcasecmp(s, "auto") == 0 ? RUN_PROTO_AUTO : proto_parse(s); }

/* The command line's defaults for what the call leaves NULL: a calibrated
 * machine's fitted algorithm, protocol and contention (cmd_calibrated_rule),
 * else auto. *other: the call asks another rule than the fit's, so the
 * calibration's interval does not hold for it. */
static int call_request(const topo_t *t, const baton_call *c, int predict, run_req_t *q, int *other, baton_err_t *e) {
    const topo_calib_t *k = &topo_params_c(t)->calib;
    int coll = c->coll ? coll_parse(c->coll) : -1;
    if (coll < 0) return err_set(e, BATON_EINVAL, "unknown collective '%s'%s", c->coll ? c->coll : "(null)",
                                 c->coll ? coll_hint(c->coll) : "");
    *q = (run_req_t){.coll = (coll_t)coll, .algo = c->algo ? c->algo : k->present && k->algo[0] ? k->algo : "auto",
                     .bytes = c->bytes, .opts = {.root = c->root}, .predict = predict, .proto = RUN_PROTO_AUTO,
                     .gpus_per_thread = 1};
    if (c->proto && (q->proto = parse_proto(c->proto)) < 0)
        return err_set(e, BATON_EINVAL, "protocol must be auto, none, LL, LL128 or Simple, not '%s'", c->proto);
    if (!c->proto && k->present && parse_proto(k->proto) >= 0) q->proto = parse_proto(k->proto);
    if (!predict && k->present && !strcmp(k->model, "des") && k->contention[0])
        for (int m = CONTENTION_FIFO; m <= CONTENTION_NONE; m++)
            if (!strcmp(k->contention, engine_contention_name((contention_t)m))) q->contention = (contention_t)m;
    char mine[160], fitted[160];
    const char *pn = q->proto == RUN_PROTO_AUTO ? "auto" : proto_name((proto_t)q->proto);
    snprintf(mine, sizeof mine, "-a %s --proto %s --model %s%s%s", q->algo, pn, predict ? "closed" : "des",
             predict ? "" : " --contention ", predict ? "" : engine_contention_name(q->contention));
    snprintf(fitted, sizeof fitted, "-a %s --proto %s --model %s%s%s", k->algo, k->proto, k->model,
             k->contention[0] ? " --contention " : "", k->contention);
    *other = k->present && strcmp(mine, fitted) != 0;
    return 0;
}

static void result_of(const run_out_t *r, baton_result *out) {
    *out = (baton_result){.time_s = r->time_s, .algbw_GBps = r->algbw_GBps, .busbw_GBps = r->busbw_GBps,
                          .time_lo_s = r->time_lo_s, .time_hi_s = r->time_hi_s, .algo = r->algo->name,
                          .proto = proto_name(r->proto), .ranks = r->ranks, .channels = r->channels,
                          .simulated = r->simulated};
}

static int one_call(baton_machine *m, const baton_call *c, int predict, baton_result *out, baton_error *err) {
    baton_err_t e = {0};
    run_req_t q;
    run_out_t r;
    int other = 0;
    if (m == NULL || c == NULL || out == NULL) return fail_now(err, BATON_EINVAL, "no machine, call or result");
    if (call_request(m->t, c, predict, &q, &other, &e) < 0 || run_collective(m->t, &q, &r, &e) < 0) return fail(err, &e);
    run_error_bars(m->t, &q, other, &r);
    result_of(&r, out);
    engine_result_free(&r.eng);
    ok(err);
    return 0;
}

BATON_API int baton_predict(baton_machine *m, const baton_call *call, baton_result *out, baton_error *err) {
    return one_call(m, call, 1, out, err);
}

BATON_API int baton_simulate(baton_machine *m, const baton_call *call, baton_result *out, baton_error *err) {
    return one_call(m, call, 0, out, err);
}

BATON_API int baton_select(baton_machine *m, const char *coll, uint64_t bytes, baton_result *out, baton_error *err) {
    baton_err_t e = {0};
    int c = coll ? coll_parse(coll) : -1;
    if (m == NULL || out == NULL) return fail_now(err, BATON_EINVAL, "no machine or result");
    if (c < 0) {
        err_set(&e, BATON_EINVAL, "unknown collective '%s'%s", coll ? coll : "(null)", coll ? coll_hint(coll) : "");
        return fail(err, &e);
    }
    select_req_t q = {.colls = {(coll_t)c}, .ncolls = 1, .sizes = &bytes, .nsizes = 1, .proto = RUN_PROTO_AUTO,
                      .model = SELECT_AUTO};
    select_table_t tab = {0};
    if (select_run(m->t, &q, &tab, &e) < 0) {
        select_free(&tab);
        return fail(err, &e);
    }
    const select_row_t *row = tab.nrows == 1 ? &tab.rows[0] : NULL;
    int rc = 0;
    if (row == NULL || row->winner < 0) {
        err_set(&e, BATON_EUNSUP, "no algorithm can run %s of %llu bytes on %s", coll, (unsigned long long)bytes,
                topo_name(m->t));
        rc = fail(err, &e);
    } else {
        const select_cell_t *w = &row->cells[row->winner];
        *out = (baton_result){.time_s = w->time_s, .algbw_GBps = w->algbw_GBps, .busbw_GBps = w->busbw_GBps,
                              .algo = w->algo->name, .proto = proto_name(w->proto), .ranks = tab.ranks,
                              .simulated = w->simulated};
        ok(err);
    }
    select_free(&tab);
    return rc;
}

/* Parse colls into q's list; 0 or -1 (e set). */
static int tuner_colls(const char *colls, select_req_t *q, baton_err_t *e) {
    char buf[256];
    snprintf(buf, sizeof buf, "%s", colls ? colls : "allreduce,allgather,reducescatter,broadcast,reduce");
    for (char *save, *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        int c = coll_parse(w);
        if (c < 0 || c == COLL_ALLTOALL || q->ncolls == COLL_COUNT)
            return err_set(e, BATON_EINVAL, "'%s': NCCL's tuner picks for allreduce, allgather, reducescatter, broadcast "
                           "and reduce%s", w, c < 0 ? coll_hint(w) : "");
        q->colls[q->ncolls++] = (coll_t)c;
    }
    return 0;
}

BATON_API char *baton_tuner_table(baton_machine *m, const char *colls, const char *sizes, baton_error *err) {
    baton_err_t e = {0};
    const char *why;
    uint64_t *sz = NULL;
    if (m == NULL) { fail_now(err, BATON_EINVAL, "no machine"); return NULL; }
    select_req_t q = {.proto = RUN_PROTO_AUTO, .model = SELECT_AUTO, .nccl_only = 1};
    if (tuner_colls(colls, &q, &e) < 0) { fail(err, &e); return NULL; }
    if (select_parse_sizes(sizes ? sizes : "8B:1GiB", &sz, &q.nsizes, &why) < 0) {
        err_set(&e, BATON_EINVAL, "sizes '%s': %s", sizes, why);
        fail(err, &e);
        return NULL;
    }
    q.sizes = sz;
    select_table_t tab = {0};
    char *text = NULL;
    if (select_run(m->t, &q, &tab, &e) == 0) {          /* as cmd_select.c: nodes by group, the machine's channels */
        int g = topo_params_c(m->t)->group_size, nnodes = g > 0 ? topo_whole_ranks(m->t) / g : 1;
        algo_opts_t used = {0};
        form_opts(m->t, &used);
        if ((text = report_select_tuner(&tab, nnodes, used.channels > 0 ? used.channels : 1, 0, 0)) == NULL)
            err_set(&e, BATON_ENOMEM, "out of memory");
    }
    select_free(&tab);
    free(sz);
    if (text == NULL) fail(err, &e);
    else ok(err);
    return text;
}

/* ---- nccl-tests logs ------------------------------------------------------- */

BATON_API baton_log *baton_log_read(const char *path, baton_error *err) {
    baton_err_t e = {0};
    baton_log *l = path ? calloc(1, sizeof *l) : NULL;
    if (l == NULL) {
        fail_now(err, path ? BATON_ENOMEM : BATON_EINVAL, path ? "out of memory" : "baton_log_read: no path");
        return NULL;
    }
    if (nt_parse(path, 0, &l->log, &e) < 0) {
        free(l);
        fail(err, &e);
        return NULL;
    }
    ok(err);
    return l;
}

BATON_API void baton_log_free(baton_log *log) {
    if (log == NULL) return;
    nt_free(&log->log);
    free(log);
}

BATON_API const char *baton_log_coll(const baton_log *log) { return log ? coll_name(log->log.coll) : NULL; }

BATON_API int baton_log_ranks(const baton_log *log) { return log ? log->log.ranks : 0; }

BATON_API int baton_log_nrows(const baton_log *log) { return log ? log->log.nrows : 0; }

BATON_API int baton_log_row_at(const baton_log *log, int i, baton_log_row *out) {
    if (log == NULL || out == NULL || i < 0 || i >= log->log.nrows) return BATON_EINVAL;
    const nt_row_t *r = &log->log.rows[i];
    *out = (baton_log_row){.bytes = r->bytes, .oop_s = r->oop_us < 0 ? -1 : r->oop_us * 1e-6,
                           .ip_s = r->ip_us < 0 ? -1 : r->ip_us * 1e-6, .line = r->line};
    return 0;
}

/* ---- calibration ----------------------------------------------------------- */

/* One log's samples appended to *all (and its TUNING lines' plan to rules). */
static int add_log(topo_t *t, const char *path, cal_sample_t **all, int *n, topo_lib_rule_t *rules, int *nrules,
                   baton_err_t *e) {
    nt_log_t log;
    cal_sample_t *s = NULL;
    int m = 0, rc = nt_parse(path, 0, &log, e);
    if (rc < 0) return rc;
    if (log.ranks != topo_whole_ranks(t)) {
        err_set(e, BATON_EINVAL, "%s ran on %d ranks but %s has %d: load the machine with the log's node count "
                "(--set nodes=N)", path, log.ranks, topo_name(t), topo_whole_ranks(t));
        nt_free(&log);
        return e->code;
    }
    char why[512];               /* a run doctor calls broken is no machine's: `baton calibrate` refuses it too */
    for (int k = 0; k < 2; k++)
        if (nt_broken_text(&log, path, k, why, sizeof why)) {
            err_set(e, BATON_EINVAL, "%s; doctor calls this run broken: calibrate fits only runs that completed with "
                    "right results", why);
            nt_free(&log);
            return e->code;
        }
    tuningplan_rules(&log, topo_whole_ranks(t), rules, nrules, TOPO_MAX_LIB_RULES);
    rc = cal_samples(&log, &s, &m, e);
    nt_free(&log);
    if (rc < 0) return rc;
    cal_sample_t *g = realloc(*all, ((size_t)*n + (size_t)m) * sizeof *g + 1);
    if (g == NULL) { free(s); return err_set(e, BATON_ENOMEM, "out of memory"); }
    memcpy(g + *n, s, (size_t)m * sizeof *s);
    *all = g;
    *n += m;
    free(s);
    return 0;
}

BATON_API int baton_calibrate(baton_machine *m, const char *const *logs, int nlogs, baton_fit *out, baton_error *err) {
    baton_err_t e = {0};
    if (m == NULL || logs == NULL || nlogs < 1 || out == NULL)
        return fail_now(err, BATON_EINVAL, "baton_calibrate: a machine, at least one log and a result");
    cal_sample_t *s = NULL;
    topo_lib_rule_t rules[TOPO_MAX_LIB_RULES];
    char why[1024];
    int n = 0, nrules = 0, rc = 0;
    for (int i = 0; rc == 0 && i < nlogs; i++) rc = add_log(m->t, logs[i], &s, &n, rules, &nrules, &e);
    if (rc == 0) tuningplan_apply(m->t, rules, nrules, why, sizeof why);   /* NCCL's word on its plan, where it can */
    cal_req_t q = {.algo = "nccl", .proto = RUN_PROTO_AUTO};
    cal_fit_t f;
    double before = rc == 0 ? cal_mape(m->t, &q, s, n, -1, 0, &e) : -1;
    if (rc == 0 && e.code) rc = e.code;
    if (rc == 0) rc = cal_fit(m->t, &q, s, n, &f, &e);
    double after = rc == 0 ? cal_mape(m->t, &q, s, n, -1, 0, &e) : -1;
    if (rc == 0 && e.code) rc = e.code;
    free(s);
    if (rc < 0) return fail(err, &e);
    *out = (baton_fit){.sizes = f.used, .mape_pct = after, .mape_before_pct = before};
    ok(err);
    return 0;
}
