/* peers.c - the destinations of a pattern of peers, and its link loads, kept
 * on the machine (see peers.h): direct-mapped by the key's hash, the ring
 * orders compared in full (a copy after the table), not only by hash.
 * Recomputing a 2 x 8 cluster's tree peers at every trial of a fit was 40 %
 * of a calibration (docs/decisions/speed.md). */
#include "peers.h"

#include <stdlib.h>
#include <string.h>

#define PEERS_SIZE 256
#define PEERS_MAX (1 << 16)        /* destinations a table holds at most */
#define LOADS_SIZE 64

typedef struct {
    const algo_t *a;
    peers_fn peer;
    int nranks, nchannels, root, helpers, period, slots;
    int64_t param[4];
    size_t orders_len;             /* the orders' ranks, 0 without orders */
    uint64_t orders;               /* their hash */
} peers_key_t;

/* A pattern's link loads (linkload_pattern_record, or a step pattern's:
 * linkload_steps_record), for the routes of one age of one cache
 * (topo_route_epoch of its owner) and one latency scale. */
typedef struct {
    peers_key_t key;
    int channels;                  /* -1: a step pattern's */
    uint64_t bytes;                /* a step pattern's buffer (its messages' bytes follow it), else 0 */
    double lat_scale;
    uint64_t epoch;
    int32_t *orders;               /* a copy of the orders' ranks (NULL: none) */
    linkload_rec_t rec;
    linkload_steps_rec_t steps;
    int full;
} loads_slot_t;

typedef struct {
    peers_key_t key[PEERS_SIZE];
    int32_t *dst[PEERS_SIZE];      /* the destinations, then the orders' ranks */
    loads_slot_t loads[LOADS_SIZE];
} peers_t;

static void loads_clear(loads_slot_t *x) {
    free(x->orders);
    linkload_rec_free(&x->rec);
    linkload_steps_rec_free(&x->steps);
    *x = (loads_slot_t){0};
}

static void peers_free(void *p) {
    peers_t *pp = p;
    for (int i = 0; i < PEERS_SIZE; i++) free(pp->dst[i]);
    for (int i = 0; i < LOADS_SIZE; i++) loads_clear(&pp->loads[i]);
    free(pp);
}

/* Bytes hashed eight at a time (multiply and fold), continuing from h: a
 * key and its orders run to a kilobyte, hashed at every memo miss of a fit,
 * where util/hash.h's byte-wise FNV-1a made the 8 x 400G H200's calibration
 * 2.2-2.8 -> 3.0-3.3 s. */
static uint64_t hash_bytes(uint64_t h, const void *p, size_t n) {
    const unsigned char *b = p;
    uint64_t w;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        memcpy(&w, b + i, 8);
        h = (h ^ w) * 0x9E3779B97F4A7C15ull, h ^= h >> 29;
    }
    for (; i < n; i++) h = (h ^ b[i]) * 0x9E3779B97F4A7C15ull;
    return h;
}

static void peers_key(peers_key_t *k, const algo_t *a, peers_fn peer, const sched_t *s, int slots) {
    memset(k, 0, sizeof *k);                  /* padding too: keys compare with memcmp */
    k->a = a, k->peer = peer, k->slots = slots;
    k->nranks = s->nranks, k->nchannels = s->nchannels, k->root = s->root, k->helpers = s->helpers, k->period = s->period;
    memcpy(k->param, s->param, sizeof k->param);
    if (s->orders == NULL) return;
    k->orders_len = (size_t)s->orders->count * (size_t)s->orders->nranks;
    k->orders = hash_bytes(1, s->orders->rank, k->orders_len * sizeof *s->orders->rank);
}

/* Entry i holds k's table (the orders' ranks compared in full). */
static int holds(const peers_t *pp, size_t i, const peers_key_t *k, const sched_t *s, size_t n) {
    if (pp->dst[i] == NULL || memcmp(&pp->key[i], k, sizeof *k) != 0) return 0;
    return k->orders_len == 0 || memcmp(pp->dst[i] + n, s->orders->rank, k->orders_len * sizeof *s->orders->rank) == 0;
}

static peers_t *patterns_of(topo_t *t) {
    peers_t *pp = topo_patterns(t);
    if (pp == NULL && (pp = calloc(1, sizeof *pp)) != NULL) topo_set_patterns(t, pp, peers_free);
    return pp;
}

const int32_t *peers_table(topo_t *t, const algo_t *a, peers_fn peer, const sched_t *s, int slots) {
    int p = topo_nranks(t);
    if (slots < 1 || (double)p * slots > PEERS_MAX) return NULL;
    peers_key_t k;
    peers_key(&k, a, peer, s, slots);
    size_t i = (size_t)(hash_bytes(0, &k, sizeof k) % PEERS_SIZE), n = (size_t)p * (size_t)slots;
    peers_t *pp = patterns_of(t);
    if (pp == NULL) return NULL;
    if (holds(pp, i, &k, s, n)) return pp->dst[i];
    int32_t *dst = malloc((n + k.orders_len) * sizeof *dst);
    if (dst == NULL) return NULL;
    for (int c = 0; c < slots; c++)
        for (int r = 0; r < p; r++) dst[(size_t)c * p + r] = peer(s, c, r);
    if (k.orders_len) memcpy(dst + n, s->orders->rank, k.orders_len * sizeof *dst);
    free(pp->dst[i]);
    pp->dst[i] = dst, pp->key[i] = k;
    return dst;
}

/* Slot x holds the loads of key k for C channels (-1: steps) at t's
 * latency scale, of the routes of this epoch? */
static int loads_hold(const loads_slot_t *x, const peers_key_t *k, const sched_t *s, int C, double lat_scale,
                      uint64_t epoch) {
    if (!x->full || x->channels != C || x->lat_scale != lat_scale || x->epoch != epoch) return 0;
    if (x->bytes != (C < 0 ? s->bytes : 0)) return 0;
    if (memcmp(&x->key, k, sizeof *k) != 0) return 0;
    return k->orders_len == 0 || memcmp(x->orders, s->orders->rank, k->orders_len * sizeof *x->orders) == 0;
}

/* The slot for k and C in the cache of t's routes' owner (NULL: no memory
 * for one); *hit: it holds them already. */
static loads_slot_t *loads_slot(topo_t *t, const peers_key_t *k, const sched_t *s, int C, int *hit) {
    peers_t *pp = patterns_of(topo_route_owner(t));
    loads_slot_t *x = pp ? &pp->loads[hash_bytes((uint64_t)(C + 1), k, sizeof *k) % LOADS_SIZE] : NULL;
    *hit = x && loads_hold(x, k, s, C, topo_params_c(t)->lat_scale, topo_route_epoch(t));
    return x;
}

/* Slot x now holds k's loads for C (x's records already in place); 0, or
 * -1 with x emptied where the orders' copy finds no memory. */
static int loads_keep(topo_t *t, loads_slot_t *x, const peers_key_t *k, const sched_t *s, int C) {
    free(x->orders);
    x->orders = NULL;
    if (k->orders_len && (x->orders = malloc(k->orders_len * sizeof *x->orders)) == NULL) {
        loads_clear(x);
        return -1;
    }
    if (x->orders) memcpy(x->orders, s->orders->rank, k->orders_len * sizeof *x->orders);
    x->key = *k, x->channels = C, x->bytes = C < 0 ? s->bytes : 0, x->lat_scale = topo_params_c(t)->lat_scale, x->epoch = topo_route_epoch(t);
    x->full = 1;
    return 0;
}

int peers_loads_cost(topo_t *t, const algo_t *a, peers_fn peer, const sched_t *s, int slots, int C,
                     linkload_peer_fn at, const void *ctx, cost_model_t *out, baton_err_t *e) {
    peers_key_t k;
    int hit, rc;
    peers_key(&k, a, peer, s, slots);
    loads_slot_t *x = loads_slot(t, &k, s, C, &hit);
    if (hit) return linkload_rec_cost(t, &x->rec, C, out);
    linkload_rec_t rec;
    if ((rc = linkload_pattern_record(t, at, ctx, slots, C, &rec, e)) <= 0) return rc;
    rc = linkload_rec_cost(t, &rec, C, out);
    if (x == NULL) { linkload_rec_free(&rec); return rc; }     /* no room to keep it: the answer stands */
    loads_clear(x);
    x->rec = rec;
    loads_keep(t, x, &k, s, C);
    return rc;
}

int peers_steps_cost(topo_t *t, const algo_t *a, const sched_t *s, int nsteps, linkload_step_fn send,
                     const void *ctx, cost_model_t *out, baton_err_t *e) {
    peers_key_t k;
    int hit, rc;
    peers_key(&k, a, NULL, s, nsteps);
    loads_slot_t *x = loads_slot(t, &k, s, -1, &hit);
    if (hit) return linkload_steps_rec_cost(t, &x->steps, out);
    linkload_steps_rec_t rec;
    if ((rc = linkload_steps_record(t, send, ctx, nsteps, &rec, e)) <= 0) return rc;
    rc = linkload_steps_rec_cost(t, &rec, out);
    if (x == NULL) { linkload_steps_rec_free(&rec); return rc; }
    loads_clear(x);
    x->steps = rec;
    loads_keep(t, x, &k, s, -1);
    return rc;
}
