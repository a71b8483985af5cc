/* replay.c - a Chakra trace's ranks walked together in time (replay.h):
 * their graphs indexed and checked, then one event queue (ready, done) over
 * every rank's nodes, then where each rank's time went. */
#include "replay.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../engine/evq.h"
#include "replay_comm.h"
#include "replay_share.h"

enum { EV_READY = 0, EV_DONE = 1 };

typedef struct fifo {
    int32_t head, tail;
} fifo_t;

/* A process group (pg_name): the ranks that have its collectives, and as
 * many of them on each. Its k-th collective's nodes, one per member, are
 * inst_nodes[nodes_at + k * nmembers + slot]. */
typedef struct pg {
    char name[CHAKRA_PG_LEN];
    int nmembers;
    int32_t *members;
    uint32_t ncoll;
    uint32_t nodes_at, inst_at;
} pg_t;

typedef struct ctx {
    topo_t *t;
    const chakra_et_t *et;
    const char *const *names;
    int n;
    const replay_req_t *q;
    replay_out_t *o;
    baton_err_t *e;
    uint32_t total;
    int32_t *rank_of;          /* per node */
    uint32_t *left0;           /* dependencies, as the graph has them */
    uint32_t *left;            /* of them, those not yet ended (a walk's: walk_reset copies left0) */
    double *inst_s;            /* per communication (replay_node_t.inst): its time shared with others,
                                  -1 its kind's alone */
    uint32_t *kid_at, *kids;   /* children, CSR */
    int32_t *next;             /* the queue a node waits in (a resource's, a channel's) */
    fifo_t *gpu, *host;        /* per rank: kernels and host nodes waiting */
    uint8_t *gpu_busy, *host_busy;
    pg_t *pg;
    int npg;
    int32_t *inst_of, *slot_of;    /* per node: its collective (instance) and place in it */
    uint32_t *arrived;         /* per instance */
    uint32_t ninst;            /* collectives (instances) */
    int32_t *inst_pg;          /* per instance */
    int32_t *inst_nodes;
    int32_t *chan_of;          /* per node: its send/recv channel */
    fifo_t *sendq, *recvq;     /* per channel */
    int32_t nchan;
    evq_t evq;
} ctx_t;

static const chakra_node_t *node_at(const ctx_t *c, uint32_t g) {
    int r = c->rank_of[g];
    return &c->et[r].nodes[g - c->o->offset[r]];
}

static int node_err(ctx_t *c, uint32_t g, int code, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int node_err(ctx_t *c, uint32_t g, int code, const char *fmt, ...) {
    int r = c->rank_of[g];
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return err_set(c->e, code, "%s: node %u: %s", c->names[r], g - c->o->offset[r], msg);
}

/* An error from timing node g's communication, prefixed with its file and node. */
static int node_prefix(ctx_t *c, uint32_t g, int rc) {
    int r = c->rank_of[g];
    err_prefix(c->e, "%s: node %u: ", c->names[r], g - c->o->offset[r]);
    return rc;
}

/* ---- the graph ---- */

typedef struct idpos {
    uint64_t id;
    uint32_t at;
} idpos_t;

static int idpos_cmp(const void *a, const void *b) {
    const idpos_t *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id ? 1 : (x->at > y->at) - (x->at < y->at);
}

static int64_t find_id(const idpos_t *v, uint32_t n, uint64_t id) {
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (v[mid].id < id) lo = mid + 1;
        else hi = mid;
    }
    return lo < n && v[lo].id == id ? (int64_t)v[lo].at : -1;
}

/* Rank r's dependencies as node indices: counts into left0, edges into
 * dep_of (child, parent pairs) from *ne on. */
static int rank_deps(ctx_t *c, int r, uint32_t *pairs, uint64_t *ne) {
    const chakra_et_t *et = &c->et[r];
    uint32_t base = c->o->offset[r];
    idpos_t *v = malloc(((size_t)et->n + 1) * sizeof *v);
    if (v == NULL) return err_set(c->e, BATON_ENOMEM, "out of memory");
    for (uint32_t i = 0; i < et->n; i++) v[i] = (idpos_t){et->nodes[i].id, i};
    qsort(v, et->n, sizeof *v, idpos_cmp);
    int rc = 0;
    for (uint32_t i = 1; i < et->n && rc == 0; i++)
        if (v[i].id == v[i - 1].id)
            rc = err_set(c->e, BATON_EPARSE, "%s: node %u: id %llu again (node %u has it)", c->names[r], v[i].at,
                         (unsigned long long)v[i].id, v[i - 1].at);
    for (uint32_t i = 0; i < et->n && rc == 0; i++) {
        const chakra_node_t *nd = &et->nodes[i];
        for (uint32_t k = 0; k < nd->ndeps && rc == 0; k++) {
            int64_t p = find_id(v, et->n, nd->deps[k]);
            if (p < 0 || (uint32_t)p == i) {
                rc = err_set(c->e, BATON_EPARSE, "%s: node %u: depends on id %llu, %s", c->names[r], i,
                             (unsigned long long)nd->deps[k], p < 0 ? "which no node of the file has" : "itself");
                break;
            }
            pairs[2 * *ne] = base + i;
            pairs[2 * *ne + 1] = base + (uint32_t)p;
            (*ne)++;
            c->left0[base + i]++;
        }
    }
    free(v);
    return rc;
}

static int graph(ctx_t *c) {
    uint64_t nedges = 0, ne = 0;
    for (int r = 0; r < c->n; r++)
        for (uint32_t i = 0; i < c->et[r].n; i++) nedges += c->et[r].nodes[i].ndeps;
    if (nedges > 0xffffffffu) return err_set(c->e, BATON_EUNSUP, "more than 2^32 dependencies");
    uint32_t *pairs = malloc((size_t)(2 * nedges + 1) * sizeof *pairs);
    c->kids = malloc((size_t)(nedges + 1) * sizeof *c->kids);
    if (pairs == NULL || c->kids == NULL) { free(pairs); return err_set(c->e, BATON_ENOMEM, "out of memory"); }
    int rc = 0;
    for (int r = 0; r < c->n && rc == 0; r++) rc = rank_deps(c, r, pairs, &ne);
    if (rc == 0) {                              /* children of each parent, in the order the files list them */
        for (uint64_t k = 0; k < ne; k++) c->kid_at[pairs[2 * k + 1] + 1]++;
        for (uint32_t g = 0; g < c->total; g++) c->kid_at[g + 1] += c->kid_at[g];
        uint32_t *fill = calloc((size_t)c->total + 1, sizeof *fill);
        if (fill == NULL) rc = err_set(c->e, BATON_ENOMEM, "out of memory");
        for (uint64_t k = 0; k < ne && rc == 0; k++) {
            uint32_t p = pairs[2 * k + 1];
            c->kids[c->kid_at[p] + fill[p]++] = pairs[2 * k];
        }
        free(fill);
    }
    free(pairs);
    return rc;
}

/* No cycles: Kahn's order over every rank (dependencies stay in a file).
 * The first node left out is named. */
static int acyclic(ctx_t *c) {
    uint32_t *left = malloc(((size_t)c->total + 1) * sizeof *left), *todo = malloc(((size_t)c->total + 1) * sizeof *todo);
    if (left == NULL || todo == NULL) { free(left); free(todo); return err_set(c->e, BATON_ENOMEM, "out of memory"); }
    uint32_t n = 0, done = 0;
    memcpy(left, c->left0, (size_t)c->total * sizeof *left);
    for (uint32_t g = 0; g < c->total; g++)
        if (left[g] == 0) todo[n++] = g;
    while (done < n) {
        uint32_t g = todo[done++];
        for (uint32_t k = c->kid_at[g]; k < c->kid_at[g + 1]; k++)
            if (--left[c->kids[k]] == 0) todo[n++] = c->kids[k];
    }
    int rc = 0;
    for (uint32_t g = 0; g < c->total && rc == 0 && n < c->total; g++)
        if (left[g]) rc = node_err(c, g, BATON_EPARSE, "its dependencies form a cycle, or wait on one");
    free(left);
    free(todo);
    return rc;
}

/* ---- communication: what each node is, checked before anything runs ---- */

static int check_p2p(ctx_t *c, uint32_t g, const chakra_node_t *nd) {
    int r = c->rank_of[g], send = nd->type == CHAKRA_SEND;
    unsigned peer_bit = send ? CHAKRA_HAS_DST : CHAKRA_HAS_SRC, own_bit = send ? CHAKRA_HAS_SRC : CHAKRA_HAS_DST;
    int64_t peer = send ? nd->comm_dst : nd->comm_src, own = send ? nd->comm_src : nd->comm_dst;
    const char *what = send ? "send" : "receive";
    if (!(nd->has & peer_bit)) return node_err(c, g, BATON_EPARSE, "a %s without its peer (attr comm_dst or comm_src)", what);
    if (peer < 0 || peer >= c->n)
        return node_err(c, g, BATON_EPARSE, "a %s with rank %lld, but the trace has ranks 0..%d", what, (long long)peer, c->n - 1);
    if (peer == r) return node_err(c, g, BATON_EPARSE, "a %s to or from its own rank", what);
    if ((nd->has & own_bit) && own != r) return node_err(c, g, BATON_EPARSE, "a %s that names another rank as its own", what);
    if (!(nd->has & CHAKRA_HAS_SIZE)) return node_err(c, g, BATON_EPARSE, "a %s without comm_size", what);
    return 0;
}

/* A kernel's duration a run can have (at most 10^12 us, 11.6 days), and
 * a kind of node Chakra has: one it lacks (INVALID_NODE 0, or a number past
 * COMM_COLL_NODE) is instant, unless it says it takes time, which replay
 * would drop unsaid. */
static int check_kinds(ctx_t *c) {
    char b[32];
    for (uint32_t g = 0; g < c->total; g++) {
        const chakra_node_t *nd = node_at(c, g);
        if (nd->duration_us > 1000000000000ull)
            return node_err(c, g, BATON_EPARSE, "a duration of %llu us (duration_micros), more than 10^12 us: not one a "
                            "kernel takes", (unsigned long long)nd->duration_us);
        if ((nd->type < CHAKRA_METADATA || nd->type > CHAKRA_COLL) && nd->duration_us > 0)
            return node_err(c, g, BATON_EPARSE, "%s, none of Chakra's NodeTypes (1-7), takes %llu us: replay times "
                            "COMP_NODE (4) and communication; say the node's type", chakra_type_name(nd->type, b, sizeof b),
                            (unsigned long long)nd->duration_us);
    }
    return 0;
}

static int check_coll(ctx_t *c, uint32_t g, const chakra_node_t *nd) {
    if (!(nd->has & CHAKRA_HAS_TYPE)) return node_err(c, g, BATON_EPARSE, "a collective without comm_type");
    const char *name = chakra_coll_name(nd->comm_type);
    if (name == NULL) return node_err(c, g, BATON_EPARSE, "comm_type %lld is none of Chakra's", (long long)nd->comm_type);
    if (replay_comm_coll(nd->comm_type) < 0)
        return node_err(c, g, BATON_EUNSUP, "%s: baton has no such collective (it replays all-reduce, reduce-scatter, "
                                            "all-gather, broadcast, reduce, all-to-all and barrier)", name);
    if (nd->comm_type != CHAKRA_BARRIER && !(nd->has & CHAKRA_HAS_SIZE))
        return node_err(c, g, BATON_EPARSE, "%s %s without comm_size", strchr("aeiou", name[0]) ? "an" : "a", name);
    return 0;
}

static int find_pg(ctx_t *c, const char *name) {
    for (int i = 0; i < c->npg; i++)
        if (!strcmp(c->pg[i].name, name)) return i;
    pg_t *p = realloc(c->pg, (size_t)(c->npg + 1) * sizeof *p);
    if (p == NULL) return -1;
    c->pg = p;
    memset(&p[c->npg], 0, sizeof *p);
    snprintf(p[c->npg].name, sizeof p[c->npg].name, "%s", name);
    return c->npg++;
}

/* Each collective's group and place among the group's on its rank (in
 * inst_of, slot_of for now), and how many each rank has of each group:
 * count[pg x n + rank] (malloc'd). */
static int count_groups(ctx_t *c, uint32_t **out) {
    uint32_t *count = NULL;
    int rc = 0, cap = 0;
    for (uint32_t g = 0; g < c->total && rc == 0; g++) {
        const chakra_node_t *nd = node_at(c, g);
        if (nd->type != CHAKRA_COLL) continue;
        if ((rc = check_coll(c, g, nd)) < 0) break;
        int p = find_pg(c, nd->pg);
        if (p < 0) { rc = err_set(c->e, BATON_ENOMEM, "out of memory"); break; }
        if (p >= cap) {
            uint32_t *v = realloc(count, (size_t)(p + 8) * c->n * sizeof *v);
            if (v == NULL) { rc = err_set(c->e, BATON_ENOMEM, "out of memory"); break; }
            memset(v + (size_t)cap * c->n, 0, (size_t)(p + 8 - cap) * c->n * sizeof *v);
            count = v, cap = p + 8;
        }
        c->inst_of[g] = (int32_t)count[(size_t)p * c->n + c->rank_of[g]]++;   /* k */
        c->slot_of[g] = p;                                                   /* its group */
    }
    *out = count;
    return rc;
}

/* A group's members (the ranks with its collectives, in rank order), each
 * with as many; where its collectives' nodes and instances are numbered. */
static int members(ctx_t *c, const uint32_t *count, uint32_t *nodes, uint32_t *insts) {
    for (int p = 0; p < c->npg; p++) {
        pg_t *pg = &c->pg[p];
        if ((pg->members = malloc((size_t)c->n * sizeof *pg->members)) == NULL) return err_set(c->e, BATON_ENOMEM, "out of memory");
        for (int r = 0; r < c->n; r++) {
            uint32_t k = count[(size_t)p * c->n + r];
            if (k == 0) continue;
            if (pg->nmembers && k != pg->ncoll)
                return err_set(c->e, BATON_EPARSE, "%s: process group '%s': %u collectives, but %s has %u: the ranks disagree",
                               c->names[r], pg->name, k, c->names[pg->members[0]], pg->ncoll);
            pg->ncoll = k;
            pg->members[pg->nmembers++] = r;
        }
        pg->nodes_at = *nodes, pg->inst_at = *insts;
        *nodes += pg->ncoll * (uint32_t)pg->nmembers;
        *insts += pg->ncoll;
    }
    return 0;
}

/* Rank r's place among the (sorted) members of pg. */
static int slot_of(const pg_t *pg, int r) {
    int lo = 0, hi = pg->nmembers - 1;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (pg->members[mid] < r) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Process groups: who is in each, and its k-th collective's nodes. */
static int groups(ctx_t *c) {
    uint32_t *count = NULL, nodes = 0, insts = 0;
    int rc = count_groups(c, &count);
    if (rc == 0) rc = members(c, count, &nodes, &insts);
    free(count);
    if (rc < 0) return rc;
    c->ninst = insts;
    c->arrived = calloc((size_t)insts + 1, sizeof *c->arrived);
    c->inst_pg = malloc(((size_t)insts + 1) * sizeof *c->inst_pg);
    c->inst_nodes = malloc(((size_t)nodes + 1) * sizeof *c->inst_nodes);
    if (!c->arrived || !c->inst_pg || !c->inst_nodes) return err_set(c->e, BATON_ENOMEM, "out of memory");
    for (int p = 0; p < c->npg; p++)
        for (uint32_t k = 0; k < c->pg[p].ncoll; k++) c->inst_pg[c->pg[p].inst_at + k] = p;
    for (uint32_t g = 0; g < c->total; g++) {
        if (node_at(c, g)->type != CHAKRA_COLL) continue;
        pg_t *pg = &c->pg[c->slot_of[g]];
        uint32_t k = (uint32_t)c->inst_of[g];
        int slot = slot_of(pg, c->rank_of[g]);
        c->inst_of[g] = (int32_t)(pg->inst_at + k);
        c->slot_of[g] = slot;
        c->inst_nodes[pg->nodes_at + k * (uint32_t)pg->nmembers + (uint32_t)slot] = (int32_t)g;
    }
    return 0;
}

/* The k-th collective of a group is one collective: its ranks must agree on
 * what it is. */
static int agree(ctx_t *c) {
    for (int p = 0; p < c->npg; p++) {
        const pg_t *pg = &c->pg[p];
        for (uint32_t k = 0; k < pg->ncoll; k++) {
            const int32_t *v = &c->inst_nodes[pg->nodes_at + k * (uint32_t)pg->nmembers];
            const chakra_node_t *a = node_at(c, (uint32_t)v[0]);
            for (int s = 1; s < pg->nmembers; s++) {
                const chakra_node_t *b = node_at(c, (uint32_t)v[s]);
                if (a->comm_type == b->comm_type && a->comm_size == b->comm_size) continue;
                return node_err(c, (uint32_t)v[s], BATON_EPARSE,
                                "collective %u of its process group: %s of %llu bytes here, %s of %llu bytes in %s", k,
                                chakra_coll_name(b->comm_type), (unsigned long long)b->comm_size,
                                chakra_coll_name(a->comm_type), (unsigned long long)a->comm_size, c->names[pg->members[0]]);
            }
        }
    }
    return 0;
}

typedef struct chankey {
    int64_t src, dst, tag;
    uint32_t g;
    int send;
} chankey_t;

static int chankey_cmp(const void *a, const void *b) {
    const chankey_t *x = a, *y = b;
    if (x->src != y->src) return x->src < y->src ? -1 : 1;
    if (x->dst != y->dst) return x->dst < y->dst ? -1 : 1;
    if (x->tag != y->tag) return x->tag < y->tag ? -1 : 1;
    return (x->g > y->g) - (x->g < y->g);
}

/* Sends and receives by (source, destination, tag): a channel each, and as
 * many sends as receives on it. */
static int channels(ctx_t *c) {
    uint32_t n = 0;
    chankey_t *v = malloc(((size_t)c->total + 1) * sizeof *v);
    if (v == NULL) return err_set(c->e, BATON_ENOMEM, "out of memory");
    int rc = 0;
    for (uint32_t g = 0; g < c->total && rc == 0; g++) {
        const chakra_node_t *nd = node_at(c, g);
        if (nd->type != CHAKRA_SEND && nd->type != CHAKRA_RECV) continue;
        if ((rc = check_p2p(c, g, nd)) < 0) break;
        int send = nd->type == CHAKRA_SEND, r = c->rank_of[g];
        v[n++] = (chankey_t){send ? r : nd->comm_src, send ? nd->comm_dst : r, (nd->has & CHAKRA_HAS_TAG) ? nd->comm_tag : 0, g, send};
    }
    qsort(v, n, sizeof *v, chankey_cmp);
    int32_t nchan = 0;
    for (uint32_t i = 0, j; i < n && rc == 0; i = j, nchan++) {
        int sends = 0, recvs = 0;
        for (j = i; j < n && !chankey_cmp(&(chankey_t){v[i].src, v[i].dst, v[i].tag, v[j].g, 0}, &v[j]); j++) {
            c->chan_of[v[j].g] = nchan;
            sends += v[j].send, recvs += !v[j].send;
        }
        if (sends != recvs) {
            rc = node_err(c, v[i].g, BATON_EPARSE, "rank %lld sends %d message%s to rank %lld with tag %lld, which posts %d receive%s for them",
                          (long long)v[i].src, sends, sends == 1 ? "" : "s", (long long)v[i].dst, (long long)v[i].tag, recvs,
                          recvs == 1 ? "" : "s");
        }
    }
    free(v);
    if (rc == 0 && ((c->sendq = malloc(((size_t)nchan + 1) * sizeof *c->sendq)) == NULL ||
                    (c->recvq = malloc(((size_t)nchan + 1) * sizeof *c->recvq)) == NULL))
        rc = err_set(c->e, BATON_ENOMEM, "out of memory");
    c->nchan = nchan;                          /* their queues: walk_reset */
    return rc;
}

/* ---- the walk ---- */

static void fifo_push(ctx_t *c, fifo_t *f, uint32_t g) {
    c->next[g] = -1;
    if (f->tail >= 0) c->next[f->tail] = (int32_t)g;
    else f->head = (int32_t)g;
    f->tail = (int32_t)g;
}

static int32_t fifo_pop(ctx_t *c, fifo_t *f) {
    int32_t g = f->head;
    if (g >= 0 && (f->head = c->next[g]) < 0) f->tail = -1;
    return g;
}

static int push(ctx_t *c, double t, int kind, uint32_t g) {
    return evq_push(&c->evq, t, (uint32_t)kind, g) < 0 ? err_set(c->e, BATON_ENOMEM, "out of memory") : 0;
}

/* Node g starts at t and takes dur. */
static int begin(ctx_t *c, uint32_t g, double t, double dur) {
    c->o->node[g].start_s = t;
    c->o->node[g].end_s = t + dur;
    return push(c, t + dur, EV_DONE, g);
}

static int kernel_ready(ctx_t *c, uint32_t g, double t) {
    const chakra_node_t *nd = node_at(c, g);
    int r = c->rank_of[g];
    uint8_t *busy = nd->is_cpu_op ? &c->host_busy[r] : &c->gpu_busy[r];
    if (*busy) { fifo_push(c, nd->is_cpu_op ? &c->host[r] : &c->gpu[r], g); return 0; }
    *busy = 1;
    return begin(c, g, t, (double)nd->duration_us * 1e-6);
}

/* Room in o->comm for one more kind. */
static int comm_grow(replay_out_t *o, baton_err_t *e) {
    if (o->ncomm < o->capcomm) return 0;
    int cap = o->capcomm ? 2 * o->capcomm : 16;
    replay_comm_t *v = realloc(o->comm, (size_t)cap * sizeof *v);
    if (v == NULL) return err_set(e, BATON_ENOMEM, "out of memory");
    o->comm = v, o->capcomm = cap;
    return 0;
}

/* The index in o->comm of a collective or a send/recv pair
 * (replay_comm_find's arguments), timed on the machine the first time it is
 * asked (replay_comm_time) and counted each time; a negative error code. */
static int comm_index(ctx_t *c, int p2p, int64_t comm_type, uint64_t bytes, const int32_t *ranks, int n) {
    replay_out_t *o = c->o;
    int k = replay_comm_find(o->comm, o->ncomm, p2p, comm_type, bytes, ranks, n);
    if (k >= 0) return o->comm[k].count++, k;
    if (comm_grow(o, c->e) < 0) return BATON_ENOMEM;
    int rc = replay_comm_time(c->t, c->q, p2p, comm_type, bytes, ranks, n, &o->comm[o->ncomm], c->e);
    return rc < 0 ? rc : o->ncomm++;
}

/* What communication inst of kind k takes: shared with others (the last
 * round's), else its kind's time alone. */
static double took(const ctx_t *c, int64_t inst, int k) {
    return c->inst_s && c->inst_s[inst] >= 0 ? c->inst_s[inst] : c->o->comm[k].each_s;
}

static int coll_ready(ctx_t *c, uint32_t g, double t) {
    int32_t inst = c->inst_of[g];
    const pg_t *pg = &c->pg[c->inst_pg[inst]];
    if (++c->arrived[inst] < (uint32_t)pg->nmembers) return 0;
    const chakra_node_t *nd = node_at(c, g);           /* the last to arrive: all start now */
    int k = comm_index(c, 0, nd->comm_type, nd->comm_size, pg->members, pg->nmembers);
    if (k < 0) return node_prefix(c, g, k);
    const int32_t *v = &c->inst_nodes[pg->nodes_at + (uint32_t)(inst - (int32_t)pg->inst_at) * (uint32_t)pg->nmembers];
    double dur = took(c, inst, k);
    for (int s = 0; s < pg->nmembers; s++) {
        c->o->node[v[s]].comm = k;
        c->o->node[v[s]].inst = inst;
        int rc = begin(c, (uint32_t)v[s], t, dur);
        if (rc < 0) return rc;
    }
    return 0;
}

static int p2p_ready(ctx_t *c, uint32_t g, double t) {
    const chakra_node_t *nd = node_at(c, g);
    int32_t ch = c->chan_of[g], other;
    int send = nd->type == CHAKRA_SEND;
    fifo_t *mine = send ? &c->sendq[ch] : &c->recvq[ch], *theirs = send ? &c->recvq[ch] : &c->sendq[ch];
    if ((other = fifo_pop(c, theirs)) < 0) { fifo_push(c, mine, g); return 0; }
    uint32_t s = send ? g : (uint32_t)other, rv = send ? (uint32_t)other : g;
    const chakra_node_t *sn = node_at(c, s);
    if (node_at(c, rv)->comm_size != sn->comm_size)      /* NCCL: a receive must take what its send sends */
        return node_err(c, rv, BATON_EPARSE, "a receive of %llu bytes paired with a send of %llu bytes (%s, node %u): "
                        "sends and receives pair in order between two ranks, and each pair moves one size",
                        (unsigned long long)node_at(c, rv)->comm_size, (unsigned long long)sn->comm_size,
                        c->names[c->rank_of[s]], s - c->o->offset[c->rank_of[s]]);
    int32_t pair[2] = {c->rank_of[s], (int32_t)sn->comm_dst};
    int k = comm_index(c, 1, 0, sn->comm_size, pair, 2);
    if (k < 0) return node_prefix(c, s, k);
    int64_t inst = (int64_t)c->total + s;                /* after the collectives' numbers */
    c->o->node[g].comm = c->o->node[other].comm = k;
    c->o->node[g].inst = c->o->node[other].inst = inst;
    double dur = took(c, inst, k);
    int rc = begin(c, g, t, dur);
    return rc < 0 ? rc : begin(c, (uint32_t)other, t, dur);
}

static int ready(ctx_t *c, uint32_t g, double t) {
    c->o->node[g].ready_s = t;
    switch (node_at(c, g)->type) {
    case CHAKRA_COMP: return kernel_ready(c, g, t);
    case CHAKRA_COLL: return coll_ready(c, g, t);
    case CHAKRA_SEND: case CHAKRA_RECV: return p2p_ready(c, g, t);
    default: c->o->untimed++; return begin(c, g, t, 0);
    }
}

static int done(ctx_t *c, uint32_t g, double t) {
    const chakra_node_t *nd = node_at(c, g);
    int rc = 0, r = c->rank_of[g];
    if (nd->type == CHAKRA_COMP) {                     /* the resource takes its next node */
        uint8_t *busy = nd->is_cpu_op ? &c->host_busy[r] : &c->gpu_busy[r];
        int32_t nx = fifo_pop(c, nd->is_cpu_op ? &c->host[r] : &c->gpu[r]);
        *busy = nx >= 0;
        if (nx >= 0) rc = begin(c, (uint32_t)nx, t, (double)node_at(c, (uint32_t)nx)->duration_us * 1e-6);
    }
    for (uint32_t k = c->kid_at[g]; k < c->kid_at[g + 1] && rc == 0; k++)
        if (--c->left[c->kids[k]] == 0) rc = push(c, t, EV_READY, c->kids[k]);
    if (t > c->o->rank[r].end_s) c->o->rank[r].end_s = t;
    return rc;
}

/* Something never ran: say what it waits for. */
static int stuck(ctx_t *c, const uint8_t *ended) {
    for (uint32_t g = 0; g < c->total; g++) {
        if (ended[g] || c->o->node[g].ready_s < 0) continue;
        const chakra_node_t *nd = node_at(c, g);
        if (nd->type == CHAKRA_COLL)
            return node_err(c, g, BATON_EPARSE, "its %s waits for ranks of its process group ('%s') that never reach it",
                            chakra_coll_name(nd->comm_type), c->pg[c->inst_pg[c->inst_of[g]]].name);
        if (nd->type == CHAKRA_SEND || nd->type == CHAKRA_RECV)
            return node_err(c, g, BATON_EPARSE, "its %s never meets its peer's (the peer waits on something that waits on it)",
                            nd->type == CHAKRA_SEND ? "send" : "receive");
    }
    for (uint32_t g = 0; g < c->total; g++)
        if (!ended[g])
            return node_err(c, g, BATON_EPARSE, "never ran: its dependencies form a cycle, or wait on one");
    return 0;
}

/* Everything a walk changes, as before any: each walk (the first, and one
 * a round of sharing asks for) starts from here. */
static void walk_reset(ctx_t *c) {
    replay_out_t *o = c->o;
    memcpy(c->left, c->left0, (size_t)c->total * sizeof *c->left);
    memset(c->arrived, 0, (size_t)c->ninst * sizeof *c->arrived);
    for (int32_t i = 0; i < c->nchan; i++) c->sendq[i] = c->recvq[i] = (fifo_t){-1, -1};
    for (int r = 0; r < c->n; r++) c->gpu[r] = c->host[r] = (fifo_t){-1, -1}, c->gpu_busy[r] = c->host_busy[r] = 0;
    for (int r = 0; r < c->n; r++) o->rank[r].end_s = 0;
    for (int k = 0; k < o->ncomm; k++) o->comm[k].count = 0;
    for (uint32_t g = 0; g < c->total; g++)
        o->node[g] = (replay_node_t){.ready_s = -1, .start_s = -1, .end_s = -1, .comm = -1, .inst = -1};
    o->untimed = 0;
}

static int walk(ctx_t *c) {
    int rc = 0;
    walk_reset(c);
    evq_init(&c->evq);
    for (uint32_t g = 0; g < c->total && rc == 0; g++)
        if (c->left[g] == 0) rc = push(c, 0, EV_READY, g);
    uint8_t *ended = calloc((size_t)c->total + 1, 1);
    if (ended == NULL) rc = err_set(c->e, BATON_ENOMEM, "out of memory");
    evq_item_t it;
    int got;
    while (rc == 0 && (got = evq_pop(&c->evq, &it)) > 0) {
        if (it.kind == EV_READY) rc = ready(c, it.id, it.t);
        else { ended[it.id] = 1; rc = done(c, it.id, it.t); }
    }
    if (rc == 0 && got < 0) rc = err_set(c->e, BATON_ENOMEM, "out of memory");
    if (rc == 0) rc = stuck(c, ended);
    free(ended);
    evq_free(&c->evq);
    return rc;
}

/* ---- communications that overlap, shared (replay_share.h) ---- */

/* The communications the last walk ran, one span each, into v: how many. */
static uint32_t spans(ctx_t *c, uint8_t *seen, replay_span_t *v) {
    uint32_t n = 0;
    memset(seen, 0, (size_t)c->total * 2 + 1);
    for (uint32_t g = 0; g < c->total; g++) {
        const replay_node_t *x = &c->o->node[g];
        if (x->inst < 0 || seen[x->inst]) continue;
        seen[x->inst] = 1;
        if (x->end_s > x->start_s) v[n++] = (replay_span_t){.inst = x->inst, .comm = x->comm, .start_s = x->start_s, .end_s = x->end_s};
    }
    return n;
}

/* Each round: what the spans of the last walk take shared (replay_share),
 * into inst_s; a walk again where any changed, until none does. */
static int share(ctx_t *c) {
    size_t ni = (size_t)c->total * 2 + 1;
    uint8_t *seen = malloc(ni);
    replay_span_t *v = malloc(ni * sizeof *v);
    if ((c->inst_s = malloc(ni * sizeof *c->inst_s)) == NULL || seen == NULL || v == NULL) {
        free(seen); free(v);
        return err_set(c->e, BATON_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < ni; i++) c->inst_s[i] = -1;
    int rc = 0;
    while (rc == 0 && c->o->rounds < REPLAY_ROUNDS) {
        uint32_t n = spans(c, seen, v), changed = 0;
        replay_share_stats_t st;
        if ((rc = replay_share(c->t, c->q, c->o->comm, v, n, &st, c->e)) < 0) break;
        c->o->rounds++;
        c->o->chains = st.chains, c->o->apart = st.apart;
        for (uint32_t i = 0; i < n; i++) {
            double was = took(c, v[i].inst, v[i].comm), now = v[i].shared_s;
            if (now != was) changed++;
            c->inst_s[v[i].inst] = now == c->o->comm[v[i].comm].each_s ? -1 : now;
        }
        if (!changed) { c->o->settled = 1; break; }
        rc = walk(c);
    }
    free(seen);
    free(v);
    return rc;
}

/* Each kind's shortest and longest time shared (replay_comm_t). */
static void shared_range(ctx_t *c) {
    for (uint32_t g = 0; g < c->total; g++) {
        const replay_node_t *x = &c->o->node[g];
        if (x->inst < 0 || c->inst_s[x->inst] < 0) continue;
        replay_comm_t *k = &c->o->comm[x->comm];
        double d = x->end_s - x->start_s;
        if (k->shared_hi_s == 0 || d > k->shared_hi_s) k->shared_hi_s = d;
        if (k->shared_lo_s == 0 || d < k->shared_lo_s) k->shared_lo_s = d;
    }
}

/* ---- where the time went ---- */

typedef struct edge {
    double t;
    int what, delta;           /* what: 0 kernel, 1 communication, 2 waiting, 3 host */
} edge_t;

static int edge_cmp(const void *a, const void *b) {
    const edge_t *x = a, *y = b;
    return (x->t > y->t) - (x->t < y->t);
}

static void add_span(edge_t *v, uint32_t *n, double a, double b, int what) {
    if (b <= a) return;
    v[(*n)++] = (edge_t){a, what, 1};
    v[(*n)++] = (edge_t){b, what, -1};
}

static void rank_buckets(ctx_t *c, int r, edge_t *v) {
    replay_rank_t *rk = &c->o->rank[r];
    uint32_t n = 0;
    for (uint32_t g = c->o->offset[r]; g < c->o->offset[r + 1]; g++) {
        const replay_node_t *x = &c->o->node[g];
        const chakra_node_t *nd = node_at(c, g);
        if (nd->type == CHAKRA_COMP) add_span(v, &n, x->start_s, x->end_s, nd->is_cpu_op ? 3 : 0);
        else if (x->comm >= 0) add_span(v, &n, x->ready_s, x->start_s, 2), add_span(v, &n, x->start_s, x->end_s, 1);
    }
    qsort(v, n, sizeof *v, edge_cmp);
    int on[4] = {0, 0, 0, 0};
    double at = 0;
    for (uint32_t i = 0; i <= n; i++) {
        double t = i < n ? v[i].t : rk->end_s, d = t - at;
        if (d > 0) {
            if (on[0]) rk->compute_s += d;
            else if (on[1]) rk->transport_s += d;
            else if (on[2]) rk->transport_s += d, rk->wait_s += d;
            else if (on[3]) rk->overhead_s += d;
            else rk->idle_s += d;
            at = t;
        }
        if (i < n) on[v[i].what] += v[i].delta;
    }
}

static int buckets(ctx_t *c) {
    uint32_t most = 0;
    for (int r = 0; r < c->n; r++)
        if (c->o->offset[r + 1] - c->o->offset[r] > most) most = c->o->offset[r + 1] - c->o->offset[r];
    edge_t *v = malloc(((size_t)most * 4 + 1) * sizeof *v);
    if (v == NULL) return err_set(c->e, BATON_ENOMEM, "out of memory");
    for (int r = 0; r < c->n; r++) {
        rank_buckets(c, r, v);
        if (c->o->rank[r].end_s > c->o->step_s) c->o->step_s = c->o->rank[r].end_s, c->o->critical = r;
    }
    free(v);
    return 0;
}

/* ---- communications at the same time ---- */

typedef struct span {
    double a, b;
    int64_t inst;
} span_t;

static int span_cmp(const void *x, const void *y) {
    const span_t *p = x, *q = y;
    if (p->a != q->a) return p->a < q->a ? -1 : 1;
    return (p->inst > q->inst) - (p->inst < q->inst);
}

/* How many communications ran while another did (shared with it, or
 * timed alone under --alone): spans sorted by start, chained while they
 * overlap; a chain of two or more communications counts them all. A
 * communication's id is below 2 x total (replay_node_t.inst). */
static int overlaps(ctx_t *c) {
    span_t *v = malloc(((size_t)c->total + 1) * sizeof *v);
    int64_t *mark = malloc(((size_t)c->total * 2 + 1) * sizeof *mark);
    if (v == NULL || mark == NULL) { free(v); free(mark); return err_set(c->e, BATON_ENOMEM, "out of memory"); }
    uint32_t n = 0;
    for (size_t i = 0; i < (size_t)c->total * 2 + 1; i++) mark[i] = -1;
    for (uint32_t g = 0; g < c->total; g++) {
        const replay_node_t *x = &c->o->node[g];
        if (x->inst < 0) continue;
        if (mark[x->inst] == -1) c->o->insts++, mark[x->inst] = -2;
        if (x->end_s > x->start_s) v[n++] = (span_t){x->start_s, x->end_s, x->inst};
    }
    qsort(v, n, sizeof *v, span_cmp);
    for (uint32_t i = 0, j; i < n; i = j) {
        double end = v[i].b;
        uint64_t distinct = 1;
        mark[v[i].inst] = i;                   /* the chain that starts at i */
        for (j = i + 1; j < n && v[j].a < end; j++) {
            if (v[j].b > end) end = v[j].b;
            if (mark[v[j].inst] != (int64_t)i) distinct++, mark[v[j].inst] = i;
        }
        if (distinct > 1) c->o->overlapped += distinct;
    }
    free(v);
    free(mark);
    return 0;
}

/* ---- setup ---- */

static int alloc_all(ctx_t *c) {
    replay_out_t *o = c->o;
    size_t n = (size_t)c->total + 1, R = (size_t)c->n;
    o->rank = calloc(R, sizeof *o->rank);
    o->node = malloc(n * sizeof *o->node);
    c->rank_of = malloc(n * sizeof *c->rank_of);
    c->left0 = calloc(n, sizeof *c->left0);
    c->left = malloc(n * sizeof *c->left);
    c->kid_at = calloc(n + 1, sizeof *c->kid_at);
    c->next = malloc(n * sizeof *c->next);
    c->inst_of = malloc(n * sizeof *c->inst_of);
    c->slot_of = malloc(n * sizeof *c->slot_of);
    c->chan_of = malloc(n * sizeof *c->chan_of);
    c->gpu = malloc(R * sizeof *c->gpu);
    c->host = malloc(R * sizeof *c->host);
    c->gpu_busy = calloc(R, 1);
    c->host_busy = calloc(R, 1);
    if (!o->rank || !o->node || !c->rank_of || !c->left0 || !c->left || !c->kid_at || !c->next || !c->inst_of || !c->slot_of ||
        !c->chan_of || !c->gpu || !c->host || !c->gpu_busy || !c->host_busy)
        return err_set(c->e, BATON_ENOMEM, "out of memory");
    for (int r = 0; r < c->n; r++)
        for (uint32_t g = o->offset[r]; g < o->offset[r + 1]; g++) c->rank_of[g] = r;
    for (uint32_t g = 0; g < c->total; g++) c->inst_of[g] = c->slot_of[g] = c->chan_of[g] = -1;
    return 0;                                  /* the walk's own state: walk_reset */
}

static void ctx_free(ctx_t *c) {
    for (int p = 0; p < c->npg; p++) free(c->pg[p].members);
    free(c->pg);
    free(c->rank_of); free(c->left); free(c->kid_at); free(c->kids); free(c->next);
    free(c->gpu); free(c->host); free(c->gpu_busy); free(c->host_busy);
    free(c->inst_of); free(c->slot_of); free(c->arrived); free(c->inst_pg); free(c->inst_nodes);
    free(c->chan_of); free(c->sendq); free(c->recvq);
    free(c->left0); free(c->inst_s);
}

int replay_run(topo_t *t, const chakra_et_t *et, const char *const *names, int n, const replay_req_t *q, replay_out_t *o,
               baton_err_t *e) {
    memset(o, 0, sizeof *o);
    o->nranks = n;
    o->et = et;
    if (n < 1) return err_set(e, BATON_EINVAL, "no trace files");
    if (n > topo_nranks(t))
        return err_set(e, BATON_EINVAL, "the trace has %d ranks, but %s has %d", n, topo_name(t), topo_nranks(t));
    ctx_t c = {.t = t, .et = et, .names = names, .n = n, .q = q, .o = o, .e = e};
    if ((o->offset = malloc(((size_t)n + 1) * sizeof *o->offset)) == NULL) return err_set(e, BATON_ENOMEM, "out of memory");
    uint64_t total = 0;
    for (int r = 0; r < n; r++) o->offset[r] = (uint32_t)total, total += et[r].n;
    if (total >= 0x7fffffffu) { replay_free(o); return err_set(e, BATON_EUNSUP, "more than 2^31 nodes"); }
    o->offset[n] = (uint32_t)total;
    c.total = (uint32_t)total;
    o->nodes = total;
    int rc = alloc_all(&c);
    if (rc == 0) rc = graph(&c);
    if (rc == 0) rc = acyclic(&c);
    if (rc == 0) rc = check_kinds(&c);
    if (rc == 0) rc = groups(&c);
    if (rc == 0) rc = agree(&c);
    if (rc == 0) rc = channels(&c);
    if (rc == 0) rc = walk(&c);
    if (rc == 0 && !q->alone && (rc = share(&c)) == 0) shared_range(&c);
    if (rc == 0) rc = buckets(&c);
    if (rc == 0) rc = overlaps(&c);
    ctx_free(&c);
    if (rc < 0) replay_free(o);
    return rc;
}

void replay_free(replay_out_t *o) {
    if (o == NULL) return;
    for (int i = 0; i < o->ncomm; i++) free(o->comm[i].ranks);
    free(o->comm);
    free(o->rank);
    free(o->offset);
    free(o->node);
    memset(o, 0, sizeof *o);
}
