/* nvlstree.c - NCCL's NVLSTree all-reduce across nodes: in-switch reduction
 * inside each node (NVLink SHARP), a pipelined chain between the nodes.
 *
 * Each node's NVSwitch adds what its g GPUs send it; the node sum of block b
 * (of g blocks) goes to the node's GPU b, which reduces it along a chain of
 * the nodes' GPU b (node G-1 up to node 0, then the total back down), and
 * hands the total to its switch, which multicasts it to the node's GPUs.
 * Each GPU moves n bytes up its NVLink and n down, and only n/g over its
 * NIC each way: the network carries what a ring would carry divided by
 * about 2(p-1)/p g / (2(G-1)/G), so two 8-GPU nodes reach more bus
 * bandwidth than any ring over their NICs.
 *
 * Streams of GPU r (node N, local j), per pipeline step i, block b:
 *   role 0  send (b, i) to switch N (its role j), every b
 *   role 1  recv node sum (j, i) from the switch; + recv from node N+1's
 *           role 1; send up to node N-1's role 1 (node 0: down to node 1's
 *           role 2, then to the switch's multicast role)
 *   role 2  recv the total (j, i) from node N-1; send on to node N+1; send
 *           to the switch's multicast role
 *   role 3  recv the total (b, i) from the switch's multicast, every b
 * --channels C runs C such sets of streams on interleaved steps.
 * Switch N (helper p + N): role c < g adds GPU c's chunks, then passes a
 * token on (role g-1: sends the node sum to its GPU b); role g takes each
 * total from its owner and multicasts it to the node's g GPUs.
 *
 *   node 1:  gpu ->sw1 (+) -> gpu b --net--> gpu b' (node 0)
 *   node 0:  gpu ->sw0 (+) -> gpu b' (+) ; total -> sw0 -> all of node 0
 *                                         \--net--> gpu b -> sw1 -> node 1
 *
 * Cost (approximate, nvlsnode_cost): the node's half at both ends of the
 * pipeline, 2(a_s + g u b_s) + 2(a_s + u b_s), the chain up and back down,
 * 2(G - 1)(a + u b), then k - 1 steps of the busier of the NIC (u b) and the
 * GPU's NVLink ((g + 1) u b_s: its g chunks up and its block's total up to
 * the multicast, the g totals down and its block's node sum), a step's
 * latency hidden behind the data in flight on C channels; u = n/gk, b_s a
 * GPU's link to its switch at the switch's efficiency
 * (cost_model_t.helper_beta). On a machine (peer_slots) b is a whole step's
 * busiest link: 8 GPUs behind one NIC take 8 blocks' time. Within 10 % of
 * the simulator on 2 x 8 H100 from 64 KiB to 1 GiB; it charged the whole
 * fill at the busier side's step and NVLink n, not n (g + 1)/g, and was 50 %
 * slow at 64 KiB and 11 % fast at 1 GiB there.
 * Requires: reducing switches, one per node (declared in node order), groups
 * of g = group_size >= 2 ranks, G >= 2 nodes (one node: nvls); --pipeline K. */
#include "algo.h"

#include "../models/proto.h"
#include "nvls_node.h"

/* Schedule parameters (nvls_node.h): param[0] = g (GPUs per node), param[1]
 * = k (steps), param[2] = C (channels). Channel group cc runs steps cc,
 * cc + C, ...; its streams are cc * W + role (W = max(4, g + 1) roles: a
 * GPU's 4, a switch's g + 1), so the groups' latencies overlap as NCCL's
 * channels' do. */
static int gpn(const sched_t *s) { return (int)s->param[0]; }
static int width(const sched_t *s) { return gpn(s) + 1 > 4 ? gpn(s) + 1 : 4; }
static uint32_t steps_in(const sched_t *s, int cc) { return nvlsnode_steps(s, cc); }
static uint32_t chunk(const sched_t *s, int b, int cc, uint32_t t) { return nvlsnode_chunk(s, b, cc, t); }
static sched_op_t on(const sched_t *s, int cc, sched_op_t op, int recv_role, int send_role) {
    return nvlsnode_on(width(s), cc, op, recv_role, send_role);
}

/* role 1: node sum in, reduce up the chain; node 0 turns it around. */
static int chain_up_op(const sched_t *s, int r, int cc, uint32_t pc, sched_op_t *op) {
    int g = gpn(s), G = s->nranks / g, N = r / g, j = r % g, sw = s->nranks + N;
    int tail = N == G - 1, root = N == 0;
    uint32_t per = 1 + !tail + 1 + root, t = pc / per, q = pc % per;
    if (t >= steps_in(s, cc)) return 0;
    uint32_t x = chunk(s, j, cc, t);
    if (q == 0) { *op = on(s, cc, op_recv(sw, x, 1, RECV_COPY), g - 1, -1); return 1; }
    if (!tail && q == 1) { *op = on(s, cc, op_recv(r + g, x, 1, RECV_REDUCE), 1, -1); return 1; }
    q -= 1 + !tail;
    if (!root) *op = on(s, cc, op_send(r - g, x, 1), -1, 1);
    else if (q == 0) *op = on(s, cc, op_send(r + g, x, 1), -1, 2);
    else *op = on(s, cc, op_send(sw, x, 1), -1, g);
    return 1;
}

/* role 2: the total down the chain, then to the switch's multicast. */
static int chain_down_op(const sched_t *s, int r, int cc, uint32_t pc, sched_op_t *op) {
    int g = gpn(s), G = s->nranks / g, N = r / g, j = r % g, sw = s->nranks + N;
    if (N == 0) return 0;
    int tail = N == G - 1;
    uint32_t per = 2 + !tail, t = pc / per, q = pc % per, x = chunk(s, j, cc, t);
    if (t >= steps_in(s, cc)) return 0;
    if (q == 0) *op = on(s, cc, op_recv(r - g, x, 1, RECV_COPY), N == 1 ? 1 : 2, -1);
    else if (q == 1 && !tail) *op = on(s, cc, op_send(r + g, x, 1), -1, 2);
    else *op = on(s, cc, op_send(sw, x, 1), -1, g);
    return 1;
}

static int nvlstree_prog(const sched_t *s, int r, int c, uint32_t pc, sched_op_t *op) {
    int g = gpn(s), w = width(s), cc = c / w, role = c % w;
    if (r >= s->nranks) return role < g ? nvlsnode_switch_add(s, w, r - s->nranks, role, cc, pc, op)
                             : role == g ? nvlsnode_switch_mcast(s, w, r - s->nranks, 1, 2, cc, pc, op) : 0;
    switch (role) {
    case 0: return nvlsnode_up(s, w, r, cc, pc, op);
    case 1: return chain_up_op(s, r, cc, pc, op);
    case 2: return chain_down_op(s, r, cc, pc, op);
    case 3: return nvlsnode_mcast_in(s, w, r, cc, pc, op);
    default: return 0;
    }
}

static int nvlstree_build(sched_t *s, const algo_opts_t *o, baton_err_t *e) {
    int p = s->nranks, g = o && o->group > 0 ? o->group : p;
    if (g < 2 || p % g)
        return err_set(e, BATON_EUNSUP, "nvlstree needs nodes of 2 or more GPUs (group_size or --group dividing %d)", p);
    if (p / g < 2) return err_set(e, BATON_EUNSUP, "nvlstree runs across nodes; on one node use nvls");
    uint64_t k = algo_pipeline_chunks(s->bytes, o), C = o && o->channels > 0 ? (uint64_t)o->channels : 1;
    if (k * (uint64_t)g > 1u << 20) return err_set(e, BATON_EUNSUP, "--pipeline %llu: at most 2^20 chunks in all", (unsigned long long)k);
    if (C > k) C = k;
    s->param[0] = g;
    s->param[1] = (int64_t)k;
    s->param[2] = (int64_t)C;
    s->helpers = p / g;
    s->nchannels = (int)C * (g + 1 > 4 ? g + 1 : 4);
    sched_layout(s, (uint32_t)g, (uint32_t)k);
    s->prog = nvlstree_prog;
    return 0;
}

static double nvlstree_cost(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o) {
    int g = o && o->group > 0 ? o->group : p, G = g > 0 ? p / g : 1;
    uint64_t k = algo_pipeline_chunks(n, o), C = o && o->channels > 0 ? (uint64_t)o->channels : 1;
    if (g < 1) return 0;
    if (C > k) C = k;
    return nvlsnode_cost(m, g, k, C, n, 2.0 * (G - 1));      /* up the chain and back down */
}

/* The network part of a steady step (algo.h, peer_slots): each GPU sends
 * its block up the chain (slot 0; node 0 turns it down) and the total down
 * (slot 1), whole blocks, so the closed form's beta is the busiest link's
 * time for a step: eight GPUs behind one NIC share it. */
static int chain_peer(const sched_t *s, int c, int r) {
    int g = gpn(s), G = s->nranks / g, N = r / g;
    if (c == 0) return N > 0 ? r - g : -1;
    return N < G - 1 ? r + g : -1;
}

static int chain_slots(const sched_t *s, int *nchannels) {
    (void)s;
    *nchannels = 1;
    return 2;
}

const algo_t algo_allreduce_nvlstree = {
    .coll = COLL_ALLREDUCE, .name = "nvlstree", .build = nvlstree_build, .cost = nvlstree_cost,
    .cost_text = "approximately 2(a_s + g u b_s) + 2(a_s + u b_s) + 2(G-1)(a + u b) + (k - 1) max(w, a/C), u = n/gk, "
                 "w = max(u b, (g+1) u b_s): G nodes of g GPUs",
    .requires = "one switch with `reduce: true` per node; nodes of g >= 2 GPUs, 2 or more of them; --pipeline K",
    .port_model = "approximation (multi-port; each node's switch links assumed to carry its NICs' traffic)",
    .idea = "NCCL's NVLSTree: add in each node's switch, chain the node sums across nodes, multicast back",
    .approx = 1, .helpers = 1, .nccl = "nvls_tree", .nccl_protos = 1u << PROTO_SIMPLE,
    .peer = chain_peer, .peer_slots = chain_slots,
};
