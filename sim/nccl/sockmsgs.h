/* sockmsgs.h - the network messages of a schedule's busiest rank (NCCL's
 * proxy thread handles each in turn: the socket transport's, libfabric's
 * inline sends). */
#ifndef BATON_SOCKMSGS_H
#define BATON_SOCKMSGS_H

#include <stdint.h>

#include "../../algorithms/sched.h"

/* Rank r of s runs on machine rank ranks[r] (NULL: on r), and machine rank
 * m on node m / g.
 *
 * The most sends to and receives from another node that one rank of s
 * makes; 0 when all ranks share a node. */
uint64_t sockmsgs_busiest(const sched_t *s, int g, const int32_t *ranks);

/* The most sends to another node carrying 1 to `most` bytes that one rank
 * of s makes (libfabric's inline sends: ncclrule.c proxy_inline). */
uint64_t sockmsgs_small_sends(const sched_t *s, int g, const int32_t *ranks, uint64_t most);

/* The most connections to other nodes that one rank of s uses: each
 * channel's peers there, each direction once (a proxy operation each in
 * NCCL: ncclrule.c proxy_ops). */
uint64_t sockmsgs_connections(const sched_t *s, int g, const int32_t *ranks);

#endif
