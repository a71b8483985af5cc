/* peers.c - the destinations of a pattern of peers, kept on the machine
 * (see peers.h): direct-mapped by the key's hash, the ring orders compared
 * in full (a copy after the table), not only by hash. Recomputing a 2 x 8
 * cluster's tree peers at every trial of a fit was 40 % of a calibration
 * (docs/decisions/speed.md). */
#include "peers.h"

#include <stdlib.h>
#include <string.h>

#define PEERS_SIZE 256
#define PEERS_MAX (1 << 16)        /* destinations a table holds at most */

typedef struct {
    const algo_t *a;
    peers_fn peer;
    int nranks, nchannels, root, helpers, period, slots;
    int64_t param[4];
    size_t orders_len;             /* the orders' ranks, 0 without orders */
    uint64_t orders;               /* their hash */
} peers_key_t;

typedef struct {
    peers_key_t key[PEERS_SIZE];
    int32_t *dst[PEERS_SIZE];      /* the destinations, then the orders' ranks */
} peers_t;

static void peers_free(void *p) {
    peers_t *pp = p;
    for (int i = 0; i < PEERS_SIZE; i++) free(pp->dst[i]);
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

const int32_t *peers_table(topo_t *t, const algo_t *a, peers_fn peer, const sched_t *s, int slots) {
    int p = topo_nranks(t);
    if (slots < 1 || (double)p * slots > PEERS_MAX) return NULL;
    peers_key_t k;
    peers_key(&k, a, peer, s, slots);
    size_t i = (size_t)(hash_bytes(0, &k, sizeof k) % PEERS_SIZE), n = (size_t)p * (size_t)slots;
    peers_t *pp = topo_patterns(t);
    if (pp == NULL && (pp = calloc(1, sizeof *pp)) != NULL) topo_set_patterns(t, pp, peers_free);
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
