/* dragonfly.c - a dragonfly fabric: routers in groups, all-to-all inside a
 * group, global links between groups (dragonfly.h). */
#include "dragonfly.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int dfly_shape(const gen_dragonfly_t *f, int nh, dfly_shape_t *s, baton_err_t *e) {
    if (f->per_router < 1 || f->per_group < 1 || f->globals < 0 || f->links < 0)
        return err_set(e, BATON_EINVAL, "dragonfly needs hosts_per_router >= 1, routers_per_group >= 1, "
                       "global_ports >= 0 and global_links >= 0");
    if (nh < 1) return err_set(e, BATON_EINVAL, "dragonfly: no hosts");
    s->routers = (nh + f->per_router - 1) / f->per_router;
    s->groups = (s->routers + f->per_group - 1) / f->per_group;
    s->links = 0;
    if (s->groups == 1) return 0;
    int last = s->routers - (s->groups - 1) * f->per_group, ports = last * f->globals;   /* the smallest group's */
    if (ports < s->groups - 1)
        return err_set(e, BATON_EINVAL, "dragonfly: %d hosts make %d groups, and each group needs a global link to "
                       "each of the %d others, but %s has %d router%s of %d global port%s, %d in all "
                       "(more global_ports, routers_per_group or hosts_per_router)", nh, s->groups, s->groups - 1,
                       last < f->per_group ? "the last group" : "a group", last, last == 1 ? "" : "s", f->globals,
                       f->globals == 1 ? "" : "s", ports);
    int most = ports / (s->groups - 1);
    if (f->links > most)
        return err_set(e, BATON_EINVAL, "dragonfly: %d global links between each pair of %d groups need %d ports a "
                       "group; %s has %d", f->links, s->groups, f->links * (s->groups - 1),
                       last < f->per_group ? "the last group" : "a group", ports);
    s->links = f->links ? f->links : most;
    return 0;
}

int dfly_group_size(const gen_dragonfly_t *f, const dfly_shape_t *s, int g) {
    int n = s->routers - g * f->per_group;
    return n < f->per_group ? n : f->per_group;
}

int dfly_global_router(const gen_dragonfly_t *f, int groups, int i, int j, int k) {
    int o = ((j - i - 1) % groups + groups) % groups, q = o + k * (groups - 1);
    return i * f->per_group + q / f->globals;
}

/* Every router, named prefix.rN, and its hosts. */
static int add_routers(topo_t *t, const int *hosts, int nh, const gen_dragonfly_t *f, const dfly_shape_t *s,
                       int *first, baton_err_t *e) {
    char name[128];
    for (int r = 0; r < s->routers; r++) {
        snprintf(name, sizeof name, "%s.r%d", f->prefix, r);
        int id = topo_add_node(t, name, NODE_SWITCH, 0, 0, e);
        if (id < 0) return id;
        if (r == 0) *first = id;
        if (id != *first + r) return err_set(e, BATON_EINVAL, "dragonfly: router %s is not numbered in order", name);
    }
    for (int i = 0; i < nh; i++) {
        int rc = topo_add_link(t, hosts[i], *first + i / f->per_router, f->bw, f->lat, e);
        if (rc < 0) return rc;
    }
    return 0;
}

/* Adaptive routing, by what it achieves: Slingshot sends a packet over a
 * minimal path or, when that is busy, a non-minimal one (through another
 * router of the group; across groups, through another group: De Sensi et
 * al., SC20, adaptive routing picks among minimal and non-minimal paths by
 * the load it sees at every switch). Routes then avoid each other at run
 * time, which no static route a pair can do (a ring's two channels
 * crossing between the same two switches, an all-to-all step's ranks of
 * one switch all sending to the next, hashed pairs piling onto one of a
 * group pair's global cables), so the links are pooled:
 *   - each group gets a hub, joined to each router by one link of all that
 *     router's links can carry: its a - 1 local links (a: the file's
 *     routers_per_group, the group as built; a job on part of it still
 *     routes through the rest) and, with other groups, its global ports.
 *     So the pool is never slower than the links as built; it is faster
 *     where static routes collide, and optimistic by up to 2x where every
 *     router sends to one other (adversarial traffic: direct share 2/a and
 *     the rest over the two-hop paths carry a bw / 2 a router, not
 *     (a - 1) bw). Half the local latency a hub link (the direct hop's),
 *     none in a group of one router (no local hop there).
 *   - a group pair's global links: one cable between their hubs of the
 *     pair's summed rate, its latency the global link's and a local hop's
 *     (a minimal route's local hops, with the hubs' two halves).
 * Valiant routes across groups stay a share of the pairs (dfly_cross). */
static double pool_local_lat(const gen_dragonfly_t *f) { return f->per_group > 1 ? f->lat : 0; }

static int add_pool(topo_t *t, int base, int n, int g, const gen_dragonfly_t *f, const dfly_shape_t *s, int *hub0,
                    baton_err_t *e) {
    char name[128];
    snprintf(name, sizeof name, "%s.g%d", f->prefix, g);
    int hub = topo_add_node(t, name, NODE_SWITCH, 0, 0, e);
    if (hub < 0) return hub;
    if (g == 0) *hub0 = hub;
    if (hub != *hub0 + g) return err_set(e, BATON_EINVAL, "dragonfly: hub %s is not numbered in order", name);
    double bw = (f->per_group - 1) * f->bw + (s->groups > 1 ? f->globals * f->global_bw : 0);
    for (int a = 0; a < n; a++) {
        int rc = topo_add_link(t, base + a, hub, bw, pool_local_lat(f) / 2, e);
        if (rc < 0) return rc;
    }
    return 0;
}

/* Local links: every pair of a group's routers, once; pooled where
 * routing is adaptive (add_pool). */
static int add_local(topo_t *t, int first, const gen_dragonfly_t *f, const dfly_shape_t *s, int *hub0,
                     baton_err_t *e) {
    for (int g = 0; g < s->groups; g++) {
        int base = first + g * f->per_group, n = dfly_group_size(f, s, g);
        if (f->adaptive && (f->per_group > 1 || s->groups > 1)) {     /* else: one router, no links to pool */
            int rc = add_pool(t, base, n, g, f, s, hub0, e);
            if (rc < 0) return rc;
            continue;
        }
        for (int a = 0; a < n; a++)
            for (int b = a + 1; b < n; b++) {
                int rc = topo_add_link(t, base + a, base + b, f->bw, f->lat, e);
                if (rc < 0) return rc;
            }
    }
    return 0;
}

/* Pooled global links: one between every pair of hubs (add_pool). */
static int add_global_pool(topo_t *t, int hub0, const gen_dragonfly_t *f, const dfly_shape_t *s, baton_err_t *e) {
    for (int i = 0; i < s->groups; i++)
        for (int j = i + 1; j < s->groups; j++) {
            int rc = topo_add_link(t, hub0 + i, hub0 + j, s->links * f->global_bw, f->global_lat + pool_local_lat(f), e);
            if (rc < 0) return rc;
        }
    return 0;
}

/* Global links: `links` between every pair of groups, at the ports the
 * consecutive arrangement gives them; copies that join the same two routers
 * are one link of their summed bandwidth (a route takes one link between
 * two nodes: bonded cables). */
static int add_global(topo_t *t, int first, const gen_dragonfly_t *f, const dfly_shape_t *s, baton_err_t *e) {
    int a0 = f->per_group, *count = calloc((size_t)a0 * a0, sizeof *count), rc = 0;
    if (count == NULL) return err_set(e, BATON_ENOMEM, "out of memory");
    for (int i = 0; i < s->groups && rc >= 0; i++)
        for (int j = i + 1; j < s->groups && rc >= 0; j++) {
            memset(count, 0, (size_t)a0 * a0 * sizeof *count);
            for (int k = 0; k < s->links; k++)
                count[(dfly_global_router(f, s->groups, i, j, k) - i * a0) * a0 + dfly_global_router(f, s->groups, j, i, k) - j * a0]++;
            for (int x = 0; x < a0 * a0 && rc >= 0; x++)
                if (count[x]) rc = topo_add_link(t, first + i * a0 + x / a0, first + j * a0 + x % a0, count[x] * f->global_bw,
                                                 f->global_lat, e);
        }
    free(count);
    return rc < 0 ? rc : 0;
}

int gen_dragonfly(topo_t *t, const int *hosts, int nh, const gen_dragonfly_t *f, baton_err_t *e) {
    dfly_shape_t s = {0};
    topo_dragonfly_t *d = &topo_params(t)->dragonfly;
    int first = 0, hub0 = -1, rc;
    if (d->routers) return err_set(e, BATON_EINVAL, "dragonfly: a machine has one dragonfly fabric");
    if ((rc = dfly_shape(f, nh, &s, e)) < 0) return rc;
    if ((rc = add_routers(t, hosts, nh, f, &s, &first, e)) < 0 || (rc = add_local(t, first, f, &s, &hub0, e)) < 0 ||
        (rc = f->adaptive ? add_global_pool(t, hub0, f, &s, e) : add_global(t, first, f, &s, e)) < 0)
        return rc;
    *d = (topo_dragonfly_t){.routers = s.routers, .first = first, .per_group = f->per_group, .groups = s.groups,
                            .globals = f->globals, .links = s.links, .adaptive = f->adaptive, .hub0 = hub0};
    return 0;
}

int dfly_is_router(const topo_t *t, int v) {
    const topo_dragonfly_t *d = &topo_params((topo_t *)t)->dragonfly;
    return d->routers && v >= d->first && v < d->first + d->routers;
}

static int group_of(const topo_dragonfly_t *d, int r) { return (r - d->first) / d->per_group; }

/* The routers of copy k of the global link from group i to group j. */
static void global_pair(const topo_dragonfly_t *d, int i, int j, int k, int *a, int *b) {
    gen_dragonfly_t f = {.per_group = d->per_group, .globals = d->globals};
    *a = d->first + dfly_global_router(&f, d->groups, i, j, k);
    *b = d->first + dfly_global_router(&f, d->groups, j, i, k);
}

/* A hash of what a group rotation keeps (dfly_cross). */
static uint32_t rotation_key(const topo_dragonfly_t *d, int ra, int rb, int sport, int dport) {
    int ga = group_of(d, ra), gb = group_of(d, rb);
    uint32_t k = (uint32_t)((gb - ga + d->groups) % d->groups);
    k = k * 2654435761u ^ (uint32_t)(ra - d->first - ga * d->per_group);
    k = k * 2654435761u ^ (uint32_t)(rb - d->first - gb * d->per_group);
    k = k * 2654435761u ^ (uint32_t)sport;
    k = k * 2654435761u ^ (uint32_t)dport;
    return k ^ k >> 16;
}

int dfly_cross(const topo_t *t, int ra, int rb, int sport, int dport, int hop[4], int *pick_link) {
    const topo_dragonfly_t *d = &topo_params((topo_t *)t)->dragonfly;
    if (!dfly_is_router(t, ra) || !dfly_is_router(t, rb)) return 0;
    int ga = group_of(d, ra), gb = group_of(d, rb);
    if (ga == gb) return 0;
    uint32_t key = rotation_key(d, ra, rb, sport, dport);
    int k = (int)(key % (uint32_t)d->links);
    *pick_link = (int)(key >> 20);
    uint32_t ways = (uint32_t)d->groups - 1, pick = d->adaptive && d->groups > 2 ? key / (uint32_t)d->links % ways : 0;
    int g = -1;                                   /* Valiant: the pick-th group other than ga and gb */
    for (uint32_t n = 0; n < pick;) {
        g++;
        if (g != ga && g != gb) n++;
    }
    if (d->adaptive) {                            /* pooled (add_pool): the hubs' cables */
        hop[0] = d->hub0 + ga, hop[1] = hop[2] = d->hub0 + g, hop[3] = d->hub0 + gb;
        if (pick == 0) hop[1] = d->hub0 + gb;
        return pick == 0 ? 1 : 2;
    }
    if (pick == 0) {                              /* minimal: local, global, local */
        global_pair(d, ga, gb, k, &hop[0], &hop[1]);
        return 1;
    }
    global_pair(d, ga, g, k, &hop[0], &hop[1]);
    global_pair(d, g, gb, k, &hop[2], &hop[3]);
    return 2;
}
