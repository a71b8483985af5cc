/* nccl_tuner.h - NCCL's tuner plugin interface, the C types only.
 *
 * Written from NCCL's documented API (NVIDIA/nccl, master of June 2026:
 * src/include/plugin/nccl_tuner.h, src/include/plugin/tuner/tuner_v2.h ..
 * tuner_v6.h, src/include/nccl_common.h, plugins/tuner/example/nccl/ headers).
 * NCCL dlopen()s the library named by NCCL_TUNER_PLUGIN and looks up
 * ncclTunerPlugin_v6, then _v5, _v4, _v3, _v2 (src/plugin/tuner.cc): the
 * first found is used. The cost table NCCL passes is its
 * float[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS] cast to float **. */
#ifndef BATON_NCCL_TUNER_H
#define BATON_NCCL_TUNER_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
    ncclSuccess = 0, ncclUnhandledCudaError = 1, ncclSystemError = 2, ncclInternalError = 3,
    ncclInvalidArgument = 4, ncclInvalidUsage = 5, ncclRemoteError = 6
} ncclResult_t;

typedef enum {
    ncclFuncBroadcast = 0, ncclFuncReduce = 1, ncclFuncAllGather = 2, ncclFuncReduceScatter = 3,
    ncclFuncAllReduce = 4, ncclFuncSendRecv = 5, ncclFuncSend = 6, ncclFuncRecv = 7
} ncclFunc_t;

typedef enum { NCCL_LOG_NONE = 0, NCCL_LOG_VERSION = 1, NCCL_LOG_WARN = 2, NCCL_LOG_INFO = 3, NCCL_LOG_ABORT = 4,
               NCCL_LOG_TRACE = 5 } ncclDebugLogLevel;
#define NCCL_INIT 1
#define NCCL_TUNING 64
typedef void (*ncclDebugLogger_t)(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
                                  const char *fmt, ...);

#define NCCL_ALGO_UNDEF -1
#define NCCL_ALGO_TREE 0
#define NCCL_ALGO_RING 1
#define NCCL_ALGO_COLLNET_DIRECT 2
#define NCCL_ALGO_COLLNET_CHAIN 3
#define NCCL_ALGO_NVLS 4
#define NCCL_ALGO_NVLS_TREE 5
#define NCCL_ALGO_PAT 6
#define NCCL_NUM_ALGORITHMS 7
#define NCCL_PROTO_UNDEF -1
#define NCCL_PROTO_LL 0
#define NCCL_PROTO_LL128 1
#define NCCL_PROTO_SIMPLE 2
#define NCCL_NUM_PROTOCOLS 3
#define NCCL_ALGO_PROTO_IGNORE -1.0

typedef struct {
    int nNvlDomains, minRanksPerNvlDomain, maxRanksPerNvlDomain;
} ncclNvlDomainInfo_v5_t;
typedef ncclNvlDomainInfo_v5_t ncclNvlDomainInfo_v6_t;

typedef struct {
    double baseLatencies[7][3];
    double hwLatencies[3][7][3];
    double llMaxBws[4][3];
    double perChMaxRingLL128Bws[4][3];
    double perChMaxTreeLL128Bws[4][3];
    double perChMaxTreeBws[4][3];
    double perChMaxNVLSTreeBws[4][3];
} ncclTunerConstants_v5_t;
typedef ncclTunerConstants_v5_t ncclTunerConstants_v6_t;

typedef struct {
    const char *name;
    ncclResult_t (*init)(void **ctx, uint64_t commId, size_t nRanks, size_t nNodes, ncclDebugLogger_t logFunction,
                         ncclNvlDomainInfo_v6_t *nvlDomainInfo, ncclTunerConstants_v6_t *constants);
    ncclResult_t (*getCollInfo)(void *context, ncclFunc_t collType, size_t nBytes, int numPipeOps, float **collCostTable,
                                int numAlgo, int numProto, int regBuff, int *nChannels);
    ncclResult_t (*finalize)(void *context);
    ncclResult_t (*getChunkSize)(void *context, ncclFunc_t collType, size_t nBytes, int algo, int proto, int nChannels,
                                 size_t *chunkSize);
} ncclTuner_v6_t;

typedef struct {
    const char *name;
    ncclResult_t (*init)(void **ctx, uint64_t commId, size_t nRanks, size_t nNodes, ncclDebugLogger_t logFunction,
                         ncclNvlDomainInfo_v5_t *nvlDomainInfo, ncclTunerConstants_v5_t *constants);
    ncclResult_t (*getCollInfo)(void *context, ncclFunc_t collType, size_t nBytes, int numPipeOps, float **collCostTable,
                                int numAlgo, int numProto, int regBuff, int *nChannels);
    ncclResult_t (*finalize)(void *context);
} ncclTuner_v5_t;

typedef struct {
    const char *name;
    ncclResult_t (*init)(size_t nRanks, size_t nNodes, ncclDebugLogger_t logFunction, void **context);
    ncclResult_t (*getCollInfo)(void *context, ncclFunc_t collType, size_t nBytes, int numPipeOps, float **collCostTable,
                                int numAlgo, int numProto, int regBuff, int *nChannels);
    ncclResult_t (*destroy)(void *context);
} ncclTuner_v4_t;

typedef struct {
    const char *name;
    ncclResult_t (*init)(size_t nRanks, size_t nNodes, ncclDebugLogger_t logFunction, void **context);
    ncclResult_t (*getCollInfo)(void *context, ncclFunc_t collType, size_t nBytes, int numPipeOps, float **collCostTable,
                                int numAlgo, int numProto, int *nChannels);
    ncclResult_t (*destroy)(void *context);
} ncclTuner_v3_t;

typedef struct {
    const char *name;
    ncclResult_t (*init)(size_t nRanks, size_t nNodes, ncclDebugLogger_t logFunction, void **context);
    ncclResult_t (*getCollInfo)(void *context, ncclFunc_t collType, size_t nBytes, int collNetSupport, int nvlsSupport,
                                int numPipeOps, int *algorithm, int *protocol, int *nChannels);
    ncclResult_t (*destroy)(void *context);
} ncclTuner_v2_t;

#endif
