/* concurrent.c - several collectives in one engine run (concurrent.h). */
#include "concurrent.h"
#include "select.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../algorithms/group.h"
#include "../../models/proto.h"
#include "../../topologies/topo.h"
#include "../../topologies/units.h"
#include "../nccl/nccl.h"

/* The first of the reducing switches a member's helpers run on: the one
 * nearest its first rank (fewest links; its node's NVSwitch), so a
 * tensor-parallel group on node 1 reduces in node 1's switch. Its helpers
 * take the switches from there on (nvlstree: one a node, in node order). */
static int first_helper(topo_t *t, const conc_coll_t *c, int k, int helpers, baton_err_t *e) {
    int P = topo_nranks(t), nr = topo_nreducers(t), best = -1, links = 0;
    for (int i = 0; i < nr; i++) {
        topo_route_t r;
        if (topo_route(t, c->ranks[0], P + i, &r, NULL) == 0 && (best < 0 || r.nlinks < links)) best = i, links = r.nlinks;
    }
    if (best < 0) return err_set(e, BATON_EINVAL, "collective %d: its rank %d reaches no reducing switch", k, c->ranks[0]);
    if (best + helpers > nr)
        return err_set(e, BATON_EINVAL, "collective %d needs %d reducing switches from %s on; the machine has %d in all", k,
                       helpers, topo_reducer_name(t, best), nr);
    return best;
}

static int build(topo_t *t, const conc_coll_t *c, int k, sched_member_t *m, baton_err_t *e) {
    const algo_t *a = algo_find(c->coll, c->algo);
    if (a == NULL && !c->own_algo)       /* the default, not the user's word */
        return err_set(e, BATON_EINVAL, "collective %d: the default a=ring does not run %s: name one with a= (see `baton "
                       "algos -c %s`)", k, coll_name(c->coll), coll_name(c->coll));
    if (a == NULL) return err_set(e, BATON_EINVAL, "collective %d: no %s algorithm '%s'%s", k, coll_name(c->coll),
                                  c->algo, algo_hint(c->coll, c->algo));
    if (c->nranks < 1) return err_set(e, BATON_EINVAL, "collective %d runs on no ranks", k);
    algo_opts_t o = {.root = c->root, .channels = c->channels > 0 ? c->channels : 1,
                     .group = topo_params_c(t)->group_size, .rank_order = 1};
    if (o.group > c->nranks || (o.group && c->nranks % o.group)) o.group = 0;
    int rc = algo_build(a, c->nranks, c->bytes, &o, &m->s, e);
    if (rc < 0) err_prefix(e, "collective %d (%s %s on %d ranks): ", k, coll_name(c->coll), c->algo, c->nranks);
    if (rc < 0) return rc;
    m->ranks = c->ranks;
    m->start_s = c->start_s;
    m->after = c->after;
    m->helper0 = m->s.helpers ? first_helper(t, c, k, m->s.helpers, e) : 0;
    return m->helper0 < 0 ? m->helper0 : 0;
}

/* What member k's GPUs and hosts add to its links' time, as the same call
 * alone pays it (run.c through ncclrule_host_side): the least time it takes
 * from its start and what follows its end. Its ranks say which of its peers
 * are on other nodes, for the proxy thread's messages and operations. */
static void host_terms(topo_t *t, const conc_coll_t *c, const sched_member_t *m, const proto_cost_t *pc, double *floor,
                       double *tail) {
    const algo_t *a = algo_find(c->coll, c->algo);
    ncclrule_call_t call = {.coll = c->coll, .bytes = c->bytes, .p = c->nranks, .ranks = c->ranks, .algo = a,
                            .channels = algo_run_channels(a, &m->s, c->channels)};
    ncclrule_host_t h;
    ncclrule_host_terms(t, &call, &m->s, pc ? pc : &(proto_cost_t){0}, c->proto, &h);
    *floor = h.floor, *tail = h.tail;
}

/* Where a member's ranks share nodes: pat[i] = the place of the member's
 * first rank on rank i's node (nodes of the machine's group_size; none: one
 * node). `first` is scratch, one -1 a node, left so. */
static void node_pattern(const topo_t *t, const conc_coll_t *c, int32_t *first, int32_t *pat) {
    int g = topo_params_c(t)->group_size;
    for (int i = 0; i < c->nranks; i++) {
        int nd = g > 0 ? c->ranks[i] / g : 0;
        if (first[nd] < 0) first[nd] = i;
        pat[i] = first[nd];
    }
    for (int i = 0; i < c->nranks; i++) first[g > 0 ? c->ranks[i] / g : 0] = -1;
}

/* An earlier member whose host terms member k's are (the same call on ranks
 * that share nodes alike: a step's groups), or -1. */
static int alike(const conc_coll_t *c, int32_t *const *pat, int k) {
    for (int j = 0; j < k; j++)
        if (c[j].coll == c[k].coll && !strcmp(c[j].algo, c[k].algo) && c[j].bytes == c[k].bytes &&
            c[j].nranks == c[k].nranks && c[j].channels == c[k].channels && c[j].root == c[k].root &&
            c[j].proto == c[k].proto && !memcmp(pat[j], pat[k], (size_t)c[k].nranks * sizeof *pat[k]))
            return j;
    return -1;
}

/* Each member's host terms (host_terms), once for members alike. */
static int all_host_terms(topo_t *t, const conc_coll_t *c, const sched_member_t *m, const proto_cost_t *const *mp,
                          int n, double *floor, double *tail, baton_err_t *e) {
    size_t total = 0, nodes = (size_t)topo_nranks(t) + 1;
    for (int k = 0; k < n; k++) total += (size_t)c[k].nranks;
    int32_t *first = malloc(nodes * sizeof *first), *buf = malloc((total + 1) * sizeof *buf), **pat = malloc(((size_t)n + 1) * sizeof *pat);
    if (first == NULL || buf == NULL || pat == NULL) {
        free(first), free(buf), free(pat);
        return err_set(e, BATON_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < nodes; i++) first[i] = -1;
    for (int k = 0, at = 0; k < n; at += c[k].nranks, k++) {
        pat[k] = buf + at;
        node_pattern(t, &c[k], first, pat[k]);
        int j = alike(c, pat, k);
        if (j >= 0) floor[k] = floor[j], tail[k] = tail[j];
        else host_terms(t, &c[k], &m[k], mp[k], &floor[k], &tail[k]);
    }
    free(first), free(buf), free(pat);
    return 0;
}

int conc_run(topo_t *t, conc_coll_t *c, int n, const conc_opts_t *o, engine_result_t *r, baton_err_t *e) {
    memset(r, 0, sizeof *r);
    sched_member_t *m = calloc((size_t)(n > 0 ? n : 1), sizeof *m);
    if (m == NULL) return err_set(e, BATON_ENOMEM, "out of memory");
    int rc = 0;
    uint64_t elems = 0;
    for (int k = 0; k < n && rc == 0; k++) {
        rc = build(t, &c[k], k, &m[k], e);
        elems += (uint64_t)c[k].nranks * c[k].bytes;
    }
    struct sched_group g;
    sched_t s;
    if (rc == 0) rc = sched_group_init(&g, m, n, topo_nranks(t), &s, e);
    const proto_cost_t **mp = calloc((size_t)(n > 0 ? n : 1), sizeof *mp);
    double *floor = calloc((size_t)(n > 0 ? n : 1), sizeof *floor), *tail = calloc((size_t)(n > 0 ? n : 1), sizeof *tail);
    if (rc == 0 && (mp == NULL || floor == NULL || tail == NULL)) rc = err_set(e, BATON_ENOMEM, "out of memory");
    int own = 0;
    for (int k = 0; rc == 0 && k < n; k++) {           /* each member's protocol: its own, or the run's */
        if (!c[k].own_proto) c[k].proto = o->proto;
        mp[k] = c[k].proto == PROTO_NONE ? NULL : &topo_params_c(t)->proto[c[k].proto];
        own |= c[k].own_proto;
    }
    if (rc == 0) rc = all_host_terms(t, c, m, mp, n, floor, tail, e);
    if (rc == 0) {
        const proto_cost_t *pc = &topo_params_c(t)->proto[o->proto];
        engine_opts_t eo = {.contention = o->contention, .proto = o->proto == PROTO_NONE ? NULL : pc,
                            .link_stats = o->link_stats, .member_proto = own ? mp : NULL,
                            .member_floor = floor, .member_tail = tail};
        if (o->verify) eo.verify = elems <= (1ULL << 20) ? VERIFY_DATA : VERIFY_SIGNATURE;
        rc = engine_run(&s, t, &eo, r, e);
        for (int k = 0; rc == 0 && k < n; k++) c[k].end_s = r->member_end[k];
        sched_group_free(&g);
    }
    free(mp);
    free(floor);
    free(tail);
    free(m);
    return rc;
}

/* One "lo" or "lo-hi" of a rank list at *s; moves *s past it. */
static int rank_range(const char **s, int p, long *lo, long *hi) {
    char *end;
    errno = 0;
    *lo = *hi = strtol(*s, &end, 10);
    if (end == *s) return -1;
    if (*end == '-') {
        const char *h = end + 1;
        *hi = strtol(h, &end, 10);
        if (end == h) return -1;
    }
    *s = end;
    return errno || *lo < 0 || *hi < *lo || *hi >= p ? -1 : 0;
}

/* "0-3", "0,2,4", "0-3,8-11": machine ranks, each below p. */
static int parse_ranks(const char *v, int p, int32_t **out, int *n, baton_err_t *e) {
    int32_t *r = malloc((size_t)p * sizeof *r);
    if (r == NULL) return err_set(e, BATON_ENOMEM, "out of memory");
    *n = 0;
    for (const char *s = v;; s++) {
        long lo, hi;
        if (rank_range(&s, p, &lo, &hi) < 0 || (*s && *s != ',') || *n + (hi - lo + 1) > p) {
            free(r);
            return err_set(e, BATON_EINVAL, "ranks=%s: want ranks 0..%d such as 0-3 or 0,2,4, each once", v, p - 1);
        }
        for (long x = lo; x <= hi; x++) r[(*n)++] = (int32_t)x;
        if (*s == 0) break;
    }
    *out = r;
    return 0;
}

static int set_key(conc_coll_t *c, const char *k, const char *v, int p, int32_t **ranks, baton_err_t *e) {
    const char *why = NULL;
    char *end;
    if (!strcmp(k, "c")) {
        int x = coll_parse(v);
        if (x < 0) return err_set(e, BATON_EINVAL, "c=%s: unknown collective%s", v, coll_hint(v));
        c->coll = (coll_t)x;
        return 0;
    }
    if (!strcmp(k, "a")) {
        if (strlen(v) >= sizeof c->algo) return err_set(e, BATON_EINVAL, "a=%s: no such algorithm", v);
        snprintf(c->algo, sizeof c->algo, "%s", v);
        c->own_algo = 1;
        return 0;
    }
    if (!strcmp(k, "s")) {
        if (units_size(v, &c->bytes, &why) < 0) return err_set(e, BATON_EINVAL, "s=%s: %s", v, why);
        return c->bytes == 0 ? err_set(e, BATON_EINVAL, "s=%s: %s", v, SELECT_ZERO_WHY) : 0;   /* as sim and predict */
    }
    if (!strcmp(k, "p")) {
        int pr = proto_parse(v);
        if (pr < 0) return err_set(e, BATON_EINVAL, "p=%s: no such protocol (LL, LL128, Simple, none)", v);
        c->own_proto = 1, c->proto = (proto_t)pr;
        return 0;
    }
    if (!strcmp(k, "start")) return units_time(v, &c->start_s, &why) < 0 ? err_set(e, BATON_EINVAL, "start=%s: %s", v, why) : 0;
    if (!strcmp(k, "ranks")) {
        free(*ranks);
        *ranks = NULL;
        int rc = parse_ranks(v, p, ranks, &c->nranks, e);
        c->ranks = *ranks;
        return rc;
    }
    long x = strtol(v, &end, 10);
    int bad = end == v || *end || x < 0 || x > 1 << 20;
    if (!strcmp(k, "after") || !strcmp(k, "channels") || !strcmp(k, "root")) {
        if (bad) return err_set(e, BATON_EINVAL, "%s=%s: want a whole number", k, v);
        if (!strcmp(k, "channels") && (x < 1 || x > 64)) return err_set(e, BATON_EINVAL, "channels=%s: want 1 to 64", v);
        if (!strcmp(k, "after")) c->after = (int)x;
        else if (!strcmp(k, "channels")) c->channels = (int)x;
        else c->root = (int)x;
        return 0;
    }
    return err_set(e, BATON_EINVAL, "unknown key '%s' (c, a, s, p, ranks, start, after, channels, root)", k);
}

static int all_ranks(int p, int32_t **ranks, int *n, baton_err_t *e) {
    if ((*ranks = malloc((size_t)p * sizeof **ranks)) == NULL) return err_set(e, BATON_ENOMEM, "out of memory");
    for (int i = 0; i < p; i++) (*ranks)[i] = i;
    *n = p;
    return 0;
}

int conc_parse(const char *spec, int p, conc_coll_t *c, int32_t **ranks, baton_err_t *e) {
    *c = (conc_coll_t){.coll = COLL_ALLREDUCE, .algo = "ring", .after = -1};
    *ranks = NULL;
    char *buf = strdup(spec), *save = NULL;
    if (buf == NULL) return err_set(e, BATON_ENOMEM, "out of memory");
    int rc = 0, have_size = 0;
    const char *seen[16];
    int nseen = 0;
    for (char *kv = strtok_r(buf, " \t", &save); kv && rc == 0; kv = strtok_r(NULL, " \t", &save)) {
        char *eq = strchr(kv, '=');
        if (eq == NULL) { rc = err_set(e, BATON_EINVAL, "'%s': want key=value", kv); break; }
        *eq = 0;
        for (int i = 0; i < nseen && rc == 0; i++)        /* a key twice is a typo, not a last-one-wins */
            if (!strcmp(seen[i], kv)) rc = err_set(e, BATON_EINVAL, "'%s': %s= given twice", spec, kv);
        if (rc < 0) break;
        if (nseen < 16) seen[nseen++] = kv;
        have_size |= !strcmp(kv, "s");
        rc = set_key(c, kv, eq + 1, p, ranks, e);
    }
    if (rc == 0 && !have_size) rc = err_set(e, BATON_EINVAL, "'%s': needs a size (s=64MiB)", spec);
    if (rc == 0 && *ranks == NULL) rc = all_ranks(p, ranks, &c->nranks, e);
    c->ranks = *ranks;
    free(buf);
    if (rc < 0) { free(*ranks); *ranks = NULL; }
    return rc;
}
