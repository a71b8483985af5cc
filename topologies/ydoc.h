/* ydoc.h - a YAML document held whole, its nodes and where each stands.
 *
 * ydoc.c is the only file that includes <yaml.h> (libyaml); everything else
 * that reads YAML -- the machine file (mfile*.c, topo_yaml.c) and model
 * files (topo_yaml_scalars) -- walks a document through these calls, so
 * libyaml's types and its version's quirks stay in one file. A node is
 * opaque; lines and columns count from 1, as errors print them
 * ("file:line:col: message"). */
#ifndef BATON_YDOC_H
#define BATON_YDOC_H

#include "../util/err.h"

typedef struct ydoc ydoc_t;     /* a loaded document */
typedef struct ynode ynode_t;   /* one of its nodes: a scalar, a sequence or a mapping */

/* Parse the file at path whole into *out; 0, or an error (cannot open or
 * read it, "path:line:col: YAML syntax error: ...") with *out NULL. */
int ydoc_load(const char *path, ydoc_t **out, baton_err_t *e);
void ydoc_free(ydoc_t *d);
/* The document's root node, NULL if it is empty. */
ynode_t *ydoc_root(ydoc_t *d);

/* n's text if it is a scalar, else NULL (n may be NULL). */
const char *ydoc_scalar(const ynode_t *n);
int ydoc_is_map(const ynode_t *n);    /* 0 for NULL */
int ydoc_is_seq(const ynode_t *n);    /* 0 for NULL */
/* A sequence's items or a mapping's pairs; 0 for a scalar. */
int ydoc_len(const ynode_t *n);
/* Sequence s's item i (0 <= i < ydoc_len(s)). */
ynode_t *ydoc_item(ydoc_t *d, const ynode_t *s, int i);
/* Mapping m's pair i: its key and its value. */
ynode_t *ydoc_key(ydoc_t *d, const ynode_t *m, int i);
ynode_t *ydoc_value(ydoc_t *d, const ynode_t *m, int i);
/* The value of key in mapping m (the first pair whose key is that scalar); NULL if absent. */
ynode_t *ydoc_get(ydoc_t *d, const ynode_t *m, const char *key);
/* Where n starts in its file, from 1. */
unsigned long ydoc_line(const ynode_t *n);
unsigned long ydoc_col(const ynode_t *n);

#endif
