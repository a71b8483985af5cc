/* algo.c - the registry table and lookups. */
#include "algo.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "../models/proto.h"
#include "../util/suggest.h"

#define ALGO_REF(name) &algo_##name,
static const algo_t *const rows[] = {ALGO_ROWS(ALGO_REF) NULL};
#undef ALGO_REF

const algo_t *const *algo_all(void) { return rows; }

static const char *const nccl_names[ALGO_NCCL_COUNT] = {"tree", "ring", "collnet_direct", "collnet_chain", "nvls",
                                                        "nvls_tree", "pat"};

int algo_nccl_index(const char *nccl) {
    for (int i = 0; nccl && i < ALGO_NCCL_COUNT; i++)
        if (strcmp(nccl, nccl_names[i]) == 0) return i;
    return -1;
}

/* a and b the same but for case and '_' ("NVLSTree", "nvls_tree"). */
static int same_name(const char *a, const char *b) {
    for (;; a++, b++) {
        while (*a == '_') a++;
        while (*b == '_') b++;
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return 0;
        if (*a == '\0') return 1;
    }
}

int algo_nccl_index_of_name(const char *name) {
    for (int i = 0; i < ALGO_NCCL_COUNT; i++)
        if (same_name(name, nccl_names[i])) return i;
    return -1;
}

int algo_nccl_coll(const char *name) {
    static const struct { const char *name; coll_t coll; } funcs[] = {
        {"AllReduce", COLL_ALLREDUCE}, {"AllGather", COLL_ALLGATHER}, {"ReduceScatter", COLL_REDUCE_SCATTER},
        {"Broadcast", COLL_BROADCAST}, {"Reduce", COLL_REDUCE}, {NULL, 0}};
    for (int i = 0; funcs[i].name; i++)
        if (strcasecmp(name, funcs[i].name) == 0) return (int)funcs[i].coll;
    return -1;
}

#define ALGO_ENV_LIST 128     /* the longest list read */

/* One entry's names into a mask: "Ring,Tree", or "^LL128" for all but. */
static int env_names(const char *list, int algos, unsigned *mask) {
    char buf[ALGO_ENV_LIST];
    int not = list[0] == '^';
    unsigned m = 0, all = algos ? (1u << ALGO_NCCL_COUNT) - 1 : (1u << PROTO_LL) | (1u << PROTO_LL128) | (1u << PROTO_SIMPLE);
    snprintf(buf, sizeof buf, "%s", list + not);
    for (char *save, *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        int i = algos ? algo_nccl_index_of_name(w) : proto_parse(w);
        if (i < 0 || (!algos && i == PROTO_NONE)) return -1;
        m |= 1u << i;
    }
    *mask = not ? all & ~m : m;
    return 0;
}

/* Entries split by ';', each "func:names" or, the first only, "names" for
 * every function; the last entry naming coll wins. */
int algo_nccl_env_mask(const char *list, coll_t coll, int algos, unsigned *mask) {
    char buf[ALGO_ENV_LIST];
    snprintf(buf, sizeof buf, "%s", list);
    *mask = 0;
    for (char *save, *entry = strtok_r(buf, ";", &save); entry; entry = strtok_r(NULL, ";", &save)) {
        char *colon = strchr(entry, ':'), *names = colon ? colon + 1 : entry;
        int f = -1;
        if (colon) *colon = '\0', f = algo_nccl_coll(entry);
        if (colon && f < 0) continue;                   /* another function (SendRecv, ...) */
        if (colon && f != (int)coll) continue;
        if (env_names(names, algos, mask) < 0) return -1;
    }
    return 0;
}

/* "tree" is the candy kids' word for the binomial tree; NCCL's trees are
 * bintree, dbtree and nccltree, so the registry spells it out. */
static algo_find_fn find_made;     /* algo_find_made's; NULL: no row made yet */

void algo_find_made(algo_find_fn find) { find_made = find; }

const algo_t *algo_find(coll_t coll, const char *name) {
    const algo_t *made;
    if (strcmp(name, "tree") == 0) name = "binomial";
    if (find_made && (made = find_made(coll, name))) return made;   /* e.g. a file msccl_load read */
    for (int i = 0; rows[i]; i++)
        if (rows[i]->coll == coll && strcmp(rows[i]->name, name) == 0) return rows[i];
    return NULL;
}

int algo_inexact(const algo_t *a, int p, uint64_t n, const algo_opts_t *o) {
    return a->approx || (a->exact_at && !a->exact_at(p, n, o));
}

const char *algo_hint(coll_t coll, const char *name) {
    const char *cands[64];
    int n = 0;
    for (int i = 0; rows[i] && n < 63; i++)
        if (rows[i]->coll == coll) cands[n++] = rows[i]->name;
    cands[n] = NULL;
    return suggest_hint(name, cands);
}

int algo_nccl_ring_or_tree(const algo_t *a) {
    return a->nccl && (strcmp(a->nccl, "ring") == 0 || strcmp(a->nccl, "tree") == 0);
}

const algo_opts_t *algo_row_opts(const algo_t *a, const algo_opts_t *o, algo_opts_t *tmp) {
    if (o == NULL || o->domain_rings <= 0 || !algo_nccl_ring_or_tree(a)) return o;
    *tmp = *o;
    tmp->channels = o->domain_rings;
    return tmp;
}

int algo_run_channels(const algo_t *a, const sched_t *s, int asked) {
    if (s->groups > 0) return s->groups;
    if (a->nccl == NULL) return s->nchannels;
    return asked > 0 ? asked : 1;
}

int algo_build(const algo_t *a, int p, uint64_t n, const algo_opts_t *o, sched_t *s,
               baton_err_t *e) {
    static const algo_opts_t defaults = {0};
    if (o == NULL) o = &defaults;
    memset(s, 0, sizeof *s);
    if (p < 1) return err_set(e, BATON_EINVAL, "%s needs at least one rank", a->name);
    if (o->root < 0 || o->root >= p)
        return err_set(e, BATON_EINVAL, "root %d is not a rank (0..%d)", o->root, p - 1);
    if (o->channels < 0 || o->channels > 64)
        return err_set(e, BATON_EINVAL, "channels must be 1..64, not %d", o->channels);
    if (o->pipeline < 0) return err_set(e, BATON_EINVAL, "pipeline chunks must be positive");
    s->coll = a->coll;
    s->algo = a->name;
    s->nranks = p;
    s->nchannels = 1;
    s->root = (a->coll == COLL_BROADCAST || a->coll == COLL_REDUCE) ? o->root : 0;
    s->bytes = n;
    sched_layout(s, 1, 1);
    return a->build(s, o, e);
}

/* Rank 0's ops, two a step (every rank of a lockstep row has as many). */
int algo_lockstep_nsteps(const sched_t *s) {
    sched_op_t op;
    uint32_t pc = 0;
    while (pc < (1u << 24) && sched_op(s, 0, 0, pc, &op)) pc++;
    return (int)(pc / 2);
}

int algo_lockstep_send(const sched_t *s, int k, int r, sched_op_t *op) {
    return sched_op(s, r, 0, 2u * (uint32_t)k, op) && op->send;
}

/* The machine's rings repeat every node (graph.c: "every node repeats
 * these orders") when rank r + g sits g places after rank r in every ring:
 * then rank r + g's program is rank r's with every peer moved on by g, and
 * g is the schedule's period (sim --symmetric); else 0. */
static int rings_period(const sched_orders_t *o, int g) {
    int n = o->nranks;
    if (g <= 0 || g >= n || n % g) return 0;
    for (int c = 0; c < o->count; c++)
        for (int r = 0; r + g < n; r++)
            if (o->pos[(size_t)c * n + r + g] != o->pos[(size_t)c * n + r] + g) return 0;
    return g;
}

int algo_ring_orders(sched_t *s, const algo_opts_t *o, int channels) {
    s->param[0] = o->group > 0 && s->nranks % o->group == 0 ? o->group : s->nranks;   /* rotate within groups */
    s->param[1] = algo_stride(o, s->param[0]);                                        /* by this much a channel */
    s->nchannels = channels;
    if (o->rings && o->rings->nranks == s->nranks && o->rings->count > 0) {
        s->orders = o->rings;                            /* the machine's rings */
        return rings_period(o->rings, o->group);
    }
    return channels == 1 ? 1 : (int)s->param[0];         /* channel c > 0 rotates inside groups */
}

uint64_t algo_pipeline_chunks(uint64_t n, const algo_opts_t *o) {
    if (o && o->pipeline > 0) return (uint64_t)o->pipeline;
    uint64_t k = (n + (1 << 20) - 1) >> 20;
    return k < 1 ? 1 : k > 4096 ? 4096 : k;
}
