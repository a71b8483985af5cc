/* linkload.c - a traffic pattern's busiest link (see linkload.h). */
#include "linkload.h"
#include "fold.h"

#include <stdlib.h>
#include <string.h>

typedef struct { double lat, path; } longest_t;   /* the longest route's latency; slowest route's s/B */

/* Each directed link's load, and the links loaded (so that finding the
 * busiest looks at those, not at every link of a cluster: a fit asks at
 * every trial). */
typedef struct { double *load; int32_t *used; int nused; } loads_t;

static int loads_init(loads_t *x, int nl) {
    x->load = calloc((size_t)nl + 1, sizeof *x->load);
    x->used = malloc(((size_t)nl + 1) * sizeof *x->used);
    x->nused = 0;
    return x->load && x->used ? 0 : -1;
}

static void loads_free(loads_t *x) { free(x->load), free(x->used); }

/* Charge each directed link on the route from r to dst its share. */
static int charge(topo_t *t, int r, int dst, double share, loads_t *x, longest_t *w, baton_err_t *e) {
    topo_route_t rt;
    int rc = topo_route(t, r, dst, &rt, e);
    if (rc < 0) return rc;
    for (int k = 0; k < rt.nlinks; k++) {
        int32_t l = rt.links[k];
        if (x->load[l] == 0 && share > 0) x->used[x->nused++] = l;
        x->load[l] += share;
    }
    if (rt.lat > w->lat) w->lat = rt.lat;
    return 0;
}

int linkload_pattern_record(topo_t *t, linkload_peer_fn peer, const void *ctx, int nslots, int nchannels,
                            linkload_rec_t *rec, baton_err_t *e) {
    int p = topo_nranks(t);
    *rec = (linkload_rec_t){0};
    if (nchannels < 1 || nslots < 1 || (double)p * nslots > LOAD_MAX_MESSAGES) return 0;
    loads_t x;
    longest_t w = {0, 0};
    if (loads_init(&x, topo_nlinks(t)) < 0) { loads_free(&x); return err_set(e, BATON_ENOMEM, "out of memory"); }
    for (int c = 0; c < nslots; c++)
        for (int r = 0; r < p; r++) {
            int dst = peer(ctx, c, r), rc;
            if (dst < 0 || dst == r) continue;
            if ((rc = charge(t, r, dst, 1.0 / nchannels, &x, &w, e)) < 0) { loads_free(&x); return rc; }
        }
    rec->nused = x.nused, rec->used = x.used, rec->lat = w.lat;
    rec->load = malloc(((size_t)x.nused + 1) * sizeof *rec->load);
    for (int i = 0; rec->load && i < x.nused; i++) rec->load[i] = x.load[x.used[i]];
    free(x.load);
    if (rec->load == NULL) { linkload_rec_free(rec); return err_set(e, BATON_ENOMEM, "out of memory"); }
    return 1;
}

/* The busiest directed link's seconds (its load over its bandwidth) and the
 * slowest route's s/B: every route's rate is its narrowest link's, so the
 * slowest route's is the narrowest loaded link's. */
int linkload_rec_cost(const topo_t *t, const linkload_rec_t *rec, int nchannels, cost_model_t *m) {
    double scale = topo_params_c(t)->bw_scale, worst = 0, narrow = 1e300;
    for (int i = 0; i < rec->nused; i++) {
        double bw = topo_dlink(t, rec->used[i])->bw, s = rec->load[i] / (bw * scale);
        if (s > worst) worst = s;
        if (bw < narrow) narrow = bw;
    }
    if (worst == 0) return 0;                         /* nobody sends: nothing learnt */
    m->alpha = rec->lat;
    m->beta = worst;
    m->channels = nchannels;
    m->beta_path = 1 / (narrow * scale);
    return 1;
}

void linkload_rec_free(linkload_rec_t *rec) {
    free(rec->used), free(rec->load);
    *rec = (linkload_rec_t){0};
}

int linkload_pattern_cost(topo_t *t, linkload_peer_fn peer, const void *ctx, int nslots, int nchannels, cost_model_t *m,
                      baton_err_t *e) {
    linkload_rec_t rec;
    int rc = linkload_pattern_record(t, peer, ctx, nslots, nchannels, &rec, e);
    if (rc <= 0) return rc;
    rc = linkload_rec_cost(t, &rec, nchannels, m);
    linkload_rec_free(&rec);
    return rc;
}

/* One step: charge every message's bytes to its links; the largest message,
 * the longest latency, whether anyone sends; the loads stay in x. */
static int one_step(topo_t *t, linkload_step_fn send, const void *ctx, int k, loads_t *x, double *largest, double *lat,
                    int *sends, baton_err_t *e) {
    int p = topo_nranks(t);
    longest_t w = {0, 0};
    for (int r = 0; r < p; r++) {
        double bytes = 0;
        int dst = send(ctx, k, r, &bytes), rc;
        if (dst < 0 || dst == r) continue;
        if ((rc = charge(t, r, dst, bytes, x, &w, e)) < 0) return rc;
        if (bytes > *largest) *largest = bytes;
        *sends = 1;
    }
    *lat = w.lat;
    return 0;
}

/* Step k's loads appended to rec (and cleared from x), with its largest
 * message and latency. */
static int keep_step(linkload_steps_rec_t *rec, loads_t *x, double largest, double lat) {
    int n = rec->nentries + x->nused, steps = rec->nsteps + 1;
    int32_t *link = realloc(rec->link, ((size_t)n + 1) * sizeof *link);
    if (link) rec->link = link;
    double *load = realloc(rec->load, ((size_t)n + 1) * sizeof *load);
    if (load) rec->load = load;
    double *step = realloc(rec->step, (size_t)steps * 3 * sizeof *step);
    if (step) rec->step = step;
    if (!link || !load || !step) return -1;
    for (int i = 0; i < x->nused; i++) {
        rec->link[rec->nentries + i] = x->used[i];
        rec->load[rec->nentries + i] = x->load[x->used[i]];
        x->load[x->used[i]] = 0;
    }
    double *at = &rec->step[(size_t)rec->nsteps * 3];
    at[0] = x->nused, at[1] = largest, at[2] = lat;
    rec->nentries = n, rec->nsteps = steps, x->nused = 0;
    return 0;
}

/* The i-th of m steps charged of nsteps: all where m == nsteps, else runs
 * of LOAD_RUN consecutive steps spread evenly, so every run sees every
 * residue of the steps modulo the GPUs a node (a ring's or pairwise's step
 * k pairs ranks k apart; evenly spaced single steps at a power-of-two count
 * had seen only offsets 0 and 4 of 8: twoshot on 128 H100 nodes 154 ms
 * where the whole view says 182.5). */
#define LOAD_RUN 8
static int sampled_step(int i, int m, int nsteps) {
    if (m >= nsteps) return i;
    int runs = m / LOAD_RUN, j = i / LOAD_RUN;                  /* m >= LOAD_MIN_STEPS >= LOAD_RUN */
    if (j >= runs) j = runs - 1;                                /* the last run takes m's remainder */
    return (int)((int64_t)j * (nsteps - LOAD_RUN * 2) / runs) + i - j * LOAD_RUN;
}

int linkload_steps_charged(int p, int nsteps) {
    int most = p > 0 ? LOAD_MAX_STEP_MESSAGES / p : 0, m = nsteps < most ? nsteps : most;
    return nsteps < 1 || m < (nsteps < LOAD_MIN_STEPS ? nsteps : LOAD_MIN_STEPS) ? 0 : m;
}

int linkload_steps_record(topo_t *t, linkload_step_fn send, const void *ctx, int nsteps, linkload_steps_rec_t *rec,
                          baton_err_t *e) {
    int p = topo_nranks(t), m = linkload_steps_charged(p, nsteps);   /* all, or m spread evenly */
    *rec = (linkload_steps_rec_t){0};
    if (m < 1) return 0;
    loads_t x;
    if (loads_init(&x, topo_nlinks(t)) < 0) { loads_free(&x); return err_set(e, BATON_ENOMEM, "out of memory"); }
    for (int i = 0; i < m; i++) {
        int k = sampled_step(i, m, nsteps);
        double largest = 0, l = 0;
        int sends = 0, rc = one_step(t, send, ctx, k, &x, &largest, &l, &sends, e);
        if (rc == 0 && !sends) continue;              /* nobody sends in this step */
        if (rc == 0 && keep_step(rec, &x, largest, l) < 0) rc = err_set(e, BATON_ENOMEM, "out of memory");
        if (rc < 0) { loads_free(&x); linkload_steps_rec_free(rec); return rc; }
    }
    loads_free(&x);
    return 1;
}

/* Each step's busiest link at t's rates, summed as the steps ran. */
int linkload_steps_rec_cost(const topo_t *t, const linkload_steps_rec_t *rec, cost_model_t *m) {
    double scale = topo_params_c(t)->bw_scale, seconds = 0, bytes = 0, lat = 0;
    for (int k = 0, i = 0; k < rec->nsteps; k++) {
        const double *at = &rec->step[(size_t)k * 3];
        double busiest = 0;
        for (int end = i + (int)at[0]; i < end; i++) {
            double sec = rec->load[i] / (topo_dlink(t, rec->link[i])->bw * scale);
            if (sec > busiest) busiest = sec;
        }
        seconds += busiest, bytes += at[1], lat += at[2];
    }
    if (rec->nsteps == 0 || bytes == 0) return 0;
    m->alpha = lat / rec->nsteps;
    m->beta = m->beta_path = seconds / bytes;
    m->channels = 1;
    return 1;
}

void linkload_steps_rec_free(linkload_steps_rec_t *rec) {
    free(rec->link), free(rec->load), free(rec->step);
    *rec = (linkload_steps_rec_t){0};
}

/* A stand-in route's latency, slowest s/B, the node links it loads (link
 * number x 2 + 1 where it is the destination node's, x 2 where the
 * source's: a route between two nodes crosses no third node's parts) and
 * how it crosses the fabric (cross < 0: the whole's route cannot be read
 * off it). */
typedef struct { double lat, path; int off, n, cross; fold_cross_t cr; } hop_list_t;

typedef struct {
    topo_t *t;
    int g;               /* ranks a node */
    hop_list_t *memo;    /* per pair of witness ranks; lat < 0: not yet */
    int *pool, npool, cap;
    double fabric_bw;    /* the rate of the fabric's own links (0: not seen yet, -1: they differ) */
} stand_ins_t;

/* The fabric's links on h's route keep one rate? */
static void same_rate(stand_ins_t *si, const hop_list_t *h, double bw) {
    if (h->cross <= 0 || h->cr.links == 0) return;
    if (si->fabric_bw == 0) si->fabric_bw = bw;
    else if (bw != si->fabric_bw) si->fabric_bw = -1;
}

static const hop_list_t *stand_in(stand_ins_t *si, int r, int d, baton_err_t *e) {
    int fs, fd, fr = topo_nranks(si->t);
    if (topo_fold_stand_in(si->t, r, d, &fs, &fd) < 0) {
        err_set(e, BATON_EWHOLE, "%s: ranks %d and %d have no witnesses as far apart", topo_name(si->t), r, d);
        return NULL;
    }
    hop_list_t *h = &si->memo[(size_t)fs * fr + fd];
    if (h->lat >= 0) return h;
    topo_route_t rt;
    if (topo_route(si->t, fs, fd, &rt, e) < 0) return NULL;   /* kept: every pattern asks for the same pairs */
    if (si->npool + rt.nlinks > si->cap) {
        int cap = 2 * si->cap + rt.nlinks, *p = realloc(si->pool, (size_t)cap * sizeof *p);
        if (p == NULL) { err_set(e, BATON_ENOMEM, "out of memory"); return NULL; }
        si->pool = p, si->cap = cap;
    }
    double bw;
    *h = (hop_list_t){rt.lat, 1 / rt.bw, si->npool, 0, 0, {0}};
    h->cross = topo_fold_cross(si->t, rt.links, rt.nlinks, &h->cr, &bw);
    same_rate(si, h, bw);
    for (int k = 0; k < rt.nlinks; k++) {
        int owner, copy = topo_fold_copy(si->t, rt.links[k], &owner);
        if (copy >= 0 && (owner == fs / si->g || owner == fd / si->g))
            si->pool[si->npool + h->n++] = copy * 2 + (owner != fs / si->g);
    }
    si->npool += h->n;
    return h;
}

/* share added n times, as the whole's loads add it message by message. */
static double added(double share, uint32_t n) {
    double sum = 0;
    for (uint32_t i = 0; i < n; i++) sum += share;
    return sum;
}

/* The busiest link's seconds from the most messages any copy of each node
 * link carried and the most any fabric link did: the whole's busiest_link
 * divides each link's load (the share added once a message) by its rate;
 * the load grows with the count and division is monotone, so the most
 * loaded link of a rate is the busiest of it. */
static double folded_busiest(topo_t *t, const uint32_t *most, int T, double share, uint32_t fabric_most,
                             double fabric_bw) {
    double scale = topo_params_c(t)->bw_scale, worst = 0;
    for (int i = 0; i < T; i++) {
        double s = most[i] ? added(share, most[i]) / (topo_dlink(t, topo_fold_copy_link(t, i))->bw * scale) : 0;
        if (s > worst) worst = s;
    }
    double f = fabric_most ? added(share, fabric_most) / (fabric_bw * scale) : 0;
    return f > worst ? f : worst;
}

/* Count message r -> d on its stand-in h's links: node k's copies (count[k
 * x T + copy]) and the whole fabric's (fabric[id]); *exact = 0 where the
 * whole's route is not known. */
static void charge_folded(topo_t *t, const hop_list_t *h, const int *pool, int r, int d, int g, int T, uint32_t *count,
                          uint32_t *most, uint32_t *fabric, uint32_t *fabric_most, int *exact) {
    for (int k = 0; k < h->n; k++) {
        int x = pool[h->off + k];
        uint32_t *c = &count[(size_t)((x & 1 ? d : r) / g) * T + (x >> 1)];
        if (++*c > most[x >> 1]) most[x >> 1] = *c;
    }
    long id[4];
    if (h->cross < 0) { *exact = 0; return; }
    if (h->cross == 0 || h->cr.links == 0) return;
    if (topo_fold_cross_ids(t, r / g, d / g, &h->cr, id) != h->cr.links) { *exact = 0; return; }
    for (int k = 0; k < h->cr.links; k++)
        if (++fabric[id[k]] > *fabric_most) *fabric_most = fabric[id[k]];
}

int linkload_folded_cost(topo_t *t, linkload_peer_fn peer, const void *ctx, int nslots, int nchannels, cost_model_t *m,
                         baton_err_t *e) {
    int p = topo_fold_ranks(t), N = topo_fold_nodes(t), g = N > 0 ? p / N : 0, fr = topo_nranks(t), T = topo_fold_copies(t);
    int rc = 0, sent = 0, exact = 1;
    if (nchannels < 1 || nslots < 1 || g < 1) return 0;
    if (T < 0) return err_set(e, BATON_EWHOLE, "%s: its witness nodes are not copies of one node", topo_name(t));
    stand_ins_t si = {.t = t, .g = g, .memo = malloc((size_t)fr * fr * sizeof *si.memo)};
    size_t ncount = (size_t)N * T + (size_t)topo_fold_fabric_links(t) + 1, bytes = ncount * sizeof(uint32_t);
    uint32_t *count = topo_fold_scratch(t, bytes), *most = calloc((size_t)T + 1, sizeof *most), fabric_most = 0;
    uint32_t *fabric = count ? count + (size_t)N * T : NULL;
    longest_t w = {0, 0};
    if (si.memo == NULL || count == NULL || most == NULL) rc = err_set(e, BATON_ENOMEM, "out of memory");
    for (size_t i = 0; rc == 0 && i < (size_t)fr * fr; i++) si.memo[i].lat = -1;
    for (int r = 0; r < p && rc == 0 && exact; r++)
        for (int s = 0; s < nslots && rc == 0 && exact; s++) {
            int d = peer(ctx, s, r);
            if (d < 0 || d == r) continue;
            const hop_list_t *h = stand_in(&si, r, d, e);
            if (h == NULL) { rc = e && e->code ? e->code : BATON_EWHOLE; break; }
            if (h->lat > w.lat) w.lat = h->lat;
            if (h->path > w.path) w.path = h->path;
            charge_folded(t, h, si.pool, r, d, g, T, count, most, fabric, &fabric_most, &exact);
            sent = 1;
        }
    if (count) memset(count, 0, bytes);   /* as it was found */
    if (rc == 0 && sent && (!exact || si.fabric_bw < 0))
        rc = err_set(e, BATON_EWHOLE, "%s: the witnesses' routes do not show the whole fabric's", topo_name(t));
    if (rc == 0 && sent) {
        m->alpha = w.lat;
        m->beta = folded_busiest(t, most, T, 1.0 / nchannels, fabric_most, si.fabric_bw);
        m->channels = nchannels;
        m->beta_path = w.path;
    }
    free(si.memo), free(si.pool), free(most);
    return rc < 0 ? rc : sent;
}
