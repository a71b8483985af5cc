/* gpu.h - what one GPU can do on its own: peak math, memory, launch cost.
 *
 * The other three buckets of a model's step besides transport (sim/answer/step.h):
 * compute is FLOPs over peak dense tensor FLOP/s at some efficiency, memory
 * is bytes over HBM bandwidth, overhead is kernels x launch cost. A machine
 * file names its GPU (`gpu: h100-sxm`) or describes one (`gpu: {like:
 * h100-sxm, hbm_bw: 3TB/s}`); the table in gpu.c holds datasheet numbers,
 * each with its source. */
#ifndef BATON_GPU_H
#define BATON_GPU_H

typedef enum { GPU_BF16 = 0, GPU_FP8, GPU_DTYPES } gpu_dtype_t;

typedef struct gpu_spec {
    char name[24];
    char family[12];           /* "hopper", "cdna3", ...: the chip generation (the logs' GPUs are
                                  checked against it); "" for a GPU described without `like:` */
    double flops[GPU_DTYPES];  /* peak dense tensor FLOP/s (no 2:4 sparsity); 0: not supported */
    double hbm_bw;             /* bytes/s of device memory */
    double hbm_bytes;          /* device memory capacity */
    double launch;             /* seconds from one kernel to the next when the host launches
                                  each one (a stream, no CUDA graph) */
    double graph_launch;       /* the same inside a captured CUDA graph */
} gpu_spec_t;

/* The built-in GPU of this name ("h100-sxm"), or NULL. */
const gpu_spec_t *gpu_find(const char *name);
/* "; did you mean 'h100-sxm'?" for a GPU name the table lacks, or ""
 * (suggest_hint's static buffer). */
const char *gpu_hint(const char *name);
/* The i-th built-in GPU, NULL past the end. */
const gpu_spec_t *gpu_at(int i);
/* "bf16", "fp16" (as bf16), "fp8"; -1 if unknown. */
int gpu_dtype_parse(const char *s);
const char *gpu_dtype_name(gpu_dtype_t d);
int gpu_dtype_bytes(gpu_dtype_t d);
/* The family of the GPU a log names ("NVIDIA H200", "Tesla V100-SXM2-16GB",
 * "AMD Instinct MI300X"), or NULL where baton does not know it. */
const char *gpu_family_of_device(const char *device);
/* 1 if every number of a matches b's (a machine file that names a GPU and
 * changes nothing writes just its name). */
int gpu_same(const gpu_spec_t *a, const gpu_spec_t *b);

/* Bytes in a GiB: memory capacities are binary (a datasheet's "80 GB" is
 * 80 GiB; nvidia-smi shows 79.6 GiB usable), and `gpus` and `step` print them so. */
#define GPU_GIB 1073741824.0

#endif
