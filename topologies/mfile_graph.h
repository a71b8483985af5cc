/* mfile_graph.h - a machine file's nodes:, links: and generate: entries,
 * each added to the topology being read (mfile_graph.c). */
#ifndef BATON_MFILE_GRAPH_H
#define BATON_MFILE_GRAPH_H

#include "mfile.h"
#include "generate.h"

/* One entry of nodes: ({name:, kind:, rank:, transit:, reduce:}), of links:
 * ({a:, b:} or {mesh:}, bw:, latency:) and of generate: (fat_tree, torus,
 * ring or dragonfly); 0 or an error at the entry. */
int mf_add_node(mfile_t *c, ynode_t *n);
int mf_add_link(mfile_t *c, ynode_t *l);
int mf_add_generated(mfile_t *c, ynode_t *g);
/* A fat_tree generator's numbers (not its bandwidth and latency); prefix
 * holds its name prefix (MF_TEXT bytes). mfile_fold.c reads them too. */
int mf_fabric_of(mfile_t *c, ynode_t *g, gen_fabric_t *f, char *prefix);

#endif
