/* chakra_gen.c - baton's own small Chakra trace (chakra_gen.h). */
#include "chakra_gen.h"

#include <stdio.h>
#include <string.h>

/* Node n as the next id, depending on node dep (none for the first). */
static int add(chakra_et_t *et, chakra_node_t *n, uint64_t dep, int ctrl, baton_err_t *e) {
    n->id = et->n;
    n->deps = &dep;
    n->ndeps = n->id > 0;
    n->nctrl = ctrl ? n->ndeps : 0;
    return chakra_add(et, n, e);
}

static int p2p(chakra_et_t *et, const chakra_gen_t *g, int r, int send, baton_err_t *e) {
    char name[64];
    int peer = send ? (r + 1) % g->ranks : (r + g->ranks - 1) % g->ranks;
    snprintf(name, sizeof name, send ? "send to rank %d" : "recv from rank %d", peer);
    chakra_node_t n = {.name = name, .type = send ? CHAKRA_SEND : CHAKRA_RECV, .comm_size = g->bytes / (uint64_t)g->ranks,
                       .comm_src = send ? r : peer, .comm_dst = send ? peer : r,
                       .has = CHAKRA_HAS_SIZE | CHAKRA_HAS_SRC | CHAKRA_HAS_DST | CHAKRA_HAS_TAG};
    return add(et, &n, g->overlap ? 1 : 3, 1, e);   /* after the backward pass, or the forward (a control dependency) */
}

int chakra_gen_rank(const chakra_gen_t *g, int r, chakra_et_t *et, baton_err_t *e) {
    memset(et, 0, sizeof *et);
    snprintf(et->version, sizeof et->version, "0.0.4");
    const char *coll = chakra_coll_name(g->comm_type);
    if (coll == NULL) return err_set(e, BATON_EINVAL, "comm_type %lld is none of Chakra's", (long long)g->comm_type);
    chakra_node_t host = {.name = "host: launch the step", .type = CHAKRA_COMP, .duration_us = g->host_us, .is_cpu_op = 1};
    chakra_node_t fwd = {.name = "forward", .type = CHAKRA_COMP, .duration_us = g->compute_us + (uint64_t)r * g->skew_us};
    chakra_node_t cc = {.name = (char *)coll, .type = CHAKRA_COLL, .comm_type = g->comm_type, .comm_size = g->bytes,
                        .has = CHAKRA_HAS_TYPE | CHAKRA_HAS_SIZE};
    chakra_node_t bwd = {.name = "backward", .type = CHAKRA_COMP, .duration_us = g->compute_us};
    int rc = add(et, &host, 0, 0, e);
    if (rc == 0) rc = add(et, &fwd, 0, 0, e);
    if (rc == 0) rc = add(et, &cc, 1, 0, e);
    if (rc == 0) rc = add(et, &bwd, 2, 0, e);
    if (rc == 0 && g->ranks > 1) rc = p2p(et, g, r, 1, e);
    if (rc == 0 && g->ranks > 1) rc = p2p(et, g, r, 0, e);
    uint64_t deps[2] = {4, 5}, over[3] = {3, 4, 5};   /* (the backward pass,) the send (control), the received data */
    int p2p_deps = g->overlap ? 3 : 2;
    chakra_node_t opt = {.name = "optimizer", .type = CHAKRA_COMP, .duration_us = g->compute_us / 2, .id = et->n,
                         .deps = g->ranks > 1 ? (g->overlap ? over : deps) : (uint64_t[]){3},
                         .ndeps = g->ranks > 1 ? (uint32_t)p2p_deps : 1, .nctrl = g->ranks > 1 ? (uint32_t)p2p_deps - 1 : 0};
    if (rc == 0) rc = chakra_add(et, &opt, e);
    if (rc < 0) chakra_free(et);
    return rc;
}
