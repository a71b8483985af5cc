/* harness.c - load an NCCL tuner plugin as NCCL does and ask it.
 *
 *   tuner_harness PLUGIN.so VERSION NRANKS NNODES < queries
 *
 * dlopen()s PLUGIN, looks up ncclTunerPlugin_vVERSION (2..6) with dlsym, as
 * NCCL's src/plugin/tuner.cc, calls init, then for each query line
 * "COLL BYTES [IGNORE_ALGO IGNORE_PROTO]" getCollInfo with a cost table of
 * ones (the pair named marked -1, unusable, as NCCL marks what cannot run)
 * and prints "COLL BYTES ALGO PROTO CHANNELS": the one pair set to 0
 * ("none none" where the plugin set none, "many" where it set more), and
 * nChannels (0: left as NCCL set it); then finalize/destroy. Exit 1 with the
 * reason where loading or init fails. */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../tuner/nccl_tuner.h"

static const char *const algos[] = {"tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat"};
static const char *const protos[] = {"ll", "ll128", "simple"};
static const char *const colls[] = {"broadcast", "reduce", "allgather", "reducescatter", "allreduce"};

static void logger(ncclDebugLogLevel level, unsigned long flags, const char *file, int line, const char *fmt, ...) {
    (void)flags, (void)file, (void)line;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "NCCL %s ", level == NCCL_LOG_WARN ? "WARN" : "INFO");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static int find(const char *w, const char *const *names, int n) {
    for (int i = 0; i < n; i++)
        if (strcmp(w, names[i]) == 0) return i;
    return -1;
}

int main(int argc, char **argv) {
    if (argc != 5) { fprintf(stderr, "usage: tuner_harness PLUGIN VERSION NRANKS NNODES < queries\n"); return 2; }
    int v = atoi(argv[2]);
    size_t nranks = (size_t)atol(argv[3]), nnodes = (size_t)atol(argv[4]);
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) { fprintf(stderr, "dlopen: %s\n", dlerror()); return 1; }
    char sym[32];
    snprintf(sym, sizeof sym, "ncclTunerPlugin_v%d", v);
    void *p = dlsym(lib, sym);
    if (p == NULL) { fprintf(stderr, "dlsym %s: %s\n", sym, dlerror()); return 1; }
    void *ctx = NULL;
    ncclResult_t rc;
    ncclNvlDomainInfo_v5_t nvl = {1, (int)nranks, (int)nranks};
    ncclTunerConstants_v5_t k;
    memset(&k, 0, sizeof k);
    if (v >= 5) rc = ((ncclTuner_v5_t *)p)->init(&ctx, 42, nranks, nnodes, logger, &nvl, &k);
    else rc = ((ncclTuner_v4_t *)p)->init(nranks, nnodes, logger, &ctx);   /* v2, v3, v4 share init */
    if (rc != ncclSuccess) { fprintf(stderr, "init: %d\n", (int)rc); return 1; }
    printf("name %s\n", *(const char *const *)p);
    char coll[32], ia[32], ip[32], line[256];
    unsigned long long bytes;
    while (fgets(line, sizeof line, stdin)) {
        int n = sscanf(line, "%31s %llu %31s %31s", coll, &bytes, ia, ip), c = find(coll, colls, 5);
        if (n < 2 || c < 0) continue;
        float table[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
        for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++)
            for (int q = 0; q < NCCL_NUM_PROTOCOLS; q++) table[a][q] = 1.0f;
        if (n == 4 && find(ia, algos, 7) >= 0 && find(ip, protos, 3) >= 0) table[find(ia, algos, 7)][find(ip, protos, 3)] = -1.0f;
        int channels = 0, algo = -1, proto = -1, zeros = 0;
        if (v == 2) {
            int nvls = table[NCCL_ALGO_NVLS][NCCL_PROTO_SIMPLE] != -1.0f;
            rc = ((ncclTuner_v2_t *)p)->getCollInfo(ctx, (ncclFunc_t)c, bytes, 1, nvls, 1, &algo, &proto, &channels);
            zeros = algo >= 0;
        } else {
            if (v == 3) rc = ((ncclTuner_v3_t *)p)->getCollInfo(ctx, (ncclFunc_t)c, bytes, 1, (float **)table, 7, 3, &channels);
            else rc = ((ncclTuner_v4_t *)p)->getCollInfo(ctx, (ncclFunc_t)c, bytes, 1, (float **)table, 7, 3, 0, &channels);
            for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++)
                for (int q = 0; q < NCCL_NUM_PROTOCOLS; q++)
                    if (table[a][q] == 0.0f) zeros++, algo = a, proto = q;
        }
        if (rc != ncclSuccess) { fprintf(stderr, "getCollInfo: %d\n", (int)rc); return 1; }
        printf("%s %llu %s %s %d\n", coll, bytes, zeros == 1 ? algos[algo] : zeros ? "many" : "none",
               zeros == 1 ? protos[proto] : zeros ? "many" : "none", channels);
    }
    rc = v >= 5 ? ((ncclTuner_v5_t *)p)->finalize(ctx) : ((ncclTuner_v4_t *)p)->destroy(ctx);
    dlclose(lib);
    return rc == ncclSuccess ? 0 : 1;
}
