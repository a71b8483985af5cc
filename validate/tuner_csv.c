/* tuner_csv.c - read NCCL's example tuner CSV (tuner_csv.h). The names are
 * those of NCCL's plugins/tuner/example/plugin.c: collectives broadcast,
 * reduce, allgather, reducescatter, allreduce; algorithms tree, ring,
 * collnet_direct, collnet_chain, nvls, nvls_tree, pat; protocols ll, ll128,
 * simple. Unlike that example, a line it cannot read is an error naming
 * its line, not a line skipped. */
#include "tuner_csv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int lookup(const char *w, const char *const *names, int n) {
    for (int i = 0; i < n; i++)
        if (strcasecmp(w, names[i]) == 0) return i;
    return -1;
}

static int field_int(const char *w, long long lo, unsigned long long hi, unsigned long long *out) {
    char *end;
    errno = 0;
    if (w[0] == '-') {
        long long x = strtoll(w, &end, 10);
        if (end == w || *end || errno || x < lo) return -1;
        *out = (unsigned long long)x;
        return 0;
    }
    unsigned long long x = strtoull(w, &end, 10);
    if (end == w || *end || errno || x > hi) return -1;
    *out = x;
    return 0;
}

/* One line's fields into r; NULL, or what is wrong. */
static const char *parse_line(char *line, tuner_rule_t *r) {
    static const char *const colls[] = {"broadcast", "reduce", "allgather", "reducescatter", "allreduce"};
    static const char *const algos[] = {"tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat"};
    static const char *const protos[] = {"ll", "ll128", "simple"};
    char *f[11];
    int n = 0;
    for (char *save, *w = strtok_r(line, ",", &save); w && n < 11; w = strtok_r(NULL, ",", &save)) {
        while (*w == ' ' || *w == '\t') w++;
        size_t k = strlen(w);
        while (k && (w[k - 1] == ' ' || w[k - 1] == '\t' || w[k - 1] == '\r')) w[--k] = '\0';
        f[n++] = w;
    }
    if (n < 8 || n > 10) return "a row has 8 to 10 fields: collective,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks[,numPipeOps[,regBuff]]";
    unsigned long long v[10];
    if ((r->coll = lookup(f[0], colls, 5)) < 0) return "unknown collective (broadcast, reduce, allgather, reducescatter, allreduce)";
    if ((r->algo = lookup(f[3], algos, 7)) < 0) return "unknown algorithm (tree, ring, collnet_direct, collnet_chain, nvls, nvls_tree, pat)";
    if ((r->proto = lookup(f[4], protos, 3)) < 0) return "unknown protocol (ll, ll128, simple)";
    if (field_int(f[1], 0, ~0ULL, &v[1]) || field_int(f[2], 0, ~0ULL, &v[2]) || v[1] > v[2])
        return "min_bytes and max_bytes are byte counts, min <= max";
    for (int i = 5; i < n; i++)
        if (field_int(f[i], -1, 1u << 30, &v[i])) return "channels, nNodes, nRanks, numPipeOps and regBuff are integers, -1: any";
    r->lo = v[1], r->hi = v[2];
    r->channels = (int)(long long)v[5], r->nnodes = (int)(long long)v[6], r->nranks = (int)(long long)v[7];
    r->pipeops = n > 8 ? (int)(long long)v[8] : -1;
    r->regbuff = n > 9 ? (int)(long long)v[9] : -1;
    if (r->channels == 0) return "channels 0: a positive count, or -1 for NCCL's own";
    if (r->channels > 64) return "channels above 64 (NCCL's MAXCHANNELS): a count NCCL cannot run, or -1 for NCCL's own";
    return NULL;
}

int tuner_csv_parse(const char *name, const char *text, tuner_table_t *t, char *why, size_t n) {
    int line = 0;
    for (const char *p = text; *p;) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        char buf[512];
        line++;
        if (len >= sizeof buf) { snprintf(why, n, "%s:%d: line too long", name, line); return -1; }
        memcpy(buf, p, len);
        buf[len] = '\0';
        p = eol ? eol + 1 : p + len;
        const char *s = buf + strspn(buf, " \t\r");
        if (*s == '\0' || *s == '#') continue;
        if (strncasecmp(s, "collective", 10) == 0) continue;   /* a spreadsheet's header row (the example's README
                                                                   suggests one); NCCL's plugin reads it as a row
                                                                   of 0..0 bytes, which no call has */
        tuner_rule_t r;
        const char *bad = parse_line(buf, &r);
        if (bad) { snprintf(why, n, "%s:%d: %s", name, line, bad); return -1; }
        if (t->n == t->cap) {
            int nc = t->cap ? 2 * t->cap : 16;
            tuner_rule_t *a = realloc(t->r, (size_t)nc * sizeof *a);
            if (a == NULL) { snprintf(why, n, "%s: out of memory", name); return -1; }
            t->r = a, t->cap = nc;
        }
        t->r[t->n++] = r;
    }
    return 0;
}

/* -1 on either side: any (a rule for any count, or a call that does not say: v2, v3). */
static int any_or(int want, int have) { return want < 0 || have < 0 || want == have; }

const tuner_rule_t *tuner_csv_match(const tuner_table_t *t, int coll, uint64_t bytes, int nnodes, int nranks,
                                    int pipeops, int regbuff) {
    for (int i = 0; i < t->n; i++) {
        const tuner_rule_t *r = &t->r[i];
        if (r->coll == coll && bytes >= r->lo && bytes <= r->hi && any_or(r->nnodes, nnodes) && any_or(r->nranks, nranks) &&
            any_or(r->pipeops, pipeops) && any_or(r->regbuff, regbuff))
            return r;
    }
    return NULL;
}

void tuner_csv_free(tuner_table_t *t) {
    free(t->r);
    t->r = NULL;
    t->n = t->cap = 0;
}
