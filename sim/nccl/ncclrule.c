/* ncclrule.c - what NCCL would run for a call, by NCCL's rules: which rows
 * and protocols it has (and from which version), the families it runs
 * without its tuner (PAT, the symmetric kernels, the copy engines), the
 * channels, steps and fill it cuts a row into, the machine's library rules
 * and NCCL_ALGO/NCCL_PROTO, and what the GPU and host add to the links' time (ceilings,
 * staging, the proxy's LL scan, launches). nccl.c puts them in
 * order for a call (nccl.h), and run_collective builds and times its plan. Sources are cited at each rule. */
#include "ncclrule.h"

#include <math.h>
#include <string.h>

#include "../../algorithms/nvls_node.h"
#include "../../topologies/graph.h"
#include "../../topologies/topo.h"
#include "sockmsgs.h"
#include "view.h"

int ncclrule_runs(topo_t *t, const algo_t *a, proto_t pr, unsigned protos) {
    if (a->nccl == NULL || (a->nccl_protos && !(a->nccl_protos & (1u << pr)))) return 0;
    return !(t && pr == PROTO_LL128 && !view_ll128(t, a->coll, protos));   /* NCCL's default, NCCL_PROTO's */
}

int ncclrule_version(const topo_t *t) {
    int v = t ? topo_params_c(t)->lib.nccl_version : 0;
    return v ? v : TOPO_NCCL_TABLES;
}

/* NCCL's nodes for p ranks on t: its NVLink domains (group_size), one if
 * none is set or it does not divide p (view_machine's reading). */
static int nccl_nodes(const topo_t *t, int p) {
    int g = topo_params_c(t)->group_size;
    return g > 0 && p % g == 0 ? p / g : 1;
}

/* PAT where NCCL has it: one GPU per node, 2.23+, NCCL itself. */
static int pat_here(const topo_t *t, int p) {
    return t && !topo_params_c(t)->lib.name[0] && ncclrule_version(t) >= TUNING_PAT_SINCE && nccl_nodes(t, p) == p && p > 1;
}

unsigned ncclrule_protos(int pr, unsigned protos) {
    return pr >= PROTO_LL && pr <= PROTO_SIMPLE ? 1u << pr : protos;
}

/* The family NCCL runs a call of coll (n bytes, p ranks) with (see run.h):
 * PAT where its tuner picks it (among the protocols of protos); with
 * registered buffers whatever its tuner says: the copy engines where
 * NCCL_CTA_POLICY asks for no kernel, the copy-engine all-gather (taskAppend
 * tries it before the kernels), then the symmetric kernels; NULL: baton's
 * closed forms choose among NCCL's rows. */
unsigned ncclrule_algos(const char *family, unsigned allowed) {
    int k = family ? algo_nccl_index(family) : -1;
    return k >= 0 ? 1u << k : allowed;
}

const char *ncclrule_forced(topo_t *t, coll_t coll, int p, uint64_t n, unsigned protos, unsigned algos) {
    const topo_params_t *tp = t ? topo_params_c(t) : NULL;
    tuning_machine_t m;
    tuning_algo_t a = TUNING_RING;
    proto_t pr = PROTO_SIMPLE;
    double x = 0;
    int pat = algo_nccl_index("pat");
    if ((coll == COLL_ALLGATHER || coll == COLL_REDUCE_SCATTER) && pat_here(t, p) && (!algos || algos >> pat & 1) &&
        view_call(t, &(algo_opts_t){0}, coll, protos, &m, NULL) == 0 &&
        tuning_pick(&m, coll, n, protos, &a, &pr, &x) == 0 && a == TUNING_PAT)
        return "pat";                                      /* NCCL's tuner picks it (its 0.75 and 2.8 us a rank) */
    if (tp == NULL || !tp->registered || tp->lib.name[0] || p < 2 || nccl_nodes(t, p) != 1) return NULL;
    int v = ncclrule_version(t);
    if ((coll == COLL_ALLGATHER || coll == COLL_ALLTOALL) && tp->cta_policy == RUN_NCCL_CTA_ZERO &&
        v >= RUN_NCCL_CE_ZERO_SINCE)
        return "ce";                                       /* asked for no kernel at all */
    if (coll == COLL_ALLGATHER && v >= RUN_NCCL_CE_AG_SINCE && tp->arch >= ARCH_BLACKWELL &&
        n / (uint64_t)p / 4 > RUN_NCCL_CE_AG_COUNT)
        return "ce";
    if ((coll == COLL_ALLREDUCE || coll == COLL_ALLGATHER || coll == COLL_REDUCE_SCATTER) && v >= RUN_NCCL_SYM_SINCE &&
        tp->arch >= ARCH_HOPPER)
        return "symmetric";
    return NULL;
}

static const struct { const char *kernel, *row; proto_t proto; } sym_rows[] = {
    {"AllReduce_AGxLL_R", "oneshot", PROTO_LL},        {"AllReduce_AGxLLMC_R", "oneshot", PROTO_LL},
    {"AllReduce_RSxLD_AGxST", "symmetric", PROTO_SIMPLE}, {"AllReduce_RSxLDMC_AGxSTMC", "nvls", PROTO_SIMPLE},
    {"AllGather_LL", "direct", PROTO_LL},              {"AllGather_LLMC", "direct", PROTO_LL},
    {"AllGather_ST", "symmetric", PROTO_SIMPLE},       {"AllGather_STMC", "symmetric", PROTO_SIMPLE},
    {"ReduceScatter_LL", "direct", PROTO_LL},          {"ReduceScatter_LD", "symmetric", PROTO_SIMPLE},
    {"ReduceScatter_LDMC", "symmetric", PROTO_SIMPLE},
};

/* Does row `name` of coll build for p ranks of n bytes (its own options)? */
static int row_fits(coll_t coll, const char *name, int p, uint64_t n) {
    const algo_t *a = algo_find(coll, name);
    sched_t s;
    return a && algo_build(a, p, n, NULL, &s, NULL) == 0;
}

int ncclrule_sym_kernel(topo_t *t, coll_t coll, int p, uint64_t n, unsigned protos, ncclrule_sym_t *out) {
    tuning_machine_t m;
    const char *k = NULL;
    int blocks = 0;
    if (view_call(t, &(algo_opts_t){0}, coll, 0, &m, NULL) < 0) return 0;
    double time = tuning_sym_time(m.arch, p, coll, n, m.nvls_channels > 0 && p > 2, protos, &k, &blocks);
    if (time < 0) return 0;
    for (size_t i = 0; i < sizeof sym_rows / sizeof *sym_rows; i++) {
        if (strcmp(sym_rows[i].kernel, k)) continue;
        int fits = row_fits(coll, sym_rows[i].row, p, n);
        *out = (ncclrule_sym_t){k, fits ? sym_rows[i].row : "symmetric", sym_rows[i].proto, blocks, time};
        return 1;
    }
    return 0;
}

/* Whether NCCL of t's version has row a's family for p ranks at all: PAT at
 * one GPU per node from 2.23; the symmetric kernels and the copy engines only
 * where ncclrule_forced says (never by the tuner). */
static int nccl_has(topo_t *t, const algo_t *a, int p, uint64_t n, unsigned protos) {
    if (strcmp(a->nccl, "pat") == 0) return pat_here(t, p);
    if (strcmp(a->nccl, "symmetric") == 0 || strcmp(a->nccl, "ce") == 0) {
        const char *f = ncclrule_forced(t, a->coll, p, n, protos, 0);
        return f && strcmp(f, a->nccl) == 0;
    }
    return 1;
}

int ncclrule_runs_at(topo_t *t, const algo_t *a, proto_t pr, int p, uint64_t n, unsigned protos) {
    if (!ncclrule_runs(t, a, pr, protos) || !nccl_has(t, a, p, n, ncclrule_protos(pr, protos))) return 0;
    if (strcmp(a->nccl, "p2p") != 0 || p < 1) return 1;
    return pr == ncclrule_p2p_proto(t, n / (uint64_t)p, ncclrule_p2p_network(t, p));
}

int ncclrule_p2p_network(const topo_t *t, int p) {
    int g = topo_params_c(t)->group_size;
    return g > 0 && g < p;
}

int ncclrule_p2p_no_ll(const topo_t *t, int network) { return network && !topo_params_c(t)->p2p_net_ll; }

proto_t ncclrule_p2p_proto(const topo_t *t, uint64_t n, int network) {
    return n <= (uint64_t)topo_params_c(t)->p2p_ll_max && !ncclrule_p2p_no_ll(t, network) ? PROTO_LL : PROTO_SIMPLE;
}

int ncclrule_crosses(const topo_t *t, const int32_t *r, int n) {
    int g = topo_params_c(t)->group_size;
    for (int i = 1; i < n && g > 0; i++)
        if (r[i] / g != r[0] / g) return 1;
    return 0;
}

/* The nodes a call's ranks run on: p / g for the machine's first p ranks,
 * else those its list names (nodes of g ranks; g 0: the machine is one). */
int ncclrule_nodes(const topo_t *t, const int32_t *ranks, int p) {
    int g = topo_params_c(t)->group_size, G = 0;
    if (ranks == NULL) return p / (g > 0 ? g : p);
    if (g <= 0) return 1;
    for (int i = 0; i < p; i++) {
        int j = 0;
        while (j < i && ranks[j] / g != ranks[i] / g) j++;
        G += j == i;                           /* the first of its node */
    }
    return G;
}


/* Whether some GPU of the run both writes staged data to host memory and
 * reads staged data from it: p2p off, two of the call's ranks share a host,
 * and a rank both receives and sends (every collective but a two-rank
 * broadcast or reduce, whose one flow goes one way). */
static int staged_duplex(const topo_t *t, const ncclrule_call_t *c, int p) {
    const topo_params_t *tp = topo_params_c(t);
    if (tp->p2p || tp->stage_bw <= 0 || p < 2 || ncclrule_nodes(t, c->ranks, c->p) >= c->p) return 0;
    return p > 2 || (c->coll != COLL_BROADCAST && c->coll != COLL_REDUCE);
}

/* What a rank's proxy thread spends on one network message, one after
 * another: under NCCL's socket transport (topo_params_t.socket;
 * src/transport/net_socket.cc) its send() or recv() through the kernel's
 * TCP stack (NCCL_SOCKET_NTHREADS 0: no helper threads), socket_lat; on
 * RDMA where the network's library matches tags in software (sw_match:
 * libfabric's CXI provider, FI_CXI_RX_MATCH_MODE=software) the match, made
 * in the provider's progress call the proxy drives, match_lat; the socket
 * transport never goes through libfabric. 0: none. */
static double proxy_message(const topo_t *t) {
    const topo_params_t *tp = topo_params_c(t);
    if (tp->socket) return tp->socket_threads == 0 ? tp->socket_lat : 0;
    return tp->sw_match ? tp->match_lat : 0;
}

/* What the proxy thread spends copying inline sends out of GPU memory, one
 * after another. libfabric's CXI provider sends a payload of at most
 * inline_max bytes (C_MAX_IDC_PAYLOAD_UNR, 192) inline in the command the
 * CPU writes (an IDC), so one in GPU memory is first copied out, inline_lat
 * each. NCCL's network buffers are in GPU memory under GPUDirect RDMA for
 * Simple (and LL128, whose sends are whole slices of 2 KiB, never inline:
 * prims_ll128.h), LL's in host memory (src/transport/net.cc; a p2p
 * connection's are Simple's); so: the busiest rank's Simple sends to other
 * nodes of at most inline_max bytes. Not under the socket transport, which
 * never goes through libfabric. */
static double proxy_inline(const topo_t *t, const ncclrule_call_t *c, const sched_t *s, proto_t pr) {
    const topo_params_t *tp = topo_params_c(t);
    double lat = topo_inline_lat(t);
    if (lat <= 0 || pr != PROTO_SIMPLE) return 0;
    return (double)sockmsgs_small_sends(s, tp->group_size, c->ranks, (uint64_t)tp->inline_max) * lat;
}

/* What a rank's proxy thread spends on the operations themselves, one after
 * another: NCCL gives its proxy one operation a channel, peer and direction
 * of a call (ncclProxyOp, src/proxy.cc), whatever its steps, and each is
 * posted, tracked and retired by the proxy, which on RDMA drives the
 * network library's requests for it (libfabric's CXI provider for Polaris,
 * op_lat; 0: none). An all-to-all's 2 (p - g) connections a rank pay it;
 * a ring's or tree's few, almost nothing. Not under the socket transport,
 * whose cost is its messages' (proxy_message). */
static double proxy_ops(const topo_t *t, const ncclrule_call_t *c, const sched_t *s) {
    double lat = topo_op_lat(t);
    return lat > 0 ? (double)sockmsgs_connections(s, topo_params_c(t)->group_size, c->ranks) * lat : 0;
}

/* The call takes at least the busiest thread's messages x that cost and
 * its operations' cost (each busiest on its own: alike for the symmetric
 * schedules that pay them, an upper bound otherwise). The links carry the
 * bytes (at the streams' rate under sockets: topo.c apply_socket); this is
 * the proxy's own work, which a pipeline does not hide: an all-to-all's
 * 2 (p - g) messages and operations a rank. */
static double proxy_floor(const topo_t *t, const ncclrule_call_t *c, const sched_t *s, const proto_cost_t *pc) {
    double msg = proxy_message(t), ops = proxy_ops(t, c, s);
    uint64_t m = msg > 0 ? sockmsgs_busiest(s, topo_params_c(t)->group_size, c->ranks) : 0;
    return m || ops > 0 ? pc->base_latency + (double)m * msg + ops : 0;
}

/* The launches of the further GPUs one host thread drives in turn
 * (nccl-tests -g N: N launches, one after the other). */
static double launches(const topo_t *t, const ncclrule_call_t *c) {
    return c->gpus_per_thread > 1 ? (c->gpus_per_thread - 1) * topo_params_c(t)->launch : 0;
}

/* What the GPU and the host add to the links' time, as ceilings on bus
 * bandwidth the links do not see: the protocol's (NCCL's llMaxBws: the GPU's
 * flag polling), the library kernel's where a rule runs the call (MSCCL's
 * thread blocks) and, with P2P off, the staging's (NCCL's SHM transport: SMs
 * copying through host memory both ways at stage_bw, of which the protocol
 * carries its efficiency): the least time they allow (0: none). */
static double gpu_and_host(const topo_t *t, const ncclrule_call_t *c, const proto_cost_t *pc, int p) {
    double busbytes = (double)c->bytes * run_busbw_factor(c->coll, p);   /* the bytes each GPU's kernel moves */
    const double caps[2] = {pc->max_busbw, c->lib_busbw};   /* the protocol's ceiling, the library kernel's */
    double time = 0;
    for (int i = 0; i < 2 && p > 1; i++)
        if (caps[i] > 0 && pc->base_latency + busbytes / caps[i] > time) time = pc->base_latency + busbytes / caps[i];
    if (staged_duplex(t, c, p)) {
        const topo_params_t *tp = topo_params_c(t);
        int steps = (c->coll == COLL_ALLREDUCE ? 2 : 1) * (p - 1);
        double eff = pc->efficiency > 0 ? pc->efficiency : 1;    /* no protocol: the copies' own rate */
        double floor = pc->base_latency + busbytes / (tp->stage_bw * eff);
        if (pc->efficiency == 1 && pc->base_latency > 0) floor += steps * tp->stage_lat;   /* Simple's flag */
        if (floor > time) time = floor;
    }
    return time;
}

/* NCCL's network proxy reads both flags of every LL line of a step before it
 * posts the step (src/transport/net.cc). A channel's first 512 lines (4 KiB
 * of data) land at once and the scan follows the last; beyond, the proxy's
 * passes keep up with the rounds. So each send across nodes on the critical
 * path waits ll_scan x min(a channel's share, 4 KiB) / 8: a tree's up and
 * down each level of the node tree, every step of a ring. */
static double proxy_scan(const topo_t *t, const ncclrule_call_t *c, proto_t pr) {
    const topo_params_t *tp = topo_params_c(t);
    if (tp->ll_scan <= 0 || pr != PROTO_LL || c->algo->nccl == NULL) return 0;
    int p = c->p, G = ncclrule_nodes(t, c->ranks, c->p);
    if (G < 2) return 0;
    int ring = strcmp(c->algo->nccl, "ring") == 0, tree = strcmp(c->algo->nccl, "tree") == 0, both = c->coll == COLL_ALLREDUCE;
    if (!ring && !tree) return 0;
    double sends = ring ? (both ? 2.0 : 1.0) * (p - 1) : (both ? 2.0 : 1.0) * ceil(log2((double)G));
    double share = (double)c->bytes / (c->channels > 0 ? c->channels : 1) / (ring ? p : 1);
    return sends * (share < 4096 ? share : 4096) / 8 * tp->ll_scan;
}

/* The ranks whose collective each GPU's kernel runs, for its ceilings: all
 * of them, but where the fabric reduces across nodes (SHARP: algo_t.fabric)
 * its node's only, whatever the node count. */
static int kernel_ranks(const topo_t *t, const algo_t *a, int p) {
    int g = topo_params_c(t)->group_size;
    return a && a->fabric && g > 0 && g < p ? g : p;
}

/* o's time: the links' (closed form or engine) and what the GPU and host
 * add, the same for both: the ceilings, the proxy thread's floor (the socket
 * transport's messages, RDMA's operations and software matching) where it
 * is slower still, the proxy's LL scan, the launches of the further
 * GPUs one thread drives. */
void ncclrule_host_side(const topo_t *t, const run_req_t *q, const sched_t *s, const proto_cost_t *pc, proto_t pr,
                        double links, run_out_t *o) {
    ncclrule_call_t c = {.coll = q->coll, .bytes = q->bytes, .p = o->ranks, .algo = o->algo, .channels = o->channels,
                         .lib_busbw = q->lib_busbw, .gpus_per_thread = q->gpus_per_thread};
    ncclrule_host_t h;
    ncclrule_host_terms(t, &c, s, pc, pr, &h);
    double capped = links > h.ceiling ? links : h.ceiling;
    o->links_s = links;
    o->socket_s = h.proxy_floor > capped ? h.proxy_floor - capped : 0;
    o->proxy_s = h.proxy;
    o->launch_s = h.launch;
    o->time_s = (h.proxy_floor > capped ? h.proxy_floor : capped) + o->launch_s + o->proxy_s;
}

void ncclrule_host_terms(const topo_t *t, const ncclrule_call_t *c, const sched_t *s, const proto_cost_t *pc, proto_t pr,
                         ncclrule_host_t *h) {
    h->ceiling = gpu_and_host(t, c, pc, kernel_ranks(t, c->algo, c->p));
    h->proxy_floor = proxy_floor(t, c, s, pc);
    h->proxy = proxy_scan(t, c, pr) + proxy_inline(t, c, s, pr);
    h->launch = launches(t, c);
    h->floor = h->proxy_floor > h->ceiling ? h->proxy_floor : h->ceiling;
    h->tail = h->proxy + h->launch;
}

/* The channels NCCL runs a small call on (its enqueue; docs/reference/nccl.md,
 * runtime): a ring or tree drops channels while n < nc x threads x threshold,
 * the threshold per thread 8 B for LL (x p for a ring's) and LL128, 64 B for
 * Simple; threads 512 (LL128 640). Only when no --channels was given; where
 * NCCL said what it ran on (a rule from a log's TUNING lines: said > 0), that. */
int ncclrule_channels(const algo_t *a, proto_t pr, int p, uint64_t n, int nc, int said) {
    if (pr == PROTO_NONE || !algo_nccl_ring_or_tree(a)) return nc;
    if (said > 0) return said;
    uint64_t nt = pr == PROTO_LL128 ? 640 : 512, thr = pr == PROTO_SIMPLE ? 64 : 8;
    if (pr == PROTO_LL && strcmp(a->nccl, "ring") == 0) thr *= (uint64_t)p;
    while (nc > 1 && n < (uint64_t)nc * nt * thr) nc--;
    return nc;
}

/* The steps NCCL cuts an NVLSTree all-reduce into (enqueue.cc's chunk size
 * for NVLS_TREE, nvls.cc): a loop moves a chunk per channel per head, on
 * NVLS's channels (view_nvls: 16 on Hopper, 24 or 32 on Blackwell by version,
 * domains and NICs; `plan` prints the same) and the node's heads (a GPU with
 * its NIC, at most 32: nvlstree_heads); the chunk is NVLSTree's largest (view_nvls: 128 KiB, 64 KiB from 4
 * nodes on Hopper; Blackwell's by its NICs from 2.30.3), 64 KiB below four
 * loops of 128 KiB, 32 KiB below one loop of 64 KiB. A step of nvlstree is
 * a loop, 16 chunks a GPU: the fill of 16 channels' chunks each at a
 * sixteenth of the link. The 2 x 8 H200 log follows it (8 MiB-512 MiB
 * within 12 %, 16 MiB 21 %; nvlstree's own steps of 1 MiB / g left 4-128
 * MiB 17-47 % fast). */
static int nccl_nvlstree_loops(topo_t *t, int p, int g, int heads, uint64_t n) {
    const topo_params_t *tp = topo_params_c(t);
    tuning_machine_t m = {.nranks = p, .nnodes = p / g, .arch = tp->arch >= 0 ? (arch_t)tp->arch : ARCH_AMPERE};
    view_nvls_t x;
    view_nvls(t, &m, &x);
    uint64_t ops = (uint64_t)(x.channels > 0 ? x.channels : 16) * (uint64_t)nvlstree_heads(heads > 0 ? heads : g);
    uint64_t chunk = x.tree_chunk > 0 ? (uint64_t)x.tree_chunk : p / g >= 4 ? 65536 : 131072;
    if (n < 4 * ops * chunk && chunk > 65536) chunk = 65536;
    if (n < ops * chunk && chunk > 32768) chunk = 32768;
    uint64_t k = (n + ops * chunk - 1) / (ops * chunk), most = (1u << 20) / (uint64_t)g;
    return (int)(k < 1 ? 1 : k > most ? most : k);
}

/* NCCL's tree on LL moves a step's buffer, 32 KiB of data, per channel
 * (enqueue.cc: LL's chunk is half its 64 KiB step); nccltree's C channels
 * of two trees are NCCL's 2C: k = n / (2C x 32 KiB), where its own steps
 * of 1 MiB left a 1 MiB call unpipelined (MI355X 512 KiB-4 MiB 12-37 %
 * slow, now -a nccl 12.8 -> 10.0 %; LL128's and Simple's tree chunks did
 * not help: docs/decisions/nccl-sizing.md). */
#define NCCL_LL_CHUNK 32768
static int nccl_tree_ll_steps(int C, uint64_t n) {
    uint64_t per = 2 * (uint64_t)(C > 0 ? C : 1) * NCCL_LL_CHUNK, k = (n + per - 1) / per;
    return (int)(k < 1 ? 1 : k > 4096 ? 4096 : k);
}

/* What a hop inside a node passes on before the next hop may start, as
 * NCCL runs row a under protocol pr (algo_opts_t.fill). LL's lines carry
 * their own flags, so its tree forwards each loop of its 512 threads (8 B of
 * data each: 4 KiB) as it comes, not the 32 KiB step; across nodes the
 * proxy sends whole steps (proxy_scan). Measured with the proxy's scan:
 * MI355X's middle third held out 16.8 -> 5.1 %, -a nccl 9.8 -> 6.2 %; 2 x 8
 * A100 middle 10.4 -> 8.3 %; the H200s' middle 8.5 -> 9.6 and 10.6 -> 11.4 %
 * (docs/decisions/protocols.md). */
#define NCCL_LL_LOOP 4096
uint64_t ncclrule_fill(const algo_t *a, proto_t pr) {
    return a == &algo_allreduce_nccltree && pr == PROTO_LL ? NCCL_LL_LOOP : 0;
}

/* The steps -a nccl cuts row a into as NCCL does, under protocol pr on C
 * channels; 0: the row's own pipeline. */
int ncclrule_pipeline(topo_t *t, const algo_t *a, proto_t pr, int p, int g, int heads, int C, uint64_t n) {
    if (a == &algo_allreduce_nccltree && pr == PROTO_LL) return nccl_tree_ll_steps(C, n);
    if (a == &algo_allreduce_nvlstree && g >= 2 && p % g == 0) return nccl_nvlstree_loops(t, p, g, heads, n);
    return 0;
}

/* -a nccl where the machine's library has a rule for this call (RCCL's
 * MSCCL files): that algorithm and protocol, as the library runs it. A row
 * sized as NCCL runs it (a calibration's pinned plan) that is the rule's
 * algorithm and protocol runs on the library's kernel too: its ceiling
 * holds (not the rule returned: nothing else changes). A rule in NCCL's
 * names (a log's TUNING lines) keeps -a nccl's choice among baton's rows of
 * that algorithm (NCCL's tree: whichever of nccltree, dbtree and bintree
 * -a nccl would pick), on the protocol it names. */
const topo_lib_rule_t *ncclrule_library(const topo_t *t, run_req_t *q) {
    int proto = q->proto == RUN_PROTO_AUTO ? -1 : q->proto, nccl = strcmp(q->algo, "nccl") == 0;
    const topo_lib_rule_t *r = nccl || q->cut == RUN_CUT_SIZED ? topo_library_rule(t, q->coll, topo_whole_ranks(t), q->bytes, proto, !q->unsaid) : NULL;
    if (r == NULL) return NULL;
    if (!nccl) {
        if (!r->nccl && strcmp(r->algo, q->algo) == 0 && r->proto == proto) q->lib_busbw = r->max_busbw;
        return NULL;
    }
    const algo_t *a = r->nccl ? NULL : algo_find(q->coll, r->algo);
    if (r->nccl) q->nccl_algo = r->algo;
    else q->algo = r->algo, q->nccl_rules = 0;
    q->proto = r->proto;
    q->lib_busbw = r->max_busbw;
    if (a && a->nccl) q->cut = RUN_CUT_SIZED;     /* a row NCCL runs (a plan read off a log): sized as NCCL runs it */
    return r;
}

void ncclrule_env(const topo_t *t, run_req_t *q) {
    const topo_params_t *tp = topo_params_c(t);
    unsigned m;
    if (strcmp(q->algo, "nccl") != 0) return;            /* -a auto and a named row are baton's, not NCCL's */
    if (!q->nccl_algos && tp->nccl_env[0][0] && algo_nccl_env_mask(tp->nccl_env[0], q->coll, 1, &m) == 0) q->nccl_algos = m;
    if (!q->protos && tp->nccl_env[1][0] && algo_nccl_env_mask(tp->nccl_env[1], q->coll, 0, &m) == 0) q->protos = m;
}
