/* nvls_node.h - the node's half of an all-reduce that adds in the NVSwitch
 * (NVLink SHARP) and hands each block's node sum to one GPU, its head, which
 * takes it across the nodes and brings back the total (nvlstree: a tree of
 * nodes; collnet: the fabric's switches). Both lay out their schedules
 * alike: param[0] = g GPUs a node, param[1] = k pipeline steps, param[2] = C
 * channel groups; a step has B = s->nblocks blocks (sched_layout(s, B, k)),
 * block b's head the node's GPU b (B <= g: nvlstree's B is NCCL's nHeads);
 * chunk (b, cc, t) is block b's step cc + C t; stream cc * W + role. A GPU's
 * roles here: 0 sends every block up to its switch, 1 (a head) receives its
 * block's node sum, 3 receives every total from the multicast; the switch's
 * roles c < g add GPU c's blocks (token on, the last sends the node sum to
 * the block's head), role g multicasts. */
#ifndef BATON_NVLS_NODE_H
#define BATON_NVLS_NODE_H

#include "algo.h"

/* Chunk (b, cc, t) and the steps of channel group cc. */
uint32_t nvlsnode_chunk(const sched_t *s, int b, int cc, uint32_t t);
uint32_t nvlsnode_steps(const sched_t *s, int cc);
/* op on channel group cc's streams of the given roles (-1: the same channel). */
sched_op_t nvlsnode_on(int W, int cc, sched_op_t op, int recv_role, int send_role);

/* GPU r's role 0 and role 3. */
int nvlsnode_up(const sched_t *s, int W, int r, int cc, uint32_t pc, sched_op_t *op);
int nvlsnode_mcast_in(const sched_t *s, int W, int r, int cc, uint32_t pc, sched_op_t *op);
/* Switch N's role c < g, and its role g, which takes each total from the
 * block's GPU on that GPU's role `from` (node 0's: from0). */
int nvlsnode_switch_add(const sched_t *s, int W, int N, int c, int cc, uint32_t pc, sched_op_t *op);
int nvlsnode_switch_mcast(const sched_t *s, int W, int N, int from0, int from, int cc, uint32_t pc, sched_op_t *op);

/* The closed form both share, for B blocks a step: the node's half at each
 * end of the pipeline (send every block up, the node sum to its head; the
 * total up, multicast down) around `hops` network hops of a unit u = n/Bk
 * each, then k - 1 steps of the busiest of the NIC's unit (u b: b is a
 * whole step's busiest link), the GPU's NVLink ((B + 1) u b_s: the B blocks
 * and a head's own block's sum or total, each way) and a step's latency
 * over C channels. */
double nvlsnode_cost(const cost_model_t *m, int B, uint64_t k, uint64_t C, uint64_t n, double hops);
/* NVLSTree's heads on nodes of g GPUs: NCCL's nHeads, min(g, 32) (the NVLS
 * graph's channels, NCCL_MAX_NVLS_ARITY; init.cc and search.cc, 2.17-2.30). */
#define NVLSTREE_MAX_HEADS 32
static inline int nvlstree_heads(int g) { return g < NVLSTREE_MAX_HEADS ? g : NVLSTREE_MAX_HEADS; }

/* The closed forms' shape of an n-byte call on p ranks: g GPUs a node (the
 * group, else p), k pipeline steps and C channel groups (at most k). */
void nvlsnode_shape(int p, uint64_t n, const algo_opts_t *o, int *g, uint64_t *k, uint64_t *C);

#endif
