/* tuninglines.c - NCCL's TUNING lines in a log (tuninglines.h). */
#include "tuninglines.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../algorithms/algo.h"
#include "../models/proto.h"

/* Keep x unless the call has an entry already (then note a disagreement). */
static int add_plan(nt_log_t *log, int *cap, const nt_plan_t *x, baton_err_t *e) {
    for (int i = 0; i < log->nplan; i++) {
        nt_plan_t *p = &log->plan[i];
        if (p->coll != x->coll || p->bytes != x->bytes) continue;
        p->disagree |= strcmp(p->algo, x->algo) || p->proto != x->proto || p->channels != x->channels;
        return 0;
    }
    if (log->nplan == *cap) {
        *cap = *cap ? *cap * 2 : 32;
        nt_plan_t *p = realloc(log->plan, (size_t)*cap * sizeof *p);
        if (p == NULL) return err_set(e, BATON_ENOMEM, "out of memory");
        log->plan = p;
    }
    log->plan[log->nplan++] = *x;
    return 0;
}

/* NCCL 2.20-2.2x's numbered line, "... NCCL INFO 8388608 Bytes -> Algo 1
 * proto 2 time 123.4" (no collective: the log's; no channels): into the
 * named form. The numbers are nccl_common.h's (TREE 0, RING 1, ...; LL 0,
 * LL128 1, SIMPLE 2). 0, or 1 where the line is not this form. */
#define NAME 32              /* a TUNING line's names: func, algo, proto buffers */
static int numbered(const char *p, char *func, unsigned long long *bytes, char *algo, char *proto, int *n) {
    static const char *const protos[] = {"LL", "LL128", "SIMPLE"};
    static const char *const algos[] = {"TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE", "PAT"};
    int a, pr;
    if (sscanf(p, "NCCL INFO %llu Bytes -> Algo %d proto %d%n", bytes, &a, &pr, n) != 3) return 1;
    strcpy(func, "");
    if (a >= 0 && a < 7) snprintf(algo, NAME, "%s", algos[a]);
    else snprintf(algo, NAME, "%d", a);                 /* not one baton knows: said so */
    if (pr >= 0 && pr < 3) snprintf(proto, NAME, "%s", protos[pr]);
    else snprintf(proto, NAME, "%d", pr);
    return 0;
}

/* A TUNING line baton cannot follow: counted, the first kept for the
 * caller's warning (a newer NCCL's algorithm or format must not stop a log
 * from validating; its sizes keep -a nccl's plan). */
static int skip_tuning(nt_log_t *log, int line, const char *why, const char *what) {
    if (log->tuning_skipped++ == 0) {
        log->tuning_skipped_line = line;
        snprintf(log->tuning_skipped_why, sizeof log->tuning_skipped_why, why, what);
    }
    return 1;
}

/* "NCCL INFO NCCL_ALGO set by environment to Ring" (NCCL_ENV, printed with
 * NCCL_DEBUG=INFO): the first of each kept, for tuninglines_env. */
static int env_line(nt_log_t *log, const char *p, int line) {
    static const char *const vars[2] = {"NCCL_ALGO set by environment to ", "NCCL_PROTO set by environment to "};
    for (int i = 0; i < 2; i++) {
        const char *v = strstr(p, vars[i]);
        nt_env_t *x = i == 0 ? &log->env_algo : &log->env_proto;
        if (v == NULL || x->line) continue;
        v += strlen(vars[i]);
        snprintf(x->list, sizeof x->list, "%.*s", (int)strcspn(v, " \t\r\n"), v);
        x->line = line;
        return 1;
    }
    return 0;
}

/* Send and Recv lines are not calls of a collective nccl-tests times. */
int tuninglines_read(nt_log_t *log, int *cap, const char *s, int line, baton_err_t *e) {
    const char *p = strstr(s, "NCCL INFO ");
    char func[NAME], algo[NAME], proto[NAME];
    unsigned long long bytes;
    int lo, hi, n = 0;
    if (p && env_line(log, p, line)) return 1;
    if (p == NULL || strstr(p, " Bytes -> Algo ") == NULL) return 0;
    if (sscanf(p, "NCCL INFO %31[A-Za-z]: %llu Bytes -> Algo %31s proto %31s%n", func, &bytes, algo, proto, &n) != 4 &&
        numbered(p, func, &bytes, algo, proto, &n))
        return skip_tuning(log, line, "a TUNING line not in a form baton reads%s", "");
    int coll = func[0] ? algo_nccl_coll(func) : NT_PLAN_THE_LOGS, pr = proto_parse(proto);
    if (coll == -1) return 1;
    if (algo_nccl_index_of_name(algo) < 0) return skip_tuning(log, line, "NCCL's algorithm '%s', which baton does not know", algo);
    if (pr <= PROTO_NONE) return skip_tuning(log, line, "NCCL's protocol '%s', which baton does not know", proto);
    nt_plan_t x = {.coll = coll, .bytes = bytes, .proto = pr, .line = line};
    for (int i = 0; algo[i] && i < (int)sizeof x.algo - 1; i++) x.algo[i] = (char)tolower((unsigned char)algo[i]);
    const char *ch = strstr(p + n, "channel{Lo..Hi}=");
    if (ch && (sscanf(ch, "channel{Lo..Hi}={%d..%d}", &lo, &hi) != 2 || lo < 0 || hi < lo))
        return skip_tuning(log, line, "channels not in the form channel{Lo..Hi}={lo..hi}%s", "");
    if (ch) x.channels = hi - lo + 1;
    return add_plan(log, cap, &x, e) < 0 ? -1 : 1;
}

void tuninglines_env(nt_log_t *log) {
    nt_env_t *x[2] = {&log->env_algo, &log->env_proto};
    for (int i = 0; i < 2; i++)
        if (x[i]->line && algo_nccl_env_mask(x[i]->list, log->coll, i == 0, &x[i]->mask) < 0) x[i]->unread = 1, x[i]->mask = 0;
}
