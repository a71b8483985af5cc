/* baton_tuner.c - an NCCL tuner plugin that answers with baton's choices.
 *
 * NCCL_TUNER_PLUGIN=/path/libnccl-tuner-baton.so, then one of
 *   BATON_TUNER_FILE=FILE       a tuner table: `baton select --format nccl-tuner`'s
 *                               output, or any file in NCCL's example tuner CSV
 *   BATON_TUNER_MACHINE=NAME    a baton machine (a file, or a shipped name; calibrated
 *                               or not), with BATON_TUNER_SET="nodes=2,..." as --set:
 *                               the table is made at init (baton_tuner_table, the same
 *                               select) for the communicator's ranks
 * Per call, the first row of the table for the collective, size, node and
 * rank count gets cost 0 in NCCL's cost table (NCCL then takes it, as with
 * NCCL's example plugin) and, where the row names channels, *nChannels. A
 * call no row covers, or a pair NCCL marked unusable (-1), is left to NCCL.
 * Neither variable set: NCCL's own choices, said once at init. A table that
 * does not read, or a machine that does not load, fails init with the
 * reason (NCCL_DEBUG=WARN shows it): every communicator would. A
 * communicator of another size than the machine's (a job's tensor-parallel
 * groups, ncclCommSplit's children) gets NCCL's own choices, with a
 * warning: failing its init would fail the job's start.
 *
 * Exports ncclTunerPlugin_v6 .. _v2, the versions NCCL (June 2026,
 * src/plugin/tuner.cc) still resolves, newest first. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../include/baton.h"
#include "../validate/tuner_csv.h"
#include "nccl_tuner.h"

#define EXPORT __attribute__((visibility("default")))

typedef struct tctx {
    int nranks, nnodes;
    ncclDebugLogger_t log;
    tuner_table_t table;
} tctx_t;

static void say(const tctx_t *c, ncclDebugLogLevel lvl, const char *fmt, ...) {
    char msg[640];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (c->log) c->log(lvl, NCCL_INIT | NCCL_TUNING, __FILE__, __LINE__, "TUNER/baton: %s", msg);
    else if (lvl <= NCCL_LOG_WARN) fprintf(stderr, "TUNER/baton: %s\n", msg);
}

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) return NULL;
    size_t cap = 4096, n = 0, k;
    char *b = malloc(cap);
    while (b && (k = fread(b + n, 1, cap - n - 1, f)) > 0)
        if ((n += k) + 1 == cap) {
            char *g = cap < (64u << 20) ? realloc(b, cap *= 2) : NULL;
            if (g == NULL) { free(b); b = NULL; }
            else b = g;
        }
    fclose(f);
    if (b) b[n] = '\0';
    return b;
}

/* The machine's table for this communicator: text, or NULL (why said). */
/* The table for the communicator from machine `name`; NULL with *other 1
 * where the communicator is not the machine's size (NCCL's own choices),
 * NULL alone where the machine does not load or answer. */
static char *machine_table(tctx_t *c, const char *name, int *other) {
    const char *sets[16];
    char buf[512];
    int n = 0;
    snprintf(buf, sizeof buf, "%s", getenv("BATON_TUNER_SET") ? getenv("BATON_TUNER_SET") : "");
    for (char *save, *w = strtok_r(buf, ", ", &save); w && n < 16; w = strtok_r(NULL, ", ", &save)) sets[n++] = w;
    baton_error err = {0};
    baton_machine *m = baton_machine_load(name, sets, n, &err);
    if (m == NULL) { say(c, NCCL_LOG_WARN, "BATON_TUNER_MACHINE=%s: %s", name, err.message); return NULL; }
    char *text = NULL;
    if (baton_machine_ranks(m) != c->nranks) {   /* a sub-communicator (TP, pipeline, a split): not ours */
        say(c, NCCL_LOG_WARN, "BATON_TUNER_MACHINE=%s has %d ranks, the communicator %d: NCCL's own choices for "
            "this one (BATON_TUNER_SET=nodes=N for a whole machine of that size)", name, baton_machine_ranks(m), c->nranks);
        *other = 1;
    } else if ((text = baton_tuner_table(m, NULL, NULL, &err)) == NULL)
        say(c, NCCL_LOG_WARN, "BATON_TUNER_MACHINE=%s: %s", name, err.message);
    baton_machine_free(m);
    return text;
}

static ncclResult_t setup(tctx_t *c) {
    const char *file = getenv("BATON_TUNER_FILE"), *machine = getenv("BATON_TUNER_MACHINE");
    char why[640], *text;
    if (file && *file) {
        if ((text = slurp(file)) == NULL) { say(c, NCCL_LOG_WARN, "BATON_TUNER_FILE=%s: cannot read it", file); return ncclInvalidUsage; }
    } else if (machine && *machine) {
        int other = 0;
        if ((text = machine_table(c, machine, &other)) == NULL) return other ? ncclSuccess : ncclInvalidUsage;
        file = machine;
    } else {
        say(c, NCCL_LOG_INFO, "neither BATON_TUNER_FILE nor BATON_TUNER_MACHINE is set: NCCL's own choices");
        return ncclSuccess;
    }
    int rc = tuner_csv_parse(file, text, &c->table, why, sizeof why);
    free(text);
    if (rc < 0) { say(c, NCCL_LOG_WARN, "%s", why); return ncclInvalidUsage; }
    say(c, NCCL_LOG_INFO, "%d rows from %s for %d ranks on %d nodes", c->table.n, file, c->nranks, c->nnodes);
    return ncclSuccess;
}

static ncclResult_t init_common(size_t nRanks, size_t nNodes, ncclDebugLogger_t log, void **ctx) {
    tctx_t *c = calloc(1, sizeof *c);
    if (c == NULL) return ncclSystemError;
    c->nranks = (int)nRanks, c->nnodes = (int)nNodes, c->log = log;
    ncclResult_t rc = setup(c);
    if (rc != ncclSuccess) { tuner_csv_free(&c->table); free(c); return rc; }
    *ctx = c;
    return ncclSuccess;
}

static ncclResult_t init_v5(void **ctx, uint64_t commId, size_t nRanks, size_t nNodes, ncclDebugLogger_t log,
                            ncclNvlDomainInfo_v5_t *nvl, ncclTunerConstants_v5_t *constants) {
    (void)commId, (void)nvl, (void)constants;
    return init_common(nRanks, nNodes, log, ctx);
}

static ncclResult_t init_v4(size_t nRanks, size_t nNodes, ncclDebugLogger_t log, void **ctx) {
    return init_common(nRanks, nNodes, log, ctx);
}

/* v3 .. v6: the row's (algorithm, protocol) gets cost 0, its channels are set. */
static ncclResult_t coll_info(void *context, ncclFunc_t coll, size_t bytes, int pipeops, float **table, int nalgo,
                              int nproto, int regbuff, int *channels) {
    const tctx_t *c = context;
    const tuner_rule_t *r = c ? tuner_csv_match(&c->table, (int)coll, bytes, c->nnodes, c->nranks, pipeops, regbuff) : NULL;
    if (r == NULL || r->algo >= nalgo || r->proto >= nproto || table == NULL) return ncclSuccess;
    float *cost = (float *)table;                      /* NCCL's float[algos][protos], passed as float ** */
    if (cost[r->algo * nproto + r->proto] == (float)NCCL_ALGO_PROTO_IGNORE) return ncclSuccess;
    cost[r->algo * nproto + r->proto] = 0.0f;
    if (r->channels > 0 && channels) *channels = r->channels;
    return ncclSuccess;
}

static ncclResult_t coll_info_v3(void *context, ncclFunc_t coll, size_t bytes, int pipeops, float **table, int nalgo,
                                 int nproto, int *channels) {
    return coll_info(context, coll, bytes, pipeops, table, nalgo, nproto, -1, channels);
}

/* v2: the choice itself; NVLS and CollNet only where NCCL says they run. */
static ncclResult_t coll_info_v2(void *context, ncclFunc_t coll, size_t bytes, int collnet, int nvls, int pipeops,
                                 int *algorithm, int *protocol, int *channels) {
    const tctx_t *c = context;
    const tuner_rule_t *r = c ? tuner_csv_match(&c->table, (int)coll, bytes, c->nnodes, c->nranks, pipeops, -1) : NULL;
    if (r == NULL) return ncclSuccess;
    if (!nvls && (r->algo == NCCL_ALGO_NVLS || r->algo == NCCL_ALGO_NVLS_TREE)) return ncclSuccess;
    if (!collnet && (r->algo == NCCL_ALGO_COLLNET_DIRECT || r->algo == NCCL_ALGO_COLLNET_CHAIN)) return ncclSuccess;
    *algorithm = r->algo, *protocol = r->proto;
    if (r->channels > 0) *channels = r->channels;
    return ncclSuccess;
}

static ncclResult_t destroy(void *context) {
    tctx_t *c = context;
    if (c) tuner_csv_free(&c->table);
    free(c);
    return ncclSuccess;
}

#define NAME "baton"
EXPORT ncclTuner_v6_t ncclTunerPlugin_v6 = {NAME, init_v5, coll_info, destroy, NULL};
EXPORT ncclTuner_v5_t ncclTunerPlugin_v5 = {NAME, init_v5, coll_info, destroy};
EXPORT ncclTuner_v4_t ncclTunerPlugin_v4 = {NAME, init_v4, coll_info, destroy};
EXPORT ncclTuner_v3_t ncclTunerPlugin_v3 = {NAME, init_v4, coll_info_v3, destroy};
EXPORT ncclTuner_v2_t ncclTunerPlugin_v2 = {NAME, init_v4, coll_info_v2, destroy};
