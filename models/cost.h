/* cost.h - the alpha-beta-gamma machine a closed form sees.
 *
 * A closed form treats the machine as uniform: sending m bytes between any two
 * ranks costs alpha + m*beta, reducing m bytes costs m*gamma. The port model
 * says how many transfers a rank may have in flight:
 *   ports == 1  single-port, full-duplex (the textbook model "A1": one send and
 *               one receive at a time, both at once);
 *   ports == 0  multi-port: no per-rank limit, a rank is limited by its link
 *               into a switch (a star: the link is the bottleneck).
 * Each algorithm's closed form says which of these it was derived for; where
 * the two differ it takes `ports` into account. */
#ifndef BATON_COST_H
#define BATON_COST_H

/* How one kind of step sees the machine (see cost_model_t). */
typedef struct cost_view {
    double alpha, beta, beta_path;
    int channels;
    double rdzv, match;
} cost_view_t;

typedef struct cost_model {
    double alpha;   /* seconds per message (path latency) */
    double beta;    /* seconds per byte (1 / bottleneck bandwidth) */
    double gamma;   /* seconds per byte reduced (1 / reduce bandwidth), 0 if free */
    int ports;      /* 1: single-port; 0: multi-port star (see above) */
    int inflight;   /* sends a rank's stream may have in flight (max_inflight); 0: no limit */
    int uniform;    /* 1 if every rank pair looked at sees the same alpha and beta:
                       only then can an exact formula be exact on this machine */
    int reducers;   /* switches that reduce in the network (NVLS, SHARP) */
    double helper_alpha; /* seconds a message between a rank and its reducing switch takes
                            to start (its route's latency; no protocol latency); 0: none */
    double helper_beta;  /* seconds per byte between a rank and its reducing switch, the
                            switch's efficiency included (topo_nvls_eff); 0: none */
    /* Channels side by side (0 or 1: one). With C > 1 the links carry every
     * channel's share (beta: the busiest link's time per byte of a block)
     * while each channel's own message moves at its route's speed
     * (beta_path) and pays alpha and its addition alone: one channel's
     * latency and adds hide behind the others' transfers (cost_step). */
    int channels;
    double beta_path;
    int stepwise;   /* beta is a whole pipeline step's busiest link (algo_t.peer_slots) */
    /* Steps between groups (nodes) of a hierarchical algorithm, where they
     * see other links than the steps inside groups (has_across; else the
     * fields above serve both). */
    cost_view_t across;
    int has_across;
    int blind;      /* 1: the machine has links several ranks' routes may share and this
                       row's closed form does not look at them (no view of its steps) */
    /* The network transport's rendezvous (topo_params_t.rdzv_lat): a message
     * of more than rdzv_above bytes (payload: a protocol's efficiency taken
     * off the wire's threshold, proto_apply) pays rdzv more, on the steps
     * that cross the network (across.rdzv where the row has such a view;
     * else the whole machine's, whose alpha is a crossing's). 0: none. And
     * where the host matches tags (topo_params_t.match_lat), every message
     * on those steps waits match more. */
    double rdzv, rdzv_above, match;
} cost_model_t;

/* m as the steps between groups see it. */
static inline cost_model_t cost_across(const cost_model_t *m) {
    cost_model_t r = *m;
    if (m->has_across) {
        r.alpha = m->across.alpha;
        r.beta = m->across.beta;
        r.beta_path = m->across.beta_path;
        r.channels = m->across.channels;
        r.rdzv = m->across.rdzv;
        r.match = m->across.match;
        r.has_across = 0;
    }
    return r;
}

/* The largest of p blocks of n bytes: ceil(n / p). */
static inline double cost_block(int p, unsigned long long n) {
    return (double)(n / (unsigned long long)p + (n % (unsigned long long)p != 0));
}

/* What a message of `msg` bytes waits for the host across the network: its
 * match, and the rendezvous where it is longer than the transport sends
 * eagerly. */
static inline double cost_host(const cost_model_t *c, double msg) {
    return c->match + (c->rdzv > 0 && msg > c->rdzv_above ? c->rdzv : 0);
}

/* What a message of `msg` bytes waits beyond its links: alpha, its match and rendezvous. */
static inline double cost_alpha(const cost_model_t *c, double msg) { return c->alpha + cost_host(c, msg); }

/* What the host adds (cost_host) over `steps` steps whose messages double
 * from blk bytes (blk, 2 blk, 4 blk, ...: recursive doubling, Bruck;
 * halving's in reverse). */
static inline double cost_host_doubling(const cost_model_t *c, double blk, int steps) {
    double r = 0;
    for (int i = 0; i < steps && (c->rdzv > 0 || c->match > 0); i++, blk *= 2) r += cost_host(c, blk);
    return r;
}

/* One step of m-byte blocks in which every rank sends (and, if g != 0, adds
 * at g seconds per byte): alpha + m(beta + g) on one channel; with C
 * channels the larger of the links' work, m beta, and one channel's own
 * message, alpha + (m/C)(beta_path + g). */
static inline double cost_step(const cost_model_t *c, double m, double g) {
    if (c->channels <= 1) return cost_alpha(c, m) + m * (c->beta + g);
    double links = m * c->beta, own = cost_alpha(c, m / c->channels) + m / c->channels * (c->beta_path + g);
    return links > own ? links : own;
}

/* ceil(log2(p)) for p >= 1 (0 for p = 1). */
static inline int cost_ceil_log2(int p) {
    int k = 0;
    while ((1L << k) < p) k++;
    return k;
}

#endif
