/* nvls.c - all-reduce with in-switch reduction (NVLink SHARP, InfiniBand
 * SHARP): every rank sends each byte up to the switch once and receives the
 * sum once, so each rank moves n bytes each way instead of the ring's
 * 2(p-1)/p n, whatever p is.
 *
 * The reducing switch takes part as a helper rank (id p) with p x w
 * channels: channel (j, c) adds rank j's chunks c, c + w, ... into the
 * switch's buffer (which starts at zero); a zero-byte message handed from
 * (j, c) to (j + 1, c) says "my part of chunk i is in", and (p - 1, c)
 * multicasts the finished chunk to every rank. Rank j's channel c sends
 * chunk i = c, c + w, ... up and takes its sum back, so w chunks are in
 * flight each way: a stream receives one message at a time, and with one
 * channel each chunk waited out both latencies (1.45x on a GB200 rack).
 *
 * Step diagram, p = 3, chunks x y, w = 2 (x on channel 0, y on 1):
 *
 *   rank j.0:    send x -> sw.(j,0), recv x <- sw.(2,0)
 *   rank j.1:    send y -> sw.(j,1), recv y <- sw.(2,1)
 *   sw.(0,c):    +x <- 0, sync -> sw.(1,c)                  (y on c = 1)
 *   sw.(1,c):    +x <- 1, sync <- sw.(0,c), sync -> sw.(2,c)
 *   sw.(2,c):    +x <- 2, sync <- sw.(1,c), send x -> 0, 1, 2
 *
 * The switch's links run at topo_nvls_eff: nvls_efficiency x p/(p - 1), so
 * the bus bandwidth, not the algorithm bandwidth, holds as p grows (NCCL's
 * model since 2.28.3; docs/decisions/nvls-domain-size.md).
 *
 * Cost (approximate: the switch adds at line rate): the first chunk up and
 * down, 2(a + (n/k) b), then (k - 1) periods of the larger of (n/k) b and,
 * where more chunks than w wait, 2(a + (n/k) b)/w. Equal to the simulator
 * on a uniform star and on NVLink machines where chunks pipeline
 * (test_machines_reduce.c, test_machines_2026.c). Requires: a switch marked
 * `reduce: true` that every rank reaches; any p >= 1, any n; --pipeline K
 * (default 1 per MiB). */
#include "algo.h"

#include "../models/proto.h"

/* Chunks in flight a rank: NCCL's NCCL_STEPS (8) slots a channel, fewer
 * where p x w switch channels would pass 1,024 (the engine keeps a stream
 * for every rank and channel), never more than the chunks. */
static uint32_t nvls_window(int p, uint64_t k) {
    uint64_t w = 1024 / (uint64_t)(p > 0 ? p : 1);
    if (w > 8) w = 8;
    if (w > k) w = k;
    return w ? (uint32_t)w : 1;
}

/* Rank r's channel j takes chunks j, j + w, ...: send one up to switch
 * channel (r, j), take its sum back from channel (p - 1, j). A stream
 * receives in program order, so the w channels are what keep w chunks in
 * flight each way. */
static int rank_op(const sched_t *s, int r, int j, uint32_t pc, sched_op_t *op) {
    int p = s->nranks, sw = p, w = (int)nvls_window(p, s->nchunks);
    uint32_t i = pc / 2 * (uint32_t)w + (uint32_t)j;
    if (j >= w || i >= s->nchunks) return 0;
    *op = pc % 2 == 0 ? op_chan(op_send(sw, i, 1), -1, r * w + j)
                      : op_chan(op_recv(sw, i, 1, RECV_COPY), (p - 1) * w + j, -1);
    return 1;
}

/* Switch channel (c, j) takes chunks j, j + w, ...: add rank c's, wait for
 * channel (c-1, j), tell channel (c+1, j) (or, last, multicast the sum). */
static int switch_op(const sched_t *s, int ch, uint32_t pc, sched_op_t *op) {
    int p = s->nranks, sw = p, w = (int)nvls_window(p, s->nchunks), c = ch / w, slot = ch % w;
    int first = c == 0, last = c == p - 1;
    uint32_t per = 1 + !first + (last ? (uint32_t)p : 1), i = pc / per * (uint32_t)w + (uint32_t)slot, j = pc % per;
    if (i >= s->nchunks) return 0;
    if (j == 0) { *op = op_chan(op_recv(c, i, 1, RECV_REDUCE), slot, -1); return 1; }
    if (!first && j == 1) { *op = op_chan(op_recv(sw, i, 0, RECV_COPY), ch - w, -1); return 1; }
    j -= 1 + !first;
    *op = last ? op_chan(op_send((int)j, i, 1), -1, slot) : op_chan(op_send(sw, i, 0), -1, ch + w);
    return 1;
}

static int nvls_prog(const sched_t *s, int r, int c, uint32_t pc, sched_op_t *op) {
    if (r == s->nranks) return switch_op(s, c, pc, op);
    return rank_op(s, r, c, pc, op);
}

static int nvls_build(sched_t *s, const algo_opts_t *o, baton_err_t *e) {
    uint64_t k = algo_pipeline_chunks(s->bytes, o);
    if (k > 1u << 20) return err_set(e, BATON_EUNSUP, "--pipeline %llu: at most 1048576 chunks", (unsigned long long)k);
    s->helpers = 1;
    s->nchannels = s->nranks * (int)nvls_window(s->nranks, k);
    sched_layout(s, 1, (uint32_t)k);
    s->prog = nvls_prog;
    return 0;
}

/* The first chunk up and down, then one period a chunk: the link's time for
 * it, or, where more chunks than the w in flight wait, a round trip (both
 * latencies) over w. */
static double nvls_cost(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o) {
    uint64_t k = algo_pipeline_chunks(n, o);
    uint32_t w = nvls_window(p, k);
    double beta = m->helper_beta > 0 ? m->helper_beta : m->beta;   /* the switch's links at its efficiency */
    double alpha = m->helper_beta > 0 ? m->helper_alpha : m->alpha;
    double chunk = cost_block((int)k, n) * beta, trip = 2 * (alpha + chunk) / w;
    double period = k > w && trip > chunk ? trip : chunk;
    return 2 * (alpha + chunk) + (double)(k - 1) * period;
}

const algo_t algo_allreduce_nvls = {
    .coll = COLL_ALLREDUCE, .name = "nvls", .build = nvls_build, .cost = nvls_cost,
    .cost_text = "approximately 2(a + u b) + (k - 1) max(u b, 2(a + u b)/w), u = n/k, w = 8 chunks in flight",
    .requires = "a switch with `reduce: true` reaching every rank; any p >= 1, any n; --pipeline K",
    .port_model = "approximation (multi-port star)",
    .idea = "in-switch reduction (NVLS/SHARP): each byte up once, the sum down once",
    .approx = 1, .helpers = 1, .nccl = "nvls", .nccl_protos = 1u << PROTO_SIMPLE,
};
