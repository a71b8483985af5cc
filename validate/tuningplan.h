/* tuningplan.h - the plan NCCL says it ran: a log's TUNING lines.
 *
 * Run with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING, NCCL (2.20 on) prints
 * on rank 0 for every call "AllReduce: 8388608 Bytes -> Algo RING proto
 * LL128 channel{Lo..Hi}={0..15}" or, before that form, "8388608 Bytes ->
 * Algo 1 proto 1 time 41.2" (nccltests.h reads both). That is NCCL's
 * word on what ran, where -a nccl can only guess by baton's costs (its
 * tuner decides by its own model, of its own version: validate/logplan.h
 * infers a plan from the times instead). So where a log carries the lines,
 * its sizes run on what they name: library rules in NCCL's names (a rule's
 * nccl_algo: -a nccl picks among baton's rows of that algorithm, NCCL's
 * tree being whichever of nccltree, dbtree and bintree it would pick), on
 * the protocol and channel count they name. A run of consecutive sizes on one
 * algorithm, protocol and channel count is one rule: between the logged
 * sizes NCCL ran the same (its choice moves at thresholds). */
#ifndef BATON_TUNINGPLAN_H
#define BATON_TUNINGPLAN_H

#include "../sim/answer/run.h"
#include "calsample.h"
#include "nccltests.h"

/* The rules for the rows of log NCCL's lines name, for a machine of `ranks`
 * ranks, appended to out[*n..max). */
void tuningplan_rules(const nt_log_t *log, int ranks, topo_lib_rule_t *out, int *n, int max);

/* Add each of r[0..n) written for t's rank count to t's library (as room
 * allows) where t can run it (a row of the algorithm with the protocol);
 * the others are left out and named in why ("pat/Simple at 1 MiB-4 MiB;
 * ..."; empty if none). The count added. */
int tuningplan_apply(topo_t *t, const topo_lib_rule_t *r, int n, char *why, size_t whyn);

/* Does -a nccl find a row for r's smallest size on t when r is t's only
 * rule for it? (nvls without a reducing switch, or an algorithm baton has
 * no row of, does not: where NCCL's cost table says -1, IGNORE), under the
 * NCCL_PROTO the run it came from was told (r->protos). */
int tuningplan_runs(topo_t *t, const topo_lib_rule_t *r);

/* The rule from NCCL's lines that plans sample x on t (or its own machine), or NULL. */
const topo_lib_rule_t *tuningplan_rule(const topo_t *t, const cal_sample_t *x);

/* For sample x on t (or its own machine): 1 if a rule from NCCL's lines
 * plans it, with what -a nccl alone would plan there (the machine without
 * those rules) in *algo, *proto; 0 if none does; < 0 on error. */
int tuningplan_guess(topo_t *t, const cal_req_t *q, const cal_sample_t *x, const char **algo, proto_t *proto,
                     baton_err_t *e);

/* Does the plan (algo, proto) run what NCCL's algorithm and protocol there are (rows' algo_t.nccl)? */
int tuningplan_same(coll_t coll, const char *a, proto_t pa, const char *b, proto_t pb);

#endif
