/* topo_yaml.h - load a topology from a YAML file (format in topo_yaml.c). */
#ifndef BATON_TOPO_YAML_H
#define BATON_TOPO_YAML_H

#include "topo.h"

/* Returns a finalized topology, or NULL with e describing the problem as
 * "file:line:col: message". sets are "name=value" overrides of the file's
 * parameters (or of ports, reduce_bw, max_inflight, group_size). */
topo_t *topo_yaml_load(const char *path, const char *const *sets, int nsets, baton_err_t *e);

/* The same, folded where the file is a cluster of at least min_nodes copies
 * of one node joined by a fat_tree (every node and link named
 * "n[0-${nodes-1}]...", no include, no SHARP): only its witness nodes are
 * built (topologies/fold.h), at their places in the whole fabric, and
 * topo_fold_ranks() says how many ranks it stands for. Routes between its
 * ranks are the whole machine's, and the closed forms' view of it
 * (topo_cost_model) is the whole machine's; anything that needs every rank
 * (a schedule, the simulator, link loads) needs the whole machine. */
topo_t *topo_yaml_load_folded(const char *path, const char *const *sets, int nsets, int min_nodes, baton_err_t *e);

/* The one other reader of YAML (topo_yaml.c, over ydoc.h: ydoc.c is the
 * only file that includes <yaml.h>): a file that is one mapping of scalars
 * (a model file). Calls
 * fn for each key in order; fn returns NULL or why the value is wrong, and
 * the error then names the file, line and column. */
typedef const char *(*yaml_scalar_fn)(void *ctx, const char *key, const char *value);
int topo_yaml_scalars(const char *path, yaml_scalar_fn fn, void *ctx, baton_err_t *e);

#endif
