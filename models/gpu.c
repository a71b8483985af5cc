/* gpu.c - the built-in GPUs: datasheet numbers, each with its source.
 *
 * FLOP/s are dense tensor-core peaks (2:4 sparsity doubles the headline
 * numbers; no model here is sparse) at the precision a model's matmuls run
 * in, accumulating in fp32 as frameworks do. Memory in decimal GB as the
 * datasheets print it. Launch costs are estimates, the same for every GPU:
 * a kernel launched from a stream by the host costs a few microseconds of
 * host time (NVIDIA's "Getting Started with CUDA Graphs" measures 3.8 us per
 * short kernel issued back to back, of which 2.9 us ran on the GPU; PyTorch
 * eager dispatch adds more), and about 0.5 us inside a CUDA graph (the same
 * post: 3.4 us per kernel). A machine file may set its own. */
#include "gpu.h"

#include <string.h>

#include "../util/suggest.h"

#define T 1e12
#define GB 1e9
#define US 1e-6

static const gpu_spec_t table[] = {
    /* V100 SXM2 datasheet: 125 TFLOPS fp16 tensor (Volta has no bf16: a bf16
       model runs in fp16 there), 900 GB/s HBM2, 32 GB. */
    {"v100-sxm2", "volta", {125 * T, 0}, 900 * GB, 32 * GPU_GIB, 4 * US, 0.5 * US},
    /* A100 SXM4 80GB datasheet: 312 TFLOPS bf16, no fp8, 2,039 GB/s HBM2e. */
    {"a100-sxm", "ampere", {312 * T, 0}, 2039 * GB, 80 * GPU_GIB, 4 * US, 0.5 * US},
    /* H100 SXM5 datasheet: 989.4 TFLOPS bf16, 1,978.9 fp8, 3.35 TB/s HBM3, 80 GB. */
    {"h100-sxm", "hopper", {989.4 * T, 1978.9 * T}, 3350 * GB, 80 * GPU_GIB, 4 * US, 0.5 * US},
    /* H200 SXM datasheet: H100's compute, 4.8 TB/s HBM3e, 141 GB. */
    {"h200-sxm", "hopper", {989.4 * T, 1978.9 * T}, 4800 * GB, 141 * GPU_GIB, 4 * US, 0.5 * US},
    /* HGX B200 (1,000 W) datasheet: 2.25 PFLOPS bf16, 4.5 fp8, 8 TB/s
       HBM3e, 1,440 GB per 8 GPUs. */
    {"b200", "blackwell", {2250 * T, 4500 * T}, 8000 * GB, 180 * GPU_GIB, 4 * US, 0.5 * US},
    /* GB200's Blackwell GPU (1,200 W), NVIDIA's Blackwell datasheet as tabled
       at glennklockwood.com/garden/processors/B200: 2.5 PFLOPS bf16, 5 fp8
       (10 fp4: no fp4 slot here) dense; GB200 NVL72 page: 13.4 TB HBM3e and
       576 TB/s for 72 GPUs = 186 GB and 8 TB/s each. */
    {"gb200", "blackwell", {2500 * T, 5000 * T}, 8000 * GB, 186 * GPU_GIB, 4 * US, 0.5 * US},
    /* B300 (Blackwell Ultra, HGX), per-GPU dense table of verda.com/blog/
       gb300-nvl72-architecture (from NVIDIA's B300/GB300 datasheets): 2.25
       PFLOPS bf16, 4.5 fp8 (14 fp4), 270 GB HBM3e at 7.7 TB/s. */
    {"b300", "blackwell", {2250 * T, 4500 * T}, 7700 * GB, 270 * GPU_GIB, 4 * US, 0.5 * US},
    /* GB300's Blackwell Ultra GPU, the same table: 2.5 PFLOPS bf16, 5 fp8
       (15 fp4), 279 GB HBM3e at 8 TB/s (GB300 NVL72: 20 TB, 576 TB/s). */
    {"gb300", "blackwell", {2500 * T, 5000 * T}, 8000 * GB, 279 * GPU_GIB, 4 * US, 0.5 * US},
    /* L40S datasheet: 362.05 TFLOPS bf16, 733 fp8, 864 GB/s GDDR6, 48 GB. */
    {"l40s", "ada", {362.05 * T, 733 * T}, 864 * GB, 48 * GPU_GIB, 4 * US, 0.5 * US},
    /* RTX 4090, Ada whitepaper appendix: 165.2 TFLOPS bf16 and 330.3 fp8 with
       fp32 accumulation (GeForce halves it), 1,008 GB/s GDDR6X, 24 GB. */
    {"rtx4090", "ada", {165.2 * T, 330.3 * T}, 1008 * GB, 24 * GPU_GIB, 4 * US, 0.5 * US},
    /* RTX 5090, Blackwell GeForce whitepaper: 209.5 TFLOPS bf16 and 419 fp8
       with fp32 accumulation, 1,792 GB/s GDDR7, 32 GB. */
    {"rtx5090", "blackwell", {209.5 * T, 419 * T}, 1792 * GB, 32 * GPU_GIB, 4 * US, 0.5 * US},
    /* MI300X datasheet: 1,307.4 TFLOPS bf16, 2,614.9 fp8, 5.3 TB/s HBM3, 192 GB. */
    {"mi300x", "cdna3", {1307.4 * T, 2614.9 * T}, 5300 * GB, 192 * GPU_GIB, 4 * US, 0.5 * US},
    /* MI355X datasheet: 2.5 PFLOPS bf16, 5.0 fp8 (dense), 8 TB/s HBM3e, 288 GB. */
    {"mi355x", "cdna4", {2500 * T, 5000 * T}, 8000 * GB, 288 * GPU_GIB, 4 * US, 0.5 * US},
};

#define NGPU ((int)(sizeof table / sizeof table[0]))

const gpu_spec_t *gpu_at(int i) { return i >= 0 && i < NGPU ? &table[i] : NULL; }

const gpu_spec_t *gpu_find(const char *name) {
    for (int i = 0; i < NGPU; i++)
        if (strcmp(table[i].name, name) == 0) return &table[i];
    return NULL;
}

const char *gpu_hint(const char *name) {
    const char *cands[NGPU + 1];
    for (int i = 0; i < NGPU; i++) cands[i] = table[i].name;
    cands[NGPU] = NULL;
    return suggest_hint(name, cands);
}

/* Product names to families, the longer name first where one holds another
 * (H200 before H20). */
static const struct { const char *part, *family; } devices[] = {
    {"V100", "volta"}, {"2080", "turing"}, {"T4", "turing"}, {"A100", "ampere"}, {"A800", "ampere"},
    {"H100", "hopper"}, {"H800", "hopper"}, {"H200", "hopper"}, {"H20", "hopper"}, {"GB200", "blackwell"}, {"GB300", "blackwell"},
    {"B200", "blackwell"}, {"B300", "blackwell"}, {"B100", "blackwell"}, {"RTX 5090", "blackwell"}, {"L40", "ada"},
    {"RTX 4090", "ada"}, {"L4", "ada"}, {"MI300", "cdna3"}, {"MI325", "cdna3"}, {"MI350", "cdna4"}, {"MI355", "cdna4"},
    {NULL, NULL}};

const char *gpu_family_of_device(const char *device) {
    for (int i = 0; devices[i].part; i++)
        if (strstr(device, devices[i].part)) return devices[i].family;
    return NULL;
}

int gpu_dtype_parse(const char *s) {
    if (!strcmp(s, "bf16") || !strcmp(s, "fp16")) return GPU_BF16;
    if (!strcmp(s, "fp8")) return GPU_FP8;
    return -1;
}

const char *gpu_dtype_name(gpu_dtype_t d) { return d == GPU_FP8 ? "fp8" : "bf16"; }

int gpu_dtype_bytes(gpu_dtype_t d) { return d == GPU_FP8 ? 1 : 2; }

int gpu_same(const gpu_spec_t *a, const gpu_spec_t *b) {
    for (int d = 0; d < GPU_DTYPES; d++)
        if (a->flops[d] != b->flops[d]) return 0;
    return a->hbm_bw == b->hbm_bw && a->hbm_bytes == b->hbm_bytes && a->launch == b->launch &&
           a->graph_launch == b->graph_launch;
}
