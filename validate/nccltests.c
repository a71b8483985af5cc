/* nccltests.c - a line-by-line reader: strip a launcher prefix, learn from
 * comment lines (test name, columns, ranks), take rows that look like rows,
 * refuse rows that look like rows but do not read. */
#include "nccltests.h"

#include "ntlines.h"
#include "tuninglines.h"
#include "../topologies/units.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int have_coll, has_root_col, rank_lines, nthread, ngpus;
    int top_rank;              /* the highest "Rank N" seen, -1 none: an excerpt may keep only the last line */
    int info_nranks;         /* the most an NCCL INFO "comm ... rank R nranks N" line names */
    int counts_wrong;        /* the header's check column is `#wrong` (a count), not the old `error` (a
                                float's relative error, small and nonzero on a good run) */
    int group;               /* columns a group (out-of-place, in-place) has: 4, 8 with -I 1's
                                i_min i_max i_p99 i_cv% */
    const char *path;
    nt_log_t *log;
    int cap, plan_cap;
    char pend[512];          /* a row NCCL's INFO lines cut apart: its columns so far */
    int pend_line, npend;
    int version_said;        /* NCCL's "NCCL version" line was read (nccl-tests' number yields to it) */
    const char *other;       /* a test baton has no collective for, named on line other_line */
    int other_line;
    int header_line;         /* the "# nThread" line of the run read; a second one starts another run */
    struct { uint64_t hash; int ranks; } *host;   /* the Rank lines' hosts by name (FNV-1a), open addressing */
    int nhost;               /* hosts seen; -1: more than NT_MAX_HOSTS, not counted */
    char redop[16];          /* the first row's type and operation: one series a log */
    int step_bytes;          /* the header's step is in bytes (-i): sizes rounded to whole elements a
                                rank may print the same size twice running */
    int width;               /* the most columns a row had: a narrower one later was cut off */
    int cut_n;               /* that narrower row's columns (log->cut_line its line) */
} state_t;

/* Skip "[1,0]<stdout>:", "[0] " or " 12: " at the start of a line. */
static char *strip_prefix(char *s) {
    if (s[0] == '[') {
        char *p = strstr(s, "]<stdout>:");
        if (p == NULL) p = strstr(s, "]<stderr>:");
        if (p) return p + 10;
        for (p = s + 1; isdigit((unsigned char)*p); p++) {}
        if (p > s + 1 && p[0] == ']' && p[1] == ' ') return p + 2;
    }
    char *p = s;
    while (*p == ' ') p++;
    if (isdigit((unsigned char)*p)) {
        char *q = p;
        while (isdigit((unsigned char)*q)) q++;
        if (q[0] == ':' && q[1] == ' ') return q + 2;
    }
    return s;
}

static const struct { const char *test; coll_t coll; } tests[] = {
    {"all_reduce_perf", COLL_ALLREDUCE}, {"all_gather_perf", COLL_ALLGATHER},
    {"reduce_scatter_perf", COLL_REDUCE_SCATTER}, {"broadcast_perf", COLL_BROADCAST},
    {"reduce_perf", COLL_REDUCE}, {"alltoall_perf", COLL_ALLTOALL}, {NULL, 0}};

/* nccl-tests' point-to-point and rooted-copy tests: their tables look like
 * an all-reduce's or an all-gather's, so a log of one would be read as that
 * (a sendrecv_perf log validated 108 % off as an all-reduce). */
static const char *const others[] = {"sendrecv_perf", "scatter_perf", "gather_perf", "hypercube_perf", NULL};

/* Does line s name test, where a word starts (after a path's '/' too)? Not
 * after '_' where alone says so: reduce_perf in all_reduce_perf, gather_perf
 * in all_gather_perf. */
static int names(const char *s, const char *test, int alone) {
    const char *p = strstr(s, test);
    return p && (p == s || (!isalpha((unsigned char)p[-1]) && !(alone && p[-1] == '_')));
}

/* The test's name anywhere in the line (a command line or "test starting"). */
static void learn_test(state_t *st, const char *s, int line) {
    for (int i = 0; others[i] && !st->have_coll && !st->other; i++)
        if (names(s, others[i], 1)) st->other = others[i], st->other_line = line;
    for (int i = 0; tests[i].test && !st->have_coll; i++)
        if (names(s, tests[i].test, tests[i].coll == COLL_REDUCE)) {
            st->log->coll = tests[i].coll;
            st->have_coll = 1;
            st->log->coll_guessed = 0;
        }
}

#define NT_MAX_RANKS 4194304      /* = TOPO_MAX_NODES: no machine we load has more */

/* "Rank 3 Group 0 Pid 9448 on dgx-2d device 3": one more rank on host dgx-2d.
 * Hosts are told apart by a 64-bit hash of the name (mpirun --map-by node
 * interleaves them, so runs of equal names would not do). */
#define NT_MAX_HOSTS 4096
static void learn_host(state_t *st, const char *s) {
    const char *on = strstr(s, " on "), *dev = on ? strstr(on + 4, " device") : NULL;
    if (dev == NULL || st->nhost < 0) return;
    uint64_t h = 1469598103934665603ull;
    for (const char *c = on + 4; c < dev; c++) h = (h ^ (unsigned char)*c) * 1099511628211ull;
    if (h == 0) h = 1;                                   /* 0 marks an empty slot */
    if (st->host == NULL && (st->host = calloc(2 * NT_MAX_HOSTS, sizeof *st->host)) == NULL) { st->nhost = -1; return; }
    size_t i = h % (2 * NT_MAX_HOSTS);
    while (st->host[i].hash && st->host[i].hash != h) i = (i + 1) % (2 * NT_MAX_HOSTS);
    if (st->host[i].hash == 0 && st->nhost == NT_MAX_HOSTS) { st->nhost = -1; return; }
    if (st->host[i].hash == 0) st->host[i].hash = h, st->nhost++;
    st->host[i].ranks++;
}

/* The hosts counted, and the ranks each holds where all hold as many;
 * unknown (0) where the Rank lines are an excerpt (one "Rank 143" line of
 * 144 ranks names one host of many). */
static void count_hosts(state_t *st) {
    if (st->nhost <= 0 || st->top_rank + 1 > st->rank_lines) return;
    st->log->hosts = st->nhost;
    st->log->per_host = -1;
    for (int i = 0; i < 2 * NT_MAX_HOSTS; i++) {
        if (st->host[i].hash == 0) continue;
        if (st->log->per_host < 0) st->log->per_host = st->host[i].ranks;
        else if (st->log->per_host != st->host[i].ranks) st->log->per_host = 0;
    }
}

/* "device  0 [0x0f] NVIDIA A100-SXM4-40GB": the GPU's name, for the check
 * against the machine's. */
static void learn_device(nt_log_t *log, const char *p) {
    const char *b = strchr(p, ']');
    if (b == NULL) return;
    for (b++; *b == ' '; b++) {}
    size_t n = strcspn(b, "\r\n");
    while (n > 0 && b[n - 1] == ' ') n--;
    snprintf(log->device, sizeof log->device, "%.*s", (int)(n < sizeof log->device ? n : sizeof log->device - 1), b);
}

/* How the header says the rows were timed: "agg iters: 4" (-m 4: each
 * timed iteration is a group of four calls, its time divided among them)
 * and "graph: 1" (-G 1: the iterations replayed as CUDA graphs, so no host
 * launch per call), and "warmup iters: 0" (-w 0: no untimed call first);
 * also its iterations and step, kept as said. Older headers say none of
 * these: one call, launched, after warm-up. */
static void learn_timing(nt_log_t *log, const char *header, int line) {
    const char *a = strstr(header, "agg iters:"), *g = strstr(header, "graph:"), *w = strstr(header, "warmup iters:");
    const char *n = strstr(w ? w + 13 : header, " iters:"), *st = strstr(header, "step:");
    long v;
    char unit[8];
    log->header_line = line;
    if (w && sscanf(w, "warmup iters: %9ld", &v) == 1 && v >= 0) log->warmup_iters = (int)v, log->warmup_none = v == 0;
    if (n && !(a && n == a + 3) && sscanf(n, " iters: %9ld", &v) == 1 && v > 0) log->iters = (int)v;   /* not agg's */
    if (st && sscanf(st, "step: %18ld(%7[a-z])", &v, unit) == 2 && v > 0 && (!strcmp(unit, "factor") || !strcmp(unit, "bytes")))
        log->step = (uint64_t)v, log->step_factor = !strcmp(unit, "factor");
    if (a && sscanf(a, "agg iters: %9ld", &v) == 1 && v > 1) log->agg_iters = (int)v;
    if (g && sscanf(g, "graph: %9ld", &v) == 1 && v > 0) log->graph = (int)v;
}

/* Does the header step sizes by bytes ("step: 1024(bytes)", -i), not by a
 * factor ("step: 2(factor)", -f)? */
static int step_in_bytes(const char *header) {
    const char *p = strstr(header, "step:");
    long v;
    return p && sscanf(p, "step: %9ld", &v) == 1 && v > 0 && strncmp(p + strcspn(p, "("), "(bytes)", 7) == 0;
}

/* A comment line: the test, the header's columns, nThread x nGpus, a Rank
 * line. A second "# nThread" header is a second run appended to the first
 * (`for t in ...; do ./$t; done > log`): its rows would be read as the
 * first's collective and its Rank lines counted twice, so it is an error. */
static int learn_comment(state_t *st, const char *s, int line, const char *path, baton_err_t *e) {
    const char *p = strstr(s, "nThread");
    long nt = 0, ng = 0;                        /* long and bounded: a corrupt header must not overflow */
    int header = p && sscanf(p, "nThread %9ld nGpus %9ld", &nt, &ng) == 2;
    if (header && st->header_line)
        return err_set(e, BATON_EPARSE, "%s:%d: a second run starts here (the first's header is line %d): baton reads "
                       "one run a log; split the file and give each part (--nccl-tests A.txt B.txt)", path, line,
                       st->header_line);
    if (header) st->header_line = line;
    if (strstr(s, "Out of bounds values") || strstr(s, "Avg bus bandwidth")) st->log->closed = 1;
    learn_test(st, s, line);
    if (strstr(s, "size") && strstr(s, "count") && strstr(s, "type")) {
        st->has_root_col = strstr(s, "root") != NULL;
        st->counts_wrong = strstr(s, "#wrong") != NULL;
        st->group = strstr(s, "i_min") ? 8 : 4;
        st->log->per_iter = st->group == 8;
    }
    if (header && nt > 0 && ng > 0 && nt * ng <= NT_MAX_RANKS) {
        st->nthread = (int)nt;
        st->ngpus = (int)ng;
    }
    if (header) learn_timing(st->log, p, line);
    if (header) st->step_bytes = step_in_bytes(p);
    if (strstr(s, " Rank ") && strstr(s, "device") && st->rank_lines < NT_MAX_RANKS) {
        int r;
        if (st->rank_lines++ == 0) learn_device(st->log, strstr(s, "device"));
        if (sscanf(strstr(s, " Rank "), " Rank %d", &r) == 1 && r > st->top_rank && r < NT_MAX_RANKS) st->top_rank = r;
        learn_host(st, s);
    }
    return 0;
}

/* Every row of one type and operation: nccl-tests -d all or -o all prints a
 * series per pair, the same sizes again, which would be read as repeats of
 * one. */
static int same_series(state_t *st, char **tok, int line, const char *path, baton_err_t *e) {
    const char *op = tok[3];
    if (st->log->nrows == 0) {
        snprintf(st->redop, sizeof st->redop, "%s", op);
        return 0;
    }
    if (strcmp(tok[2], st->log->type) == 0 && strcmp(op, st->redop) == 0) return 0;
    return err_set(e, BATON_EPARSE, "%s:%d: this row is %s %s, the rows before it %s %s: the log holds several series "
                   "(nccl-tests -d all or -o all) and baton reads one; keep one type and operation's rows", path, line,
                   tok[2], op, st->log->type, st->redop);
}

/* Does the row carry on the table (0), is it left out (1), or is the log
 * not one run (-1, e set)? As many columns as the rows before it: a
 * narrower one stops after its out-of-place group, a row cut off, which
 * only the last row may be (an NCCL failure on the in-place call prints
 * its words on the next line): it is dropped and said. A size not below the
 * last one: nccl-tests runs its sizes upward. Back at the first row's size,
 * a second sweep starts (nccl-tests -N repeats the sweep with no header; a
 * rooted test's -r -1 sweeps each root): the first is read, the rest said
 * and skipped, never counted twice. Any other size below is a rerun pasted
 * without its header. The same size again only where rounding makes it: 0
 * bytes (a rank's count rounded down to none), or a step in bytes (-i)
 * smaller than what a rank's count rounds to. */
static int same_table(state_t *st, char **tok, int n, int line, const char *path, baton_err_t *e) {
    char at[48] = "", prev[48];
    int k = st->log->nrows;
    if (st->log->cycle_line) return 1;
    if (st->log->json) snprintf(at, sizeof at, " results[%d]:", k);    /* a JSON file's rows may share its one line */
    if (st->log->cut_line)
        return err_set(e, BATON_EPARSE, "%s:%d: this row has %d columns, the rows before it %d, and rows follow it: it "
                       "stops after its out-of-place columns (is the log cut off there?)", path, st->log->cut_line,
                       st->cut_n, st->width);
    if (n < st->width) {
        st->log->cut_line = line, st->cut_n = n;
        return 1;
    }
    if (n > st->width) st->width = n;
    if (k == 0) return 0;
    const nt_row_t *last = &st->log->rows[k - 1];
    unsigned long long b = strtoull(tok[0], NULL, 10), was = last->bytes;
    if (st->log->json) snprintf(prev, sizeof prev, "results[%d]", k - 1);
    else snprintf(prev, sizeof prev, "line %d", last->line);
    if (b < was && b == st->log->rows[0].bytes) {
        st->log->cycle_line = line;
        return 1;
    }
    if (b < was)
        return err_set(e, BATON_EPARSE, "%s:%d:%s the size %llu bytes is below the row before it's (%llu bytes, %s): "
                       "nccl-tests runs its sizes upward, so a second run, or a rerun of some sizes, starts here without "
                       "its header; baton reads one run a log: split the file and give each part (--nccl-tests A.txt "
                       "B.txt)", path, line, at, b, was, prev);
    if (b == was && b > 0 && !st->step_bytes)
        return err_set(e, BATON_EPARSE, "%s:%d:%s the size %llu bytes again (%s has it): nccl-tests runs a size once "
                       "(stepping by a factor, only 0 bytes repeats), so a rerun of it was pasted here and would count "
                       "twice; keep one of the two rows", path, line, at, b, prev);
    return 0;
}

static int number(const char *tok, double *v) {
    char *end;
    if (strcmp(tok, "N/A") == 0) { *v = -1; return 0; }
    errno = 0;
    *v = strtod(tok, &end);
    return end == tok || *end || errno ? -1 : 0;
}

/* A time no run gives: not finite, negative, 0 for a size above 0 (which
 * validate would drop unsaid), or above 1e12 us (11.6 days). N/A (-1) is
 * the caller's to allow. */
static int bad_time(double us, const char *size) {
    return !isfinite(us) || us < 0 || us > 1e12 || (us == 0 && strtoull(size, NULL, 10) > 0);
}

/* -S 1's "2026-07-09 16:03:21" closing a row: its two columns, or 0. */
static int timestamp(char **tok, int n) {
    int y, mo, d, h, mi, sec;
    char c;
    return n >= 2 && sscanf(tok[n - 2], "%4d-%2d-%2d%c", &y, &mo, &d, &c) == 3 &&
           sscanf(tok[n - 1], "%2d:%2d:%2d%c", &h, &mi, &sec, &c) == 3 ? 2 : 0;
}

/* A group's -I 1 columns i_min i_max i_p99 i_cv% (at tok), or absent. */
static nt_iter_t iter_of(state_t *st, char **tok, int have) {
    nt_iter_t x = {.min_us = -1};
    if (st->group == 8 && have)
        x = (nt_iter_t){atof(tok[0]), atof(tok[1]), atof(tok[2]), atof(tok[3])};
    return x;
}

/* A row: size count type redop [root] time algbw busbw wrong [i_min i_max i_p99 i_cv%] and again
 * for in-place [timestamp]. */
static int read_row(state_t *st, char **tok, int n, int line, const char *path, baton_err_t *e) {
    n -= timestamp(tok, n);
    int g = st->group ? st->group : 4;
    int root = st->has_root_col >= 0 ? st->has_root_col : (n == 5 + 2 * g || n == 5 + g);
    int at = 4 + root;
    double oop, ip = -1, x;
    if (n != at + g && n != at + 2 * g)
        return err_set(e, BATON_EPARSE, "%s:%d: cannot read this row: %d columns, expected %d or %d%s", path, line, n,
                       at + g, at + 2 * g, n < at + g ? " (is the log cut off?)" : "");
    if (number(tok[at], &oop) < 0 || oop < 0 || (n == at + 2 * g && (number(tok[at + g], &ip) < 0)))
        return err_set(e, BATON_EPARSE, "%s:%d: cannot read the time in this row", path, line);
    if (bad_time(oop, tok[0]) || (n == at + 2 * g && ip != -1 && bad_time(ip, tok[0])))
        return err_set(e, BATON_EPARSE, "%s:%d: the time '%s' is not one a run gives (a time is a finite number of "
                       "microseconds, above 0 for a size above 0, at most 1e12)", path, line,
                       bad_time(oop, tok[0]) ? tok[at] : tok[at + g]);
    if (same_series(st, tok, line, path, e) < 0) return -1;
    int rc = same_table(st, tok, n, line, path, e);
    if (rc != 0) return rc < 0 ? -1 : 0;
    for (int i = at + 1; i < n; i++)
        if (number(tok[i], &x) < 0) return err_set(e, BATON_EPARSE, "%s:%d: '%s' is not a number", path, line, tok[i]);
    if (st->log->nrows == st->cap) {
        st->cap = st->cap ? st->cap * 2 : 64;
        nt_row_t *r = realloc(st->log->rows, (size_t)st->cap * sizeof *r);
        if (r == NULL) return err_set(e, BATON_ENOMEM, "out of memory");
        st->log->rows = r;
    }
    int wrong = st->counts_wrong && (atof(tok[at + 3]) > 0 || (n == at + 2 * g && atof(tok[at + g + 3]) > 0));
    if (wrong && st->log->wrong_rows++ == 0) st->log->wrong_line = line;
    nt_row_t *r = &st->log->rows[st->log->nrows++];
    *r = (nt_row_t){.bytes = strtoull(tok[0], NULL, 10), .count = strtoull(tok[1], NULL, 10), .oop_us = oop,
                    .ip_us = ip, .line = line, .iter = {iter_of(st, tok + at + 4, 1), iter_of(st, tok + at + g + 4, n == at + 2 * g)},
                    .wrong = wrong};
    snprintf(st->log->type, sizeof st->log->type, "%s", tok[2]);
    if (!st->have_coll && root) {                      /* infer from the columns */
        int rooted = atoi(tok[4]) >= 0, none = strcmp(tok[3], "none") == 0;
        int ts = ntl_type_size(tok[2]);
        uint64_t ratio = ts && r->count ? r->bytes / (r->count * (uint64_t)ts) : 1;
        st->log->coll = rooted ? (none ? COLL_BROADCAST : COLL_REDUCE)
                               : none ? COLL_ALLGATHER : ratio > 1 ? COLL_REDUCE_SCATTER : COLL_ALLREDUCE;
        st->log->coll_guessed = 1;
    }
    return 0;
}

/* Does the line look like a row: a number, a number, a type name? (Then a
 * short one is a row cut off, an error, not a line to skip.) */
static int row_like(char **tok, int n) {
    return n >= 3 && isdigit((unsigned char)tok[0][0]) && isdigit((unsigned char)tok[1][0]) && ntl_type_size(tok[2]);
}

/* Where the NCCL INFO line whose "NCCL INFO" is at p starts in s: before
 * its "host:pid:tid [dev] " and a launcher's "[rank] " glued to what came
 * before it (nccl-tests prints a row's columns as it goes, and NCCL's lines
 * land in between: "... sum  -1[0] host:1:1 [0] NCCL INFO ..."). */
static char *info_start(char *s, char *p) {
    char *q = p;
    while (q > s && q[-1] == ' ') q--;
    if (q > s && q[-1] == ']') { while (q > s && q[-1] != '[') q--; if (q > s) q--; }      /* [dev] */
    while (q > s && q[-1] == ' ') q--;
    while (q > s && q[-1] != ' ' && q[-1] != ']') q--;                                     /* host:pid:tid */
    char *r = q;
    while (r > s && r[-1] == ' ') r--;
    if (r > s && r[-1] == ']') {                                                           /* [rank] */
        while (r > s && r[-1] != '[') r--;
        if (r > s) q = r - 1;
    }
    return q;
}

static int numeric(char **tok, int n) {
    double v;
    for (int i = 0; i < n; i++) if (number(tok[i], &v) < 0) return 0;
    return n > 0;
}

/* The columns a whole row has: 4 + root + two groups. */
static int whole_row(const state_t *st, int n) {
    int g = st->group ? st->group : 4;
    return st->has_root_col >= 0 ? 4 + st->has_root_col + 2 * g : n >= 5 + 2 * g ? 5 + 2 * g : 4 + 2 * g;
}

/* The row NCCL's lines cut apart, read from its columns so far. */
static int finish_pending(state_t *st, const char *path, baton_err_t *e) {
    char *tok[32];
    int n = 0;
    if (st->npend == 0) return 0;
    st->npend = 0;
    for (char *t = strtok(st->pend, " "); t && n < 32; t = strtok(NULL, " ")) tok[n++] = t;
    return read_row(st, tok, n, st->pend_line, path, e);
}

/* Add columns to the pending row; read it once whole. */
static int add_pending(state_t *st, char **tok, int n, int line, const char *path, baton_err_t *e) {
    size_t at = strlen(st->pend);
    if (st->npend == 0) at = 0, st->pend[0] = '\0', st->pend_line = line;
    for (int i = 0; i < n && at < sizeof st->pend; i++)
        at += (size_t)snprintf(st->pend + at, sizeof st->pend - at, "%s%s", at ? " " : "", tok[i]);
    st->npend += n;
    if (at >= sizeof st->pend) return err_set(e, BATON_EPARSE, "%s:%d: a row too long to read", path, st->pend_line);
    return st->npend >= whole_row(st, st->npend) ? finish_pending(st, path, e) : 0;
}

/* nccl-tests' own words for a run that failed (common.h: "%s: Test NCCL
 * failure %s:%d", "Test CUDA failure"), wherever the line is: the first. */
static void note_failure(nt_log_t *log, const char *s, int line) {
    const char *at = strstr(s, "Test NCCL failure");
    if (at == NULL) at = strstr(s, "Test CUDA failure");
    if (at == NULL || log->failed_line) return;
    log->failed_line = line;
    size_t n = strcspn(at, "\r\n");
    snprintf(log->failed_text, sizeof log->failed_text, "%.*s", (int)n, at);
}

/* The text of a line that is not NCCL's (or the part before NCCL's): a
 * comment, a row, a row's first columns (cut: NCCL's line followed), or
 * more columns of a row cut before. */
static int row_text(state_t *st, char *s, int line, int cut, const char *path, baton_err_t *e) {
    while (isspace((unsigned char)*s)) s++;
    if (*s == '\0') return 0;
    if (*s == '#' || *s == '>') {
        int rc = finish_pending(st, path, e);
        return rc < 0 ? rc : learn_comment(st, s, line, path, e);
    }
    learn_test(st, s, line);
    note_failure(st->log, s, line);
    int closing = strstr(s, "Out of bounds values") || strstr(s, "Avg bus bandwidth");   /* older nccl-tests: no '#' */
    char *tok[32];
    int n = 0;
    for (char *t = strtok(s, " \t\r\n"); t && n < 32; t = strtok(NULL, " \t\r\n")) tok[n++] = t;
    if (st->npend && numeric(tok, n)) return add_pending(st, tok, n, line, path, e);
    if (finish_pending(st, path, e) < 0) return -1;
    if (n > 0 && !strcmp(tok[0], "size")) return learn_comment(st, s, line, path, e);   /* an old header without '#' */
    if (!row_like(tok, n)) {                                                 /* warnings, ... */
        if (closing) st->log->closed = 1;
        else if (!cut && n > 0 && st->log->nrows > 0 && !st->log->closed && st->log->stray++ == 0) {   /* inside the table */
            st->log->stray_line = line;
            snprintf(st->log->stray_text, sizeof st->log->stray_text, "%s", tok[0]);
            for (int i = 1; i < n && strlen(st->log->stray_text) + strlen(tok[i]) + 2 < sizeof st->log->stray_text; i++)
                strcat(strcat(st->log->stray_text, " "), tok[i]);
        }
        return 0;
    }
    return cut ? add_pending(st, tok, n, line, path, e) : read_row(st, tok, n, line, path, e);
}

/* The NCCL version a line states: NCCL's own "NCCL version 2.19.3+cuda12.3"
 * (with NCCL_DEBUG=VERSION or INFO), or nccl-tests' header "nccl-library=21903". */
static void learn_version(state_t *st, const char *s) {
    const char *p = strstr(s, "NCCL version ");
    char v[32];
    int code;
    if (st->version_said) return;
    if (p && sscanf(p, "NCCL version %31s", v) == 1 && isdigit((unsigned char)v[0])) {     /* NCCL's own: with +cuda */
        snprintf(st->log->nccl_version, sizeof st->log->nccl_version, "%s", v);
        st->version_said = 1;
    } else if (!st->log->nccl_version[0] && (p = strstr(s, "nccl-library=")) && sscanf(p, "nccl-library=%d", &code) == 1 &&
               code >= 20000 && code < 100000)
        snprintf(st->log->nccl_version, sizeof st->log->nccl_version, "%d.%d.%d", code / 10000, code / 100 % 100, code % 100);
}

/* NCCL's own line in s ("NCCL INFO" or "NCCL WARN"), or NULL. */
static char *nccl_line(char *s) {
    char *i = strstr(s, "NCCL INFO"), *w = strstr(s, "NCCL WARN");
    return i && (!w || i < w) ? i : w;
}

static int parse_line(state_t *st, char *s, int line, const char *path, baton_err_t *e) {
    s = strip_prefix(s);
    learn_version(st, s);
    char *info = nccl_line(s), *c = s;
    while (*c == ' ' || *c == '\t') c++;
    if (info == NULL || *c == '#') return row_text(st, s, line, 0, path, e);   /* a comment naming NCCL's lines */
    if (tuninglines_read(st->log, &st->plan_cap, info, line, e) < 0) return -1;
    const char *nr = strstr(info, " nRanks ");
    int ranks, nodes, local;
    if (nr && !st->log->nccl_nodes && sscanf(nr, " nRanks %d nNodes %d localRanks %d", &ranks, &nodes, &local) == 3 &&
        nodes > 0 && nodes <= ranks)
        st->log->nccl_nodes = nodes;
    const char *cr = strstr(info, " comm ") ? strstr(info, " nranks ") : NULL;   /* "comm 0x.. rank R nranks N" */
    long k = cr ? strtol(cr + 8, NULL, 10) : 0;
    if (k > st->info_nranks && k <= NT_MAX_RANKS) st->info_nranks = (int)k;
    char *at = info_start(s, info);
    *at = '\0';
    return row_text(st, s, line, 1, path, e);
}

static int each_line(void *ctx, char *s, int line, baton_err_t *e) {
    state_t *st = ctx;
    return parse_line(st, s, line, st->path, e);
}

/* Is the file named for alltoall_perf? A log that names no test has
 * all_gather_perf's columns whichever of the two ran; its name may say. */
static int alltoall_named(const char *path) {
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    return strstr(base, "alltoall") || strstr(base, "all_to_all") || strstr(base, "AllToAll");
}

int nt_parse(const char *path, int ranks, nt_log_t *out, baton_err_t *e) {
    memset(out, 0, sizeof *out);
    state_t st = {.has_root_col = -1, .top_rank = -1, .log = out, .path = path};
    int rc = ntl_each(path, each_line, &st, &out->json, e);
    if (rc == 0) rc = finish_pending(&st, path, e);
    if (rc == 0 && st.other && !st.have_coll)
        rc = err_set(e, BATON_EPARSE, "%s:%d: a %s log: baton models all_reduce, all_gather, reduce_scatter, broadcast, "
                     "reduce and alltoall logs, not point-to-point or scatter/gather tests", path, st.other_line, st.other);
    if (rc == 0 && out->nrows == 0) rc = err_set(e, BATON_EPARSE, "%s: no result rows (is this an nccl-tests log?)", path);
    count_hosts(&st);
    tuninglines_env(out);
    free(st.host);
    out->header_ranks = st.nthread * st.ngpus;
    out->stated_ranks = st.rank_lines > 0 ? (st.top_rank + 1 > st.rank_lines ? st.top_rank + 1 : st.rank_lines)
                      : st.info_nranks > 0 ? st.info_nranks : out->header_ranks > 1 ? out->header_ranks : 0;
    out->ranks = ranks > 0 ? ranks : out->stated_ranks;
    out->gpus_per_thread = st.ngpus > 0 ? st.ngpus : 1;
    out->threads = st.nthread;
    if (out->agg_iters < 1) out->agg_iters = 1;
    if (out->coll_guessed && out->coll == COLL_ALLGATHER && alltoall_named(path))
        out->coll = COLL_ALLTOALL, out->coll_named = 1;
    if (rc == 0 && out->ranks < 1)
        rc = err_set(e, BATON_EPARSE, "%s: the log does not say how many ranks ran; give --ranks", path);
    if (rc < 0) nt_free(out);
    return rc;
}

void nt_free(nt_log_t *log) {
    free(log->rows);
    free(log->plan);
    log->rows = NULL, log->plan = NULL;
    log->nrows = log->nplan = 0;
}

int nt_noisiest(const nt_log_t *log, double *cv) {
    int best = -1;
    for (int i = 0; i < log->nrows; i++)
        for (int k = 0; k < 2; k++)
            if (log->rows[i].iter[k].min_us >= 0 && (best < 0 || log->rows[i].iter[k].cv_pct > *cv))
                best = i, *cv = log->rows[i].iter[k].cv_pct;
    return best;
}

const char *nt_ranks_unsaid(const nt_log_t *log) {
    if (log->json)
        return log->header_ranks == 1 ? "no config.devices, and its nthreads 1 x ngpus 1 is one process's: an MPI job "
                                        "runs one such process a GPU"
                                      : "no config.devices, no nthreads x ngpus";
    return log->header_ranks == 1 ? "no Rank lines, and its header's nThread 1 nGpus 1 is one process's: an MPI job runs "
                                    "one such process a GPU"
                                  : "no Rank lines, no nThread x nGpus";
}

int nt_broken_text(const nt_log_t *log, const char *path, int which, char *buf, size_t n) {
    char lo[32], hi[32], span[96];
    int first = -1, last = -1;
    for (int i = 0; i < log->nrows; i++)
        if (log->rows[i].wrong) last = i, first = first < 0 ? i : first;
    if (which == 0 && first >= 0) {
        const nt_row_t *a = &log->rows[first], *b = &log->rows[last];
        units_fmt_size(a->bytes, lo, sizeof lo);
        units_fmt_size(b->bytes, hi, sizeof hi);
        if (first == last) snprintf(span, sizeof span, "%s", lo);
        else if (log->json) snprintf(span, sizeof span, "%s to %s, results[%d] to [%d]", lo, hi, first, last);
        else snprintf(span, sizeof span, "%s to %s, lines %d-%d", lo, hi, a->line, b->line);
        snprintf(buf, n, "%s:%d: #wrong is not 0 in %d row%s (%s): the collective returned wrong data there, so %s a "
                 "broken run's", path, a->line, log->wrong_rows, log->wrong_rows > 1 ? "s" : "", span,
                 log->wrong_rows > 1 ? "their times are" : "its time is");
        return 1;
    }
    if (which == 1 && log->failed_line) {
        snprintf(buf, n, "%s:%d: the run failed (\"%s\"): the sizes after it never ran", path, log->failed_line,
                 log->failed_text);
        return 1;
    }
    return 0;
}

int nt_drop_wrong(nt_log_t *log) {
    int k = 0;
    for (int i = 0; i < log->nrows; i++)
        if (!log->rows[i].wrong) log->rows[k++] = log->rows[i];
    int dropped = log->nrows - k;
    log->nrows = k;
    return dropped;
}

int nt_whole_text(const nt_log_t *log, const char *path, int which, char *buf, size_t n) {
    char size[32];
    if (which == 0 && log->stray) {
        snprintf(buf, n, "%s:%d: %d line%s among the rows %s no row (\"%s\"): skipped; is the run whole?", path,
                 log->stray_line, log->stray, log->stray > 1 ? "s" : "", log->stray > 1 ? "are" : "is", log->stray_text);
        return 1;
    }
    if (which != 1 || log->closed || log->json || log->nrows == 0) return 0;
    units_fmt_size(log->rows[log->nrows - 1].bytes, size, sizeof size);
    snprintf(buf, n, "%s ends after its %s row without nccl-tests' closing lines (# Out of bounds values, # Avg bus "
             "bandwidth): the run may have been cut off there", path, size);
    return 1;
}

int nt_skipped_text(const nt_log_t *log, const char *path, int which, char *buf, size_t n) {
    if (which == 0 && log->cut_line) {
        snprintf(buf, n, "%s:%d: the last row stops after its out-of-place columns (the run was cut off there): "
                 "left out", path, log->cut_line);
        return 1;
    }
    if (which == 1 && log->cycle_line) {
        snprintf(buf, n, "%s:%d: the sizes start again here: a second sweep (nccl-tests -N, or a rooted test's -r -1 "
                 "next root) or a second run without its header; baton reads the first sweep and skips the rest",
                 path, log->cycle_line);
        return 1;
    }
    return 0;
}

int nt_noise_text(const nt_log_t *log, const char *path, char *buf, size_t n) {
    double cv = 0;
    int i = nt_noisiest(log, &cv);
    char size[32];
    if (i < 0) return 0;
    units_fmt_size(log->rows[i].bytes, size, sizeof size);
    snprintf(buf, n, "%s:%d: per-iteration times (nccl-tests -I 1): one size's iterations vary by up to %.3g %% (i_cv%%, "
             "at %s); a row's time is their mean, so an error within that is the run's own noise", path, log->rows[i].line,
             cv, size);
    return 1;
}

int nt_timing_text(const nt_log_t *log, const char *path, int k, char *buf, size_t n) {
    if (log->agg_iters > 1 && k-- == 0) {
        snprintf(buf, n, "%s:%d: agg iters %d (nccl-tests -m %d): each time is a group of %d calls divided among them, "
                 "which NCCL runs together; baton times one call, so sizes where a call's latency dominates read slower "
                 "than the log (and a fit's latencies take the grouping in)", path, log->header_line, log->agg_iters,
                 log->agg_iters, log->agg_iters);
        return 1;
    }
    if (log->warmup_none && k-- == 0) {
        snprintf(buf, n, "%s:%d: warmup iters 0 (nccl-tests -w 0): no untimed call comes first, so the first sizes "
                 "timed on each algorithm include NCCL's setup (it connects at first use) and read high", path,
                 log->header_line);
        return 1;
    }
    return 0;
}

const nt_plan_t *nt_row_plan(const nt_log_t *log, int i) {
    uint64_t bytes = log->rows[i].count * (uint64_t)ntl_type_size(log->type);
    if (log->coll == COLL_ALLTOALL) return NULL;        /* sends and receives: no collective's plan */
    for (int j = 0; j < log->nplan && bytes; j++)
        if ((log->plan[j].coll == (int)log->coll || log->plan[j].coll == NT_PLAN_THE_LOGS) && log->plan[j].bytes == bytes)
            return &log->plan[j];
    return NULL;
}

static const char *test_name(coll_t c) {
    for (int i = 0; tests[i].test; i++)
        if (tests[i].coll == c) return tests[i].test;
    return "unknown_perf";
}

/* nccl-tests' busbw factors (PERFORMANCE.md). */
static double factor(coll_t c, int n) {
    if (c == COLL_ALLREDUCE) return 2.0 * (n - 1) / n;
    if (c == COLL_REDUCE_SCATTER || c == COLL_ALLGATHER || c == COLL_ALLTOALL) return (double)(n - 1) / n;
    return 1;
}

/* What a collective's redop and root columns say: it reduces; it has a root. */
static int coll_reduces(coll_t c) { return c == COLL_ALLREDUCE || c == COLL_REDUCE_SCATTER || c == COLL_REDUCE; }
static int coll_rooted(coll_t c) { return c == COLL_BROADCAST || c == COLL_REDUCE; }

void nt_set_step(nt_log_t *log, const uint64_t *sizes, int n) {
    uint64_t k = n > 1 && sizes[0] > 0 && sizes[1] % sizes[0] == 0 ? sizes[1] / sizes[0] : 0;
    uint64_t d = n > 1 && sizes[1] > sizes[0] ? sizes[1] - sizes[0] : 0;
    for (int i = 2; i < n; i++) {
        if (k && (sizes[i] % sizes[i - 1] || sizes[i] / sizes[i - 1] != k)) k = 0;
        if (d && (sizes[i] <= sizes[i - 1] || sizes[i] - sizes[i - 1] != d)) d = 0;
    }
    log->step_factor = k > 1;
    log->step = k > 1 ? k : d ? d : NT_STEP_BYTES;
}

/* "# Using devices" and a Rank line a rank, as nccl-tests prints them:
 * processes of per_proc ranks each (threads x GPUs), log->per_host ranks a
 * host (node0, node1, ...; a process's GPUs on one host), each rank its
 * host's next device. The reader counts the ranks and hosts off them. */
static void write_ranks(const nt_log_t *log, int per_proc, FILE *f) {
    int ph = log->per_host > 0 && log->ranks % log->per_host == 0 ? log->per_host : log->ranks;
    if (ph % per_proc) ph = per_proc;
    fprintf(f, "# Using devices\n");
    for (int r = 0; r < log->ranks; r++) {
        char host[32];
        snprintf(host, sizeof host, "node%d", r / ph);
        fprintf(f, "#  Rank %2d Group  0 Pid %6d on %10s device %2d\n", r, 1 + r / per_proc, host, r % ph);
    }
    fprintf(f, "#\n");
}

int nt_write(const nt_log_t *log, FILE *f) {
    int rooted = coll_rooted(log->coll), reducing = coll_reduces(log->coll);
    fprintf(f, "# Collective test starting: %s\n", test_name(log->coll));
    int g = log->gpus_per_thread > 0 && log->ranks % log->gpus_per_thread == 0 ? log->gpus_per_thread : 1;
    int th = log->threads > 0 && log->ranks % (log->threads * g) == 0 ? log->threads : 1;
    fprintf(f, "# nThread %d nGpus %d minBytes %llu maxBytes %llu step: %llu(%s) warmup iters: %d iters: %d agg iters: %d "
               "validation: 1 graph: %d\n#\n", th, g, log->nrows ? (unsigned long long)log->rows[0].bytes : 0ULL,
            log->nrows ? (unsigned long long)log->rows[log->nrows - 1].bytes : 0ULL,
            (unsigned long long)(log->step ? log->step : NT_STEP_BYTES), log->step && log->step_factor ? "factor" : "bytes",
            log->warmup_none ? 0 : log->warmup_iters > 0 ? log->warmup_iters : 5, log->iters > 0 ? log->iters : 20,
            log->agg_iters > 1 ? log->agg_iters : 1, log->graph);
    write_ranks(log, th * g, f);
    fprintf(f, "#                                                              out-of-place                       in-place\n"
               "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
               "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n");
    double busbw_sum = 0;
    for (int i = 0; i < log->nrows; i++) {
        const nt_row_t *r = &log->rows[i];
        double t[2] = {r->oop_us, r->ip_us >= 0 ? r->ip_us : r->oop_us};
        fprintf(f, "%12llu  %12llu  %8s  %6s  %6d", (unsigned long long)r->bytes, (unsigned long long)r->count,
                log->type[0] ? log->type : "float", reducing ? "sum" : "none", rooted ? 0 : -1);
        for (int k = 0; k < 2; k++) {
            double algbw = t[k] > 0 ? (double)r->bytes / 1e3 / t[k] : 0;
            fprintf(f, "  %7.4f  %6.2f  %6.2f  %6d", t[k], algbw, algbw * factor(log->coll, log->ranks), 0);
            busbw_sum += algbw * factor(log->coll, log->ranks);
        }
        fprintf(f, "\n");
    }
    /* nccl-tests' footer: the mean busbw of every row's two columns; a log
     * without it reads as cut short (doctor) */
    fprintf(f, "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : %g \n#\n", log->nrows ? busbw_sum / (2.0 * log->nrows) : 0);
    return ferror(f) ? BATON_EIO : 0;
}


int nt_columns_allow(const nt_log_t *log, coll_t c) {
    if (!log->coll_guessed) return 1;
    return coll_reduces(log->coll) == coll_reduces(c) && coll_rooted(log->coll) == coll_rooted(c);
}
