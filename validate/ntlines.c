/* ntlines.c - an nccl-tests log's lines (ntlines.h). The JSON's keys are
 * those of NVIDIA/nccl-tests src/util.cu at a0b82b2 (2.19.6, JSON_FILE_VERSION
 * 3; JSON output from 00f5281, after v2.17.3): version, args, env,
 * nccl_version, config {nthreads, ngpus, minimum_bytes, maximum_bytes,
 * step_factor | step_bytes, warmup_iters, iterations, aggregated_iterations,
 * validation, graph, ..., devices [{rank, group, pid, hostname, device,
 * device_hex, device_info}]}, results [{size, count, type, redop, root,
 * out_of_place | null, in_place {time | cpu_time, alg_bw, bus_bw, nwrong |
 * null}, out_of_place_per_iter, in_place_per_iter {min_us, max_us, p99_us,
 * cv_pct, ...} (-I 1)}], out_of_bounds, average_bus_bandwidth. Under MPI
 * `devices` holds one entry a process (its first rank: parseRankInfo reads
 * one line of each process's), each standing for nthreads x ngpus ranks. */
#include "ntlines.h"

#include <errno.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sim/answer/report.h"

#define NTL_MAX_RANKS 4194304         /* = nccltests.c's NT_MAX_RANKS, TOPO_MAX_NODES */

typedef struct {
    const char *path;
    ntl_fn fn;
    void *ctx;
    baton_err_t *e;
    const report_jv_t *doc;
    int per_group;           /* ranks one `devices` entry stands for: nthreads x ngpus */
} jctx_t;

/* Hand one formatted line on. */
static int emit(jctx_t *c, int lineno, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int emit(jctx_t *c, int lineno, const char *fmt, ...) {
    char buf[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return c->fn(c->ctx, buf, lineno, c->e);
}

/* The line of byte `at` of text. */
static int line_at(const char *text, long at) {
    int line = 1;
    for (long i = 0; i < at && text[i]; i++) line += text[i] == '\n';
    return line;
}

/* The line each element of the top-level "results" list starts on (nccl-tests
 * writes the whole document on line 1; a file pretty-printed since has many):
 * a scan that knows strings and nesting only, run on a document that parsed. */
static void result_lines(const char *s, int *line, int n) {
    int depth = 0, ln = 1, key = 0, in = 0, k = 0;
    for (const char *p = s; *p && k < n; p++) {
        if (*p == '\n') ln++;
        else if (*p == '"') {
            const char *q = p + 1;
            for (; *q && *q != '"'; q++) {
                if (*q == '\\' && q[1]) q++;
                ln += *q == '\n';
            }
            if (depth == 1) key = q - p - 1 == 7 && strncmp(p + 1, "results", 7) == 0;
            if (*q == '\0') break;
            p = q;
        } else if (*p == '[' || *p == '{') {
            if (depth == 1 && key && *p == '[') in = 1;
            else if (depth == 2 && in && *p == '{') line[k++] = ln;
            depth++;
        } else if (*p == ']' || *p == '}') {
            if (--depth == 1) in = 0, key = 0;
        }
    }
    for (; k < n; k++) line[k] = 1;
}

static double num_or(const report_jv_t *v, const char *key, double dflt) {
    double x;
    return report_jv_num(report_jv_get(v, key), &x) == 0 ? x : dflt;
}

/* "# Collective test starting: ./all_reduce_perf" (args[0], the program),
 * the NCCL version and the header line, as writeDeviceReport prints them. */
static int header(jctx_t *c) {
    const char *prog = report_jv_str(report_jv_at(report_jv_get(c->doc, "args"), 0));
    const report_jv_t *cfg = report_jv_get(c->doc, "config");
    double v, nt = num_or(cfg, "nthreads", 0), ng = num_or(cfg, "ngpus", 0);
    int rc = prog ? emit(c, 1, "# Collective test starting: %s", prog) : 0;
    if (rc == 0 && report_jv_num(report_jv_get(c->doc, "nccl_version"), &v) == 0 && v > 0 && v < 1e6)
        rc = emit(c, 1, "# nccl-tests JSON nccl-library=%d", (int)v);
    if (rc < 0 || nt < 1 || ng < 1 || nt * ng > 1e7) return rc;
    c->per_group = (int)nt * (int)ng;
    double step = num_or(cfg, "step_factor", -1);
    return emit(c, 1, "# nThread %d nGpus %d minBytes %.0f maxBytes %.0f step: %.0f(%s) warmup iters: %.0f iters: %.0f "
                "agg iters: %.0f validation: %.0f graph: %.0f", (int)nt, (int)ng, num_or(cfg, "minimum_bytes", 0),
                num_or(cfg, "maximum_bytes", 0), step > 0 ? step : num_or(cfg, "step_bytes", 0), step > 0 ? "factor" : "bytes",
                num_or(cfg, "warmup_iters", 5), num_or(cfg, "iterations", 20), num_or(cfg, "aggregated_iterations", 1),
                num_or(cfg, "validation", 1), num_or(cfg, "graph", 0));
}

/* A Rank line for every rank a `devices` entry stands for. */
static int devices(jctx_t *c) {
    const report_jv_t *d = report_jv_get(report_jv_get(c->doc, "config"), "devices");
    int n = report_jv_len(d), rc = 0, each = c->per_group > 0 ? c->per_group : 1;
    if ((double)n * each > NTL_MAX_RANKS)                 /* nccltests.c's bound: no machine we load has more */
        return err_set(c->e, BATON_EPARSE, "%s:1: %d devices of %d ranks each: more than %d ranks", c->path, n, each,
                       NTL_MAX_RANKS);
    for (int i = 0; i < n && rc == 0; i++) {
        const report_jv_t *x = report_jv_at(d, i);
        const char *host = report_jv_str(report_jv_get(x, "hostname")), *hex = report_jv_str(report_jv_get(x, "device_hex"));
        const char *info = report_jv_str(report_jv_get(x, "device_info"));
        int rank = (int)num_or(x, "rank", i * each), dev = (int)num_or(x, "device", 0);
        for (int k = 0; k < each && rc == 0; k++)
            rc = emit(c, 1, "#  Rank %2d Group %2d Pid %6d on %10s device %2d [%s] %s", rank + k, (int)num_or(x, "group", 0),
                      (int)num_or(x, "pid", 0), host ? host : "?", dev + k, hex ? hex : "?", info ? info : "");
    }
    return rc;
}

/* NCCL_* variables of the run's environment, as NCCL's INFO lines say them. */
static int environment(jctx_t *c) {
    const report_jv_t *env = report_jv_get(c->doc, "env");
    int rc = 0;
    for (int i = 0; i < report_jv_len(env) && rc == 0; i++) {
        const char *s = report_jv_str(report_jv_at(env, i)), *eq = s ? strchr(s, '=') : NULL;
        if (eq && strncmp(s, "NCCL_", 5) == 0 && eq[1])
            rc = emit(c, 1, "NCCL INFO %.*s set by environment to %s", (int)(eq - s), s, eq + 1);
    }
    return rc;
}

/* Does any row carry per-iteration times (nccl-tests -I 1)? */
static int per_iter(const report_jv_t *res) {
    for (int i = 0; i < report_jv_len(res); i++) {
        const report_jv_t *r = report_jv_at(res, i);
        if (report_jv_get(r, "out_of_place_per_iter") || report_jv_get(r, "in_place_per_iter")) return 1;
    }
    return 0;
}

/* One of a row's groups ("out_of_place" or "in_place") as its text columns
 * at out: time algbw busbw #wrong [i_min i_max i_p99 i_cv%]; 0, 1 where the
 * row has no such group (null: only in-place ran), or an error. */
static int group(jctx_t *c, const report_jv_t *row, const char *name, int iter, int line, int i, char *out, size_t n) {
    const report_jv_t *g = report_jv_get(row, name);
    char key[32];
    double t, w;
    if (report_jv_null(g)) return 1;
    const report_jv_t *tv = report_jv_get(g, "time") ? report_jv_get(g, "time") : report_jv_get(g, "cpu_time");
    if (report_jv_num(tv, &t) == 0 && (t < 0 || !isfinite(t)))
        return err_set(c->e, BATON_EPARSE, "%s:%d: results[%d].%s: the time %g is not one a run gives (a finite number "
                       "of microseconds, not below 0)", c->path, line, i, name, t);
    if (report_jv_num(tv, &t) < 0)
        return err_set(c->e, BATON_EPARSE, "%s:%d: results[%d].%s: no time (a number of microseconds: \"time\" or "
                       "\"cpu_time\")%s", c->path, line, i, name, report_jv_str(tv) ? ", it reads \"nan\"" : "");
    int wrong = report_jv_num(report_jv_get(g, "nwrong"), &w) == 0;
    size_t at = (size_t)snprintf(out, n, " %.17g %.17g %.17g %s", t, num_or(g, "alg_bw", 0), num_or(g, "bus_bw", 0),
                                 wrong ? "" : "N/A");
    if (wrong && at < n) at += (size_t)snprintf(out + at, n - at, "%.17g", w);
    if (!iter || at >= n) return 0;
    snprintf(key, sizeof key, "%s_per_iter", name);
    const report_jv_t *p = report_jv_get(row, key);
    const char *f[4] = {"min_us", "max_us", "p99_us", "cv_pct"};
    for (int k = 0; k < 4 && at < n; k++) {
        double x;
        if (report_jv_num(report_jv_get(p, f[k]), &x) < 0)
            return err_set(c->e, BATON_EPARSE, "%s:%d: results[%d].%s.%s: not a number (the other rows have per-iteration "
                           "times, nccl-tests -I 1)", c->path, line, i, key, f[k]);
        at += (size_t)snprintf(out + at, n - at, " %.17g", x);
    }
    return 0;
}

/* A result as the row nccl-tests prints: size count type redop root, then
 * the out-of-place and in-place columns. */
static int row(jctx_t *c, const report_jv_t *r, int line, int i, int iter) {
    char oop[512], ip[512];
    double size, count;
    const char *type = report_jv_str(report_jv_get(r, "type")), *op = report_jv_str(report_jv_get(r, "redop"));
    const char *root = report_jv_str(report_jv_get(r, "root"));
    if (report_jv_num(report_jv_get(r, "size"), &size) < 0 || report_jv_num(report_jv_get(r, "count"), &count) < 0 ||
        size < 0 || count < 0 || size > 1e19 || count > 1e19)
        return err_set(c->e, BATON_EPARSE, "%s:%d: results[%d]: no size or count (numbers of bytes and elements)", c->path,
                       line, i);
    if (type == NULL || op == NULL)
        return err_set(c->e, BATON_EPARSE, "%s:%d: results[%d]: no type or redop (strings: \"float\", \"sum\")", c->path,
                       line, i);
    if (ntl_type_size(type) == 0 || !*op || op[strcspn(op, " \t\r\n")])
        return err_set(c->e, BATON_EPARSE, "%s:%d: results[%d]: type \"%.24s\" and redop \"%.24s\": a type nccl-tests "
                       "runs (float, half, bfloat16, int32, ...) and one word", c->path, line, i, type, op);
    double rootn = num_or(r, "root", -1);
    char rootbuf[24];
    if (root == NULL) snprintf(rootbuf, sizeof rootbuf, "%d", (int)rootn), root = rootbuf;
    while (*root == ' ') root++;                        /* written "%6i": "    -1" */
    int a = group(c, r, "out_of_place", iter, line, i, oop, sizeof oop);
    int b = a < 0 ? a : group(c, r, "in_place", iter, line, i, ip, sizeof ip);
    if (b < 0) return b;
    if (a && b) return err_set(c->e, BATON_EPARSE, "%s:%d: results[%d]: neither out_of_place nor in_place", c->path, line, i);
    return emit(c, line, "%llu %llu %s %s %s%s%s", (unsigned long long)size, (unsigned long long)count, type, op, root,
                a ? "" : oop, b ? "" : ip);
}

/* The column header, the rows, the footer. */
static int results(jctx_t *c, const char *text) {
    const report_jv_t *res = report_jv_get(c->doc, "results");
    int n = report_jv_len(res), iter = per_iter(res), rc = 0;
    const char *g = iter ? "time algbw busbw #wrong i_min i_max i_p99 i_cv%" : "time algbw busbw #wrong";
    int *lines = malloc(((size_t)n + 1) * sizeof *lines);
    if (lines == NULL) return err_set(c->e, BATON_ENOMEM, "out of memory");
    result_lines(text, lines, n);
    rc = emit(c, 1, "#  size count type redop root %s %s", g, g);
    for (int i = 0; i < n && rc == 0; i++) rc = row(c, report_jv_at(res, i), lines[i], i, iter);
    free(lines);
    const report_jv_t *oob = report_jv_get(c->doc, "out_of_bounds"), *avg = report_jv_get(c->doc, "average_bus_bandwidth");
    if (rc == 0 && oob) rc = emit(c, 1, "# Out of bounds values : %.0f", num_or(oob, "count", 0));
    if (rc == 0 && avg) rc = emit(c, 1, "# Avg bus bandwidth    : %g", num_or(avg, "bandwidth", 0));
    return rc;
}

static int from_json(const char *path, const char *text, ntl_fn fn, void *ctx, baton_err_t *e) {
    long at = 0;
    report_jv_t *doc = report_jv_parse(text, &at);
    if (doc == NULL && at < 0) return err_set(e, BATON_ENOMEM, "out of memory");
    if (doc == NULL)
        return err_set(e, BATON_EPARSE, "%s:%d: not valid JSON here (byte %ld)%s", path, line_at(text, at), at + 1,
                       text[at] ? "" : ": the file ends inside the document (cut short?)");
    jctx_t c = {.path = path, .fn = fn, .ctx = ctx, .e = e, .doc = doc};
    int rc = 0;
    if (report_jv_len(report_jv_get(doc, "results")) < 0)
        rc = err_set(e, BATON_EPARSE, "%s:1: JSON, but not nccl-tests' output (-J): no \"results\" list", path);
    if (rc == 0) rc = header(&c);
    if (rc == 0) rc = devices(&c);
    if (rc == 0) rc = environment(&c);
    if (rc == 0) rc = results(&c, text);
    report_jv_free(doc);
    return rc;
}

/* The whole file, NUL-terminated (malloc'd), or NULL with e set. */
static char *slurp(FILE *f, const char *path, baton_err_t *e) {
    size_t n = 0, cap = 1 << 16;
    char *s = malloc(cap);
    for (size_t k; s && (k = fread(s + n, 1, cap - n - 1, f)) > 0;) {
        n += k;
        if (n + 1 == cap) {
            char *t = realloc(s, cap *= 2);
            if (t == NULL) free(s);
            s = t;
        }
    }
    if (s == NULL) { err_set(e, BATON_ENOMEM, "out of memory"); return NULL; }
    if (ferror(f)) { free(s); err_set(e, BATON_EIO, "%s: cannot read: %s", path, strerror(errno ? errno : EIO)); return NULL; }
    s[n] = '\0';
    if (strlen(s) != n) { free(s); err_set(e, BATON_EPARSE, "%s: a NUL byte in a JSON file", path); return NULL; }
    return s;
}

int ntl_each(const char *path, ntl_fn fn, void *ctx, int *json, baton_err_t *e) {
    FILE *f = fopen(path, "r");
    if (f == NULL) return err_set(e, BATON_EIO, "%s: cannot open: %s", path, strerror(errno));
    int ch;
    while ((ch = getc(f)) == ' ' || ch == '\t' || ch == '\n' || ch == '\r') {}
    rewind(f);
    if (json) *json = ch == '{';
    int rc = 0, line = 0;
    if (ch == '{') {
        char *text = slurp(f, path, e);
        rc = text ? from_json(path, text, fn, ctx, e) : -1;
        free(text);
        fclose(f);
        return rc;
    }
    char buf[4096];
    errno = 0;
    while (rc == 0 && fgets(buf, sizeof buf, f)) rc = fn(ctx, buf, ++line, e);
    if (rc == 0 && ferror(f)) rc = err_set(e, BATON_EIO, "%s: cannot read: %s", path, strerror(errno ? errno : EIO));
    fclose(f);
    return rc;
}

int ntl_type_size(const char *t) {
    static const struct { const char *name; int size; } types[] = {
        {"int8", 1}, {"uint8", 1}, {"char", 1}, {"fp8", 1}, {"f8e4m3", 1}, {"f8e5m2", 1},
        {"half", 2}, {"float16", 2}, {"bfloat16", 2}, {"bf16", 2},
        {"int32", 4}, {"uint32", 4}, {"int", 4}, {"float", 4}, {"float32", 4},
        {"int64", 8}, {"uint64", 8}, {"double", 8}, {"float64", 8}, {NULL, 0}};
    for (int i = 0; types[i].name; i++)
        if (strcmp(t, types[i].name) == 0) return types[i].size;
    return 0;
}
