/* knobs.h - a machine's engine values: what a machine file sets at its top
 * level beside params (ports, reduce_bw, channels, launch, stage_bw, ...) and
 * --set overrides by the same name.
 *
 * One table says each knob's name, kind and field of topo_params_t, so the
 * file reader, --set, a calibrated overlay's key list and the command line's
 * "has no parameter" check cannot disagree: a new knob is one line in
 * knobs.c. Knobs are values, not names: they never change which nodes and
 * links a file declares (params do, through ${...}). */
#ifndef BATON_KNOBS_H
#define BATON_KNOBS_H

#include <stddef.h>

#include "topo.h"

/* 1 if name is a knob. */
int knobs_is(const char *name);

/* 1 if a calibrated overlay may set it: the knob changes a value the fit may
 * move, not what the machine is built from (group_size, p2p and pxn decide
 * groups, staging hops and routes, so they stay the base file's, and a user's
 * --set; nccl_version, registered and nccl_tuner say which NCCL, buffers and choice a run has,
 * socket, socket_latency, socket_threads, software_matching, match_latency and
 * rendezvous_above which transport and network software, not what a fit moves; a fit moves
 * socket_bw and rendezvous_latency). */
int knobs_overlay(const char *name);

/* The i-th knob's name (i from 0), NULL past the last: for key lists. */
const char *knobs_name(int i);

/* The i-th knob's value in p as a person would write it, to six digits:
 * "680GB/s", "2.8us", "true", "8". */
void knobs_format(const topo_params_t *p, int i, char *buf, size_t len);

/* Set knob name from text s into p. 0 on success; -1 with why (a phrase to
 * follow "'name' " or "--set name=s: ", e.g. "must be a whole number, at
 * least 1") written into why[len]. */
int knobs_set(topo_params_t *p, const char *name, const char *s, char *why, size_t len);

/* An NCCL version as a machine says it ("2.26.6", "2.27"): 22606 into
 * *out, or -1 with why where baton does not know its rules (before 2.18 or
 * after its tables' 2.30.7). The text of one: "2.26.6". */
int knobs_version(const char *s, int *out, char *why, size_t len);
void knobs_version_text(int v, char *buf, size_t len);

#endif
