/* generate.c - fat-trees (plain and rail-optimized) and tori. */
#include "generate.h"

#include <stdio.h>
#include <stdlib.h>

static int add_switch(topo_t *t, const char *prefix, const char *what, int i, baton_err_t *e) {
    char name[128];
    snprintf(name, sizeof name, "%s.%s%d", prefix, what, i);
    return topo_add_node(t, name, NODE_SWITCH, 0, 0, e);
}

/* Leaves for one rail's hosts; returns the number made or a negative error. */
static int rail_leaves(topo_t *t, const int *hosts, int nh, int rail, const gen_fabric_t *f, int down,
                       int *leaves, int nleaves, baton_err_t *e) {
    int made = 0;
    for (int i = rail, k = 0; i < nh; i += f->rails, k++) {
        if (k % down == 0) {
            int id = add_switch(t, f->prefix, "leaf", nleaves + made, e);
            if (id < 0) return id;
            leaves[nleaves + made++] = id;
        }
        int rc = topo_add_link(t, hosts[i], leaves[nleaves + made - 1], f->bw, f->lat, e);
        if (rc < 0) return rc;
    }
    return made;
}

/* Every leaf joined once to each of `up` spines. */
static int two_levels(topo_t *t, const int *leaves, int nleaves, int up, const gen_fabric_t *f, baton_err_t *e) {
    int rc = 0;
    for (int s = 0; s < up && nleaves > 1 && rc >= 0; s++) {
        int sp = add_switch(t, f->prefix, "spine", s, e);
        for (int l = 0; l < nleaves && sp >= 0 && rc >= 0; l++) rc = topo_add_link(t, leaves[l], sp, f->bw, f->lat, e);
        if (sp < 0) rc = sp;
    }
    return rc;
}

/* Pods of radix/2 leaves, each leaf joined to the pod's `up` aggregation
 * switches; aggregation switch j of every pod joined to its own radix/2 core
 * switches (core group j). Up to radix pods: radix^3 / 4 hosts at 1:1. */
static int three_levels(topo_t *t, const int *leaves, int nleaves, int up, const gen_fabric_t *f, baton_err_t *e) {
    int half = f->radix / 2, pods = (nleaves + half - 1) / half, rc = 0;
    if (pods > f->radix)
        return err_set(e, BATON_EUNSUP, "fat_tree: %d leaves need %d pods, more than radix %d allows in three levels",
                       nleaves, pods, f->radix);
    int *core = malloc((size_t)up * half * sizeof *core);
    if (core == NULL) return err_set(e, BATON_ENOMEM, "out of memory");
    for (int c = 0; c < up * half && rc >= 0; c++) rc = core[c] = add_switch(t, f->prefix, "core", c, e);
    for (int pod = 0; pod < pods && rc >= 0; pod++)
        for (int j = 0; j < up && rc >= 0; j++) {
            int agg = add_switch(t, f->prefix, "agg", pod * up + j, e);
            if (agg < 0) { rc = agg; break; }
            for (int l = pod * half; l < (pod + 1) * half && l < nleaves && rc >= 0; l++)
                rc = topo_add_link(t, leaves[l], agg, f->bw, f->lat, e);
            for (int c = 0; c < half && rc >= 0; c++) rc = topo_add_link(t, agg, core[j * half + c], f->bw, f->lat, e);
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
    if (f->radix < 2 || f->oversub < 1 || f->rails < 1)
        return err_set(e, BATON_EINVAL, "fat_tree needs radix >= 2, oversubscription >= 1, rails >= 1");
    int down = f->radix / 2, up = down / f->oversub;
    if (down < 1 || up < 1) return err_set(e, BATON_EINVAL, "fat_tree radix %d is too small for oversubscription %d:1", f->radix, f->oversub);
    int maxleaves = (nh / down + 1) * f->rails + f->rails, nleaves = 0, rc = 0;
    int *leaves = malloc((size_t)maxleaves * sizeof *leaves);
    if (leaves == NULL) return err_set(e, BATON_ENOMEM, "out of memory");
    for (int r = 0; r < f->rails && rc >= 0; r++) {
        rc = rail_leaves(t, hosts, nh, r, f, down, leaves, nleaves, e);
        if (rc > 0) nleaves += rc;
    }
    int first_spine = topo_nnodes(t);
    if (rc >= 0 && nleaves <= f->radix) rc = two_levels(t, leaves, nleaves, up, f, e);
    else if (rc >= 0) rc = three_levels(t, leaves, nleaves, up, f, e);
    if (rc >= 0 && f->sharp && nleaves > 0) rc = mark_sharp(t, leaves, nleaves, first_spine, f, nh, down, up, e);
    free(leaves);
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
