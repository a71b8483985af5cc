/* verify.h - prove that a schedule computes its collective.
 *
 * Two modes, both driven by the engine as messages move:
 *  - signature (any scale): rank r's contribution to chunk c is a 64-bit hash
 *    of (r, c); a reducing receive adds signatures mod 2^64, a copying receive
 *    replaces. At the end every rank's signatures must equal the collective's
 *    postcondition. Memory O(ranks x chunks).
 *  - data (small sizes): every byte position of every rank's buffer holds a
 *    64-bit value; real values are copied and added. The candy kids run here:
 *    a baton that reads 1, 11, 111, 1111 is a running sum.
 * A payload is captured when a send is posted (a send reads the buffer then). */
#ifndef BATON_VERIFY_H
#define BATON_VERIFY_H

#include <stdint.h>

#include "../../algorithms/sched.h"

typedef enum { VERIFY_NONE = 0, VERIFY_SIGNATURE, VERIFY_DATA } verify_mode_t;

/* Initial value of element `elem` of `rank`'s buffer in data mode. */
typedef uint64_t (*verify_fill_fn)(void *ctx, int rank, uint64_t elem);

typedef struct verify_payload {
    uint64_t sig;        /* signature mode, one chunk */
    uint64_t *data;      /* otherwise: a copy of the range's places */
} verify_payload_t;

typedef struct verify verify_t;

/* Data mode refuses more than this many elements in total (ranks x bytes),
 * signature mode more than this many (rank, chunk) signatures: both are
 * 512 MiB of state (current and start values), and a clear refusal beats
 * being killed for memory. */
#define VERIFY_DATA_MAX_ELEMS (32ULL << 20)
#define VERIFY_SIG_MAX (32ULL << 20)

verify_t *verify_create(const sched_t *s, verify_mode_t mode, verify_fill_fn fill,
                        void *fill_ctx, baton_err_t *e);
void verify_free(verify_t *v);

/* Capture rank's chunk range [first, first + count) as a send payload. */
int verify_snapshot(verify_t *v, int rank, uint32_t first, uint32_t count, verify_payload_t *out);
/* Apply a payload to rank's chunk range (add or replace) and release it. */
void verify_deliver(verify_t *v, int rank, uint32_t first, uint32_t count, int reduce,
                    verify_payload_t *pl);
/* Release a payload that was never delivered. */
void verify_drop(verify_payload_t *pl);
/* Check the postcondition; 0 or BATON_EVERIFY naming the first wrong place. */
int verify_check(const verify_t *v, baton_err_t *e);

/* The postcondition at rank's place: 1 and *value where the collective
 * fixes it, 0 where rank may hold anything (a reduce's non-root ranks). */
int verify_want(const verify_t *v, int rank, uint64_t place, uint64_t *value);

/* Data mode: rank's current buffer (bytes elements), for teaching tables. */
const uint64_t *verify_data(const verify_t *v, int rank);

/* The default fill: a hash of (rank, elem), so that no two contributions
 * cancel or coincide by accident. */
uint64_t verify_hash(uint64_t rank, uint64_t index);

#endif
