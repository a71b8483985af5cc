/* view.c - the machine as NCCL's model sees it (view.h). */
#include "view.h"

#include <stdlib.h>
#include <string.h>

#include "../../topologies/graph.h"
#include "../../topologies/topo.h"

#define NVLS_CHANNELS 16        /* NCCL_NVLS_NCHANNELS' default on Hopper */

/* The rate NCCL counts a link at, below its line rate (src/graph/topo.h; reference
 * section 1.7): an NVLink at 20 GB/s of 25 (20.6 on Hopper, 40.1 of 50 on
 * Blackwell), PCIe at 12 GB/s a Gen3 x16 and twice that each generation
 * (the file's rate if lower: a machine at its measured rate), a NIC at its
 * speed. Links are told apart by what they join: a
 * NIC (network), two GPUs or >= 100 GB/s (NVLink), the rest (PCIe, CPUs). */
static double nccl_bw(const topo_t *t, int l, arch_t arch) {
    static const double nvlink[ARCH_COUNT] = {20.0 / 25, 20.0 / 25, 20.6 / 25, 40.1 / 50};
    const topo_dlink_t *d = topo_dlink(t, l);
    node_kind_t a = topo_node(t, d->src)->kind, b = topo_node(t, d->dst)->kind;
    char cls[24];
    topo_link_class(t, l, cls, sizeof cls);
    double bw = topo_line_bw(t, l) / topo_class_efficiency(t, cls);   /* the file's rate: NCCL knows no
                                                                           efficiency, nor the sockets' cap */
    if (a == NODE_NIC || b == NODE_NIC) return bw;
    if ((a == NODE_GPU && b == NODE_GPU) || bw >= 100e9) return bw * nvlink[arch];
    double line = 15.75e9, nccl = 12e9;                   /* Gen3 x16; each generation doubles both */
    while (bw > line * 1.001 && line < 1e12) line *= 2, nccl *= 2;
    return bw < nccl ? bw : nccl;                         /* a file at a measured rate below NCCL's keeps it */
}

/* The rings' bus bandwidth (GB/s, all channels) at NCCL's link rates: the
 * ring's closed-form view, its busiest link's time per byte of a block,
 * with every link set to NCCL's count for the time of the call. */
static int ring_bus_bw(topo_t *t, const algo_opts_t *o_in, arch_t arch, double *gbps, baton_err_t *e) {
    int p = topo_whole_ranks(t), n = topo_nlinks(t), rc = 0;
    algo_opts_t o = *o_in;
    /* a link change forgets the machine's rings (topo_set_derived): keep a copy */
    size_t cells = o.rings ? (size_t)o.rings->count * o.rings->nranks : 0;
    int32_t *order = cells ? malloc(2 * cells * sizeof *order) : NULL;
    double *saved = malloc((size_t)n * sizeof *saved);
    sched_orders_t rings = o.rings ? *o.rings : (sched_orders_t){0};
    if (saved == NULL || (cells && order == NULL)) { free(saved); free(order); return err_set(e, BATON_ENOMEM, "out of memory"); }
    if (cells) {
        memcpy(order, rings.rank, cells * sizeof *order);
        memcpy(order + cells, rings.pos, cells * sizeof *order);
        rings.rank = order;
        rings.pos = order + cells;
        o.rings = &rings;
    }
    int aside = topo_routes_aside(t) == 0;   /* the file's routes come back with its rates */
    for (int l = 0; l < n; l += 2) {
        saved[l] = topo_dlink(t, l)->bw;
        topo_set_link_bw(t, l, nccl_bw(t, l, arch), NULL);
    }
    sched_t s;
    cost_model_t m, v;
    if ((rc = topo_cost_model(t, &m, e)) >= 0 && (rc = algo_build(&algo_allreduce_ring, p, (uint64_t)p << 20, &o, &s, e)) >= 0)
        rc = form_model(t, &algo_allreduce_ring, &s, &m, &v, e);
    for (int l = 0; l < n; l += 2) topo_set_link_bw(t, l, saved[l], NULL);
    if (aside) topo_routes_back(t);
    free(saved);
    free(order);
    if (rc < 0) return rc;
    *gbps = v.beta > 0 ? 1e-9 / v.beta : 0;
    return 0;
}

/* NCCL's channels where baton's search had nothing to choose (a flat node,
 * no channel count in the file): the largest speed step the GPU's total
 * carries, as many channels as fit (at most 16), then doubled at half the
 * speed from 25 GB/s up (on Hopper and later, not below 50 GB/s with more
 * than 4 channels): search.cc's speed arrays and ncclTopoDupChannels
 * (docs/reference/nccl.md 1.7). 8 x A100: 6 x 40 -> 12 x 20 GB/s. */
static void nccl_channels(tuning_machine_t *m, double total) {
    static const double steps[ARCH_COUNT][13] = {
        {40, 30, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3}, {40, 30, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3},
        {60, 50, 40, 30, 24, 20, 15, 12, 11, 6, 3, 0, 0}, {90, 80, 70, 60, 50, 45, 40, 30, 24, 20, 19, 18, 0}};
    double s = 0;
    for (int i = 0; i < 13 && steps[m->arch][i] > 0; i++)
        if (steps[m->arch][i] <= total) { s = steps[m->arch][i]; break; }
    if (s == 0) return;                                   /* slower than every step: keep one channel */
    int nch = (int)(total / s);
    nch = nch > 16 ? 16 : nch;
    if (s >= 25 && !(m->arch > ARCH_AMPERE && s < 50 && nch > 4)) nch *= 2, s /= 2;
    m->nchannels = nch;
    m->bw = s;
}

/* The cluster's reducing switches in its nodes (NVLS): a folded one built a
 * few of its nodes, each with as many as every other. */
static int node_reducers(const topo_t *t) {
    int k = topo_nvls_reducers(t), built = topo_fold_witnesses(t);
    return built > 0 && k % built == 0 ? k / built * topo_fold_nodes(t) : k;
}

/* The slowest NIC's speed in GB/s as NCCL counts it (minNetBw), 0 if none. */
static double nic_speed(const topo_t *t, arch_t arch) {
    double least = 0;
    for (int l = 0; l < topo_nlinks(t); l += 2) {
        const topo_dlink_t *d = topo_dlink(t, l);
        if (topo_node(t, d->src)->kind != NODE_NIC && topo_node(t, d->dst)->kind != NODE_NIC) continue;
        double bw = nccl_bw(t, l, arch) / 1e9;
        if (least == 0 || bw < least) least = bw;
    }
    return least;
}

/* NVLS's CTAs (plan.h): by version, architecture, domains and NICs, and
 * where in nvls.cc the number comes from. */
static int nvls_channels(int v, arch_t arch, int domains, int ppn, double nic, int *tree_chunk, const char **why) {
    *tree_chunk = domains >= 4 ? 65536 : 131072;
    if (arch < ARCH_BLACKWELL || v < 22500) return *why = "NVLS_NCHANNELS_SM90 (Blackwell's own from 2.25)", 16;
    if (v < 22700) return *why = "Blackwell: NVLS_NCHANNELS_SM100, 2.25-2.26", 32;
    if (domains == 1) return *why = "Blackwell on one domain: NVLS_NCHANNELS_SM100_NVL, 2.27+", 24;
    if (v < 23003) return *why = "Blackwell across domains: NVLS_NCHANNELS_SM100, 2.27+", 32;
    *why = "Blackwell across domains, 2.30.3+ ncclNvlsTreeSm100Tuning by the NICs' speed";
    if (domains == 2 && nic >= 48) { *tree_chunk = ppn <= 4 ? 262144 : ppn >= 16 ? 65536 : 131072; return 32; }
    if (nic >= 96) { *tree_chunk = ppn <= 8 ? 262144 : ppn < 32 ? 131072 : 65536; return ppn <= 8 ? 24 : 32; }
    if (nic >= 48) { *tree_chunk = 131072; return 24; }
    return 32;
}

void view_nvls(topo_t *t, const tuning_machine_t *m, view_nvls_t *x) {
    int ppn = m->nranks / (m->nnodes > 0 ? m->nnodes : 1), built = topo_fold_witnesses(t);
    int domains_built = built > 0 ? built : m->nnodes, nics = graph_nic_count(t) / (domains_built > 0 ? domains_built : 1);
    int v = topo_params_c(t)->lib.nccl_version ? topo_params_c(t)->lib.nccl_version : TOPO_NCCL_TABLES;
    *x = (view_nvls_t){.domains = m->nnodes, .per_domain = ppn, .chunk = 131072, .nic_GBps = nic_speed(t, m->arch),
                       .why = ""};
    if (node_reducers(t) == 0 || m->arch < ARCH_HOPPER) return;       /* NVLS needs sm90 and a switch that reduces */
    x->candidates = m->nnodes > 1 && nics > 0 ? nics : ppn;
    x->heads = x->candidates < 32 ? x->candidates : 32;
    x->channels = topo_nccl_channels(t, nvls_channels(v, m->arch, m->nnodes, ppn, x->nic_GBps, &x->tree_chunk, &x->why), 1);
}

int view_ll128_said(const topo_t *t, coll_t c, unsigned protos) {
    const topo_params_t *tp = topo_params_c(t);
    unsigned file = 0;
    if (protos) return protos >> PROTO_LL128 & 1;                   /* the call's NCCL_PROTO */
    if (tp->nccl_env[1][0] && c < COLL_COUNT && algo_nccl_env_mask(tp->nccl_env[1], c, 0, &file) == 0 && file)
        return file >> PROTO_LL128 & 1;                            /* the file's, an entry for c */
    return tp->lib.ll128 >= 0 ? tp->lib.ll128 : -1;
}

int view_ll128(topo_t *t, coll_t c, unsigned protos) {
    int said = view_ll128_said(t, c, protos);
    if (said >= 0) return said;
    const graph_t *g = graph_get(t, NULL);
    return g == NULL || (graph_nvlink(g) && (g->inter <= GRAPH_PATH_SWITCH || g->inter == GRAPH_PATH_COUNT));
}

int view_call(topo_t *t, const algo_opts_t *o, coll_t c, unsigned protos, tuning_machine_t *m, baton_err_t *e) {
    int rc = view_machine(t, o, m, e);
    if (rc == 0) m->ll128 = view_ll128(t, c, protos);
    return rc;
}

int view_machine(topo_t *t, const algo_opts_t *o_in, tuning_machine_t *m, baton_err_t *e) {
    algo_opts_t o = *o_in;
    form_opts_searched(t, &o);                        /* NCCL's search's count; its bounds come last */
    const topo_params_t *tp = topo_params_c(t);
    const graph_t *g = graph_get(t, e);
    if (g == NULL) return e ? e->code : BATON_ENOMEM;
    int p = topo_whole_ranks(t), group = tp->group_size > 0 && p % tp->group_size == 0 ? tp->group_size : p;
    double bus = 0;
    arch_t arch = tp->arch >= 0 ? (arch_t)tp->arch : ARCH_AMPERE;
    *m = (tuning_machine_t){.nranks = p, .nnodes = p / group, .arch = arch, .nvlink = graph_nvlink(g),
                            .nchannels = o.channels > 0 ? o.channels : 1, .version = tp->lib.nccl_version};
    int searched = g->nrings > 0;                       /* read now: ring_bus_bw's link changes free g */
    int across = o_in->channels == 0 ? graph_domain_rings(t) : 0;
    if (across) o.channels = across, m->nchannels = across;   /* a ring per NIC, not one through one NIC */
    int rc = ring_bus_bw(t, &o, arch, &bus, e);
    if (rc < 0) return rc;
    m->ll128 = view_ll128(t, COLL_ALLREDUCE, 0);   /* a call's own: view_call */
    m->bw = bus / m->nchannels;
    if (!searched && o_in->channels == 0 && tp->channels == 0) nccl_channels(m, bus);
    if (o_in->channels == 0) m->nchannels = topo_nccl_channels(t, m->nchannels, 0);   /* nccl_env's bounds: */
                                                      /* fewer (or more) channels, each at the search's speed */
    topo_route_t r;
    int node_switches = node_reducers(t);
    m->collnet = tp->sharp.rails > 0 && m->nnodes > 1;                 /* a CollNet plugin: SHARP */
    /* NVLS needs more than two GPUs on the switch (nvls.cc, ncclNvlsInit: gpuCount <= 2, or an MNNVL
     * clique of two, returns with nvlsSupport 0; 2.19-2.30) */
    if (node_switches > 0 && m->nranks / m->nnodes > 2 && (m->nnodes == 1 || node_switches == m->nnodes) &&
        topo_route(t, 0, topo_nranks(t), &r, NULL) == 0) {   /* rank 0 to the first reducing switch */
        view_nvls_t x;
        view_nvls(t, m, &x);
        int nch = x.channels > 0 ? x.channels : NVLS_CHANNELS;
        m->nvls_channels = nch;
        m->nvls_bw = nccl_bw(t, r.links[0], arch) / 1e9 / nch;
        m->nvls_inter = m->bw * m->nchannels / nch;   /* the rings' network share, over NVLS's channels */
    }
    return 0;
}
