/* graph.h - NCCL's channels on a machine: the ring search.
 *
 * NCCL probes the machine at start-up and searches its graph for rings
 * (src/graph/search.cc): each channel is an order of the GPUs whose every
 * hop uses the best path type the machine offers (a direct NVLink before a
 * PCIe switch, a switch before the host bridge, one socket before two), at a
 * per-channel speed every link on the way can still carry. It tries speeds
 * from high to low and keeps the set of rings with the most total
 * bandwidth. On an NVSwitch box any order will do and rank order is NCCL's
 * answer too; on a hybrid cube-mesh (DGX-1) rank order crosses PCIe and the
 * sockets while NCCL's six rings use NVLink only, all six links of a GPU.
 *
 * The search runs on the first group (node) of the machine and every node
 * repeats its orders (NCCL requires nodes alike as well); a channel's ring
 * visits the nodes in order. Across nodes each ring enters a node at its
 * first GPU's NIC and leaves by its last's, and the search counts the
 * NICs' bandwidth too: there are as many rings as the NICs carry. Where every pair of GPUs in a node is alike
 * and goes through the same switch (one path type, one bandwidth) the
 * search has nothing to choose (a full mesh of direct links does: each ring
 * takes other links): graph_rings then returns no orders and the ring schedules keep
 * their own rotation (algorithms/ring.c), which is NCCL's answer there.
 *
 * The result is cached on the machine (topo_set_derived) and forgotten when a
 * link changes. */
#ifndef BATON_GRAPH_H
#define BATON_GRAPH_H

#include "../algorithms/sched.h"
#include "topo.h"

/* How a GPU reaches another, best first (NCCL's PATH_NVL .. PATH_SYS). */
typedef enum {
    GRAPH_PATH_DIRECT = 0,   /* one link, GPU to GPU (NVLink, xGMI) */
    GRAPH_PATH_SWITCH,       /* through switches only (NVSwitch, PCIe switches) */
    GRAPH_PATH_HOST,         /* through one CPU (host bridge) */
    GRAPH_PATH_SOCKETS,      /* through two or more CPUs (the socket link) */
    GRAPH_PATH_NET,          /* through a NIC */
    GRAPH_PATH_COUNT
} graph_path_t;

typedef struct graph_hop {
    graph_path_t type;
    double bw;               /* the route's bottleneck, bytes/s */
} graph_hop_t;

typedef struct graph {
    int group;               /* GPUs per node the search ran on */
    graph_hop_t *path;       /* group x group: path[a * group + b] */
    int nrings;              /* rings found (0: the machine is flat) */
    int32_t *local;          /* nrings x group: local rank at position i of ring c */
    double speed;            /* bytes/s each ring carries (the search's speed step) */
    graph_path_t worst;      /* the worst path type a ring uses */
    int across;              /* rings close through NICs: in at local[0], out at local[group - 1] */
    sched_orders_t orders;   /* nrings x nranks, the whole machine's rings (count 0 if flat) */
    int stride;              /* flat, across nodes: GPUs in a row that share a NIC (1: a NIC
                                each, or one for all, or no such pattern) */
    int nics;                /* across nodes: the NICs the node's GPUs go out by (0: none) */
    graph_path_t inter;      /* across nodes: the best way from one of the node's GPUs to its
                                NIC, NCCL's typeInter (DIRECT or SWITCH: PIX/PXB, HOST: PHB,
                                SOCKETS: SYS); GRAPH_PATH_COUNT on one node or without NICs */
} graph_t;

/* The machine's graph, searched on first use and cached; NULL with an error
 * only when a route fails or memory runs out. */
const graph_t *graph_get(topo_t *t, baton_err_t *e);

/* The rings as schedules take them, or NULL where the machine is flat (or
 * the search fails: then rank order, and e says why if given). */
const sched_orders_t *graph_rings(topo_t *t, baton_err_t *e);

/* How far a flat machine's rank-order rings rotate per channel (algo_opts_t
 * stride): the GPUs in a row that share a NIC, so that each NIC carries a
 * ring in and out (4 NICs for 8 GPUs: 2); 1 where that is not the pattern. */
int graph_ring_stride(topo_t *t);
/* The NICs a node's GPUs leave by (each GPU's nearest), 0 on one node or
 * without NICs: NCCL's NVLS heads across nodes (sim/answer/run.c). */
int graph_node_nics(topo_t *t);

/* NCCL's rings across domains where baton's search had nothing to choose
 * (a flat NVLink domain of alike GPU pairs, as a 72-GPU NVL72 rack's) and
 * the file counts no channels: a ring per NIC of a domain, at most 16
 * (search.cc's ring search, MAXCHANNELS/2); 0 on one domain, where one ring
 * reaches every GPU at the switch's rate, or where it does not apply (PCIe
 * nodes, searched rings: their own count). form_opts puts it in
 * algo_opts_t.domain_rings for NCCL's ring and tree rows. */
int graph_domain_rings(topo_t *t);
/* NICs in t (a folded cluster's witnesses' only). */
int graph_nic_count(const topo_t *t);

/* Do the node's GPUs reach each other over NVLink (NCCL's LINK_NVL), not
 * PCI? A direct GPU link, or switches only at NVSwitch rates (every NVSwitch
 * generation gives a GPU >= 150 GB/s, PCIe x16 at most 63). NCCL enables
 * LL128 only then. */
int graph_nvlink(const graph_t *g);

/* "NVL"-style names as nvidia-smi and NCCL print them. */
const char *graph_path_name(graph_path_t p);

#endif
