/* symmetry.c - find the classes of interchangeable ranks (symmetry.h). */
#include "symmetry.h"

#include <stdlib.h>
#include <string.h>

/* Scratch for one representative's program: its distinct (channel, send
 * offset) pairs and how many distinct offsets it receives from. (Channels
 * that share a rank's reduce engine are fine: the engine serves those whose
 * data arrive together in channel order, the same on every rank.) */
typedef struct scan {
    int32_t *seen_send, *seen_recv;   /* per offset: a stamp of the last stream that used it */
    int32_t *send, *send_chan;        /* this representative's sends: offset and channel */
    uint32_t nsend;
    int nrecv;
    int32_t recv[2];                  /* the first two receive offsets */
} scan_t;

static int32_t offset_of(int p, int from, int to) { return (int32_t)(((int64_t)to - from + p) % p); }

static void scan_rep(const sched_t *s, int a, scan_t *sc) {
    int p = s->nranks;
    sched_op_t op;
    sc->nsend = 0;
    sc->nrecv = 0;
    for (int c = 0; c < s->nchannels; c++) {
        int32_t stamp = a * s->nchannels + c + 1;
        for (uint32_t pc = 0; sched_op(s, a, c, pc, &op); pc++) {
            if (op.send && op.send_peer >= 0 && op.send_peer < p) {
                int32_t d = offset_of(p, a, op.send_peer);
                if (sc->seen_send[d] != stamp) {
                    sc->seen_send[d] = stamp;
                    sc->send_chan[sc->nsend] = c;
                    sc->send[sc->nsend++] = d;
                }
            }
            if (op.recv && op.recv_peer >= 0 && op.recv_peer < p) {
                int32_t d = offset_of(p, op.recv_peer, a);
                if (sc->seen_recv[d] != a + 1) {
                    sc->seen_recv[d] = a + 1;
                    if (sc->nrecv < 2) sc->recv[sc->nrecv] = d;
                    sc->nrecv++;
                }
            }
        }
    }
}

static const char *node_name(const topo_t *t, int32_t l, int end) {
    const topo_dlink_t *d = topo_dlink(t, l);
    return topo_node(t, end ? d->dst : d->src)->name;
}

/* Does copy x of the route a -> a + d stand for it exactly? Claims links for x. */
static int check_copy(topo_t *t, int a, int x, int d, int C, int c, const topo_route_t *r0, int32_t *sender,
                      int32_t *lmap, baton_err_t *e) {
    int p = topo_nranks(t), y = (x + d) % p;
    topo_route_t rx;
    int rc = topo_route(t, x, y, &rx, e);
    if (rc < 0) return rc;
    if (rx.nlinks != r0->nlinks)
        return err_set(e, BATON_EUNSUP, "rank %d reaches rank %d in %d links but rank %d reaches rank %d in %d",
                       x, y, rx.nlinks, a, (a + d) % p, r0->nlinks);
    for (int h = 0; h < rx.nlinks; h++) {
        int32_t l = rx.links[h], l0 = r0->links[h];
        const topo_dlink_t *lx = topo_dlink(t, l), *l0x = topo_dlink(t, l0);
        if (lx->bw != l0x->bw || lx->lat != l0x->lat)
            return err_set(e, BATON_EUNSUP, "link %s->%s differs from link %s->%s, which it stands for",
                           node_name(t, l, 0), node_name(t, l, 1), node_name(t, l0, 0), node_name(t, l0, 1));
        int32_t me = x * C + c;                  /* the sending stream */
        if (sender[l] < 0) { sender[l] = me; lmap[l] = l0; continue; }
        if (sender[l] / C != x)       /* one rank's channels may share it: the engine serves them in channel order */
            return err_set(e, BATON_EUNSUP, "link %s->%s carries sends of rank %d (channel %d) and of rank %d (channel %d); "
                           "which goes first when both start together depends on rank numbers, so no representative "
                           "can stand for both", node_name(t, l, 0), node_name(t, l, 1), sender[l] / C, sender[l] % C, x, c);
        if (lmap[l] != l0)
            return err_set(e, BATON_EUNSUP, "rank %d's routes are not its representative's moved over "
                           "(link %s->%s)", x, node_name(t, l, 0), node_name(t, l, 1));
    }
    return 0;
}

/* Is G a period of s on t? Fills lmap; BATON_EUNSUP with the reason if not. */
static int check_period(const sched_t *s, topo_t *t, int G, scan_t *sc, int32_t *sender, sym_t *y,
                        baton_err_t *e) {
    int p = s->nranks, nl = topo_nlinks(t), ports = topo_params_c(t)->ports, C = s->nchannels;
    if (ports > 0 && C > 1)
        return err_set(e, BATON_EUNSUP, "%d channels share each rank's %d port%s; which takes it first when two are "
                       "ready together depends on rank numbers (ports: 0 lifts this)", C, ports, ports == 1 ? "" : "s");
    for (int l = 0; l < nl; l++) sender[l] = y->lmap[l] = -1;
    memset(sc->seen_send, 0, (size_t)p * sizeof *sc->seen_send);
    memset(sc->seen_recv, 0, (size_t)p * sizeof *sc->seen_recv);
    for (int a = 0; a < G; a++) {
        scan_rep(s, a, sc);
        if (ports > 0 && sc->nrecv > 1)
            return err_set(e, BATON_EUNSUP, "rank %d receives from ranks %d and %d away through %d port%s; which "
                           "arrives first when both are ready together depends on rank numbers",
                           a, sc->recv[0], sc->recv[1], ports, ports == 1 ? "" : "s");
        for (uint32_t i = 0; i < sc->nsend; i++) {
            int d = sc->send[i], c = sc->send_chan[i];
            topo_route_t r0;
            if (d == 0) continue;                      /* a local copy uses no link */
            int rc = topo_route(t, a, (a + d) % p, &r0, e);
            for (int x = a; rc == 0 && x < p; x += G, y->routes++)
                rc = check_copy(t, a, x, d, C, c, &r0, sender, y->lmap, e);
            if (rc < 0) return rc;
        }
    }
    return 0;
}

static int equal_chunks(const sched_t *s, baton_err_t *e) {
    uint64_t first = sched_range_bytes(s, 0, 1);
    for (uint32_t c = 1; c < s->nchunks; c++)
        if (sched_range_bytes(s, c, 1) != first)
            return err_set(e, BATON_EUNSUP, "%llu bytes do not cut into %u equal chunks, so ranks move different "
                           "amounts; a multiple of %u bytes is symmetric",
                           (unsigned long long)s->bytes, s->nchunks, s->nchunks);
    return 0;
}

int sym_find(const sched_t *s, topo_t *t, sym_t *out, baton_err_t *e) {
    int p = s->nranks, nl = topo_nlinks(t);
    memset(out, 0, sizeof *out);
    if (s->helpers) return err_set(e, BATON_EUNSUP, "%s reduces in a switch, which no rank stands for", s->algo);
    if (s->period <= 0 || p % s->period)
        return err_set(e, BATON_EUNSUP, "%s's ranks are not interchangeable: rank r + 1 does not do what rank r "
                       "does with every peer moved one on (ring, twoshot, oneshot, pairwise and bruck are)", s->algo);
    int rc = equal_chunks(s, e);
    if (rc < 0) return rc;
    size_t most = (size_t)p * (size_t)s->nchannels;   /* sends: at most one per (channel, offset) */
    scan_t sc = {calloc((size_t)p, sizeof(int32_t)), calloc((size_t)p, sizeof(int32_t)),
                 malloc(most * sizeof(int32_t)), malloc(most * sizeof(int32_t)), 0, 0, {0, 0}};
    int32_t *sender = malloc(((size_t)nl + 1) * sizeof *sender);
    out->lmap = malloc(((size_t)nl + 1) * sizeof *out->lmap);
    baton_err_t first = {0};
    rc = BATON_ENOMEM;
    if (sc.seen_send && sc.seen_recv && sc.send && sc.send_chan && sender && out->lmap) {
        for (int l = 0; l < nl; l++) out->lmap[l] = -1;
        rc = BATON_EUNSUP;
        for (int G = s->period; G < p && rc == BATON_EUNSUP; G += s->period) {
            if (p % G) continue;
            baton_err_t why = {0};
            rc = check_period(s, t, G, &sc, sender, out, &why);
            if (rc == 0) out->period = G;
            if (rc < 0 && first.code == 0) first = why;
            if (rc < 0 && rc != BATON_EUNSUP && e) *e = why;
        }
        if (p == 1) rc = 0, out->period = 1;
    }
    free(sc.seen_send);
    free(sc.seen_recv);
    free(sc.send);
    free(sc.send_chan);
    free(sender);
    if (rc == BATON_ENOMEM && (e == NULL || e->code == 0)) err_set(e, BATON_ENOMEM, "out of memory");
    if (rc == BATON_EUNSUP && e) {
        *e = first;
        if (first.code == 0) err_set(e, BATON_EUNSUP, "no class of interchangeable ranks smaller than all %d", p);
    }
    if (rc < 0) sym_free(out);
    return rc;
}

void sym_free(sym_t *y) {
    free(y->lmap);
    y->lmap = NULL;
    y->period = 0;
}
