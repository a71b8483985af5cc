/* tuner_csv.h - NCCL's example tuner CSV (plugins/tuner/example/README.md):
 *
 *   collective,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks[,numPipeOps[,regBuff]]
 *
 * what `baton select --format nccl-tuner` writes; `#` comments, blank
 * lines and a header row (collective_type,min_bytes,...) are skipped. Rows are tried in order; -1 matches any node count,
 * rank count, pipeline op count or buffer registration.
 *
 * Here in validate/, not in tuner/: `plan` and `validate` read the file
 * too (tunerfile.h), and the plugin (tuner/baton_tuner.c, a room above)
 * takes it from libbaton like everything else it calls. The numbers kept
 * are NCCL's own (tuner/nccl_tuner.h), so the plugin hands them on as
 * they are. */
#ifndef BATON_TUNER_CSV_H
#define BATON_TUNER_CSV_H

#include <stddef.h>
#include <stdint.h>

typedef struct tuner_rule {
    int coll;                  /* ncclFunc_t */
    uint64_t lo, hi;           /* bytes, inclusive */
    int algo, proto;           /* NCCL_ALGO_*, NCCL_PROTO_* */
    int channels;              /* -1: NCCL's own */
    int nnodes, nranks, pipeops, regbuff;   /* -1: any */
} tuner_rule_t;

typedef struct tuner_table {
    int n, cap;
    tuner_rule_t *r;
} tuner_table_t;

/* Parse text (name: what errors call it) into t, adding to what it has; 0,
 * or -1 with "NAME:LINE: what is wrong" in why. */
int tuner_csv_parse(const char *name, const char *text, tuner_table_t *t, char *why, size_t n);
/* The first rule for this call, or NULL. */
const tuner_rule_t *tuner_csv_match(const tuner_table_t *t, int coll, uint64_t bytes, int nnodes, int nranks,
                                    int pipeops, int regbuff);
void tuner_csv_free(tuner_table_t *t);

#endif
