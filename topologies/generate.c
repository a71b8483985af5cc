/* generate.c - fat-trees (plain and rail-optimized) and tori. */
#include "generate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int add_switch(topo_t *t, const char *prefix, const char *what, int i, baton_err_t *e) {
    char name[128];
    snprintf(name, sizeof name, "%s.%s%d", prefix, what, i);
    return topo_add_node(t, name, NODE_SWITCH, 0, 0, e);
}

int gen_shape_init(gen_shape_t *s, const gen_fabric_t *f, int total, baton_err_t *e) {
    memset(s, 0, sizeof *s);
    if (f->radix < 2 || f->oversub < 1 || f->rails < 1)
        return err_set(e, BATON_EINVAL, "fat_tree needs radix >= 2, oversubscription >= 1, rails >= 1");
    s->rails = f->rails, s->down = f->radix / 2, s->up = s->down / f->oversub, s->half = f->radix / 2;
    if (s->down < 1 || s->up < 1) return err_set(e, BATON_EINVAL, "fat_tree radix %d is too small for oversubscription %d:1", f->radix, f->oversub);
    if ((s->first = malloc(((size_t)s->rails + 1) * sizeof *s->first)) == NULL) return err_set(e, BATON_ENOMEM, "out of memory");
    s->first[0] = 0;
    for (int r = 0; r < s->rails; r++) {                   /* rail r: hosts r, r + R, ...; a leaf per `down` of them */
        long hosts = total > r ? (total - r + s->rails - 1) / s->rails : 0;
        s->first[r + 1] = s->first[r] + (int)((hosts + s->down - 1) / s->down);
    }
    s->nleaves = s->first[s->rails];
    s->levels = s->nleaves <= f->radix ? 2 : 3;
    int pods = (s->nleaves + s->half - 1) / s->half;
    if (s->levels == 3 && pods > f->radix) {
        int n = s->nleaves;
        gen_shape_free(s);
        return err_set(e, BATON_EUNSUP, "fat_tree: %d leaves need %d pods, more than radix %d allows in three levels",
                       n, pods, f->radix);
    }
    return 0;
}

void gen_shape_free(gen_shape_t *s) { free(s->first); s->first = NULL; }

int gen_shape_leaf(const gen_shape_t *s, int pos) { return s->first[pos % s->rails] + pos / s->rails / s->down; }
int gen_shape_port(const gen_shape_t *s, int pos) { return pos / s->rails % s->down; }

int gen_shape_leaf_hops(const gen_shape_t *s, int la, int lb) {
    if (la == lb) return 2;
    return s->levels == 2 || la / s->half == lb / s->half ? 4 : 6;
}

int gen_shape_hops(const gen_shape_t *s, int a, int b) {
    return a == b ? 0 : gen_shape_leaf_hops(s, gen_shape_leaf(s, a), gen_shape_leaf(s, b));
}

/* Host i's place among the fabric's hosts. */
static int place(const gen_fabric_t *f, int i) { return f->pos ? f->pos[i] : i; }

/* Every host joined to its leaf, rail by rail (a rail's leaves made as its
 * hosts first need them: numbered by their place, so a folded machine's
 * leaves keep the full one's names). */
static int hang_hosts(topo_t *t, const int *hosts, int nh, const gen_fabric_t *f, const gen_shape_t *s, int *leaves,
                      baton_err_t *e) {
    for (int r = 0; r < s->rails; r++)
        for (int i = f->pos ? 0 : r; i < nh; i += f->pos ? 1 : s->rails) {   /* rail r's hosts, in place order */
            int pos = place(f, i), l = gen_shape_leaf(s, pos);
            if (pos % s->rails != r) continue;
            if (leaves[l] < 0 && (leaves[l] = add_switch(t, f->prefix, "leaf", l, e)) < 0) return leaves[l];
            int rc = topo_add_link(t, hosts[i], leaves[l], f->bw, f->lat, e);
            if (rc < 0) return rc;
        }
    return 0;
}

/* Every leaf joined once to each of `up` spines. */
static int two_levels(topo_t *t, const int *leaves, const gen_shape_t *s, const gen_fabric_t *f, baton_err_t *e) {
    int rc = 0;
    for (int sp = 0; sp < s->up && s->nleaves > 1 && rc >= 0; sp++) {
        int id = add_switch(t, f->prefix, "spine", sp, e);
        for (int l = 0; l < s->nleaves && id >= 0 && rc >= 0; l++)
            if (leaves[l] >= 0) rc = topo_add_link(t, leaves[l], id, f->bw, f->lat, e);
        if (id < 0) rc = id;
    }
    return rc;
}

/* Pods of radix/2 leaves, each leaf joined to the pod's `up` aggregation
 * switches; aggregation switch j of every pod joined to its own radix/2 core
 * switches (core group j). Up to radix pods: radix^3 / 4 hosts at 1:1. A
 * pod without a leaf here (a folded machine) gets no switches. */
static int three_levels(topo_t *t, const int *leaves, const gen_shape_t *s, const gen_fabric_t *f, baton_err_t *e) {
    int half = s->half, up = s->up, pods = (s->nleaves + half - 1) / half, rc = 0;
    int *core = malloc((size_t)up * half * sizeof *core);
    if (core == NULL) return err_set(e, BATON_ENOMEM, "out of memory");
    for (int c = 0; c < up * half && rc >= 0; c++) rc = core[c] = add_switch(t, f->prefix, "core", c, e);
    for (int pod = 0; pod < pods && rc >= 0; pod++) {
        int any = 0;
        for (int l = pod * half; l < (pod + 1) * half && l < s->nleaves; l++) any |= leaves[l] >= 0;
        for (int j = 0; j < up && any && rc >= 0; j++) {
            int agg = add_switch(t, f->prefix, "agg", pod * up + j, e);
            if (agg < 0) { rc = agg; break; }
            for (int l = pod * half; l < (pod + 1) * half && l < s->nleaves && rc >= 0; l++)
                if (leaves[l] >= 0) rc = topo_add_link(t, leaves[l], agg, f->bw, f->lat, e);
            for (int c = 0; c < half && rc >= 0; c++) rc = topo_add_link(t, agg, core[j * half + c], f->bw, f->lat, e);
        }
    }
    free(core);
    return rc;
}

/* SHARP: every leaf reduces what its rail's nodes send it; with several
 * leaves per rail, spine r adds rail r's leaves' sums (an aggregation tree
 * per rail, as the subnet manager builds one per SHARP job). Recorded for
 * the schedules (algorithms/collnet.c), which number the helpers the same
 * way: the reducing switches declared before the fabric, then the leaves
 * rail by rail, then the spines. */
static int mark_sharp(topo_t *t, const int *leaves, int nleaves, int first_spine, const gen_fabric_t *f, int nh,
                      int down, int up, baton_err_t *e) {
    topo_sharp_t *sh = &topo_params(t)->sharp;
    int per_rail = nleaves / f->rails, before = 0;
    if (sh->rails) return err_set(e, BATON_EINVAL, "sharp: only one fabric may reduce");
    if (nh % f->rails || nleaves % f->rails)
        return err_set(e, BATON_EINVAL, "sharp: %d hosts do not fill %d rails evenly", nh, f->rails);
    if (nleaves > f->radix) return err_set(e, BATON_EUNSUP, "sharp: %d leaves need three levels; SHARP is modelled on two", nleaves);
    if (per_rail > 1 && up < f->rails)
        return err_set(e, BATON_EUNSUP, "sharp: %d rails need a spine each to add their leaves, radix %d gives %d", f->rails, f->radix, up);
    for (int i = 0; i < leaves[0]; i++) before += topo_node(t, i)->reduces;
    for (int l = 0; l < nleaves; l++) topo_set_reduces(t, leaves[l], 1);
    for (int r = 0; per_rail > 1 && r < f->rails; r++) topo_set_reduces(t, first_spine + r, 1);
    *sh = (topo_sharp_t){.rails = f->rails, .per_leaf = down, .leaves = per_rail, .first = before};
    return 0;
}

int gen_fat_tree(topo_t *t, const int *hosts, int nh, const gen_fabric_t *f, baton_err_t *e) {
    gen_shape_t s;
    if (f->pos && f->sharp) return err_set(e, BATON_EUNSUP, "sharp: a folded machine cannot reduce in its fabric");
    int rc = gen_shape_init(&s, f, f->pos ? f->total : nh, e);
    if (rc < 0) return rc;
    int *leaves = malloc(((size_t)s.nleaves + 1) * sizeof *leaves);
    if (leaves == NULL) { gen_shape_free(&s); return err_set(e, BATON_ENOMEM, "out of memory"); }
    for (int l = 0; l < s.nleaves; l++) leaves[l] = -1;
    rc = hang_hosts(t, hosts, nh, f, &s, leaves, e);
    int first_spine = topo_nnodes(t);
    if (rc >= 0) rc = s.levels == 2 ? two_levels(t, leaves, &s, f, e) : three_levels(t, leaves, &s, f, e);
    if (rc >= 0 && f->sharp && s.nleaves > 0)
        rc = mark_sharp(t, leaves, s.nleaves, first_spine, f, nh, s.down, s.up, e);
    free(leaves);
    gen_shape_free(&s);
    return rc < 0 ? rc : 0;
}

int gen_torus(topo_t *t, const int *nodes, int n, const int *dims, int ndims, double bw, double lat,
              baton_err_t *e) {
    int total = 1;
    for (int d = 0; d < ndims; d++) total *= dims[d];
    if (ndims < 1 || total != n)
        return err_set(e, BATON_EINVAL, "torus: the dimensions multiply to %d but there are %d nodes", total, n);
    for (int i = 0; i < n; i++) topo_set_transit(t, nodes[i], 1);   /* torus nodes forward, as ICI does */
    for (int i = 0; i < n; i++) {
        int stride = 1;
        for (int d = ndims - 1; d >= 0; stride *= dims[d], d--) {
            int coord = (i / stride) % dims[d];
            if (dims[d] < 2 || (dims[d] == 2 && coord == 1)) continue;   /* 2 wide: one link, not two */
            int j = i + ((coord + 1) % dims[d] - coord) * stride;
            int rc = topo_add_link(t, nodes[i], nodes[j], bw, lat, e);
            if (rc < 0) return rc;
        }
    }
    return 0;
}
