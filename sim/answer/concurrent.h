/* concurrent.h - several collectives in one simulation (a step's traffic).
 *
 * Each collective names its algorithm, size and the machine ranks it runs
 * on (any subset, in its own rank order), and when it starts: at a time, or
 * a time after an earlier one has ended. They run in one engine run
 * (algorithms/group.h), so they share ports, links and reduce engines as the
 * machine makes them: two all-reduces on disjoint links take the time of one,
 * on one shared link about twice. */
#ifndef BATON_CONCURRENT_H
#define BATON_CONCURRENT_H

#include "../../algorithms/algo.h"
#include "../engine/engine.h"

typedef struct conc_coll {
    coll_t coll;
    char algo[32];           /* a registry name */
    uint64_t bytes;
    int nranks;
    const int32_t *ranks;    /* machine rank of each of its ranks */
    int channels;            /* 0: 1 */
    int root;                /* rooted collectives: in its own numbering */
    double start_s;          /* at this time, or this long after `after` ended */
    int after;               /* an earlier collective it waits for, -1: none */
    int own_proto;           /* 1: it runs under `proto`, not the run's (conc_opts_t) */
    int own_algo;            /* 1: `algo` was named (a=), not the default ring */
    proto_t proto;           /* out, where own_proto is 0: the run's */
    double end_s;            /* out: when it ended (with its protocol's base latency) */
} conc_coll_t;

typedef struct conc_opts {
    proto_t proto;           /* the protocol of those that name none (PROTO_NONE: none) */
    contention_t contention;
    int verify;              /* verify every collective (data mode when small) */
    int link_stats;          /* bytes per link in the result */
} conc_opts_t;

/* Run the n collectives of c on t together; r->time_s is when the last
 * ended. The caller frees r (engine_result_free). */
int conc_run(topo_t *t, conc_coll_t *c, int n, const conc_opts_t *o, engine_result_t *r, baton_err_t *e);

/* Parse "c=allreduce a=ring s=64MiB ranks=0-3,8-11 start=10us after=0
 * channels=2 root=0 p=LL128" (s required; defaults: all-reduce, ring, every
 * rank, the run's protocol)
 * into *c, its ranks allocated into *ranks, which the caller frees. */
int conc_parse(const char *spec, int p, conc_coll_t *c, int32_t **ranks, baton_err_t *e);

#endif
