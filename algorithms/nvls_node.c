/* nvls_node.c - a node's in-switch reduction and multicast (nvls_node.h). */
#include "nvls_node.h"

static int gpn(const sched_t *s) { return (int)s->param[0]; }

uint32_t nvlsnode_steps(const sched_t *s, int cc) {
    uint32_t k = (uint32_t)s->param[1], C = (uint32_t)s->param[2];
    return (k - (uint32_t)cc + C - 1) / C;
}

uint32_t nvlsnode_chunk(const sched_t *s, int b, int cc, uint32_t t) {
    return (uint32_t)b * (uint32_t)s->param[1] + (uint32_t)cc + (uint32_t)s->param[2] * t;
}

sched_op_t nvlsnode_on(int W, int cc, sched_op_t op, int recv_role, int send_role) {
    int w = W * cc;
    return op_chan(op, recv_role < 0 ? -1 : w + recv_role, send_role < 0 ? -1 : w + send_role);
}

/* Role 0: every block of each step up to the switch (to its role for this GPU). */
int nvlsnode_up(const sched_t *s, int W, int r, int cc, uint32_t pc, sched_op_t *op) {
    int g = gpn(s), B = (int)s->nblocks, sw = s->nranks + r / g;
    if (pc >= (uint32_t)B * nvlsnode_steps(s, cc)) return 0;
    *op = nvlsnode_on(W, cc, op_send(sw, nvlsnode_chunk(s, (int)(pc % B), cc, pc / B), 1), -1, r % g);
    return 1;
}

/* Role 3: every total from the switch's multicast. */
int nvlsnode_mcast_in(const sched_t *s, int W, int r, int cc, uint32_t pc, sched_op_t *op) {
    int g = gpn(s), B = (int)s->nblocks, sw = s->nranks + r / g;
    if (pc >= (uint32_t)B * nvlsnode_steps(s, cc)) return 0;
    *op = nvlsnode_on(W, cc, op_recv(sw, nvlsnode_chunk(s, (int)(pc % B), cc, pc / B), 1, RECV_COPY), g, -1);
    return 1;
}

/* Switch N's role c < g: add GPU c's chunk, the token from c - 1, then a
 * token on, or (the last) the node sum to the block's GPU (its role 1). */
int nvlsnode_switch_add(const sched_t *s, int W, int N, int c, int cc, uint32_t pc, sched_op_t *op) {
    int g = gpn(s), B = (int)s->nblocks, sw = s->nranks + N, first = c == 0, last = c == g - 1;
    uint32_t per = 2 + !first, x = pc / per, q = pc % per;
    if (x >= (uint32_t)B * nvlsnode_steps(s, cc)) return 0;
    int b = (int)(x % B);
    uint32_t ch = nvlsnode_chunk(s, b, cc, x / B);
    if (q == 0) *op = nvlsnode_on(W, cc, op_recv(N * g + c, ch, 1, RECV_REDUCE), 0, -1);
    else if (!first && q == 1) *op = nvlsnode_on(W, cc, op_recv(sw, ch, 0, RECV_COPY), c - 1, -1);
    else *op = last ? nvlsnode_on(W, cc, op_send(N * g + b, ch, 1), -1, 1) : nvlsnode_on(W, cc, op_send(sw, ch, 0), -1, c + 1);
    return 1;
}

/* Switch N's role g: each total from the block's GPU, then to all g GPUs' role 3. */
int nvlsnode_switch_mcast(const sched_t *s, int W, int N, int from0, int from, int cc, uint32_t pc, sched_op_t *op) {
    int g = gpn(s), B = (int)s->nblocks;
    uint32_t per = 1 + (uint32_t)g, x = pc / per, q = pc % per;
    if (x >= (uint32_t)B * nvlsnode_steps(s, cc)) return 0;
    int b = (int)(x % B);
    uint32_t ch = nvlsnode_chunk(s, b, cc, x / B);
    if (q == 0) *op = nvlsnode_on(W, cc, op_recv(N * g + b, ch, 1, RECV_COPY), N == 0 ? from0 : from, -1);
    else *op = nvlsnode_on(W, cc, op_send(N * g + (int)q - 1, ch, 1), -1, 3);
    return 1;
}

double nvlsnode_cost(const cost_model_t *m, int B, uint64_t k, uint64_t C, uint64_t n, double hops) {
    double unit = (double)n / ((double)B * (double)k);
    double net = unit * m->beta, intra = (B + 1) * unit * m->helper_beta;
    cost_model_t x = cost_across(m);                   /* the network hops' rendezvous */
    double a = m->alpha + cost_host(&x, unit), w = net > intra ? net : intra, lat = a / (double)C;
    double fill = 2 * (m->helper_alpha + B * unit * m->helper_beta) + 2 * (m->helper_alpha + unit * m->helper_beta) +
                  hops * (a + net);
    return fill + (double)(k - 1) * (w > lat ? w : lat);
}

void nvlsnode_shape(int p, uint64_t n, const algo_opts_t *o, int *g, uint64_t *k, uint64_t *C) {
    *g = o && o->group > 0 ? o->group : p;
    *k = algo_pipeline_chunks(n, o);
    *C = o && o->channels > 0 ? (uint64_t)o->channels : 1;
    if (*C > *k) *C = *k;
}
