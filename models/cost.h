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

typedef struct cost_model {
    double alpha;   /* seconds per message (path latency) */
    double beta;    /* seconds per byte (1 / bottleneck bandwidth) */
    double gamma;   /* seconds per byte reduced (1 / reduce bandwidth), 0 if free */
    int ports;      /* 1: single-port; 0: multi-port star (see above) */
    int uniform;    /* 1 if every rank pair looked at sees the same alpha and beta:
                       only then can an exact formula be exact on this machine */
    int reducers;   /* switches that reduce in the network (NVLS, SHARP) */
} cost_model_t;

/* The largest of p blocks of n bytes: ceil(n / p). */
static inline double cost_block(int p, unsigned long long n) {
    return (double)(n / (unsigned long long)p + (n % (unsigned long long)p != 0));
}

/* ceil(log2(p)) for p >= 1 (0 for p = 1). */
static inline int cost_ceil_log2(int p) {
    int k = 0;
    while ((1L << k) < p) k++;
    return k;
}

#endif
