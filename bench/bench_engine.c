/* bench_engine.c - how fast the engine runs and how much memory it holds.
 * One case per process, so the peak RSS is the case's own:
 *   bench_engine ALGO RANKS MACHINE [symmetric]
 * ALGO an all-reduce (ring, tree, rd, rabenseifner, ...), MACHINE `ring` (a
 * physical ring of 450 GB/s, 0.6 us links, each rank forwarding) or `switch`
 * (every rank on one switch port of 450 GB/s, 0.3 us); one port per rank,
 * 1.1 TB/s reductions, 1 GiB per rank; `symmetric` runs the fast path
 * (sim/engine/symmetry.h: one representative per class, its check included in the
 * wall time). Prints one Markdown table row: the
 * case, messages, events, wall time, events/s, peak RSS, RSS per rank
 * (topology and route cache included) and the engine's own state per rank;
 * `bench_engine --header` prints the table's head and the machine.
 * Without arguments: ring all-reduce on 1,024 ranks of the ring. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>

#include "../algorithms/algo.h"
#include "../sim/engine/engine.h"
#include "../sim/engine/symmetry.h"
#include "../topologies/topo.h"
#include "bench_clock.h"

static topo_t *machine_build(const char *kind, int p) {
    int ring = strcmp(kind, "ring") == 0;
    topo_t *t = topo_create(ring ? "bench-ring" : "bench-switch");
    char name[32];
    for (int i = 0; i < p; i++) {
        snprintf(name, sizeof name, "gpu%d", i);
        int id = topo_add_node(t, name, NODE_GPU, 0, 0, NULL);
        topo_set_rank(t, id, i, NULL);
        topo_set_transit(t, id, ring);       /* a physical ring forwards, like a 1-D torus */
    }
    int sw = ring ? -1 : topo_add_node(t, "switch", NODE_SWITCH, 0, 0, NULL);
    for (int i = 0; i < p && p > 1; i++)
        if (ring) topo_add_link(t, i, (i + 1) % p, 450e9, 0.6e-6, NULL);
        else topo_add_link(t, i, sw, 450e9, 0.15e-6, NULL);
    topo_params(t)->ports = 1;
    topo_params(t)->reduce_bw = 1.1e12;
    if (topo_finalize(t, "bench", NULL) < 0) { topo_free(t); return NULL; }
    return t;
}

static void machine(void) {
    char line[256], model[256] = "unknown CPU";
    FILE *f = fopen("/proc/cpuinfo", "r");
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "model name", 10) == 0) {
            char *c = strchr(line, ':');
            snprintf(model, sizeof model, "%s", c ? c + 2 : line);
            model[strcspn(model, "\n")] = '\0';
            break;
        }
    if (f) fclose(f);
    struct utsname u;
    uname(&u);
    printf("Machine: %s, %s %s, one core. Rows: `make bench` (bench/bench_engine.c).\n\n", model, u.sysname, u.machine);
    printf("| all-reduce, 1 GiB | ranks | messages | events | wall | events/s | peak RSS | RSS / rank | engine / rank |\n");
    printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
}

static int bench(const char *algo, int p, const char *kind, int symmetric) {
    const algo_t *a = algo_find(COLL_ALLREDUCE, algo);
    topo_t *t = machine_build(kind, p);
    sched_t s;
    baton_err_t e = {0};
    if (a == NULL || t == NULL || algo_build(a, p, 1ull << 30, NULL, &s, &e) < 0) {
        fprintf(stderr, "bench: cannot set up %s on %d ranks%s%s\n", algo, p, e.msg[0] ? ": " : "", e.msg);
        topo_free(t);
        return 1;
    }
    engine_result_t r;
    sym_t y = {0};
    engine_opts_t o = {.sym = symmetric ? &y : NULL};
    double t0 = now();
    int rc = symmetric ? sym_find(&s, t, &y, &e) : 0;
    if (rc == 0) rc = engine_run(&s, t, &o, &r, &e);
    double wall = now() - t0;
    sym_free(&y);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    topo_free(t);
    if (rc < 0) { fprintf(stderr, "bench: %s\n", e.msg); return 1; }
    char what[96];
    snprintf(what, sizeof what, "%s, %s%s", algo, strcmp(kind, "ring") == 0 ? "physical ring" : "one switch",
             symmetric ? ", `--symmetric`" : "");
    printf("| %s | %d | %llu | %llu | %.3f s | %.2f M/s | %.1f MiB | %.0f B | %.0f B |\n", what, p,
           (unsigned long long)r.messages, (unsigned long long)r.events, wall, r.events / wall / 1e6,
           ru.ru_maxrss / 1024.0, ru.ru_maxrss * 1024.0 / p, (double)r.state_bytes / p);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "--header") == 0) { machine(); return 0; }
    if (argc == 4 || (argc == 5 && strcmp(argv[4], "symmetric") == 0))
        return bench(argv[1], atoi(argv[2]), argv[3], argc == 5);
    if (argc != 1) { fprintf(stderr, "usage: bench_engine [--header | ALGO RANKS ring|switch [symmetric]]\n"); return 2; }
    machine();
    return bench("ring", 1024, "ring", 0);
}
