/* nvlstree.c - NCCL's NVLSTree all-reduce across nodes: in-switch reduction
 * inside each node (NVLink SHARP), a pipelined double binary tree between
 * the nodes.
 *
 * Each node's NVSwitch adds what its g GPUs send it; the node sum of block b
 * (of B blocks) goes to the node's GPU b, its head, which reduces it up a
 * binary tree of the nodes' GPU b and broadcasts the total back down, and
 * hands the total to its switch, which multicasts it to the node's GPUs. B
 * is NCCL's nHeads, min(g, NCCL_MAX_NVLS_ARITY 32) (search.cc: NVLS graphs
 * have at most that many channels, a head each): on a 72-GPU NVLink domain
 * 32 GPUs and their NICs carry the tree, and the other 40 only send up and
 * take the multicast. As NCCL's connectNvls: the tree over nodes is its
 * double binary tree (ncclGetDtree, algo_dtree), channel group cc (two
 * unless channels are named) on tree cc % 2, so a node is interior in one
 * tree at most. Each GPU moves n (B + 1)/B bytes each way on its NVLink (n
 * for one that is not a head) and a head about n/B over its NIC each way:
 * two 8-GPU nodes pass the bus bandwidth any ring over their NICs can
 * carry.
 *
 * Streams of GPU r (node N, local j), per pipeline step i of channel group
 * cc, in tree cc % 2 (parent P, children D0, D1 of N); roles 1, 2 and 4
 * only on heads (j < B):
 *   role 0  send (b, i) to switch N (its role j), every b
 *   role 1  recv node sum (j, i) from the switch; [two children: a token to
 *           role 4]; + recv from D0's role 1; [+ the token back from role
 *           4]; send up to P's role 1 (role 4 if N is P's second child), or
 *           at the root down to each child's role 2, then to the switch's
 *           multicast role
 *   role 2  (not the root) recv the total (j, i) from P (P's role 1 if P is
 *           the root, else its role 2); send to each child's role 2; send to
 *           the switch's multicast role
 *   role 3  recv the total (b, i) from the switch's multicast, every b
 *   role 4  (two children) wait for role 1's token (the node sum is in),
 *           + recv from D1's role 1, a token back to role 1
 * Switch N (helper p + N): role c < g adds GPU c's chunks, then passes a
 * token on (role g-1: sends the node sum to its GPU b); role g takes each
 * total from its owner and multicasts it to the node's g GPUs.
 *
 *   node 1:  gpu ->sw1 (+) -> gpu b --net--> gpu b' (node 0, the root)
 *   node 0:  gpu ->sw0 (+) -> gpu b' (+) ; total -> sw0 -> all of node 0
 *                                         \--net--> gpu b -> sw1 -> node 1
 *
 * Cost (approximate, nvlsnode_cost): the node's half at both ends of the
 * pipeline, 2(a_s + B u b_s) + 2(a_s + u b_s), up the tree and back down,
 * 2h(a + u b) for the taller tree's height h (a chain of the G nodes took
 * 2(G - 1)), then k - 1 steps of the busier of the NIC (u b) and the GPU's
 * NVLink ((B + 1) u b_s: its B blocks up and its block's total up to the
 * multicast, the B totals down and its block's node sum), a step's latency
 * hidden behind the data in flight on C channels; u = n/Bk, b_s a GPU's link
 * to its switch at the switch's efficiency (cost_model_t.helper_beta). On a
 * machine (peer_slots) b is the busiest link of a step of each tree, halved
 * (the channel groups alternate): 8 GPUs behind one NIC take 8 blocks' time.
 * Within 10 % of the simulator on 2 x 8 H100 from 64 KiB to 256 MiB.
 * Requires: reducing switches, one per node (declared in node order), groups
 * of g = group_size >= 2 ranks, G >= 2 nodes (one node: nvls); --pipeline K. */
#include "algo.h"

#include "../models/proto.h"
#include "nvls_node.h"

/* Schedule parameters (nvls_node.h): param[0] = g (GPUs per node), param[1]
 * = k (steps), param[2] = C (channels). Channel group cc runs steps cc,
 * cc + C, ...; its streams are cc * W + role (W = max(5, g + 1) roles: a
 * GPU's 5, a switch's g + 1), so the groups' latencies overlap as NCCL's
 * channels' do. */
static int gpn(const sched_t *s) { return (int)s->param[0]; }
static int is_head(const sched_t *s, int r) { return r % gpn(s) < (int)s->nblocks; }
static int width(const sched_t *s) { return gpn(s) + 1 > 5 ? gpn(s) + 1 : 5; }
static uint32_t steps_in(const sched_t *s, int cc) { return nvlsnode_steps(s, cc); }
static uint32_t chunk(const sched_t *s, int b, int cc, uint32_t t) { return nvlsnode_chunk(s, b, cc, t); }
static sched_op_t on(const sched_t *s, int cc, sched_op_t op, int recv_role, int send_role) {
    return nvlsnode_on(width(s), cc, op, recv_role, send_role);
}

/* Node N's place in channel group cc's tree. */
typedef struct { int up, down[2], nkids, second; } place_t;

static place_t place(const sched_t *s, int N, int cc) {
    int G = s->nranks / gpn(s), pu, pd[2];
    place_t x;
    algo_dtree(G, N, cc % 2, &x.up, x.down);
    x.nkids = (x.down[0] >= 0) + (x.down[1] >= 0);
    x.second = 0;
    if (x.up >= 0) algo_dtree(G, x.up, cc % 2, &pu, pd), x.second = pd[1] == N;
    return x;
}

static int is_root(const sched_t *s, int N, int cc) { return place(s, N, cc).up < 0; }

/* Channel groups: as many as asked, else the machine's count (its rings,
 * or its file's channels: channels_machine), at least two. NCCL runs
 * NVLSTree on all its NVLS channels (16-32: view_nvls) and alternates them
 * between the double binary tree's two trees (connect.cc, connectNvls:
 * treeUp[c % 2]), so every call uses both: one group ran tree 0 alone and
 * loaded an interior node's head NICs with 3n/B where NCCL's give at most
 * 2n/B. More groups are more loops in flight: at 4 and 5 nodes the
 * simulator wants cluster-h100's 8 (two put it 20-33 % above the closed
 * form, machines-2026.md). */
static uint64_t groups(const algo_opts_t *o, uint64_t k) {
    uint64_t C = o && o->channels > 0 ? (uint64_t)o->channels : 2;
    if (o && o->channels_machine && C < 2) C = 2;
    return C > k ? k : C;
}

/* role 1: node sum in, the children's parts added, up to the parent; the
 * root turns the total around. */
static int tree_up_op(const sched_t *s, int r, int cc, uint32_t pc, sched_op_t *op) {
    int g = gpn(s), N = r / g, j = r % g, sw = s->nranks + N;
    if (!is_head(s, r)) return 0;
    place_t x = place(s, N, cc);
    int root = x.up < 0, nc = x.nkids;
    uint32_t adds = nc == 2 ? 3 : (uint32_t)nc, per = 1 + adds + (root ? (uint32_t)nc + 1 : 1);
    uint32_t t = pc / per, q = pc % per;
    if (t >= steps_in(s, cc)) return 0;
    uint32_t c = chunk(s, j, cc, t);
    if (q == 0) { *op = on(s, cc, op_recv(sw, c, 1, RECV_COPY), g - 1, -1); return 1; }
    if (--q < adds) {
        if (nc == 2 && q == 0) *op = on(s, cc, op_send(r, c, 0), -1, 4);              /* the sum is in: go ahead */
        else if (nc == 2 && q == 2) *op = on(s, cc, op_recv(r, c, 0, RECV_COPY), 4, -1);
        else *op = on(s, cc, op_recv(x.down[0] * g + j, c, 1, RECV_REDUCE), 1, -1);
        return 1;
    }
    q -= adds;
    if (!root) *op = on(s, cc, op_send(x.up * g + j, c, 1), -1, x.second ? 4 : 1);
    else if (q < (uint32_t)nc) *op = on(s, cc, op_send(x.down[q] * g + j, c, 1), -1, 2);
    else *op = on(s, cc, op_send(sw, c, 1), -1, g);
    return 1;
}

/* role 4, with two children: the second child's part, added once the node
 * sum has been copied in. */
static int tree_side_op(const sched_t *s, int r, int cc, uint32_t pc, sched_op_t *op) {
    int g = gpn(s), N = r / g, j = r % g;
    if (!is_head(s, r)) return 0;
    place_t x = place(s, N, cc);
    uint32_t t = pc / 3, q = pc % 3;
    if (x.nkids < 2 || t >= steps_in(s, cc)) return 0;
    uint32_t c = chunk(s, j, cc, t);
    if (q == 0) *op = on(s, cc, op_recv(r, c, 0, RECV_COPY), 1, -1);
    else if (q == 1) *op = on(s, cc, op_recv(x.down[1] * g + j, c, 1, RECV_REDUCE), 1, -1);
    else *op = on(s, cc, op_send(r, c, 0), -1, 1);
    return 1;
}

/* role 2: the total from the parent, on to the children and the switch's multicast. */
static int tree_down_op(const sched_t *s, int r, int cc, uint32_t pc, sched_op_t *op) {
    int g = gpn(s), N = r / g, j = r % g, sw = s->nranks + N;
    if (!is_head(s, r)) return 0;
    place_t x = place(s, N, cc);
    if (x.up < 0) return 0;
    uint32_t per = 2 + (uint32_t)x.nkids, t = pc / per, q = pc % per;
    if (t >= steps_in(s, cc)) return 0;
    uint32_t c = chunk(s, j, cc, t);
    if (q == 0) *op = on(s, cc, op_recv(x.up * g + j, c, 1, RECV_COPY), is_root(s, x.up, cc) ? 1 : 2, -1);
    else if (q <= (uint32_t)x.nkids) *op = on(s, cc, op_send(x.down[q - 1] * g + j, c, 1), -1, 2);
    else *op = on(s, cc, op_send(sw, c, 1), -1, g);
    return 1;
}

static int nvlstree_prog(const sched_t *s, int r, int c, uint32_t pc, sched_op_t *op) {
    int g = gpn(s), w = width(s), cc = c / w, role = c % w;
    if (r >= s->nranks) {
        int N = r - s->nranks, from = is_root(s, N, cc) ? 1 : 2;      /* who sends the switch its totals */
        return role < g ? nvlsnode_switch_add(s, w, N, role, cc, pc, op)
             : role == g ? nvlsnode_switch_mcast(s, w, N, from, from, cc, pc, op) : 0;
    }
    switch (role) {
    case 0: return nvlsnode_up(s, w, r, cc, pc, op);
    case 1: return tree_up_op(s, r, cc, pc, op);
    case 2: return tree_down_op(s, r, cc, pc, op);
    case 3: return nvlsnode_mcast_in(s, w, r, cc, pc, op);
    case 4: return tree_side_op(s, r, cc, pc, op);
    default: return 0;
    }
}

static int nvlstree_build(sched_t *s, const algo_opts_t *o, baton_err_t *e) {
    int p = s->nranks, g = o && o->group > 0 ? o->group : p;
    if (g < 2 || p % g)
        return err_set(e, BATON_EUNSUP, "nvlstree needs nodes of 2 or more GPUs (group_size or --group dividing %d)", p);
    if (p / g < 2) return err_set(e, BATON_EUNSUP, "nvlstree runs across nodes; on one node use nvls");
    uint64_t k = algo_pipeline_chunks(s->bytes, o), C = groups(o, k);
    int B = nvlstree_heads(g);
    if (k * (uint64_t)B > 1u << 20) return err_set(e, BATON_EUNSUP, "--pipeline %llu: at most 2^20 chunks in all", (unsigned long long)k);
    s->param[0] = g;
    s->param[1] = (int64_t)k;
    s->param[2] = (int64_t)C;
    s->helpers = p / g;
    s->groups = (int)C;
    s->nchannels = (int)C * width(s);
    sched_layout(s, (uint32_t)B, (uint32_t)k);
    s->prog = nvlstree_prog;
    return 0;
}

static double nvlstree_cost(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o) {
    int g;
    uint64_t k, C;
    nvlsnode_shape(p, n, o, &g, &k, &C);
    if (g < 1) return 0;
    C = groups(o, k);
    return nvlsnode_cost(m, nvlstree_heads(g), k, C, n, 2.0 * algo_dtree_height(p / g));   /* up the tree and back down */
}

/* The network part of a steady step (algo.h, peer_slots): in each tree a
 * GPU sends its block up (slot 0, not the root) and the total to each child
 * (slots 1, 2), whole blocks; with two or more channel groups both trees
 * run, each on every other step, so a step carries half of each tree's
 * (slots 3-5 are tree 1's, *nchannels = 2). The closed form's beta is then
 * the busiest link's time for a step: eight GPUs behind one NIC share it. */
static int tree_peer(const sched_t *s, int c, int r) {
    int g = gpn(s), N = r / g;
    if (!is_head(s, r)) return -1;
    place_t x = place(s, N, c / 3);
    int to = c % 3 == 0 ? x.up : x.down[c % 3 - 1];
    return to < 0 ? -1 : to * g + r % g;
}

static int tree_slots(const sched_t *s, int *nchannels) {
    *nchannels = s->param[2] >= 2 ? 2 : 1;
    return 3 * *nchannels;
}

const algo_t algo_allreduce_nvlstree = {
    .coll = COLL_ALLREDUCE, .name = "nvlstree", .build = nvlstree_build, .cost = nvlstree_cost,
    .cost_text = "approximately 2(a_s + B u b_s) + 2(a_s + u b_s) + 2h(a + u b) + (k - 1) max(w, a/C), u = n/Bk, "
                 "w = max(u b, (B+1) u b_s): G nodes of g GPUs, B = min(g, 32) heads, h the node tree's height",
    .requires = "one switch with `reduce: true` per node; nodes of g >= 2 GPUs, 2 or more of them; --pipeline K",
    .port_model = "approximation (multi-port; each node's switch links assumed to carry its NICs' traffic)",
    .idea = "NCCL's NVLSTree: add in each node's switch, a double binary tree of the node sums across nodes, multicast back",
    .approx = 1, .helpers = 1, .nccl = "nvls_tree", .nccl_protos = 1u << PROTO_SIMPLE,
    .peer = tree_peer, .peer_slots = tree_slots,
};
