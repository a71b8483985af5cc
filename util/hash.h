/* hash.h - FNV-1a over bytes, for the hash tables of node names and fold
 * signatures. Continue a hash by passing the last value as h; start from
 * HASH_SEED. (sim/form/peers.c hashes long keys eight bytes at a time instead.) */
#ifndef BATON_HASH_H
#define BATON_HASH_H

#include <stddef.h>
#include <stdint.h>

#define HASH_SEED 2166136261u

static inline uint32_t hash_bytes(uint32_t h, const void *p, size_t n) {
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 16777619u;
    return h;
}

#endif
