/* mfile_library.h - a machine file's library: and nccl_env: sections (mfile_library.c). */
#ifndef BATON_MFILE_LIBRARY_H
#define BATON_MFILE_LIBRARY_H

#include "mfile.h"

/* library: {name:, ll128:, nccl:, rules: [...]}: into the topology's params;
 * it replaces a base's (or an included fragment's) whole. 0 when absent. */
int mf_read_library(mfile_t *c, ynode_t *root);
/* nccl_env: {NCCL_ALGO:, NCCL_PROTO:}: NCCL's lists, checked for every
 * collective. 0 when absent. */
int mf_read_nccl_env(mfile_t *c, ynode_t *root);

#endif
