/* sockmsgs.c - the network work of a schedule's busiest rank, for NCCL's
 * proxy thread (ncclrule.c's proxy-thread floor): every send to and receive
 * from another node, counted op by op (the socket transport's messages,
 * software matching's); for libfabric's inline sends (ncclrule.c
 * proxy_inline), only the sends of at most a few bytes; or the connections
 * to other nodes each channel uses (ncclrule.c proxy_ops). A schedule's
 * helpers (reducing switches, ranks nranks and up) are no rank's network
 * peers here: NVLS's switch is in the node; CollNet's leaf and spine
 * switches are reached through the NIC, and NCCL's proxy does drive
 * CollNet's sends (coll_net.cc), but they need no tag match and no shipped
 * machine has both SHARP and proxy_op_latency: their operations are left
 * out.
 *
 * A tree's programs grow with the size (one op a chunk), so the count walks
 * millions of ops at the top sizes; doctor asks it again for each machine of
 * a cause's grid, whose schedules are the same. Three exact savings:
 * - ranks a period apart (sched_t.period) that is also a whole number of
 *   nodes run the same program moved on, so they count alike: one of each;
 * - a program that repeats one stretch of ops (sched_t.reps: a tree's
 *   chunks) counts one stretch;
 * - the count is a pure function of the schedule, the node size and what
 *   is counted, so it is remembered (baton is single-threaded; the table is
 *   bounded). */
#include "sockmsgs.h"

#include <stdlib.h>
#include <string.h>

static long gcd(long a, long b) {
    while (b) { long r = a % b; a = b; b = r; }
    return a;
}

/* Where a schedule's ranks run: rank r on machine rank ranks[r] (NULL: on
 * r), machine rank m on node m / g. */
typedef struct { int g; const int32_t *ranks; } where_t;

static int node_of(const where_t *w, int r) { return (w->ranks ? w->ranks[r] : r) / w->g; }

/* The ranks to walk: with period k and nodes of g ranks, rank r + L runs
 * rank r's program with every peer moved L on, for L = lcm(k, g), and moving
 * by whole nodes keeps each peer on or off r's node; so the residues mod
 * gcd(L, p) stand for all. Every rank where the ranks do not fill whole
 * nodes, no period is known or the ranks are placed by a list. */
static int walk_span(const sched_t *s, const where_t *w) {
    int p = s->nranks, g = w->g;
    if (s->period <= 0 || p % g || w->ranks) return p;
    long l = (long)s->period / gcd(s->period, g) * g;
    return (int)gcd(l, p);
}

/* The length of (r, c)'s program: programs are pure functions of pc, so
 * doubling then halving finds the end in O(log length) ops. */
static uint32_t prog_len(const sched_t *s, int r, int c) {
    sched_op_t op;
    uint32_t lo = 0, hi = 1;                       /* op lo - 1 exists (or lo = 0); is op hi - 1? */
    while (hi < (1u << 31) && sched_op(s, r, c, hi - 1, &op)) lo = hi, hi *= 2;
    while (hi - lo > 1) {                          /* ops [0, lo) exist, op hi - 1 does not */
        uint32_t mid = lo + (hi - lo) / 2;
        if (sched_op(s, r, c, mid - 1, &op)) lo = mid;
        else hi = mid;
    }
    return lo;
}

/* What is counted (busiest's mode): every send to and receive from another
 * node; only the sends to another node of 1 to `small` bytes; or the
 * connections to other nodes a channel uses, each (peer, direction) once. */
typedef enum { COUNT_MESSAGES, COUNT_SMALL_SENDS, COUNT_CONNECTIONS } count_t;

/* Whether peer is a rank of another node than r's. */
static int remote(const sched_t *s, const where_t *w, int r, int peer) {
    return peer < s->nranks && node_of(w, peer) != node_of(w, r);
}

/* Whether op counts as a message (small 0: every send to and receive from
 * another node; else the sends to another node of 1 to small bytes). */
static int counts(const sched_t *s, const where_t *w, int r, const sched_op_t *op, uint64_t small) {
    int out = op->send && remote(s, w, r, op->send_peer);
    if (small == 0) return out + (op->recv != RECV_NONE && remote(s, w, r, op->recv_peer));
    uint64_t n = out && op->nchunk ? sched_range_bytes(s, op->chunk, op->nchunk) : 0;
    return n >= 1 && n <= small;
}

/* (r, c)'s messages to other nodes: one stretch's x reps where the
 * program repeats (sched_t.reps), else op by op. */
static uint64_t chan_messages(const sched_t *s, const where_t *w, int r, int c, uint64_t small) {
    uint32_t stretch = s->reps > 1 ? prog_len(s, r, c) / s->reps : UINT32_MAX;
    uint64_t m = 0;
    sched_op_t op;
    for (uint32_t pc = 0; pc < stretch && sched_op(s, r, c, pc, &op); pc++) m += counts(s, w, r, &op, small);
    return s->reps > 1 ? m * s->reps : m;
}

/* Marks one (peer, direction) of (r, c) as seen: 1 the first time. seen
 * holds 2 p stamps; stamp is (r, c)'s own. */
static int first_sight(uint32_t *seen, uint32_t stamp, int peer, int dir) {
    uint32_t *slot = &seen[2 * peer + dir];
    if (*slot == stamp) return 0;
    *slot = stamp;
    return 1;
}

/* (r, c)'s connections to other nodes: the peers it sends to and receives
 * from there, each direction once (a program's repeats use the same ones:
 * one stretch is enough). */
static uint64_t chan_connections(const sched_t *s, const where_t *w, int r, int c, uint32_t *seen, uint32_t stamp) {
    uint32_t stretch = s->reps > 1 ? prog_len(s, r, c) / s->reps : UINT32_MAX;
    uint64_t m = 0;
    sched_op_t op;
    for (uint32_t pc = 0; pc < stretch && sched_op(s, r, c, pc, &op); pc++) {
        if (op.send && remote(s, w, r, op.send_peer)) m += first_sight(seen, stamp, op.send_peer, 0);
        if (op.recv != RECV_NONE && remote(s, w, r, op.recv_peer)) m += first_sight(seen, stamp, op.recv_peer, 1);
    }
    return m;
}

/* The busiest rank's count. Without memory for the marks the connections
 * are counted as messages, each op again: more, never fewer, and *exact
 * says 0 (not to be remembered as the connections' count). */
static uint64_t walk(const sched_t *s, const where_t *w, count_t mode, uint64_t small, int *exact) {
    uint64_t most = 0;
    uint32_t *seen = NULL, stamp = 0;
    *exact = 1;
    if (mode == COUNT_CONNECTIONS && (seen = calloc(2 * (size_t)s->nranks, sizeof *seen)) == NULL)
        mode = COUNT_MESSAGES, *exact = 0;
    for (int r = 0, span = walk_span(s, w); r < span; r++) {
        uint64_t m = 0;
        for (int c = 0; c < s->nchannels; c++)
            m += mode == COUNT_CONNECTIONS ? chan_connections(s, w, r, c, seen, ++stamp) : chan_messages(s, w, r, c, small);
        if (m > most) most = m;
    }
    free(seen);
    return most;
}

/* What decides a schedule's ops: its program and everything the program
 * reads. Rings' orders are compared by content (they belong to a machine,
 * and each machine is loaded afresh; a kept key holds its own copy); a group
 * of collectives is not kept. period and reps are not in it: they only say
 * how to count, exactly, so a remembered count cannot check them (the tests
 * do, against the walk). */
typedef struct {
    sched_prog_fn prog;
    const char *algo;
    int coll, nranks, nchannels, root, helpers, g, mode;
    uint64_t bytes, small, count;   /* count: the remembered answer */
    uint32_t nblocks, per_block;
    int64_t param[4];
    size_t orders_n;
    const int32_t *orders;
} msgkey_t;

#define SOCKMSGS_KEPT 1024

static msgkey_t kept[SOCKMSGS_KEPT];
static unsigned nkept, next_out;

static int make_key(const sched_t *s, int g, count_t mode, uint64_t small, msgkey_t *k) {
    if (s->group || s->part) return 0;
    *k = (msgkey_t){.prog = s->prog, .algo = s->algo, .coll = (int)s->coll, .nranks = s->nranks, .nchannels = s->nchannels,
                    .root = s->root, .helpers = s->helpers, .g = g, .mode = (int)mode, .bytes = s->bytes, .small = small,
                    .nblocks = s->nblocks, .per_block = s->per_block,
                    .orders_n = s->orders ? (size_t)s->orders->count * (size_t)s->orders->nranks : 0,
                    .orders = s->orders ? s->orders->rank : NULL};
    memcpy(k->param, s->param, sizeof k->param);
    return 1;
}

static int same(const msgkey_t *a, const msgkey_t *b) {
    return a->prog == b->prog && a->algo == b->algo && a->coll == b->coll && a->nranks == b->nranks &&
           a->nchannels == b->nchannels && a->root == b->root && a->helpers == b->helpers && a->g == b->g && a->mode == b->mode &&
           a->bytes == b->bytes && a->small == b->small && a->nblocks == b->nblocks && a->per_block == b->per_block &&
           !memcmp(a->param, b->param, sizeof a->param) && a->orders_n == b->orders_n &&
           (a->orders_n == 0 || !memcmp(a->orders, b->orders, a->orders_n * sizeof *a->orders));
}

/* Keep k with its own copy of the orders (the oldest goes when full); not
 * kept if there is no memory for the copy. */
static void keep(msgkey_t k) {
    int32_t *own = NULL;
    if (k.orders_n && (own = malloc(k.orders_n * sizeof *own)) == NULL) return;
    if (own) memcpy(own, k.orders, k.orders_n * sizeof *own);
    k.orders = own;
    msgkey_t *slot = &kept[nkept < SOCKMSGS_KEPT ? nkept++ : next_out++ % SOCKMSGS_KEPT];
    if (slot->orders) free((void *)slot->orders);
    *slot = k;
}

/* The busiest rank's count (mode, small: as walk), remembered where the
 * ranks are the machine's first (a list's placement is not kept). */
static uint64_t busiest(const sched_t *s, int g, const int32_t *ranks, count_t mode, uint64_t small) {
    if (s == NULL || g <= 0 || (g >= s->nranks && ranks == NULL)) return 0;
    where_t w = {g, ranks};
    msgkey_t k;
    int exact;
    if (ranks || !make_key(s, g, mode, small, &k)) return walk(s, &w, mode, small, &exact);
    for (unsigned i = 0; i < nkept; i++)
        if (same(&kept[i], &k)) return kept[i].count;
    k.count = walk(s, &w, mode, small, &exact);
    if (exact) keep(k);
    return k.count;
}

uint64_t sockmsgs_busiest(const sched_t *s, int g, const int32_t *ranks) {
    return busiest(s, g, ranks, COUNT_MESSAGES, 0);
}

uint64_t sockmsgs_small_sends(const sched_t *s, int g, const int32_t *ranks, uint64_t most) {
    return most ? busiest(s, g, ranks, COUNT_SMALL_SENDS, most) : 0;
}

uint64_t sockmsgs_connections(const sched_t *s, int g, const int32_t *ranks) {
    return busiest(s, g, ranks, COUNT_CONNECTIONS, 0);
}
