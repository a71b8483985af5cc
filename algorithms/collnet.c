/* collnet.c - NCCL's NVLS all-reduce across nodes with a reducing fabric
 * (NVLink SHARP in each node, InfiniBand SHARP between them: NCCL's CollNet).
 *
 * Each node's NVSwitch adds what its g GPUs send it; the node sum of block b
 * (of g blocks) goes to the node's GPU b, which sends it through its NIC to
 * its rail's leaf switch. The leaf adds the sums of the nodes it serves; when
 * a rail has several leaves, the rail's spine adds the leaves' sums and sends
 * the total back down. The leaf sends the total to each node's GPU b, which
 * hands it to its NVSwitch, which multicasts it to the node's GPUs. Each GPU
 * moves n bytes up its NVLink and n down, and n/g over its NIC each way,
 * whatever the number of nodes: no ring or tree across the nodes.
 *
 *   node N:  gpus --> sw_N (+) --> gpu b --nic--> leaf_b (+) [--> spine_b (+)]
 *   node N:  gpus <-- sw_N (mc) <-- gpu b <--nic-- leaf_b     [<-- spine_b]
 *
 * Streams of GPU r (node N, local j), per pipeline step t:
 *   role 0  send chunk (b, t) to switch N's role j, every b
 *   role 1  recv the node sum (j, t) from the switch; send it to the leaf
 *   role 2  recv the total (j, t) from the leaf; send it to the switch's
 *           multicast role
 *   role 3  recv every total (b, t) from the switch's multicast
 * Switch N (helper N): role c < g adds GPU c's chunk, then passes a token on
 * (role g-1 sends the node sum to its GPU b); role g multicasts each total.
 * A fabric switch with m inputs (a leaf: its nodes' GPU b; a spine: its
 * rail's leaves): role c < m adds input c, token on; role m-1 sends the sum
 * to the parent, or at the top a token to role m; role m receives the total
 * (from the parent, or the token) and sends it to each input.
 * --channels C runs C such sets of streams on interleaved steps.
 *
 * Helpers, numbered as the fabric generator marks them (topo_sharp_t): the
 * G node switches, then rail j's L leaves (j * L + l), then with L > 1 the
 * g spines. Requires a fat_tree with `sharp: true` whose rails are the GPUs
 * (a NIC per GPU), a reducing switch per node, G >= 2 nodes; --pipeline K.
 *
 * Cost (approximate, as nvlstree's): the pipeline's fill, 4 hops in the
 * node (a_s: a rank to its switch; the first and last carry g chunks of
 * u = n/gk) and h = 2 in the network (4 with spines), then k - 1 steps of
 * the busier side, a step's latency hidden behind C channels:
 * 2 (a_s + g u b_s) + 2 (a_s + u b_s) + h (a + u b) + (k - 1) max(w, a / C),
 * w = max(u b, (g + 1) u b_s): a GPU's NVLink carries its g
 * chunks and the block's total up, the node sum and g totals down (as
 * NCCL's ld_reduce and multimem stores do). */
#include "algo.h"

#include "../models/proto.h"
#include "nvls_node.h"

/* param[0] = g, param[1] = k (steps), param[2] = C (channels), param[3] = D
 * (nodes per leaf) | F << 24 (the first fabric helper: the reducers before
 * it are the nodes' switches) | ring << 48 (collnet_ring). Stream cc * W +
 * role, W roles per channel group. */
static int gpn(const sched_t *s) { return (int)s->param[0]; }
static int nodes(const sched_t *s) { return s->nranks / gpn(s); }
static int per_leaf(const sched_t *s) { return (int)(s->param[3] & 0xFFFFFF); }
static int fab_first(const sched_t *s) { return (int)((s->param[3] >> 24) & 0xFFFFFF); }
static int ringed(const sched_t *s) { return (int)((s->param[3] >> 48) & 1); }
static int leaves(const sched_t *s) { return (nodes(s) + per_leaf(s) - 1) / per_leaf(s); }
static int imax(int a, int b) { return a > b ? a : b; }
static int width(int g, int G, int D, int ring) {
    int L = (G + D - 1) / D;
    return imax(ring ? 2 : imax(4, g + 1), imax((G < D ? G : D) + 1, L + 1));
}
static int wid(const sched_t *s) { return width(gpn(s), nodes(s), per_leaf(s), ringed(s)); }
static uint32_t steps_in(const sched_t *s, int cc) { return nvlsnode_steps(s, cc); }
static uint32_t chunk(const sched_t *s, int b, int cc, uint32_t t) { return nvlsnode_chunk(s, b, cc, t); }
static sched_op_t on(const sched_t *s, int cc, sched_op_t op, int recv_role, int send_role) {
    return nvlsnode_on(wid(s), cc, op, recv_role, send_role);
}

/* ---- the fabric's helpers: who feeds them, whom they answer ---------- */

static int leaf_rank(const sched_t *s, int j, int l) { return s->nranks + fab_first(s) + j * leaves(s) + l; }
static int spine_rank(const sched_t *s, int j) { return s->nranks + fab_first(s) + gpn(s) * leaves(s) + j; }
static int leaf_inputs(const sched_t *s, int l) {
    int D = per_leaf(s), G = nodes(s);
    return (l + 1) * D <= G ? D : G - l * D;
}

/* Fabric helper at rank h: its rail (block), its inputs' count, input c's
 * rank with the roles it sends from and receives on, and its parent (the
 * parent's roles for it), or -1 at the top. */
typedef struct fab {
    int block, m, parent, parent_add, parent_mc;
} fab_t;

static fab_t fab_of(const sched_t *s, int h) {
    int first = s->nranks + fab_first(s), L = leaves(s), i = h - first;
    if (i >= gpn(s) * L) return (fab_t){.block = i - gpn(s) * L, .m = L, .parent = -1};
    int j = i / L, l = i % L;
    fab_t f = {.block = j, .m = leaf_inputs(s, l), .parent = -1};
    if (L > 1) f.parent = spine_rank(s, j), f.parent_add = l, f.parent_mc = L;
    return f;
}

static void fab_input(const sched_t *s, int h, const fab_t *f, int c, int *rank, int *up, int *down) {
    if (h >= spine_rank(s, 0)) {                       /* a spine: its rail's leaves */
        *rank = leaf_rank(s, f->block, c);
        *up = leaf_inputs(s, c) - 1, *down = leaf_inputs(s, c);
        return;
    }
    int l = (h - leaf_rank(s, 0, 0)) % leaves(s);
    *rank = (l * per_leaf(s) + c) * gpn(s) + f->block;
    *up = ringed(s) ? 0 : 1, *down = ringed(s) ? 1 : 2;     /* the GPU's roles that send and receive */
}

/* Fabric helper's role c < m: add input c, token from c - 1, then a token
 * on, or (the last) the sum up or, at the top, a token to the multicast. */
static int fab_add_op(const sched_t *s, int h, int c, int cc, uint32_t pc, sched_op_t *op) {
    fab_t f = fab_of(s, h);
    int first = c == 0, last = c == f.m - 1, in, up, down;
    if (c >= f.m) return 0;
    uint32_t per = 2 + !first, t = pc / per, q = pc % per, x = chunk(s, f.block, cc, t);
    if (t >= steps_in(s, cc)) return 0;
    fab_input(s, h, &f, c, &in, &up, &down);
    if (q == 0) *op = on(s, cc, op_recv(in, x, 1, RECV_REDUCE), up, -1);
    else if (!first && q == 1) *op = on(s, cc, op_recv(h, x, 0, RECV_COPY), c - 1, -1);
    else if (!last) *op = on(s, cc, op_send(h, x, 0), -1, c + 1);
    else if (f.parent >= 0) *op = on(s, cc, op_send(f.parent, x, 1), -1, f.parent_add);
    else *op = on(s, cc, op_send(h, x, 0), -1, f.m);
    return 1;
}

/* Fabric helper's role m: the total (from the parent, or the token that says
 * the sum here is whole), then to every input. */
static int fab_mcast_op(const sched_t *s, int h, int cc, uint32_t pc, sched_op_t *op) {
    fab_t f = fab_of(s, h);
    uint32_t per = 1 + (uint32_t)f.m, t = pc / per, q = pc % per, x = chunk(s, f.block, cc, t);
    int in, up, down;
    if (t >= steps_in(s, cc)) return 0;
    if (q == 0) {
        *op = f.parent >= 0 ? on(s, cc, op_recv(f.parent, x, 1, RECV_COPY), f.parent_mc, -1)
                            : on(s, cc, op_recv(h, x, 0, RECV_COPY), f.m - 1, -1);
        return 1;
    }
    fab_input(s, h, &f, (int)q - 1, &in, &up, &down);
    *op = on(s, cc, op_send(in, x, 1), -1, down);
    return 1;
}

/* ---- the nodes: GPUs and their NVSwitch (nvls_node.c, as nvlstree's) --- */

/* role 1: the node sum in from the switch, out to the leaf. */
static int out_op(const sched_t *s, int r, int cc, uint32_t pc, sched_op_t *op) {
    int g = gpn(s), N = r / g, j = r % g, D = per_leaf(s);
    uint32_t t = pc / 2, x = chunk(s, j, cc, t);
    if (t >= steps_in(s, cc)) return 0;
    if (pc % 2 == 0) *op = on(s, cc, op_recv(s->nranks + N, x, 1, RECV_COPY), g - 1, -1);
    else *op = on(s, cc, op_send(leaf_rank(s, j, N / D), x, 1), -1, N % D);
    return 1;
}

/* role 2: the total in from the leaf, out to the switch's multicast. */
static int in_op(const sched_t *s, int r, int cc, uint32_t pc, sched_op_t *op) {
    int g = gpn(s), N = r / g, j = r % g, D = per_leaf(s);
    uint32_t t = pc / 2, x = chunk(s, j, cc, t);
    if (t >= steps_in(s, cc)) return 0;
    if (pc % 2 == 0) *op = on(s, cc, op_recv(leaf_rank(s, j, N / D), x, 1, RECV_COPY), leaf_inputs(s, N / D), -1);
    else *op = on(s, cc, op_send(s->nranks + N, x, 1), -1, g);
    return 1;
}

/* ---- collnet_ring: the node's ring instead of its switch -------------- */

/* Role 0, step t: the ring's reduce-scatter of the step's g chunks; GPU j
 * ends with block j's node sum and sends it on to its leaf. */
static int ring_rs_op(const sched_t *s, int r, int cc, uint32_t pc, sched_op_t *op) {
    int g = gpn(s), N = r / g, j = r % g, D = per_leaf(s);
    int left = N * g + (j + g - 1) % g, right = N * g + (j + 1) % g;
    uint32_t t = pc / (uint32_t)g, q = pc % (uint32_t)g;
    if (t >= steps_in(s, cc)) return 0;
    uint32_t x = chunk(s, (int)algo_mod((int64_t)j - 1 - q, g), cc, t);
    if (q == 0) *op = op_send(right, x, 1);
    else if (q < (uint32_t)g - 1) *op = op_fwd(left, right, x, 1, RECV_REDUCE);
    else *op = on(s, cc, op_fwd(left, leaf_rank(s, j, N / D), x, 1, RECV_REDUCE), -1, N % D);
    return 1;
}

/* Role 1, step t: block j's total from the leaf, then the ring's all-gather. */
static int ring_ag_op(const sched_t *s, int r, int cc, uint32_t pc, sched_op_t *op) {
    int g = gpn(s), N = r / g, j = r % g, D = per_leaf(s);
    int left = N * g + (j + g - 1) % g, right = N * g + (j + 1) % g;
    uint32_t t = pc / (uint32_t)g, q = pc % (uint32_t)g;
    if (t >= steps_in(s, cc)) return 0;
    uint32_t x = chunk(s, (int)algo_mod((int64_t)j - q, g), cc, t);
    if (q == 0) *op = on(s, cc, op_fwd(leaf_rank(s, j, N / D), right, x, 1, RECV_COPY), leaf_inputs(s, N / D), -1);
    else if (q < (uint32_t)g - 1) *op = op_fwd(left, right, x, 1, RECV_COPY);
    else *op = op_recv(left, x, 1, RECV_COPY);
    return 1;
}

static int collnet_prog(const sched_t *s, int r, int c, uint32_t pc, sched_op_t *op) {
    int g = gpn(s), w = wid(s), cc = c / w, role = c % w;
    if (r >= s->nranks + fab_first(s)) {
        fab_t f = fab_of(s, r);
        return role < f.m ? fab_add_op(s, r, role, cc, pc, op) : role == f.m ? fab_mcast_op(s, r, cc, pc, op) : 0;
    }
    if (r >= s->nranks && ringed(s)) return 0;               /* the nodes' switches: not used */
    if (r >= s->nranks) return role < g ? nvlsnode_switch_add(s, w, r - s->nranks, role, cc, pc, op)
                             : role == g ? nvlsnode_switch_mcast(s, w, r - s->nranks, 2, 2, cc, pc, op) : 0;
    if (ringed(s)) return role == 0 ? ring_rs_op(s, r, cc, pc, op) : role == 1 ? ring_ag_op(s, r, cc, pc, op) : 0;
    switch (role) {
    case 0: return nvlsnode_up(s, w, r, cc, pc, op);
    case 1: return out_op(s, r, cc, pc, op);
    case 2: return in_op(s, r, cc, pc, op);
    case 3: return nvlsnode_mcast_in(s, w, r, cc, pc, op);
    default: return 0;
    }
}

/* Why the machine cannot run it, or NULL (ring: without the nodes' switches). */
static const char *unfit(const algo_opts_t *o, int p, int g, int ring) {
    if (o == NULL || o->sharp.rails == 0) return "needs a fabric whose switches reduce (a fat_tree with `sharp: true`)";
    if (g < 2 || p % g) return "needs nodes of 2 or more GPUs (group_size dividing the ranks)";
    if (p / g < 2) return "runs across nodes; on one node use nvls";
    if (o->sharp.rails != g) return "needs a NIC per GPU: the reducing fabric's rails must be the node's GPUs";
    if (!ring && o->sharp.first != p / g)
        return "needs a reducing switch per node (NVLS), declared before the fabric; collnet_ring does without";
    if (o->sharp.leaves != (p / g + o->sharp.per_leaf - 1) / o->sharp.per_leaf)
        return "finds the reducing fabric built for another number of nodes";
    return NULL;
}

static int build(sched_t *s, const algo_opts_t *o, int ring, baton_err_t *e) {
    int p = s->nranks, g = o && o->group > 0 ? o->group : p;
    const char *why = unfit(o, p, g, ring);
    if (why) return err_set(e, BATON_EUNSUP, "%s %s", ring ? "collnet_ring" : "collnet", why);
    int G = p / g, D = o->sharp.per_leaf, L = o->sharp.leaves, F = o->sharp.first;
    uint64_t k = algo_pipeline_chunks(s->bytes, o), C = o->channels > 0 ? (uint64_t)o->channels : 1;
    if (k * (uint64_t)g > 1u << 20) return err_set(e, BATON_EUNSUP, "--pipeline %llu: at most 2^20 chunks in all", (unsigned long long)k);
    if (C > k) C = k;
    int W = width(g, G, D, ring);
    if ((uint64_t)W * C > 32767) return err_set(e, BATON_EUNSUP, "collnet: %llu channels of %d streams are too many", (unsigned long long)C, W);
    s->param[0] = g, s->param[1] = (int64_t)k, s->param[2] = (int64_t)C;
    s->param[3] = (int64_t)D | (int64_t)F << 24 | (int64_t)ring << 48;
    s->helpers = F + g * L + (L > 1 ? g : 0);
    s->nchannels = (int)C * W;
    sched_layout(s, (uint32_t)g, (uint32_t)k);
    s->prog = collnet_prog;
    return 0;
}

static int collnet_build(sched_t *s, const algo_opts_t *o, baton_err_t *e) { return build(s, o, 0, e); }
static int collnet_ring_build(sched_t *s, const algo_opts_t *o, baton_err_t *e) { return build(s, o, 1, e); }

/* Network hops each way: a rail's leaf, and its spine past one leaf a rail. */
static double fabric_hops(int p, int g, const algo_opts_t *o) {
    int L = o && o->sharp.per_leaf > 0 ? (p / g + o->sharp.per_leaf - 1) / o->sharp.per_leaf : 1;
    return L > 1 ? 4 : 2;
}

static double collnet_cost(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o) {
    int g;
    uint64_t k, C;
    nvlsnode_shape(p, n, o, &g, &k, &C);
    return g < 1 ? 0 : nvlsnode_cost(m, g, k, C, n, fabric_hops(p, g, o));
}

const algo_t algo_allreduce_collnet = {
    .coll = COLL_ALLREDUCE, .name = "collnet", .build = collnet_build, .cost = collnet_cost,
    .cost_text = "approximately 2(a_s + g u b_s) + 2(a_s + u b_s) + h(a + u b) + (k - 1) max(w, a/C), u = n/gk, w = max(u b, (g+1) u b_s), h = 2 (4 with spines)",
    .requires = "a switch with `reduce: true` per node and a fat_tree with `sharp: true` (a NIC per GPU); "
                "2 or more nodes of g >= 2 GPUs; --pipeline K",
    .port_model = "approximation (multi-port; the NIC's path and the NVLink to the switch, the busier per step)",
    .idea = "NCCL's NVLS across nodes with SHARP (CollNet): add in each node's switch, in the rail's leaf and spine, multicast back",
    .approx = 1, .helpers = 1, .fabric = 1, .nccl = "nvls", .nccl_protos = 1u << PROTO_SIMPLE,
};

/* collnet_ring's two views (algo.h, peer_slots): in the node both rings send
 * to the right neighbour every hop (slots 0 and 1: the reduce-scatter's and
 * the all-gather's unit share its link); between nodes the block's GPU sends
 * a unit up its NIC and gets one down, which a shift along the rail (r + g)
 * puts on the same links. */
static int ring_peer(const sched_t *s, int c, int r) {
    int g = gpn(s), N = r / g, j = r % g;
    (void)c;
    return N * g + (j + 1) % g;
}

static int rail_peer(const sched_t *s, int c, int r) {
    int g = gpn(s), p = s->nranks;
    return c == 0 ? (r + g) % p : -1;          /* one unit up its NIC, one down: a shift along the rail */
}

static int ring_slots(const sched_t *s, int *nchannels) {
    (void)s;
    *nchannels = 1;
    return 2;
}

/* The fill (both rings' g - 1 hops and the h network hops), then k - 1
 * steps of the busiest: the node's links ((g - 1) hops of both rings'
 * units), the NIC's unit, or one channel group's ring cycle over C groups. */
static double collnet_ring_cost(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o) {
    int g;
    uint64_t k, C;
    nvlsnode_shape(p, n, o, &g, &k, &C);
    if (g < 2) return 0;
    cost_model_t x = cost_across(m);
    double u = (double)n / ((double)g * (double)k), hops = fabric_hops(p, g, o);
    double link = u * m->beta * (m->stepwise ? 1 : 2);      /* a hop's both units on the node's link */
    double hop = m->alpha + link, net = u * x.beta;
    double fill = 2 * (g - 1) * hop + hops * (cost_alpha(&x, u) + net);
    double w = (g - 1) * link, cycle = (g - 1) * hop / (double)C;
    if (net > w) w = net;
    if (cycle > w) w = cycle;
    return fill + (double)(k - 1) * w;
}

const algo_t algo_allreduce_collnet_ring = {
    .coll = COLL_ALLREDUCE, .name = "collnet_ring", .build = collnet_ring_build, .cost = collnet_ring_cost,
    .cost_text = "approximately 2(g-1)(a + l) + h(a_x + u b_x) + (k - 1) max((g-1) l, u b_x, (g-1)(a + l)/C), "
                 "u = n/gk, l = a hop's units on the node's link, h = 2 (4 with spines)",
    .requires = "a fat_tree with `sharp: true` (a NIC per GPU); 2 or more nodes of g >= 2 GPUs; --pipeline K",
    .port_model = "approximation (multi-port; the node's ring links and the NIC's path, the busier per step)",
    .idea = "CollNet where the nodes have no NVLS: the node's ring reduce-scatter, SHARP in the fabric, the ring all-gather",
    .approx = 1, .helpers = 1, .fabric = 1, .nccl = "collnet_direct", .nccl_protos = 1u << PROTO_SIMPLE,
    .peer = ring_peer, .peer_across = rail_peer, .peer_slots = ring_slots,
};
