/* mfile_include.h - a machine file's body: includes, nodes, links,
 * generators (mfile_include.c). */
#ifndef BATON_MFILE_INCLUDE_H
#define BATON_MFILE_INCLUDE_H

#include "mfile.h"

/* What a file holds besides the machine-wide settings: includes, nodes,
 * links, generators (an included fragment: its protocols and library too). */
int mf_walk_body(mfile_t *c, ynode_t *root);
/* The path of a file named at node fv: relative to the reading file, a
 * regular file; into path (len bytes). `extends:` names its base the same way. */
int mf_include_path(mfile_t *c, ynode_t *fv, const char *file, char *path, size_t len);

#endif
