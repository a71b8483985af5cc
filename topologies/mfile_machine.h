/* mfile_machine.h - a machine file's sections beside its graph and its
 * library (mfile_machine.c); each is 0 when the section is absent. */
#ifndef BATON_MFILE_MACHINE_H
#define BATON_MFILE_MACHINE_H

#include "mfile.h"

int mf_read_protocols(mfile_t *c, ynode_t *root);    /* protocols: */
int mf_read_efficiency(mfile_t *c, ynode_t *root);   /* link_efficiency: */
int mf_read_gpu(mfile_t *c, ynode_t *root);          /* gpu: */
int mf_read_sharp(mfile_t *c, ynode_t *root);        /* sharp_fabric: */
/* No protocols:, arch:, gpu:, library: or nccl_env:: the plain alpha-beta
 * model and one channel by default. */
void mf_plain_default(mfile_t *c, ynode_t *root);

#endif
