/* footprint.c - a run's messages and memory from a sample of its programs. */
#include "footprint.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A cached route: its slot (40 B) in a table kept at most half full and
 * doubled when it fills (3 slots a route on average) and its links (4 B a
 * hop, 8 hops allowed: a fat-tree's longest route is 6). Measured: see
 * docs/decisions/long-work.md. */
#define ROUTE_BYTES (3 * 40 + 8 * 4)
/* Routing's distance maps: a byte per node each, at most 512 MiB
 * (topologies/topo_route.c, funnel_dist). */
#define DMAP_MAX (512.0 * 1024 * 1024)

/* Distinct receivers of one rank's sends, in a small set (open addressing;
 * beyond SET_CAP distinct peers each new send counts as one more). */
#define SET_CAP 4096
static double rank_peers(const sched_t *s, int r, int32_t *set, double *sends) {
    double n = 0;
    memset(set, -1, 2 * SET_CAP * sizeof *set);
    for (int c = 0; c < s->nchannels; c++) {
        sched_op_t op;
        for (uint32_t pc = 0; sched_op(s, r, c, pc, &op); pc++) {
            if (!op.send) continue;
            *sends += 1;
            uint32_t i = ((uint32_t)op.send_peer * 2654435761u) & (2 * SET_CAP - 1);
            while (set[i] >= 0 && set[i] != op.send_peer) i = (i + 1) & (2 * SET_CAP - 1);
            if (set[i] == op.send_peer) continue;
            if (n < SET_CAP) set[i] = op.send_peer;
            n++;
        }
    }
    return n;
}

void footprint_sample(const sched_t *s, int nr, footprint_t *f) {
    static int32_t set[2 * SET_CAP];
    int k = nr < FOOTPRINT_SAMPLE ? nr : FOOTPRINT_SAMPLE;
    double sends = 0, peers = 0;
    memset(f, 0, sizeof *f);
    for (int i = 0; i < k; i++)                 /* evenly spaced, rank 0 and the last among them */
        peers += rank_peers(s, k < 2 ? 0 : (int)((int64_t)i * (nr - 1) / (k - 1)), set, &sends);
    if (k == 0) return;
    f->messages = sends / k * nr;
    f->pairs = peers / k * nr;
}

/* What does not depend on the sample: engine state, distance maps, verifier. */
static double fixed_bytes(const sched_t *s, const topo_t *t, int nr, const footprint_need_t *n) {
    double b = (double)n->state;
    double maps = (double)(topo_nnodes(t) + 1) * (nr < 4096 ? nr : 4096);
    b += maps < DMAP_MAX ? maps : DMAP_MAX;
    if (n->verify != VERIFY_NONE) {            /* a state and an original per cell (verify.c), */
        double width = n->verify == VERIFY_DATA ? (double)s->bytes : (double)s->nchunks;
        double cells = width * (s->nranks + s->helpers), most = (double)VERIFY_SIG_MAX;
        b += 2 * 8 * (cells < most ? cells : most);    /* whose own limit says more beyond (too_big) */
    }
    return b;
}

void footprint_of(const sched_t *s, const topo_t *t, int nr, const footprint_need_t *n, footprint_t *f) {
    footprint_sample(s, nr, f);
    f->bytes = fixed_bytes(s, t, nr, n) + f->pairs * ROUTE_BYTES +
               (n->rec_bytes ? f->messages * (double)n->rec_bytes : 0);
}

/* MemAvailable from /proc/meminfo in bytes, 0 if unreadable. */
static uint64_t mem_available(void) {
    char line[256];
    unsigned long long kib = 0;
    FILE *f = fopen("/proc/meminfo", "r");
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1) break;
    if (f) fclose(f);
    if (kib) return (uint64_t)kib * 1024;
#ifdef _SC_AVPHYS_PAGES
    long pages = sysconf(_SC_AVPHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    if (pages > 0 && size > 0) return (uint64_t)pages * (uint64_t)size;
#endif
    return 0;
}

uint64_t footprint_available(void) {
    const char *lim = getenv("BATON_MEM_LIMIT");
    if (lim && *lim) {
        char *end;
        unsigned long long v = strtoull(lim, &end, 10);
        if (*end == '\0') return (uint64_t)v;
    }
    return mem_available();
}

/* 1.5 GiB, 640 MiB, 12 KiB: an estimate, so one decimal. */
static void human(double b, char *buf, size_t n) {
    if (b >= 1024.0 * 1024 * 1024) snprintf(buf, n, "%.1f GiB", b / (1024.0 * 1024 * 1024));
    else if (b >= 1024.0 * 1024) snprintf(buf, n, "%.1f MiB", b / (1024.0 * 1024));
    else snprintf(buf, n, "%.1f KiB", b / 1024.0);
}

int footprint_check(const sched_t *s, topo_t *t, int nr, const footprint_need_t *n, baton_err_t *e) {
    uint64_t avail = footprint_available();
    if (avail == 0) return 0;
    double all = (double)nr * (s->nranks + s->helpers - 1);   /* every rank to every other */
    if (!n->rec_bytes && fixed_bytes(s, t, nr, n) + all * ROUTE_BYTES <= (double)avail) return 0;
    footprint_t f;
    footprint_of(s, t, nr, n, &f);
    if (f.bytes <= (double)avail) return 0;
    char need[32], have[32];
    human(f.bytes, need, sizeof need);
    human((double)avail, have, sizeof have);
    return err_set(e, BATON_ENOMEM, "%s on %d ranks needs about %s, %s available%s; use %sfewer ranks",
                   s->algo, s->nranks, need, have, getenv("BATON_MEM_LIMIT") ? " (BATON_MEM_LIMIT)" : "",
                   nr < s->nranks + s->helpers ? "" : "--symmetric or ");
}
