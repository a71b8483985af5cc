/* linkload.c - a traffic pattern's busiest link (see linkload.h). */
#include "linkload.h"

#include <stdlib.h>

typedef struct { double lat, path; } longest_t;   /* the longest route's latency; slowest route's s/B */

/* Charge each directed link on the route from r to dst its share. */
static int charge(topo_t *t, int r, int dst, double share, double *load, longest_t *w, baton_err_t *e) {
    topo_route_t rt;
    int rc = topo_route(t, r, dst, &rt, e);
    if (rc < 0) return rc;
    for (int k = 0; k < rt.nlinks; k++) load[rt.links[k]] += share;
    if (rt.lat > w->lat) w->lat = rt.lat;
    if (1 / rt.bw > w->path) w->path = 1 / rt.bw;
    return 0;
}

/* The busiest directed link's seconds (its load over its bandwidth), and
 * the loads back to 0 for the next pattern. */
static double busiest_link(const topo_t *t, double *load) {
    double scale = topo_params_c(t)->bw_scale, worst = 0;
    for (int l = 0; l < topo_nlinks(t); l++) {
        double s = load[l] / (topo_dlink(t, l)->bw * scale);
        if (s > worst) worst = s;
        load[l] = 0;
    }
    return worst;
}

int linkload_pattern_cost(topo_t *t, linkload_peer_fn peer, const void *ctx, int nslots, int nchannels, cost_model_t *m,
                      baton_err_t *e) {
    int p = topo_nranks(t), nl = topo_nlinks(t);
    if (nchannels < 1 || nslots < 1 || (double)p * nslots > LOAD_MAX_MESSAGES) return 0;
    double *load = calloc((size_t)nl + 1, sizeof *load), worst = 0;
    longest_t w = {0, 0};
    if (load == NULL) return err_set(e, BATON_ENOMEM, "out of memory");
    for (int c = 0; c < nslots; c++)
        for (int r = 0; r < p; r++) {
            int dst = peer(ctx, c, r), rc;
            if (dst < 0 || dst == r) continue;
            if ((rc = charge(t, r, dst, 1.0 / nchannels, load, &w, e)) < 0) { free(load); return rc; }
        }
    worst = busiest_link(t, load);                    /* seconds per byte of a block */
    free(load);
    if (worst == 0) return 0;                         /* nobody sends: nothing learnt */
    m->alpha = w.lat;
    m->beta = worst;
    m->channels = nchannels;
    m->beta_path = w.path;
    return 1;
}

/* One step: charge every message's bytes to its links; the busiest link's
 * seconds, the largest message, the longest latency. */
static int one_step(topo_t *t, linkload_step_fn send, const void *ctx, int k, double *load, double *busiest,
                    double *largest, double *lat, int *sends, baton_err_t *e) {
    int p = topo_nranks(t);
    longest_t w = {0, 0};
    for (int r = 0; r < p; r++) {
        double bytes = 0;
        int dst = send(ctx, k, r, &bytes), rc;
        if (dst < 0 || dst == r) continue;
        if ((rc = charge(t, r, dst, bytes, load, &w, e)) < 0) return rc;
        if (bytes > *largest) *largest = bytes;
        *sends = 1;
    }
    *busiest = busiest_link(t, load);
    *lat = w.lat;
    return 0;
}

int linkload_steps_cost(topo_t *t, linkload_step_fn send, const void *ctx, int nsteps, cost_model_t *m,
                        baton_err_t *e) {
    int p = topo_nranks(t), nl = topo_nlinks(t), moving = 0;
    if (nsteps < 1 || (double)p * nsteps > LOAD_MAX_STEP_MESSAGES) return 0;
    double *load = calloc((size_t)nl + 1, sizeof *load), seconds = 0, bytes = 0, lat = 0;
    if (load == NULL) return err_set(e, BATON_ENOMEM, "out of memory");
    for (int k = 0; k < nsteps; k++) {
        double busiest = 0, largest = 0, l = 0;
        int sends = 0, rc = one_step(t, send, ctx, k, load, &busiest, &largest, &l, &sends, e);
        if (rc < 0) { free(load); return rc; }
        if (!sends) continue;                         /* nobody sends in this step */
        seconds += busiest, bytes += largest, lat += l, moving++;
    }
    free(load);
    if (moving == 0 || bytes == 0) return 0;
    m->alpha = lat / moving;
    m->beta = m->beta_path = seconds / bytes;
    m->channels = 1;
    return 1;
}
