/* tunerfile.h - a tuner CSV (NCCL's example tuner plugin's file, what
 * `baton select --format nccl-tuner` writes: validate/tuner_csv.h) honoured by
 * `plan` and `validate -a nccl` as NCCL would with it loaded.
 *
 * NCCL's example plugin (NVIDIA/nccl plugins/tuner/example/plugin.c, master
 * of June 2026) reads the file NCCL_TUNER_CONFIG_FILE names and, per call,
 * tries its rows in order: the first whose collective, nBytes range
 * (inclusive), nNodes, nRanks, numPipeOps and regBuff match (-1: any) and
 * whose (algorithm, protocol) NCCL's cost table does not mark IGNORE gets
 * cost 0, so NCCL runs it; a marked pair passes to the next row; no row:
 * NCCL's own choice. The call as baton plans it: nBytes the size (NCCL's
 * element size x the larger of send and receive counts, enqueue.cc, which
 * is nccl-tests' size column), nNodes and nRanks as NCCL's model counts
 * them (view_machine), numPipeOps 1 (one call, not a group) and regBuff 0
 * (buffers not registered: nccl-tests without -R). */
#ifndef BATON_TUNERFILE_H
#define BATON_TUNERFILE_H

#include "../sim/answer/run.h"
#include "tuner_csv.h"

/* Read path into t (empty first); 0 or "path:line: what". */
int tunerfile_read(const char *path, tuner_table_t *t, baton_err_t *e);

/* The rows that apply to machine t, as library rules in NCCL's names put
 * ahead of t's own (-a nccl follows the first that fits a size): in the
 * file's order, those whose pair t cannot run left out (IGNORE) and named
 * in why ("" if none). The count put; < 0 on error (more rows than
 * TOPO_MAX_LIB_RULES apply). */
int tunerfile_apply(topo_t *t, const tuner_table_t *tab, const char *path, char *why, size_t whyn, baton_err_t *e);

/* The k-th row (k = 0, 1, ...) that applies to a call of coll and bytes on
 * a machine of nnodes x ranks (as above), or NULL. */
const tuner_rule_t *tunerfile_nth(const tuner_table_t *tab, coll_t coll, uint64_t bytes, int nnodes, int nranks, int k);

/* A row's algorithm in NCCL's name (tree, ring, collnet_direct, collnet_chain,
 * nvls, nvls_tree, pat; bit algo_nccl_index of NCCL_ALGO masks) and its proto_t. */
const char *tunerfile_nccl_algo(const tuner_rule_t *r);
proto_t tunerfile_proto(const tuner_rule_t *r);

#endif
