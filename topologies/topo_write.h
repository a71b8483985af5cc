/* topo_write.h - write a topology back as a complete YAML file: every node
 * and link spelled out (no parameters or generators left to expand), the
 * engine parameters and the protocols, so the file stands on its own. */
#ifndef BATON_TOPO_WRITE_H
#define BATON_TOPO_WRITE_H

#include <stdio.h>

#include "topo.h"

/* `comment` (may hold newlines) goes at the top as # lines. */
int topo_write_yaml(const topo_t *t, const char *comment, FILE *out);

#endif
