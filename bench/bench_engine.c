/* bench_engine.c - how fast the engine runs: ring all-reduce on 1,024 and
 * 4,096 ranks of a uniform machine (a physical ring of 450 GB/s, 0.6 us
 * links, 1.1 TB/s reductions), 1 GiB per rank. Prints events/s, wall time,
 * peak memory (max RSS of the process so far) and the machine.
 * usage: bench_engine [RANKS...]  (default 1024 4096) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>

#include "../algorithms/algo.h"
#include "../sim/engine.h"
#include "../topologies/topo.h"
#include "bench_clock.h"

static topo_t *ring_machine(int p) {
    topo_t *t = topo_create("bench-ring");
    char name[32];
    for (int i = 0; i < p; i++) {
        snprintf(name, sizeof name, "gpu%d", i);
        int id = topo_add_node(t, name, NODE_GPU, 0, 0, NULL);
        topo_set_rank(t, id, i, NULL);
        topo_set_transit(t, id, 1);          /* a physical ring forwards, like a 1-D torus */
    }
    for (int i = 0; i < p && p > 1; i++) topo_add_link(t, i, (i + 1) % p, 450e9, 0.6e-6, NULL);
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
    printf("machine: %s, %s %s, one core used\n", model, u.sysname, u.machine);
}

static int bench(int p) {
    topo_t *t = ring_machine(p);
    sched_t s;
    baton_err_t e = {0};
    if (t == NULL || algo_build(&algo_allreduce_ring, p, 1ull << 30, NULL, &s, &e) < 0) {
        fprintf(stderr, "bench: cannot set up %d ranks%s%s\n", p, e.msg[0] ? ": " : "", e.msg);
        topo_free(t);
        return 1;
    }
    engine_result_t r;
    double t0 = now();
    int rc = engine_run(&s, t, NULL, &r, &e);
    double wall = now() - t0;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    if (rc < 0) { fprintf(stderr, "bench: %s\n", e.msg); topo_free(t); return 1; }
    printf("ring allreduce p=%-5d messages %-10llu events %-10llu wall %7.3f s  %6.2f M events/s  "
           "peak RSS %6.1f MiB  (simulated %.4g s)\n",
           p, (unsigned long long)r.messages, (unsigned long long)r.events, wall,
           r.events / wall / 1e6, ru.ru_maxrss / 1024.0, r.time_s);
    topo_free(t);
    return 0;
}

int main(int argc, char **argv) {
    machine();
    int rc = 0;
    if (argc > 1)
        for (int i = 1; i < argc; i++) rc |= bench(atoi(argv[i]));
    else
        rc = bench(1024) | bench(4096);
    return rc;
}
