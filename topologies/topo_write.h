/* topo_write.h - write a topology back as a complete YAML file: every node
 * and link spelled out (no parameters or generators left to expand), the
 * engine parameters and the protocols, so the file stands on its own. */
#ifndef BATON_TOPO_WRITE_H
#define BATON_TOPO_WRITE_H

#include <stdio.h>

#include "topo.h"

/* Links at their declared rates with link_efficiency, so the file reads
 * back bit-identical. `comment` (may hold newlines) goes at the top as #
 * lines. */
int topo_write_yaml(const topo_t *t, const char *comment, FILE *out);

/* A calibrated machine: `extends: base` (a shipped machine's name, or a
 * file's path: absolute, or relative to the written file's folder) with `params` (name=value strings: the --set values it was
 * fitted with) and the values calibration may change (link latency scale,
 * reduction rate, protocols, link efficiencies), then the calibration record
 * (t's calib, the logs, the date). Everything else comes from the base. */
int topo_write_overlay(const topo_t *t, const char *base, const char *const *params, int nparams,
                       const char *const *logs, int nlogs, const char *date, const char *comment, FILE *out);

/* The same calibrated machine on its own (calibrate --self-contained): the
 * whole graph as topo_write_yaml writes it, links at their declared rates
 * with the fitted link_efficiency, the fitted values and the record; no
 * `extends:`, so it needs no other file, and no parameters: the values it
 * was fitted at are written out (--set nodes=... no longer applies). */
int topo_write_standalone(const topo_t *t, const char *const *logs, int nlogs, const char *date, const char *comment,
                          FILE *out);

/* s as YAML's double-quoted scalar (quote, backslash and control characters
 * escaped): what a user named (a machine, a log's path) reads back as given. */
void topo_write_quoted(FILE *f, const char *s);

#endif
