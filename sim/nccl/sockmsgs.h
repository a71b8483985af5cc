/* sockmsgs.h - the network messages of a schedule's busiest rank (NCCL's
 * socket transport: its proxy thread handles each in turn). */
#ifndef BATON_SOCKMSGS_H
#define BATON_SOCKMSGS_H

#include <stdint.h>

#include "../../algorithms/sched.h"

/* The most sends to and receives from another node (nodes of g ranks:
 * rank / g) that one rank of s makes; 0 when all ranks share a node. */
uint64_t sockmsgs_busiest(const sched_t *s, int g);

#endif
