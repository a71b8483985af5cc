/* proto.h - NCCL's protocols as a cost: LL, LL128, Simple.
 *
 * A protocol trades latency for bandwidth:
 *   msg_latency  added to every message (NCCL's per-step hardware latency)
 *   efficiency   the share of link bandwidth that carries data (LL sends an
 *                8-byte flag with every 8 bytes: 1/2; LL128 120 of 128 bytes)
 *   base_latency added once per collective (NCCL's base latency)
 *   max_busbw    a ceiling on the bus bandwidth, set per machine (GPU
 *                generation): NCCL caps LL at llMaxBws, 39 GB/s on Volta
 * Defaults: NCCL 2.30 tuning.cc for ring all-reduce over NVLink
 * (docs/reference/nccl.md 1.2): LL 0.6 us / 0.5 / 6.6 us, LL128 1.9 us /
 * 120/128 / 14 us, Simple 3.4 us / 1.0 / 8.4 us. A topology file may
 * override them (`protocols:`). PROTO_NONE models no protocol at all (the
 * textbook alpha-beta model the closed-form tests use). */
#ifndef BATON_PROTO_H
#define BATON_PROTO_H

#include "cost.h"

typedef enum { PROTO_NONE = 0, PROTO_LL, PROTO_LL128, PROTO_SIMPLE, PROTO_COUNT } proto_t;

typedef struct proto_cost {
    double msg_latency;      /* seconds per message */
    double efficiency;       /* 0 < e <= 1 */
    double base_latency;     /* seconds per collective */
    double max_busbw;        /* bytes/s of bus bandwidth the GPU reaches with this protocol
                                at most, whatever the links (NCCL's llMaxBws: LL's flag
                                polling is the limit); 0: none */
} proto_cost_t;

/* NCCL's defaults for protocol p (PROTO_NONE: 0, 1, 0). */
proto_cost_t proto_default(proto_t p);
const char *proto_name(proto_t p);
/* "ll", "ll128", "simple", "none" (any case); -1 if unknown. */
int proto_parse(const char *s);

/* The uniform machine under protocol c: alpha + msg_latency, beta / efficiency. */
cost_model_t proto_apply(const cost_model_t *m, const proto_cost_t *c);

#endif
