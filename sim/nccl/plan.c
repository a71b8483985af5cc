/* plan.c - NCCL's cost model on a machine (see plan.h). */
#include "plan.h"

#include <stdlib.h>
#include <string.h>

#include "../../topologies/graph.h"
#include "../../topologies/topo.h"
#include "ncclrule.h"

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
    double bw = d->bw / topo_class_efficiency(t, cls);    /* the file's rate: NCCL knows no efficiency */
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
    for (int l = 0; l < n; l += 2) {
        saved[l] = topo_dlink(t, l)->bw;
        topo_set_link_bw(t, l, nccl_bw(t, l, arch), NULL);
    }
    sched_t s;
    cost_model_t m, v;
    if ((rc = topo_cost_model(t, &m, e)) >= 0 && (rc = algo_build(&algo_allreduce_ring, p, (uint64_t)p << 20, &o, &s, e)) >= 0)
        rc = run_algo_model(t, &algo_allreduce_ring, &s, &m, &v, e);
    for (int l = 0; l < n; l += 2) topo_set_link_bw(t, l, saved[l], NULL);
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

/* NICs in t (a folded cluster's witnesses' only). */
static int nic_count(const topo_t *t) {
    int k = 0;
    for (int i = 0; i < topo_nnodes(t); i++) k += topo_node(t, i)->kind == NODE_NIC;
    return k;
}

void plan_nvls(topo_t *t, const tuning_machine_t *m, plan_nvls_t *x) {
    int ppn = m->nranks / (m->nnodes > 0 ? m->nnodes : 1), built = topo_fold_witnesses(t);
    int domains_built = built > 0 ? built : m->nnodes, nics = nic_count(t) / (domains_built > 0 ? domains_built : 1);
    int v = topo_params_c(t)->lib.nccl_version ? topo_params_c(t)->lib.nccl_version : TOPO_NCCL_TABLES;
    *x = (plan_nvls_t){.domains = m->nnodes, .per_domain = ppn, .chunk = 131072, .nic_GBps = nic_speed(t, m->arch),
                       .why = ""};
    if (node_reducers(t) == 0 || m->arch < ARCH_HOPPER) return;       /* NVLS needs sm90 and a switch that reduces */
    x->candidates = m->nnodes > 1 && nics > 0 ? nics : ppn;
    x->heads = x->candidates < 32 ? x->candidates : 32;
    x->channels = nvls_channels(v, m->arch, m->nnodes, ppn, x->nic_GBps, &x->tree_chunk, &x->why);
}

int plan_machine(topo_t *t, const algo_opts_t *o_in, tuning_machine_t *m, baton_err_t *e) {
    algo_opts_t o = *o_in;
    run_opts_from_topo(t, &o);
    const topo_params_t *tp = topo_params_c(t);
    const graph_t *g = graph_get(t, e);
    if (g == NULL) return e ? e->code : BATON_ENOMEM;
    int p = topo_whole_ranks(t), group = tp->group_size > 0 && p % tp->group_size == 0 ? tp->group_size : p;
    double bus = 0;
    arch_t arch = tp->arch >= 0 ? (arch_t)tp->arch : ARCH_AMPERE;
    *m = (tuning_machine_t){.nranks = p, .nnodes = p / group, .arch = arch, .nvlink = graph_nvlink(g),
                            .nchannels = o.channels > 0 ? o.channels : 1, .version = tp->lib.nccl_version};
    int searched = g->nrings > 0;                       /* read now: ring_bus_bw's link changes free g */
    int rc = ring_bus_bw(t, &o, arch, &bus, e);
    if (rc < 0) return rc;
    m->ll128 = m->nvlink && tp->lib.ll128 != 0;
    m->bw = bus / m->nchannels;
    if (!searched && o_in->channels == 0 && tp->channels == 0) nccl_channels(m, bus);
    topo_route_t r;
    int node_switches = node_reducers(t);
    m->collnet = tp->sharp.rails > 0 && m->nnodes > 1;                 /* a CollNet plugin: SHARP */
    /* NVLS needs more than two GPUs on the switch (nvls.cc, ncclNvlsInit: gpuCount <= 2, or an MNNVL
     * clique of two, returns with nvlsSupport 0; 2.19-2.30) */
    if (node_switches > 0 && m->nranks / m->nnodes > 2 && (m->nnodes == 1 || node_switches == m->nnodes) &&
        topo_route(t, 0, topo_nranks(t), &r, NULL) == 0) {   /* rank 0 to the first reducing switch */
        plan_nvls_t x;
        plan_nvls(t, m, &x);
        int nch = x.channels > 0 ? x.channels : NVLS_CHANNELS;
        m->nvls_channels = nch;
        m->nvls_bw = nccl_bw(t, r.links[0], arch) / 1e9 / nch;
        m->nvls_inter = m->bw * m->nchannels / nch;   /* the rings' network share, over NVLS's channels */
    }
    return 0;
}

/* Our registry row for NCCL's algorithm a (NVLS across nodes: collnet). */
static const char *row_of(tuning_algo_t a, int nnodes) {
    return a == TUNING_TREE ? "nccltree" : a == TUNING_RING ? "ring" : a == TUNING_COLLNET_DIRECT ? "collnet_ring"
         : a == TUNING_NVLS_TREE ? "nvlstree" : a == TUNING_PAT ? "pat" : nnodes > 1 ? "collnet" : "nvls";
}

static int algo_of(const char *name, int nnodes, tuning_algo_t *a) {
    for (int i = 0; i < TUNING_ALGO_COUNT; i++)
        if (strcmp(name, row_of((tuning_algo_t)i, nnodes)) == 0) { *a = (tuning_algo_t)i; return 0; }
    return -1;
}

/* NCCL's fastest protocol for algorithm a (or the one asked for). */
static double time_for(const tuning_machine_t *m, const run_req_t *q, tuning_algo_t a, proto_t *pr) {
    double best = -1;
    for (int p = PROTO_LL; p <= PROTO_SIMPLE; p++) {
        if (q->proto != RUN_PROTO_AUTO && q->proto != p) continue;
        if (q->proto == RUN_PROTO_AUTO && q->protos && !(q->protos >> p & 1)) continue;   /* a log's NCCL_PROTO */
        double x = tuning_time(m, q->coll, a, (proto_t)p, q->bytes);
        if (x >= 0 && (best < 0 || x < best)) best = x, *pr = (proto_t)p;
    }
    return best;
}

/* tuning_pick's loop, within a log's NCCL_ALGO and NCCL_PROTO: NCCL's
 * time for its choice, < 0 if it runs none. */
static double pick(const tuning_machine_t *m, const run_req_t *q, tuning_algo_t *a, proto_t *pr) {
    double time = -1;
    for (int i = 0; i < TUNING_ALGO_COUNT; i++) {
        int k = algo_nccl_index_of_name(tuning_algo_name((tuning_algo_t)i));
        if (q->nccl_algos && k >= 0 && !(q->nccl_algos >> k & 1)) continue;
        proto_t p2 = PROTO_SIMPLE;
        double x = time_for(m, q, (tuning_algo_t)i, &p2);
        if (x >= 0 && (time < 0 || x < time)) time = x, *a = (tuning_algo_t)i, *pr = p2;
    }
    return time;
}

int plan_pick(topo_t *t, const run_req_t *q, const char **row, unsigned *protos, baton_err_t *e) {
    tuning_machine_t m;
    tuning_algo_t a = TUNING_RING;
    proto_t pr = PROTO_SIMPLE;
    *row = NULL, *protos = 0;
    if (q->proto == PROTO_NONE || q->coll == COLL_ALLTOALL || topo_params_c(t)->lib.name[0]) return 0;   /* not NCCL's */
    if (ncclrule_forced(t, q->coll, topo_whole_ranks(t), q->bytes)) return 0;   /* a rule of its library decides */
    int rc = plan_machine(t, &q->opts, &m, e);
    if (rc < 0) return rc;
    if (pick(&m, q, &a, &pr) < 0) return 0;
    int rooted = q->coll == COLL_BROADCAST || q->coll == COLL_REDUCE;
    *row = rooted ? "chain" : row_of(a, m.nnodes);          /* as plan_run names it */
    *protos = 1u << pr;
    return 1;
}

/* Registered buffers on one domain, NCCL 2.27+: its symmetric kernels, timed
 * by their own model (tuning_sym_time; multimem where NVLS is and more than
 * two ranks: sym_kernels.cc hasLsaMultimem). */
static int sym_run(topo_t *t, const run_req_t *q, const tuning_machine_t *m, run_out_t *o, baton_err_t *e) {
    const char *kernel = NULL;
    int blocks = 0;
    double time = tuning_sym_time(m->arch, m->nranks, q->coll, q->bytes, m->nvls_channels > 0 && m->nranks > 2, &kernel, &blocks);
    if (time < 0) return err_set(e, BATON_EUNSUP, "--model nccl: no symmetric kernel for %s on %s", coll_name(q->coll), topo_name(t));
    o->algo = algo_find(q->coll, "symmetric");
    o->auto_picked = 2;
    o->ranks = m->nranks;
    o->bytes = q->bytes;
    o->proto = PROTO_SIMPLE;
    o->proto_auto = q->proto == RUN_PROTO_AUTO;
    o->channels = blocks;
    o->time_s = time;
    o->algbw_GBps = time > 0 ? (double)q->bytes / time / 1e9 : 0;
    o->busbw_GBps = o->algbw_GBps * run_busbw_factor(q->coll, m->nranks);
    return 0;
}

int plan_run(topo_t *t, const run_req_t *q_in, run_out_t *o, baton_err_t *e) {
    run_req_t qq = *q_in, *q = &qq;
    ncclrule_env(t, q);
    tuning_machine_t m;
    tuning_algo_t a = TUNING_RING;
    proto_t pr = PROTO_SIMPLE;
    double time = -1;
    memset(o, 0, sizeof *o);
    int rc = plan_machine(t, &q->opts, &m, e);
    if (rc < 0) return rc;
    if (q->proto == PROTO_NONE) return err_set(e, BATON_EINVAL, "--model nccl: NCCL has no --proto none (LL, LL128, Simple or auto)");
    const char *forced = run_is_auto(q->algo) ? ncclrule_forced(t, q->coll, m.nranks, q->bytes) : NULL;
    if (forced && strcmp(forced, "symmetric") == 0 && (q->proto == RUN_PROTO_AUTO || q->proto == PROTO_SIMPLE))
        return sym_run(t, q, &m, o, e);
    if (run_is_auto(q->algo)) {
        time = pick(&m, q, &a, &pr);
    } else if (algo_of(q->algo, m.nnodes, &a) < 0) {
        return err_set(e, BATON_EINVAL, "--model nccl times NCCL's algorithms only (ring, nccltree, nvls; nvlstree, collnet, "
                       "collnet_ring across nodes; pat at one GPU per node), not '%s'", q->algo);
    } else {
        time = time_for(&m, q, a, &pr);
    }
    if (time < 0)
        return err_set(e, BATON_EUNSUP, "--model nccl: NCCL runs no %s%s%s of %s on %s", run_is_auto(q->algo) ? "" : q->algo,
                       run_is_auto(q->algo) ? "algorithm" : "", q->proto == RUN_PROTO_AUTO ? "" : " with that protocol",
                       coll_name(q->coll), topo_name(t));
    int rooted = q->coll == COLL_BROADCAST || q->coll == COLL_REDUCE;
    o->algo = algo_find(q->coll, rooted ? "chain" : row_of(a, m.nnodes));   /* NCCL's rooted "ring" is a chain */
    o->auto_picked = run_is_auto(q->algo) ? 2 : 0;
    o->ranks = m.nranks;
    o->bytes = q->bytes;
    o->proto = pr;
    o->proto_auto = q->proto == RUN_PROTO_AUTO;
    o->time_s = time;
    o->algbw_GBps = time > 0 ? (double)q->bytes / time / 1e9 : 0;
    o->busbw_GBps = o->algbw_GBps * run_busbw_factor(q->coll, m.nranks);
    return 0;
}
