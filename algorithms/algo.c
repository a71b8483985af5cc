/* algo.c - the registry table and lookups. */
#include "algo.h"

#include <string.h>

static const algo_t *const rows[] = {
    &algo_allreduce_ring,
    &algo_allreduce_tree,
    &algo_allreduce_naive,
    NULL,
};

const algo_t *const *algo_all(void) { return rows; }

const algo_t *algo_find(coll_t coll, const char *name) {
    for (int i = 0; rows[i]; i++)
        if (rows[i]->coll == coll && strcmp(rows[i]->name, name) == 0) return rows[i];
    return NULL;
}

int algo_build(const algo_t *a, int p, uint64_t n, sched_t *s, baton_err_t *e) {
    memset(s, 0, sizeof *s);
    if (p < 1) return err_set(e, BATON_EINVAL, "%s needs at least one rank", a->name);
    s->coll = a->coll;
    s->algo = a->name;
    s->nranks = p;
    s->nchannels = 1;
    s->bytes = n;
    s->nchunks = 1;
    return a->build(s, p, n, e);
}
