/* share.c - max-min fair rates by progressive filling.
 *
 * Recomputation is O(levels x (links in use + flows x path)): fine for the
 * thousands of concurrent flows of a cluster collective, not for millions;
 * the FIFO policy is the fast one. */
#include "share.h"

#include <stdlib.h>

typedef struct {
    const int32_t *links;
    int nlinks;
    double left;          /* bytes still to send */
    double rate;          /* bytes/s */
    uint32_t tag;
    int frozen;
} flow_t;

struct share {
    int nlinks;
    double *cap;          /* per link */
    double *room;         /* per link, scratch: capacity not yet handed out */
    int *users;           /* per link, scratch: unfrozen flows crossing it */
    flow_t *f;
    int nf, capf;
    double last;          /* when remaining bytes were last advanced */
    uint64_t version;
};

share_t *share_create(int nlinks, const double *capacity) {
    share_t *s = calloc(1, sizeof *s);
    if (s == NULL) return NULL;
    s->nlinks = nlinks;
    s->cap = malloc(((size_t)nlinks + 1) * sizeof *s->cap);
    s->room = malloc(((size_t)nlinks + 1) * sizeof *s->room);
    s->users = calloc((size_t)nlinks + 1, sizeof *s->users);
    if (!s->cap || !s->room || !s->users) { share_free(s); return NULL; }
    for (int i = 0; i < nlinks; i++) s->cap[i] = capacity[i];
    return s;
}

void share_free(share_t *s) {
    if (s == NULL) return;
    free(s->cap);
    free(s->room);
    free(s->users);
    free(s->f);
    free(s);
}

/* Move every flow's remaining bytes forward to time now at its rate. */
static void advance(share_t *s, double now) {
    double dt = now - s->last;
    for (int i = 0; dt > 0 && i < s->nf; i++) {
        s->f[i].left -= s->f[i].rate * dt;
        if (s->f[i].left < 0) s->f[i].left = 0;
    }
    s->last = now;
}

/* One round of progressive filling: the tightest link's fair share goes to
 * every unfrozen flow on it. Returns 0 when every flow is frozen. */
static int fill_round(share_t *s) {
    int best = -1;
    double share = 0;
    for (int i = 0; i < s->nf; i++) {
        if (s->f[i].frozen) continue;
        for (int k = 0; k < s->f[i].nlinks; k++) {
            int l = s->f[i].links[k];
            double x = s->room[l] / s->users[l];
            if (best < 0 || x < share) { best = l; share = x; }
        }
    }
    if (best < 0) return 0;
    for (int i = 0; i < s->nf; i++) {
        flow_t *f = &s->f[i];
        int on = 0;
        for (int k = 0; !f->frozen && k < f->nlinks && !on; k++) on = f->links[k] == best;
        if (!on) continue;
        f->frozen = 1;
        f->rate = share > 0 ? share : 0;
        for (int k = 0; k < f->nlinks; k++) {
            double *room = &s->room[f->links[k]];
            *room = *room > share ? *room - share : 0;     /* no negative rounding dust */
            s->users[f->links[k]]--;
        }
    }
    return 1;
}

static void recompute(share_t *s) {
    for (int i = 0; i < s->nf; i++) {
        flow_t *f = &s->f[i];
        f->frozen = f->nlinks == 0;
        f->rate = f->nlinks == 0 ? 1e300 : 0;
        for (int k = 0; k < f->nlinks; k++) { s->room[f->links[k]] = s->cap[f->links[k]]; s->users[f->links[k]] = 0; }
    }
    for (int i = 0; i < s->nf; i++)
        for (int k = 0; k < s->f[i].nlinks; k++) s->users[s->f[i].links[k]]++;
    while (fill_round(s)) {}
    s->version++;
}

int share_add(share_t *s, double now, const int32_t *links, int nlinks, double bytes, uint32_t tag) {
    advance(s, now);
    if (s->nf == s->capf) {
        int nc = s->capf ? s->capf * 2 : 64;
        flow_t *f = realloc(s->f, (size_t)nc * sizeof *f);
        if (f == NULL) return -1;
        s->f = f;
        s->capf = nc;
    }
    s->f[s->nf++] = (flow_t){.links = links, .nlinks = nlinks, .left = bytes, .tag = tag};
    recompute(s);
    return 0;
}

int share_next(const share_t *s, double *when, uint32_t *tag) {
    int best = -1;
    double t = 0;
    for (int i = 0; i < s->nf; i++) {
        double fin = s->f[i].left <= 0 ? 0 : s->f[i].rate > 0 ? s->f[i].left / s->f[i].rate : 1e300;
        if (best < 0 || fin < t) { best = i; t = fin; }
    }
    if (best < 0) return 0;
    *when = s->last + t;
    *tag = s->f[best].tag;
    return 1;
}

void share_remove(share_t *s, double now, uint32_t tag) {
    advance(s, now);
    for (int i = 0; i < s->nf; i++)
        if (s->f[i].tag == tag) {
            s->f[i] = s->f[--s->nf];        /* order does not matter to the rates */
            break;
        }
    recompute(s);
}

uint64_t share_version(const share_t *s) { return s->version; }

double share_rate(const share_t *s, uint32_t tag) {
    for (int i = 0; i < s->nf; i++)
        if (s->f[i].tag == tag) return s->f[i].rate;
    return 0;
}
