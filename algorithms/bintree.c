/* bintree.c - pipelined binary trees: broadcast, reduce, NCCL's split tree
 * all-reduce and its double binary tree.
 *
 * Idea: a binary tree has depth lg p like a binomial one, but a rank has at
 * most two children, so cutting the buffer into k chunks and pipelining them
 * keeps every rank busy: after the pipeline fills, a chunk leaves (or
 * arrives) every step. For all-reduce NCCL runs the reduction up the tree and
 * the broadcast down it at the same time ("split": an up stream and a down
 * stream per rank, the root hands each reduced chunk from one to the other).
 * A rank with two children receives from both at once and adds as they
 * arrive, as NCCL's kernel does: the second child's chunks come in on a side
 * stream, which hands the up stream a token when its part is in.
 * A single tree leaves the leaves' send bandwidth idle; the double binary
 * tree (Sanders, Speck and Traeff 2009; NCCL) runs two trees on half the data
 * each, shaped so that a rank is interior in at most one, and every rank
 * sends and receives about 2n bytes in all, like the ring.
 *
 * Step diagrams. Broadcast/reduce use the heap-ordered tree of virtual ranks
 * (children 2v+1, 2v+2), p = 7, chunks x y:
 *
 *            0                      step 1: 0 -x-> 1        step 2: 0 -x-> 2
 *          /   \                    step 3: 0 -y-> 1, 1 -x-> 3
 *         1     2                   step 4: 0 -y-> 2, 1 -x-> 4, 2 -x-> 5 ...
 *        / \   / \
 *       3   4 5   6                 (each rank sends left then right per chunk)
 *
 * All-reduce uses NCCL's tree (rank 0 the root with one child, odd ranks the
 * leaves) and, for the second tree of dbtree, its mirror (p even: r -> p-1-r)
 * or its shift by one (p odd):
 *
 *   p = 8:  tree 0: 0-4, 4-{2,6}, 2-{1,3}, 6-{5,7}
 *           tree 1: 7-3, 3-{5,1}, 5-{6,4}, 1-{2,0}
 *
 * Costs (single-port; k chunks of m = ceil(n/k) bytes; h = floor(lg p)):
 *   broadcast  2(h + k - 1)(a + m b)        exact for complete trees
 *   reduce     2(h + k - 1)(a + m(b + g))   (p = 2^(h+1) - 1), else an upper bound
 *   all-reduce (bintree, dbtree): a pipeline model, not exact: 2h - 1 steps
 *              to fill (h = the tallest root-to-leaf path) plus k steps of
 *              the busiest rank, which sends L messages per step (bintree: 3,
 *              one up and two down; dbtree: 4 of half the size, so about 2n
 *              bytes in all). The engine's first-come reservations leave gaps
 *              when flows cross, so it measures above the model for large n;
 *              the tests pin the measured band.
 * The chain all-reduce is the same split pipeline on a chain 0 - 1 - ... - p-1
 * (each rank one child): 2p - 3 steps to fill, 2 messages per step.
 * Requires: any p >= 1, any n; broadcast and reduce any root; --pipeline K. */
#include "algo.h"

/* ---- heap-ordered tree: broadcast and reduce ---------------------------- */

static int heap_nchildren(int v, int p) { return (2 * v + 1 < p) + (2 * v + 2 < p); }

static int heap_bcast_prog(const sched_t *s, int r, int c, uint32_t pc, sched_op_t *op) {
    (void)c;
    int p = s->nranks, v = sched_vrank(s, r), nc = heap_nchildren(v, p), up = v != 0;
    uint32_t per = (uint32_t)(up && nc == 0 ? 1 : nc);
    if (per == 0 || pc >= per * s->nchunks) return 0;
    uint32_t i = pc / per, j = pc % per;
    int parent = sched_real(s, (v - 1) / 2), child = sched_real(s, 2 * v + 1 + (int)j);
    if (up && j == 0) *op = nc ? op_fwd(parent, child, i, 1, RECV_COPY) : op_recv(parent, i, 1, RECV_COPY);
    else *op = op_send(child, i, 1);
    return 1;
}

static int heap_reduce_prog(const sched_t *s, int r, int c, uint32_t pc, sched_op_t *op) {
    (void)c;
    int p = s->nranks, v = sched_vrank(s, r), nc = heap_nchildren(v, p), up = v != 0;
    uint32_t per = (uint32_t)(up && nc == 0 ? 1 : nc);
    if (per == 0 || pc >= per * s->nchunks) return 0;
    uint32_t i = pc / per, j = pc % per;
    int parent = sched_real(s, (v - 1) / 2), child = sched_real(s, 2 * v + 1 + (int)j);
    if (nc == 0) *op = op_send(parent, i, 1);
    else if (up && j == (uint32_t)nc - 1) *op = op_fwd(child, parent, i, 1, RECV_REDUCE);
    else *op = op_recv(child, i, 1, RECV_REDUCE);
    return 1;
}

static int heap_build(sched_t *s, const algo_opts_t *o, baton_err_t *e) {
    uint64_t k = algo_pipeline_chunks(s->bytes, o);
    if (k > 1u << 20) return err_set(e, BATON_EUNSUP, "--pipeline %llu: at most 1048576 chunks", (unsigned long long)k);
    sched_layout(s, 1, (uint32_t)k);
    s->prog = s->coll == COLL_BROADCAST ? heap_bcast_prog : heap_reduce_prog;
    return 0;
}

static int floor_lg(int p) { int h = 0; while ((2 << h) <= p) h++; return h; }

static double heap_cost(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o, double per_byte) {
    uint64_t k = algo_pipeline_chunks(n, o);
    double chunk = (double)(n / k + (n % k != 0));
    if (p < 2) return 0;                  /* a pipelined hop's rendezvous hides behind the chunks before it */
    return 2.0 * (floor_lg(p) + (double)k - 1) * (m->alpha + chunk * per_byte) + floor_lg(p) * cost_host(m, chunk);
}

/* The heap's formula is exact for a complete tree (every inner rank feeds
 * two children) and whole chunks; elsewhere a rank with one child or none
 * idles where the formula charges it, and it is an upper bound. */
static int heap_exact(int p, uint64_t n, const algo_opts_t *o) {
    uint64_t k = algo_pipeline_chunks(n, o);
    return p < 2 || ((p & (p + 1)) == 0 && n % k == 0);
}

static double bcast_cost(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o) {
    return heap_cost(m, p, n, o, m->beta);
}

static double reduce_cost(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o) {
    return heap_cost(m, p, n, o, m->beta + m->gamma);
}

/* ---- NCCL's trees: split all-reduce ------------------------------------ */

typedef struct { int up, down[2]; } tnode_t;

/* NCCL's binary tree: rank 0 is the root with one child; the lowest set bit
 * of r gives its level, so odd ranks are leaves. */
static tnode_t btree(int p, int r) {
    tnode_t t = {-1, {-1, -1}};
    int bit = 1;
    while (bit < p && !(bit & r)) bit <<= 1;
    if (r == 0) {
        if (p > 1) t.down[0] = bit >> 1;
        return t;
    }
    int up = (r ^ bit) | (bit << 1);
    t.up = up < p ? up : r ^ bit;
    int low = bit >> 1;
    if (low) t.down[0] = r - low;
    while (low && r + low >= p) low >>= 1;
    t.down[1] = low ? r + low : -1;
    return t;
}

/* A chain 0 - 1 - ... - p-1 rooted at 0 (pipelined chain all-reduce). */
static tnode_t chain(int p, int r) {
    return (tnode_t){r - 1, {r + 1 < p ? r + 1 : -1, -1}};
}

/* Tree 0 is btree; tree 1 is its mirror (p even) or its shift by one (p odd). */
static tnode_t dtree(int p, int r, int tree) {
    if (tree == 0) return btree(p, r);
    int odd = p % 2;
    tnode_t t = btree(p, odd ? (r - 1 + p) % p : p - 1 - r);
    int *x[3] = {&t.up, &t.down[0], &t.down[1]};
    for (int i = 0; i < 3; i++)
        if (*x[i] >= 0) *x[i] = odd ? (*x[i] + 1) % p : p - 1 - *x[i];
    return t;
}

static int nkids(const tnode_t *t) { return (t->down[0] >= 0) + (t->down[1] >= 0); }

/* NCCL's tree on a cluster: in tree T a chain runs through each node's g
 * GPUs (local 0 first in tree 0, local g-1 first in tree 1, so each GPU is
 * an end in one tree at most), the chain's first GPU hangs below the last
 * GPU of its parent node, and the nodes form the double binary tree (dtree
 * over node numbers). Channel ch rotates the chains inside the node as the
 * ring's channels do (algo_rotation), so the channels enter and leave each
 * node through different GPUs and NICs. Where the machine has searched rings
 * (ord: topologies/graph.h, every node's GPUs at its g positions) channel
 * ch's chain is ring ch's order instead, as NCCL's trees follow its search:
 * on a mesh the rotated chains would all take the links l -> l + 1, the
 * searched ones take different links, and the chain enters and leaves the
 * node where its ring does, by a NIC. With g = 1 it is dtree; with one
 * node, two chains. ch: the channel with ord, else its rotation (node_rot). */
static tnode_t nodes_tree(const sched_orders_t *ord, int p, int g, int r, int tree, int ch) {
    const int32_t *rank = ord ? ord->rank + (size_t)(ch % ord->count) * p : NULL;
    int G = p / g, N = r / g;
    int l = ord ? ord->pos[(size_t)(ch % ord->count) * p + r] - N * g : (int)algo_mod(r % g - ch, g);
    int i = tree ? g - 1 - l : l;
    tnode_t tn = dtree(G, N, tree), t = {-1, {-1, -1}};
#define AT(node, pos) (rank ? rank[(node) * g + (tree ? g - 1 - (pos) : (pos))] \
                            : (node) * g + (int)algo_mod((tree ? g - 1 - (pos) : (pos)) + ch, g))
    t.up = i > 0 ? AT(N, i - 1) : tn.up >= 0 ? AT(tn.up, g - 1) : -1;
    if (i < g - 1) t.down[0] = AT(N, i + 1);
    else
        for (int j = 0; j < 2; j++) t.down[j] = tn.down[j] >= 0 ? AT(tn.down[j], 0) : -1;
#undef AT
    return t;
}

/* The machine's rings if nccltree may follow them: p ranks, every channel
 * keeping each node's g GPUs at that node's g positions; else NULL. */
static const sched_orders_t *node_orders(const sched_orders_t *ord, int p, int g) {
    if (ord == NULL || ord->nranks != p || ord->count < 1 || g < 1 || p % g) return NULL;
    for (int c = 0; c < ord->count; c++)
        for (int i = 0; i < p; i++)
            if (ord->rank[(size_t)c * p + i] / g != i / g) return NULL;
    return ord;
}

/* Up stream (3b): add the first child's chunk (the second arrives at the
 * same time on the side stream, which says so with a token), pass the sum
 * up; the root instead sends it down to its children's down streams. Steps
 * per chunk: 0 children 1; 1 child 1 (fused); 2 children 3; the root adds
 * its children's the same way, then one send per child. */
static int up_op(const tnode_t *t, int r, int second, uint32_t j, uint32_t chunk, int uchan, sched_op_t *op) {
    int nc = nkids(t), dchan = uchan + 1, side = uchan + 2, to = second ? side : -1;   /* the parent's side stream */
    uint32_t got = nc == 2 ? 2 : (uint32_t)nc;          /* steps before the sum is whole */
    if (t->up >= 0 && nc == 0) { *op = op_chan(op_send(t->up, chunk, 1), -1, to); return 1; }
    if (t->up >= 0 && nc == 1) { *op = op_chan(op_fwd(t->down[0], t->up, chunk, 1, RECV_REDUCE), -1, to); return 1; }
    if (j == 0 && nc == 2) { *op = op_recv(t->down[0], chunk, 1, RECV_REDUCE); return 1; }
    if (j == 1 && nc == 2) { *op = op_chan(op_recv(r, chunk, 0, RECV_COPY), side, -1); return 1; }
    if (t->up >= 0) { *op = op_chan(op_send(t->up, chunk, 1), -1, to); return 1; }
    if (nc == 1 && j == 0) { *op = op_chan(op_fwd(t->down[0], t->down[0], chunk, 1, RECV_REDUCE), -1, dchan); return 1; }
    *op = op_chan(op_send(t->down[j - got], chunk, 1), -1, dchan);
    return 1;
}

/* Side stream (3b + 2), ranks with two children: the second child's chunk,
 * added as it arrives, then a token to the up stream. */
static int side_op(const tnode_t *t, int r, uint32_t j, uint32_t chunk, int uchan, sched_op_t *op) {
    *op = j == 0 ? op_chan(op_recv(t->down[1], chunk, 1, RECV_REDUCE), uchan, -1)   /* from the child's up stream */
                 : op_chan(op_send(r, chunk, 0), -1, uchan);
    return 1;
}

/* Down stream (channel D = 2 tree + 1): take the chunk from the parent
 * (from the root's up stream if the parent is the root), pass it down. */
static int down_op(const tnode_t *t, uint32_t j, uint32_t chunk, int parent_is_root, int uchan, sched_op_t *op) {
    int from_chan = parent_is_root ? uchan : -1;
    if (nkids(t) == 0) *op = op_chan(op_recv(t->up, chunk, 1, RECV_COPY), from_chan, -1);
    else if (j == 0) *op = op_chan(op_fwd(t->up, t->down[0], chunk, 1, RECV_COPY), from_chan, -1);
    else *op = op_send(t->down[1], chunk, 1);
    return 1;
}

enum { SHAPE_BTREE, SHAPE_DTREE, SHAPE_CHAIN, SHAPE_NODES };

static int shape_trees(int shape) { return shape == SHAPE_DTREE || shape == SHAPE_NODES ? 2 : 1; }

/* Rank r's place in tree T of a shape (g: ranks per node and ch: channel,
 * SHAPE_NODES only). */
static tnode_t shape_node_ch(const sched_orders_t *ord, int shape, int p, int g, int r, int tree, int ch) {
    if (shape == SHAPE_NODES) return nodes_tree(ord, p, g, r, tree, ch);
    return shape == SHAPE_CHAIN ? chain(p, r) : shape == SHAPE_DTREE ? dtree(p, r, tree) : btree(p, r);
}

/* The node size SHAPE_NODES uses: the group if it divides p, else p (one node). */
static int nodes_group(int p, const algo_opts_t *o) { return o && o->group > 0 && p % o->group == 0 ? o->group : p; }

static tnode_t shape_node(int shape, int p, int g, int r, int tree) { return shape_node_ch(NULL, shape, p, g, r, tree, 0); }

/* What nodes_tree takes for channel ch: the channel where the machine's
 * rings order it, else its rotation inside the node. */
static int node_rot(const sched_t *s, int ch) { return s->orders ? ch : algo_rotation(ch, (int)s->param[2]); }

/* Steps per chunk of each stream (see up_op, down_op, side_op). */
static uint32_t split_per(const tnode_t *t, int role) {
    int nc = nkids(t), root = t->up < 0;
    if (role == 2) return nc == 2 ? 2 : 0;
    if (role == 1) return root ? 0 : (uint32_t)(nc ? nc : 1);
    if (!root) return nc == 2 ? 3 : 1;
    return nc == 2 ? 4 : (uint32_t)nc;
}

/* Streams 3b, 3b+1, 3b+2 (up, down, side) run tree b % trees of channel
 * b / trees on chunks [b k, b k + k). */
static int split_prog(const sched_t *s, int r, int c, uint32_t pc, sched_op_t *op) {
    int p = s->nranks, b = c / 3, role = c % 3, shape = (int)s->param[0], g = (int)s->param[1];
    int trees = shape_trees(shape), tree = b % trees, ch = node_rot(s, b / trees);
    uint32_t k = s->per_block;
    tnode_t t = shape_node_ch(s->orders, shape, p, g, r, tree, ch);
    uint32_t per = split_per(&t, role);
    if (p < 2 || per == 0 || pc >= per * k) return 0;
    uint32_t chunk = (uint32_t)b * k + pc / per, j = pc % per;
    if (role == 2) return side_op(&t, r, j, chunk, 3 * b, op);
    tnode_t parent = t.up >= 0 ? shape_node_ch(s->orders, shape, p, g, t.up, tree, ch) : t;
    if (role == 0) return up_op(&t, r, t.up >= 0 && parent.down[1] == r, j, chunk, 3 * b, op);
    return down_op(&t, j, chunk, parent.up < 0, 3 * b, op);
}

/* nccltree takes --channels (default the topology's); the other shapes run
 * one channel. */
static int split_build(sched_t *s, const algo_opts_t *o, baton_err_t *e, int shape) {
    int trees = shape_trees(shape), C = shape == SHAPE_NODES && o && o->channels > 1 ? o->channels : 1;
    uint64_t k = algo_pipeline_chunks(s->bytes, o);
    if (k > 1u << 20) return err_set(e, BATON_EUNSUP, "--pipeline %llu: at most 1048576 chunks", (unsigned long long)k);
    s->param[0] = shape;
    s->param[1] = nodes_group(s->nranks, o);
    s->param[2] = algo_stride(o, s->param[1]);
    if (shape == SHAPE_NODES && o && !o->rank_order) s->orders = node_orders(o->rings, s->nranks, (int)s->param[1]);
    s->nchannels = 3 * trees * C;
    sched_layout(s, (uint32_t)(trees * C), (uint32_t)k);
    s->prog = split_prog;
    s->reps = (uint32_t)k;         /* stream op pc: step pc % per of chunk pc / per */
    return 0;
}

static int bintree_build(sched_t *s, const algo_opts_t *o, baton_err_t *e) { return split_build(s, o, e, SHAPE_BTREE); }
static int dbtree_build(sched_t *s, const algo_opts_t *o, baton_err_t *e) { return split_build(s, o, e, SHAPE_DTREE); }
static int chain_build(sched_t *s, const algo_opts_t *o, baton_err_t *e) { return split_build(s, o, e, SHAPE_CHAIN); }
static int nodes_build(sched_t *s, const algo_opts_t *o, baton_err_t *e) { return split_build(s, o, e, SHAPE_NODES); }

/* Shape of the split trees by walking them: the tallest path (root to
 * deepest leaf) and the busiest rank's messages sent per pipeline step
 * (summed over the trees: one up unless root, one per child down). O(p lg^2 p). */
static void shape_walk(int p, int shape, int g, int *height, int *load) {
    int trees = shape_trees(shape);
    *height = *load = 0;
    for (int r = 0; r < p; r++) {
        int sends = 0;
        for (int T = 0; T < trees; T++) {
            tnode_t t = shape_node(shape, p, g, r, T);
            sends += (t.up >= 0) + nkids(&t);
            int d = 0;
            while (t.up >= 0 && d <= p) {
                t = shape_node(shape, p, g, t.up, T);
                d++;
            }
            if (d > *height) *height = d;
        }
        if (sends > *load) *load = sends;
    }
}

/* The same in O(1), for the closed forms at a million ranks: a chain is
 * p - 1 tall and its inner ranks send twice; from p = 4 on, the binary tree
 * is ceil(lg p) tall (rank 1 climbs 1, 2, 4, ... to the root) and its busiest
 * rank sends 3 (up and two children), the double tree's 4 (interior in one
 * tree, leaf in the other); below 4, a table (a calibration on two nodes asks
 * the node tree's shape at every cost: walking it was a fifth of the fit).
 * algo_split_shape_check tests this against the walk. */
static void split_shape(int p, int shape, int g, int *height, int *load);

/* SHAPE_NODES from the node tree: the tallest path climbs every node's chain
 * on the way, (hN + 1)(g - 1) + hN for node depth hN; a GPU sends twice per
 * tree inside a chain, and at a chain's ends its node's links: the first GPU
 * of tree 0 is the last of tree 1. O(p / g): one look at each node. */
static void nodes_shape(int p, int g, int *height, int *load) {
    int G = p / g, hN, unused;
    if (G == 1) {                                         /* one node: two chains */
        *height = g - 1;
        *load = g >= 3 ? 4 : g - 1 + (g == 2);
        return;
    }
    split_shape(G, SHAPE_DTREE, 1, &hN, &unused);
    *height = (hN + 1) * (g - 1) + hN;
    *load = g >= 3 ? 4 : 0;
    for (int N = 0; N < G; N++) {
        tnode_t t0 = dtree(G, N, 0), t1 = dtree(G, N, 1);
        int up0 = t0.up >= 0, up1 = t1.up >= 0, k0 = nkids(&t0), k1 = nkids(&t1);
        int first = g == 1 ? up0 + k0 + up1 + k1 : up0 + 1 + 1 + k1;     /* tree 0's head, tree 1's tail */
        int last = g == 1 ? first : 1 + k0 + up1 + 1;                    /* tree 0's tail, tree 1's head */
        if (first > *load) *load = first;
        if (last > *load) *load = last;
    }
}

static void split_shape(int p, int shape, int g, int *height, int *load) {
    if (shape == SHAPE_NODES && p >= 2) {
        nodes_shape(p, g, height, load);
    } else if (shape == SHAPE_CHAIN) {
        *height = p - 1;
        *load = p >= 3 ? 2 : p - 1;
    } else if (p >= 4 && shape != SHAPE_NODES) {
        int h = 0;
        while ((1L << h) < p) h++;
        *height = h;
        *load = shape == SHAPE_DTREE ? 4 : 3;
    } else if (p >= 1 && p <= 3 && shape != SHAPE_NODES) {      /* [double?][p]: height, load */
        static const int small[2][4][2] = {{{0, 0}, {0, 0}, {1, 1}, {2, 2}}, {{0, 0}, {0, 0}, {1, 2}, {2, 3}}};
        *height = small[shape == SHAPE_DTREE][p][0];
        *load = small[shape == SHAPE_DTREE][p][1];
    } else {
        shape_walk(p, shape, g, height, load);
    }
}

void algo_dtree(int p, int r, int tree, int *up, int down[2]) {
    tnode_t t = dtree(p, r, tree);
    *up = t.up, down[0] = t.down[0], down[1] = t.down[1];
}

int algo_dtree_height(int p) {
    int h, load;
    split_shape(p, SHAPE_DTREE, 1, &h, &load);
    return h;
}

int algo_split_shape_check(int pmax) {
    static const int groups[] = {1, 2, 3, 4, 8};
    for (int shape = SHAPE_BTREE; shape <= SHAPE_NODES; shape++)
        for (int p = 1; p <= (shape >= SHAPE_CHAIN && pmax > 256 ? 256 : pmax); p++)   /* chains' walks are O(p^2) */
            for (int i = 0; i < (shape == SHAPE_NODES ? 6 : 1); i++) {
                int g = i < 5 ? groups[i] : p, h, l, wh, wl;               /* the last: one node */
                if (p % g) continue;
                split_shape(p, shape, g, &h, &l);
                shape_walk(p, shape, g, &wh, &wl);
                if (h != wh || l != wl) return p;
            }
    return 0;
}

/* Pipeline model: 2h - 1 steps to fill (up and down the tallest path), then
 * k steps of the busiest rank's port, each message m = n / (trees k) bytes.
 * On a machine whose links it has seen (m->stepwise: beta is the busiest
 * link's time for a whole step's messages, split_peer), a steady step is
 * one latency (ports 0) or L (one port) plus that link's work, and the fill
 * moves one message hop by hop. */
static double split_cost(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o, int shape) {
    uint64_t k = algo_pipeline_chunks(n, o);
    int h, load, trees = shape_trees(shape);
    if (p < 2) return 0;
    split_shape(p, shape, nodes_group(p, o), &h, &load);
    double chunk = (double)n / ((double)trees * (double)k);
    double a = m->alpha, r = (2.0 * h - 1) * cost_host(m, chunk);   /* on the fill: see heap_cost */
    if (m->stepwise && shape != SHAPE_NODES)
        return (2.0 * h - 1) * (a + chunk * m->beta_path) + r + (double)k * (a * (m->ports ? load : 1) + chunk * m->beta);
    return (2.0 * h - 1 + (double)k * load) * (a + chunk * m->beta) + r;
}

/* The pattern of a steady step of bintree, dbtree and chain (one channel):
 * slot 3 tree + j is rank r's message up (j = 0) or to child j - 1. */
static int split_peer(const sched_t *s, int c, int r) {
    tnode_t t = shape_node_ch(NULL, (int)s->param[0], s->nranks, (int)s->param[1], r, c / 3, 0);
    return c % 3 == 0 ? t.up : t.down[c % 3 - 1];
}

static int split_slots(const sched_t *s, int *nchannels) {
    *nchannels = 1;
    return 3 * shape_trees((int)s->param[0]);
}

static double bintree_cost(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o) {
    return split_cost(m, p, n, o, SHAPE_BTREE);
}

static double dbtree_cost(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o) {
    return split_cost(m, p, n, o, SHAPE_DTREE);
}

static double chain_cost(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o) {
    return split_cost(m, p, n, o, SHAPE_CHAIN);
}

/* On a machine whose links it has seen (m->stepwise: beta is a whole
 * step's busiest link, for the messages inside nodes and, in the across
 * view, those between nodes), the fill moves one channel's share hop by
 * hop: (hN + 1)(g - 1) hops inside nodes, hN between them, each way (a
 * hop inside a node only o->fill of it where the protocol passes data on
 * before its step is whole: NCCL's LL, run.c nccl_size_fill). A
 * steady step is L latencies (one port) or one (ports 0) plus the busier
 * view's work, except where the chains follow the machine's searched
 * rings with a port per link: each hop then has its own link, and the
 * step is the longer of the busiest link's work and one channel's stage
 * (a latency and its share over one hop, the slower of a hop inside a node
 * and one between nodes): while one channel's message waits out its
 * latency the other channels' and the other tree's keep the link busy, as
 * in the ring's step (ring.c). On two MI355X nodes (64 MiB, Simple, 64
 * chunks) the sum gave 812 us, the simulator 677, the longer 677. Through
 * a switch (a flat node) the sum stays: it was FIFO's time before FIFO
 * backfilled (2 x 8 A100, 256 MiB LL128: sum 2.98 ms, FIFO 3.22 then, 2.29
 * now, the longer 2.02), and with the longer -a nccl plans trees where
 * NCCL ran rings (the 2 x 8 A100 log 10.5 -> 16.5 %); docs/decisions/nccl-tree.md. */
static double nodes_cost(const cost_model_t *m, int p, uint64_t n, const algo_opts_t *o) {
    if (!m->stepwise || p < 2) return split_cost(m, p, n, o, SHAPE_NODES);
    uint64_t k = algo_pipeline_chunks(n, o);
    int g = nodes_group(p, o), G = p / g, h, load, hN, unused, C = m->channels > 1 ? m->channels : 1;
    cost_model_t x = cost_across(m);
    split_shape(p, SHAPE_NODES, g, &h, &load);
    split_shape(G, SHAPE_DTREE, 1, &hN, &unused);
    double chunk = (double)n / (2.0 * (double)k), share = chunk / C, in = (double)(h - hN);
    double part = o && o->fill && share > (double)o->fill ? (double)o->fill : share;   /* a hop inside a node */
    /* a hop's rendezvous where it crosses the network: between groups, and inside them where a
       group spans nodes (m->rdzv is 0 where the steps inside groups stay inside nodes: form.c);
       the host's match (x.match) on the fill's crossings only, as the engine adds it: a latency
       the chunks behind pipeline past */
    cost_model_t xs = x;
    xs.match = 0;
    double xa = cost_alpha(&x, share), ma = cost_alpha(m, share), pa = cost_alpha(m, part), xsa = cost_alpha(&xs, share);
    double fill = 2 * in * (pa + part * m->beta_path) + 2.0 * hN * (xa + share * x.beta_path);
    double a = ma > xsa ? ma : xsa, b = m->beta > x.beta ? m->beta : x.beta;
    double in_stage = ma + share * m->beta_path, x_stage = G > 1 ? xsa + share * x.beta_path : 0;
    double in_fill = pa + part * m->beta_path;
    double stage = in_stage > x_stage ? in_stage : x_stage, step = a * (m->ports ? load : 1) + chunk * b;
    if (!m->ports && node_orders(o ? o->rings : NULL, p, g)) step = chunk * b > stage ? chunk * b : stage;
    return fill - (in > 0 ? in_fill : x_stage) + (double)k * step;
}

/* The pattern of a steady step (algo.h, peer_slots): slot 6 ch + 3 tree + j
 * is rank r's message up (j = 0) or to child j - 1 in that tree and channel,
 * inside its node (peer) or to another node (peer_across). */
static int nodes_slot(const sched_t *s, int c, int r, int across) {
    int p = s->nranks, g = (int)s->param[1], j = c % 3, tree = c / 3 % 2, ch = node_rot(s, c / 6);
    tnode_t t = nodes_tree(s->orders, p, g, r, tree, ch);
    int to = j == 0 ? t.up : t.down[j - 1];
    return to >= 0 && (to / g != r / g) == across ? to : -1;
}

static int nodes_peer(const sched_t *s, int c, int r) { return nodes_slot(s, c, r, 0); }
static int nodes_peer_across(const sched_t *s, int c, int r) { return nodes_slot(s, c, r, 1); }

static int nodes_slots(const sched_t *s, int *nchannels) {
    *nchannels = s->nchannels / 6;                     /* up, down and side streams per tree */
    return 6 * *nchannels;
}

const algo_t algo_broadcast_bintree = {
    .coll = COLL_BROADCAST, .name = "bintree", .build = heap_build, .cost = bcast_cost,
    .cost_text = "2(floor(lg p) + k - 1)(a + (n/k) b), k = ceil(n / 1 MiB) by default",
    .requires = "any p >= 1, any n, any root; --pipeline K",
    .port_model = "single-port; exact for complete trees (p = 2^(h+1) - 1) when k divides n, else an upper bound",
    .exact_at = heap_exact,
    .idea = "pipeline k chunks down a binary tree, each rank feeding two children",
};

const algo_t algo_reduce_bintree = {
    .coll = COLL_REDUCE, .name = "bintree", .build = heap_build, .cost = reduce_cost,
    .cost_text = "2(floor(lg p) + k - 1)(a + (n/k)(b + g)), k = ceil(n / 1 MiB) by default",
    .requires = "any p >= 1, any n, any root; --pipeline K",
    .port_model = "single-port; exact for complete trees (p = 2^(h+1) - 1) when k divides n, else an upper bound",
    .exact_at = heap_exact,
    .idea = "pipeline k chunks up a binary tree, each rank adding two children's",
};

const algo_t algo_allreduce_bintree = {
    .coll = COLL_ALLREDUCE, .name = "bintree", .build = bintree_build, .cost = bintree_cost,
    .cost_text = "approximately (2h - 1 + kL)(a + (n/k) b): h tallest path, L busiest rank's sends per step (3 for p >= 4)",
    .requires = "any p >= 1, any n; --pipeline K",
    .port_model = "approximation; the engine measures 0.67x-1.63x of it (docs/decisions/closed-forms.md)",
    .idea = "NCCL's tree: reduce up and broadcast down one binary tree at once, k chunks pipelined",
    .approx = 1, .nccl = "tree", .peer = split_peer, .peer_slots = split_slots,
};

const algo_t algo_allreduce_dbtree = {
    .coll = COLL_ALLREDUCE, .name = "dbtree", .build = dbtree_build, .cost = dbtree_cost,
    .cost_text = "approximately (2h - 1 + kL)(a + (n/2k) b): h tallest path, L busiest rank's sends per step (4 for p >= 4)",
    .requires = "any p >= 1, any n; --pipeline K",
    .port_model = "approximation; the engine measures 0.57x-3.1x of it with fifo contention, ~1x with fair (docs/decisions/closed-forms.md)",
    .idea = "NCCL's double binary tree: two split trees on half the data, each rank interior in at most one",
    .approx = 1, .nccl = "tree", .peer = split_peer, .peer_slots = split_slots,
};

const algo_t algo_allreduce_chain = {
    .coll = COLL_ALLREDUCE, .name = "chain", .build = chain_build, .cost = chain_cost,
    .cost_text = "approximately (2p - 3 + 2k)(a + (n/k) b)",
    .requires = "any p >= 1, any n; --pipeline K",
    .port_model = "approximation; see bintree",
    .idea = "reduce up a chain and broadcast back down it at once, k chunks pipelined",
    .approx = 1, .peer = split_peer, .peer_slots = split_slots,
};

const algo_t algo_allreduce_nccltree = {
    .coll = COLL_ALLREDUCE, .name = "nccltree", .build = nodes_build, .cost = nodes_cost,
    .cost_text = "approximately (2h - 1 + kL)(a + (n/2k) b): h = (hN + 1)(g - 1) + hN (hN the node tree's height), "
                 "L busiest rank's sends per step (4 or 5)",
    .requires = "any p >= 1, any n; nodes of the topology's group_size or --group (else one node); --pipeline K; "
                "--channels C (chains rotated per channel; the formula is one channel's)",
    .port_model = "approximation; see bintree",
    .idea = "NCCL's tree on a cluster: a chain through each node, a double binary tree across nodes, pipelined",
    .approx = 1, .nccl = "tree", .peer = nodes_peer,
    .peer_across = nodes_peer_across, .peer_slots = nodes_slots,
};
