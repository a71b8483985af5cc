/* mfile_params.h - a machine file's params:, require: and engine values
 * (mfile_params.c). */
#ifndef BATON_MFILE_PARAMS_H
#define BATON_MFILE_PARAMS_H

#include "mfile.h"

/* Defaults from `params:`, then the command line's --set name=value
 * (sets[0 .. nsets)); an unknown name is an error with a hint. */
int mf_read_params(mfile_t *c, ynode_t *root, const char *const *sets, int nsets);
/* require: [{param:, min:, max:, why:}]: a parameter outside its range is
 * an error at the rule. */
int mf_read_require(mfile_t *c, ynode_t *root);
/* The engine values (knobs.h) and arch: the file's, then --set's. */
int mf_read_engine(mfile_t *c, ynode_t *root);

#endif
