/* bench_models.c - how far each closed form is from the simulator: for every
 * registry row, the range of simulated / closed-form time over p = 2..33 and
 * sizes 0 B..100 MB, on a single-port mesh and a multi-port star
 * (12.5 GB/s, 1.5 us, reductions at 40 GB/s; divisibility not arranged, so
 * rows exact only when p divides n show their rounding too).
 * usage: bench_models */
#include <stdio.h>

#include "../algorithms/algo.h"
#include "../sim/engine.h"
#include "../topologies/topo.h"

static topo_t *machine(int p, int star) {
    topo_t *t = topo_create(star ? "star" : "mesh");
    char name[32];
    for (int i = 0; i < p; i++) {
        snprintf(name, sizeof name, "r%d", i);
        topo_set_rank(t, topo_add_node(t, name, NODE_GPU, 0, 0, NULL), i, NULL);
    }
    int sw = star ? topo_add_node(t, "switch", NODE_SWITCH, 0, 0, NULL) : -1;
    for (int i = 0; i < p; i++)
        for (int j = star ? sw : i + 1; j < (star ? sw + 1 : p); j++)
            topo_add_link(t, i, j, 12.5e9, star ? 0.75e-6 : 1.5e-6, NULL);
    topo_params(t)->ports = star ? 0 : 1;
    topo_params(t)->reduce_bw = 40e9;
    topo_params(t)->max_inflight = 64;
    if (topo_finalize(t, "bench", NULL) < 0) { topo_free(t); return NULL; }
    return t;
}

static void row(const algo_t *a, int star) {
    static const uint64_t ns[] = {0, 1000, 720720, 5765760, 11531520, 100000000};
    double lo = 1e300, hi = 0;
    for (int p = 2; p <= 33; p++) {
        topo_t *t = machine(p, star);
        cost_model_t m;
        if (t == NULL || topo_cost_model(t, &m, NULL) < 0) { topo_free(t); continue; }
        for (int k = 0; k < 6; k++) {
            sched_t s;
            engine_result_t r;
            if (algo_build(a, p, ns[k], NULL, &s, NULL) < 0 || engine_run(&s, t, NULL, &r, NULL) < 0) continue;
            double f = a->cost(&m, p, ns[k], NULL);
            if (f <= 0) continue;
            double q = r.time_s / f;
            lo = q < lo ? q : lo;
            hi = q > hi ? q : hi;
        }
        topo_free(t);
    }
    printf("  %-14s %-18s %-5s  sim/closed in [%.4f, %.4f]\n", coll_name(a->coll), a->name,
           star ? "star" : "mesh", lo, hi);
}

int main(void) {
    printf("closed form vs simulation, p = 2..33, n = 0 B..100 MB:\n");
    const algo_t *const *rows = algo_all();
    for (int i = 0; rows[i]; i++) {
        row(rows[i], 0);
        row(rows[i], 1);
    }
    return 0;
}
