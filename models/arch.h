/* arch.h - NVIDIA's GPU generations as NCCL's tables index them.
 *
 * NCCL keeps one row of latencies and bandwidths per compute-capability
 * generation (src/graph/tuning.cc: Volta, Ampere, Hopper, Blackwell). A
 * machine file names its GPUs' generation (`arch:`), an imported machine
 * takes it from the GPU's compute capability, and NCCL's model
 * (sim/nccl/tuning.c) reads its row by it: a fact about the GPU, below
 * everything that uses it. */
#ifndef BATON_ARCH_H
#define BATON_ARCH_H

typedef enum { ARCH_VOLTA = 0, ARCH_AMPERE, ARCH_HOPPER, ARCH_BLACKWELL, ARCH_COUNT } arch_t;

/* "volta", "ampere", "hopper", "blackwell"; -1 if unknown. */
int arch_parse(const char *s);
const char *arch_name(arch_t a);
/* The row of NCCL's tables for compute capability sm (80 for sm80): below
 * sm80 Volta's, below sm90 Ampere's, below sm100 Hopper's, else Blackwell's. */
arch_t arch_of_sm(int sm);

#endif
