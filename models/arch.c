/* arch.c - NVIDIA's GPU generations by name and compute capability (arch.h). */
#include "arch.h"

#include <string.h>

static const char *const arch_names[ARCH_COUNT] = {"volta", "ampere", "hopper", "blackwell"};

const char *arch_name(arch_t a) { return a < ARCH_COUNT ? arch_names[a] : "?"; }

arch_t arch_of_sm(int sm) { return sm < 80 ? ARCH_VOLTA : sm < 90 ? ARCH_AMPERE : sm < 100 ? ARCH_HOPPER : ARCH_BLACKWELL; }

int arch_parse(const char *s) {
    for (int i = 0; i < ARCH_COUNT; i++) if (strcmp(s, arch_names[i]) == 0) return i;
    return -1;
}
