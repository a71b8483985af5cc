/* bench_models.c - how far each closed form is from the simulator: for every
 * registry row, the range of simulated / closed-form time over p = 2..33 and
 * sizes 0 B..100 MB, on a single-port mesh and a multi-port star
 * (12.5 GB/s, 1.5 us, reductions at 40 GB/s; divisibility not arranged, so
 * rows exact only when p divides n show their rounding too); first, how fast
 * every closed form answers at 1,048,576 ranks.
 * usage: bench_models */
#include <stdio.h>

#include "../algorithms/algo.h"
#include "../sim/engine/engine.h"
#include "../topologies/topo.h"
#include "bench_clock.h"

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
    if (hi == 0) {              /* nothing ran: e.g. nvls needs a switch that reduces */
        printf("  %-14s %-18s %-5s  not run on this machine (%s)\n", coll_name(a->coll), a->name, star ? "star" : "mesh",
               a->helpers ? "needs a reducing switch" : "no case applies");
        return;
    }
    printf("  %-14s %-18s %-5s  sim/closed in [%.4f, %.4f]\n", coll_name(a->coll), a->name,
           star ? "star" : "mesh", lo, hi);
}

/* Every closed form at 1,048,576 ranks, 64 sizes (1 B..8 EiB, x2), 100
 * times: the slowest first answer per row (the split trees work out their
 * shape once per p), and the rate of the answers after it. */
static void scale(void) {
    const int p = 1 << 20;
    const cost_model_t m = {.alpha = 1e-6, .beta = 1 / 50e9, .gamma = 1 / 1e12, .ports = 0};
    const algo_t *const *rows = algo_all();
    double rest = 0, first_worst = 0, sink = 0;
    long calls = 0;
    int nrows = 0;
    const char *worst_name = "";
    for (int i = 0; rows[i]; i++, nrows++) {
        double t0 = now();
        sink += rows[i]->cost(&m, p, 1, NULL);
        double t1 = now();
        for (int rep = 0; rep < 100; rep++)
            for (int k = 0; k < 64; k++) sink += rows[i]->cost(&m, p, 1ull << (k < 63 ? k : 63), NULL);
        rest += now() - t1;
        calls += 6400;
        if (t1 - t0 > first_worst) { first_worst = t1 - t0; worst_name = rows[i]->name; }
    }
    printf("closed forms at p = 1,048,576, %d rows: %.2f M predictions/s; slowest first answer %s %.3g ms%s\n",
           nrows, calls / rest / 1e6, worst_name, first_worst * 1e3, sink > 0 ? "" : " (?)");
}

int main(void) {
    scale();
    printf("closed form vs simulation, p = 2..33, n = 0 B..100 MB:\n");
    const algo_t *const *rows = algo_all();
    for (int i = 0; rows[i]; i++) {
        row(rows[i], 0);
        row(rows[i], 1);
    }
    return 0;
}
