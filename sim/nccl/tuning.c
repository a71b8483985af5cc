/* tuning.c - NCCL 2.30.7's tuning model, table for table (see tuning.h),
 * and where a table or formula changed between 2.18.1 and 2.30.7, the
 * machine's NCCL's (tuning.h's TUNING_*_SINCE, each with the release whose
 * src/graph/tuning.cc first has it; the older value beside it here).
 * Indices: protocols LL, LL128, Simple; hardware NVLink, PCI, NET; the
 * architecture rows Volta, Ampere, Hopper, Blackwell. */
#include "tuning.h"

#include <math.h>
#include <string.h>

enum { HW_NVLINK, HW_PCI, HW_NET };

static const double base_lat[TUNING_ALGO_COUNT][3] = {{6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0},
                                                       {8.0, 8.0, 8.0}};
static const double hw_lat[3][TUNING_ALGO_COUNT][3] = {
    {{.6, 1.25, 4.0}, {.6, 1.9, 3.4}, {0, 0, 3.7}, {0, 0, 25}, {0, 0, 25}, {0, 0, 4.0}},      /* NVLink */
    {{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}, {0, 0, 3.7}, {0, 0, 0}, {0, 0, 0}, {0, 0, 4.0}},       /* PCI */
    {{5.0, 8.5, 14}, {2.7, 4.0, 14.0}, {0, 0, 31}, {0, 0, 18}, {0, 0, 20.9}, {0, 0, 14}},     /* NET */
};
/* Columns: 1 node, 2 nodes, 4 or more. */
static const double ring_ll128_max[ARCH_COUNT][3] = {{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 36.7}, {40, 40, 40}};
static const double tree_ll128_max[ARCH_COUNT][3] = {{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 29.0},
                                                            {55.6, 31.67, 20.0}};
static const double tree_max[ARCH_COUNT][3] = {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0},
                                                      {70.0, 42.8, 24.0}};
static const double nvls_eff[ARCH_COUNT] = {0, 0, 0.85, 0.74};
static const double nvls_tree_max[ARCH_COUNT][3] = {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0, 57.7, 45.5},
                                                           {0, 96.0, 80.0}};
static const double ll_max[ARCH_COUNT][3] = {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0},
                                                    {282.0, 90.0, 70.0}};
/* treeCorrectionFactor[protocol][log2(bytes / 64)], 64 B .. 256 MiB. */
static const double tree_correction[3][23] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9},
};

/* ---- the version rules (tuning.h): each returns the machine's NCCL's value ---- */

static int ver(const tuning_machine_t *m) { return m->version ? m->version : 23007; }

/* NCCL's compute-capability row: Blackwell has its own only from 2.25.1
 * (before, minCompCap >= 90 is Hopper's row). */
static arch_t arch_row(const tuning_machine_t *m) {
    return m->arch == ARCH_BLACKWELL && ver(m) < TUNING_BLACKWELL_SINCE ? ARCH_HOPPER : m->arch;
}

/* Tree/Simple's latency: 2.18.1 and 2.19.1-2.22.3 base 0 and 28 us on every
 * hop; 2.18.3-2.18.6 base 0 and 4 / 6 / 14 (NVLink / PCI / NET); from 2.23.4
 * base 8.4 and 4 / 4 / 14. */
static double tree_simple_hw(const tuning_machine_t *m, int hw) {
    int v = ver(m);
    static const double since_2_18_3[3] = {4, 6, 14};
    if (v >= TUNING_TREE_LAT_SINCE) return hw_lat[hw][TUNING_TREE][2];
    if (v >= TUNING_TREE_LAT_2_18_3 && v < TUNING_TREE_LAT_2_19) return since_2_18_3[hw];
    return 28;
}

static double base_latency(const tuning_machine_t *m, tuning_algo_t a, int p) {
    if (a == TUNING_TREE && p == 2 && ver(m) < TUNING_TREE_LAT_SINCE) return 0;
    return base_lat[a][p];
}

/* hwLat[hw][a][p] as the machine's NCCL has it: Tree/Simple above; NVLS and
 * NVLSTree's NVLink 23 us before 2.21.5 (25 from it); NVLSTree's network 19
 * in 2.18, 14 from 2.19.1, 20.9 from 2.29.2. */
static double hw_latency(const tuning_machine_t *m, int hw, tuning_algo_t a, int p) {
    int v = ver(m);
    if (a == TUNING_TREE && p == 2) return tree_simple_hw(m, hw);
    if ((a == TUNING_NVLS || a == TUNING_NVLS_TREE) && hw == HW_NVLINK && v < TUNING_NVLS_LAT25_SINCE) return 23;
    if (a == TUNING_NVLS_TREE && hw == HW_NET && v < TUNING_NVLS_TREE_NET_SINCE) return v < TUNING_TREE_LAT_2_19 ? 19 : 14;
    return hw_lat[hw][a][p];
}

/* Ring/LL128's per-channel cap (col: 1, 2, 4+ nodes): Blackwell's 2 x 36.7
 * until 2.28.9, 34.5/34.6/34.5 in 2.29, 40 from 2.30.3. */
static double ring_ll128_cap(const tuning_machine_t *m, int col) {
    arch_t r = arch_row(m);
    if (r != ARCH_BLACKWELL || ver(m) >= TUNING_BLACKWELL_2_30_SINCE) return ring_ll128_max[r][col];
    if (ver(m) >= TUNING_BLACKWELL_2_29_SINCE) return col == 1 ? 34.6 : 34.5;
    return 2 * 36.7;
}

/* Tree/LL128's cap: before 2.18.3 one per architecture (ll128MaxBwPerCh:
 * Hopper 36.7 at every node count); Blackwell 2 x Hopper's until 2.27.7. */
static double tree_ll128_cap(const tuning_machine_t *m, int col) {
    arch_t r = arch_row(m);
    if (ver(m) < TUNING_TREE_LAT_2_18_3) return ring_ll128_max[r][0];
    if (r == ARCH_BLACKWELL && ver(m) < TUNING_BLACKWELL_2_28_SINCE) return 2 * tree_ll128_max[ARCH_HOPPER][col];
    return tree_ll128_max[r][col];
}

/* perChMaxTreeBws: Hopper 33.0 at 4+ nodes before 2.18.3 (36.0 from it);
 * Blackwell 2 x Hopper's until 2.27.7. */
static double tree_cap(const tuning_machine_t *m, int col) {
    arch_t r = arch_row(m);
    if (r == ARCH_HOPPER && col == 2 && ver(m) < TUNING_TREE_LAT_2_18_3) return 33.0;
    if (r == ARCH_BLACKWELL && ver(m) < TUNING_BLACKWELL_2_28_SINCE) return 2 * tree_max[ARCH_HOPPER][col];
    return tree_max[r][col];
}

/* llMaxBws: the Hopper row (one node) 87.7/22.5/19.0 before 2.21.5. */
static double ll_cap(const tuning_machine_t *m, int row, int col) {
    static const double hopper_old[3] = {87.7, 22.5, 19.0};
    if (row == ARCH_HOPPER && ver(m) < TUNING_HOPPER_LL_SINCE) return hopper_old[col];
    return ll_max[row][col];
}

/* perChMaxNVLSTreeBws's Blackwell 4+ nodes: 43.1 in 2.28, 43.8 in 2.29, 80 from 2.30.3. */
static double nvls_tree_cap(const tuning_machine_t *m, int col) {
    arch_t r = arch_row(m);
    if (r == ARCH_BLACKWELL && col == 2 && ver(m) < TUNING_BLACKWELL_2_30_SINCE)
        return ver(m) >= TUNING_BLACKWELL_2_29_SINCE ? 43.8 : 43.1;
    return nvls_tree_max[r][col];
}

const char *tuning_algo_name(tuning_algo_t a) {
    static const char *const names[TUNING_ALGO_COUNT] = {"Tree", "Ring", "CollNetDirect", "NVLS", "NVLSTree", "PAT"};
    return a < TUNING_ALGO_COUNT ? names[a] : "?";
}

static int log2i(long long v) {
    int l = -1;
    while (v > 0) v >>= 1, l++;
    return l;
}

static int nsteps(coll_t c, int n) {
    return c == COLL_ALLREDUCE ? 2 * (n - 1) : (c == COLL_REDUCE_SCATTER || c == COLL_ALLGATHER) ? n - 1 : n;
}

/* Which (collective, algorithm, protocol) NCCL's model loop considers. */
static int applies(const tuning_machine_t *m, coll_t c, tuning_algo_t a, int p) {
    if (c == COLL_ALLTOALL) return 0;
    if ((c == COLL_BROADCAST || c == COLL_REDUCE) && a != TUNING_RING) return 0;
    if ((c == COLL_REDUCE_SCATTER || c == COLL_ALLGATHER) && a == TUNING_TREE) return 0;
    if (a == TUNING_NVLS && (p != 2 || m->nvls_channels < 2 || (m->nnodes != 1 && !m->collnet) || nvls_eff[m->arch] == 0))
        return 0;                                       /* across nodes only with CollNet (SHARP) */
    if (a == TUNING_NVLS && m->nnodes > 1 && c != COLL_ALLREDUCE) return 0;   /* AG/RS: only with a plugin that has them */
    if (a == TUNING_NVLS && c != COLL_ALLREDUCE && ver(m) < TUNING_NVLS_2_19_SINCE) return 0;   /* 2.18: all-reduce only */
    if (a == TUNING_NVLS_TREE && (p != 2 || m->nvls_channels < 2 || m->nnodes == 1 || nvls_eff[m->arch] == 0 ||
                                  c != COLL_ALLREDUCE))
        return 0;                                       /* NVLS in each node, a tree between them */
    if (a == TUNING_COLLNET_DIRECT && (p != 2 || !m->collnet || !m->nvlink || c != COLL_ALLREDUCE)) return 0;
    if (a == TUNING_PAT && ((c != COLL_ALLGATHER && c != COLL_REDUCE_SCATTER) || p != 2 || m->nnodes != m->nranks ||
                            ver(m) < TUNING_PAT_SINCE))
        return 0;                                       /* ncclPatEnable: one GPU per node, Simple, 2.23+ */
    if (p == 1 && !m->ll128) return 0;
    return 1;
}

/* Ring all-reduce's network steps: 2 (nNodes - 1) from 2.23.4, 2 nNodes before. */
static int ring_inter_steps(const tuning_machine_t *m, coll_t c) {
    int nn = m->nnodes;
    if (nn == 1) return 0;
    if (c != COLL_ALLREDUCE) return nn - 1;
    return ver(m) >= TUNING_INTER_STEPS_SINCE ? 2 * (nn - 1) : 2 * nn;
}

/* NVLS and NVLSTree's latency: from 2.19.1 no base, NVLS its NVLink hop (and
 * one network hop across nodes), NVLSTree NVLink plus 2 log2(nNodes) network
 * hops; 2.18 a 23 us base, NVLS + 18 across nodes, NVLSTree + 2 (nNodes - 1) x 19. */
static double nvls_latency(const tuning_machine_t *m, tuning_algo_t a, double lat, double intra, double inter) {
    int nn = m->nnodes;
    if (ver(m) < TUNING_NVLS_2_19_SINCE)
        return 23.0 + (a == TUNING_NVLS ? (nn > 1 ? 18.0 : 0) : 2.0 * (nn - 1) * 19.0);
    if (a == TUNING_NVLS_TREE) return lat + intra + 2 * log2i(nn) * inter;
    return intra + (nn > 1 ? inter : 0);                    /* NVLS: the base is dropped */
}

double tuning_latency_us(const tuning_machine_t *m, coll_t c, tuning_algo_t a, proto_t proto) {
    int p = proto - PROTO_LL, ppn = m->nranks / m->nnodes, n = m->nranks, nn = m->nnodes, v = ver(m);
    int intra_hw = m->nvlink ? HW_NVLINK : HW_PCI;
    double lat = base_latency(m, a, p), intra = hw_latency(m, intra_hw, a, p);
    /* one GPU a node: the tree's network latency for every algorithm from 2.23.4 */
    double inter = hw_latency(m, HW_NET, ppn == 1 && v >= TUNING_PPN1_NET_SINCE ? TUNING_TREE : a, p);
    if (a == TUNING_RING && (c == COLL_BROADCAST || c == COLL_REDUCE)) {
        int hw = nn == 1 ? intra_hw : HW_NET;
        return lat + nsteps(c, n) * (p == 2 ? hw_latency(m, hw, TUNING_TREE, 2) : hw_latency(m, hw, TUNING_RING, p));
    }
    if (a == TUNING_RING) {
        double overhead = nn > 1 ? (m->cpu_amd ? 2.0 : 1.0) * (p == 2 ? 3 : 1) : 0;
        int inter_steps = ring_inter_steps(m, c);
        if (overhead > intra) intra = overhead;
        return lat + (nsteps(c, n) - inter_steps) * intra + inter_steps * inter;
    }
    if (a == TUNING_TREE) return lat + 2 * ((ppn - 1) * intra + log2i(nn) * inter);
    if (a == TUNING_COLLNET_DIRECT && v < TUNING_NVLS_2_19_SINCE)   /* 2.18: 8 / 10.7 us, 0.5 us arity */
        return 2 * ((ppn > 1 ? 1 : 0) * 8.0 + (ppn - 1) * 0.5) + 10.7;
    if (a == TUNING_COLLNET_DIRECT) return lat + 2 * ((ppn > 1 ? 1 : 0) * intra + (ppn - 1) * 0.4) + inter;
    if (a == TUNING_PAT) return lat + log2i(nn) * (inter / 3.5) + n * 2.8;   /* "still a linear part" */
    return nvls_latency(m, a, lat, intra, inter);
}

/* NVLS and NVLSTree's bus bandwidth before 2.28.3 (no NVLS efficiency):
 * from 2.19.1 NVLS min(bwIntra, bwInter) (2.27: all-gather and reduce-scatter
 * min(bwIntra (ppn-1)/ppn, 0.9 bwInter)), NVLSTree min(bwIntra, bwInter, halved
 * on more than two nodes); 2.18 bwIntra up to two nodes, bwInter beyond. */
static double nvls_bus_old(const tuning_machine_t *m, coll_t c, tuning_algo_t a, int nch) {
    int nn = m->nnodes, ppn = m->nranks / nn, v = ver(m);
    double intra = m->nvls_bw, inter = nn > 1 ? m->nvls_inter : m->nvls_bw, bw;
    if (v < TUNING_NVLS_2_19_SINCE) bw = nn <= 2 ? intra : inter;
    else if (a == TUNING_NVLS_TREE) bw = fmin(intra, nn <= 2 ? inter : inter / 2);
    else if (c != COLL_ALLREDUCE && v >= TUNING_NVLS_AGRS_SINCE) bw = fmin(intra * (ppn - 1) / ppn, inter * 0.9);
    else bw = fmin(intra, inter);
    return nch * bw;
}

/* NVLS and NVLSTree's bus bandwidth to algorithm bandwidth before 2.28.3:
 * x 5/6 (2.18.1: NVLS x .75; 2.18: NVLSTree x .70 nNodes / (2 (nNodes - 1))),
 * all-gather and reduce-scatter as they are from 2.23.4. */
static double nvls_ratio_old(const tuning_machine_t *m, coll_t c, tuning_algo_t a) {
    int v = ver(m), nn = m->nnodes;
    if (c != COLL_ALLREDUCE && v >= TUNING_PAT_SINCE) return 1;
    if (a == TUNING_NVLS_TREE && v < TUNING_NVLS_2_19_SINCE) return .70 * nn / (2.0 * (nn - 1));
    if (a == TUNING_NVLS && v < TUNING_TREE_LAT_2_18_3) return .75;
    return 5.0 / 6.0;
}

/* NVLS and NVLSTree's bus bandwidth from 2.28.3: per channel the lower of
 * intraBw (bwIntra x efficiency x (nCh - 1)/nCh, x 2 for all-reduce) and
 * interBw (x 2 for NVLSTree on two nodes), NVLSTree under its cap. */
static double nvls_bus(const tuning_machine_t *m, coll_t c, tuning_algo_t a, int nch, int col) {
    int ppn = m->nranks / m->nnodes;
    double intra = m->nvls_bw * nvls_eff[m->arch] * (nch - 1) / nch;
    intra *= c == COLL_ALLREDUCE ? 2 : (double)(ppn - 1) / ppn;
    double inter = m->nvls_inter * (a == TUNING_NVLS_TREE && m->nnodes <= 2 ? 2 : 1);   /* two nodes: both ways */
    double ch = m->nnodes > 1 && inter < intra ? inter : intra;                      /* min(intraBw, interBw) */
    if (a == TUNING_NVLS_TREE && nvls_tree_cap(m, col) < ch) ch = nvls_tree_cap(m, col);
    return nch * ch;
}

/* Ring/LL's share of the bus: half from 2.21.5; before a quarter across
 * nodes and for all-reduce and reduce, a third otherwise. */
static double ring_ll_share(const tuning_machine_t *m, coll_t c) {
    if (ver(m) >= TUNING_RING_LL_HALF_SINCE) return 0.5;
    return m->nnodes > 1 || c == COLL_ALLREDUCE || c == COLL_REDUCE ? 0.25 : 1.0 / 3.0;
}

/* NCCL's algorithm bandwidth in GB/s (section 1.4); 0: disabled. */
static double algo_bw(const tuning_machine_t *m, coll_t c, tuning_algo_t a, int p) {
    int col = m->nnodes <= 2 ? m->nnodes - 1 : 2, n = m->nranks, ppn = n / m->nnodes;
    int cpu_row = m->nnodes == 1 ? (int)arch_row(m) : m->cpu_amd ? 1 : 0;
    double llc = ll_cap(m, cpu_row, col), bus;
    int nvls = a == TUNING_NVLS || a == TUNING_NVLS_TREE, nch = nvls ? m->nvls_channels : m->nchannels;
    int nvls_new = nvls && ver(m) >= TUNING_NVLS_EFF_SINCE;
    if (nvls) bus = nvls_new ? nvls_bus(m, c, a, nch, col) : nvls_bus_old(m, c, a, nch);
    else bus = nch * m->bw;
    if (a == TUNING_RING && p == 0) bus = fmin(bus * ring_ll_share(m, c), llc);
    if (a == TUNING_RING && p == 1)   /* x 0.7 at one GPU a node before 2.23.4 */
        bus = fmin((ppn < 2 && ver(m) < TUNING_PPN1_NET_SINCE ? 0.7 : 0.92) * bus, nch * ring_ll128_cap(m, col));
    if (a == TUNING_TREE && c == COLL_ALLREDUCE) bus = fmin(0.92 * bus, nch * tree_cap(m, col));
    if (a == TUNING_TREE && p == 0) bus = fmin(bus / 3.8, llc);
    if (a == TUNING_TREE && p == 1) bus = fmin(bus * (m->nnodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0), nch * tree_ll128_cap(m, col));
    if (a == TUNING_COLLNET_DIRECT) {                  /* Simple only: the heads' share of the node's channels */
        double factor = (double)ppn / nch;
        factor -= (factor - 1) / 2;
        bus /= factor;
        if (arch_row(m) >= ARCH_HOPPER) bus *= 0.85;
    }
    if (a == TUNING_PAT) bus *= ver(m) < TUNING_PAT_075_SINCE ? 0.85 : 0.75;
    if (a == TUNING_TREE || a == TUNING_COLLNET_DIRECT) return bus * 0.5;
    if (nvls && !nvls_new) return bus * nvls_ratio_old(m, c, a);
    if (a != TUNING_RING && (c == COLL_ALLGATHER || c == COLL_REDUCE_SCATTER)) return bus;
    return bus * n / nsteps(c, n);
}

double tuning_time(const tuning_machine_t *m, coll_t c, tuning_algo_t a, proto_t proto, uint64_t bytes) {
    int p = proto - PROTO_LL;
    if (proto < PROTO_LL || proto > PROTO_SIMPLE || m->nranks < 2 || m->nnodes < 1 || !applies(m, c, a, p)) return -1;
    double bw = algo_bw(m, c, a, p), lat = tuning_latency_us(m, c, a, proto);
    if (!(bw > 0)) return -1;
    int log_size = log2i((long long)(bytes >> 6));
    if (a == TUNING_TREE && c == COLL_ALLREDUCE && log_size >= 0 && log_size < 23) bw *= tree_correction[p][log_size];
    if (a == TUNING_RING && p == 2 && c == COLL_ALLREDUCE && m->nnodes > 1 &&
        (double)bytes / ((double)m->nchannels * m->nranks) >= 64)
        lat *= m->arch == ARCH_VOLTA ? 1.9 : 1.4;            /* the plateau correction (minCompCap < 80) */
    return (lat + (double)bytes / (1000.0 * bw)) * 1e-6;
}

int tuning_pick(const tuning_machine_t *m, coll_t c, uint64_t n, unsigned protos, tuning_algo_t *a, proto_t *p,
                double *time_s) {
    int found = -1;
    for (int ai = 0; ai < TUNING_ALGO_COUNT; ai++)
        for (int pi = PROTO_LL; pi <= PROTO_SIMPLE; pi++) {
            if (protos && !(protos >> pi & 1)) continue;
            double t = tuning_time(m, c, (tuning_algo_t)ai, (proto_t)pi, n);
            if (t < 0 || (found == 0 && t >= *time_s)) continue;
            *a = (tuning_algo_t)ai;
            *p = (proto_t)pi;
            *time_s = t;
            found = 0;
        }
    return found;
}

/* ---- the symmetric kernels' model (sym_kernels.cc, see tuning.h) ---- */

typedef struct {
    const char *name;
    coll_t coll;
    int ll, mc, nvls_blocks;   /* an LL kernel; needs multimem; on NVLS's block count */
} symk_t;

static const symk_t symk[] = {
    {"AllReduce_AGxLL_R", COLL_ALLREDUCE, 1, 0, 0},      {"AllReduce_AGxLLMC_R", COLL_ALLREDUCE, 1, 1, 0},
    {"AllReduce_RSxLD_AGxST", COLL_ALLREDUCE, 0, 0, 0},  {"AllReduce_RSxLDMC_AGxSTMC", COLL_ALLREDUCE, 0, 1, 1},
    {"AllGather_LL", COLL_ALLGATHER, 1, 0, 0},           {"AllGather_LLMC", COLL_ALLGATHER, 1, 1, 0},
    {"AllGather_ST", COLL_ALLGATHER, 0, 0, 0},           {"AllGather_STMC", COLL_ALLGATHER, 0, 1, 1},
    {"ReduceScatter_LL", COLL_REDUCE_SCATTER, 1, 0, 0},  {"ReduceScatter_LD", COLL_REDUCE_SCATTER, 0, 0, 0},
    {"ReduceScatter_LDMC", COLL_REDUCE_SCATTER, 0, 1, 1},
};
#define SYMK_MAX_BLOCKS 64                               /* ncclSymkMaxBlocks, MAXCHANNELS */
#define SYMK_GBPS ((double)(1 << 30) / 1e6)              /* bytes a microsecond per GB/s */

static double softmin(double x, double ceiling, double softness) {
    return ceiling - softness * log1p((exp(ceiling / softness) - 1) * exp(-x / softness));
}

static double softplus(double x, double softness) {
    double z = x / softness;
    return 100.0 <= z ? x : softness * log1p(exp(z));
}

static double symk_model(double bus, double base, int blocks, double sm_bw, double mul, double peak) {
    return base + softplus(bus / softmin(blocks * sm_bw * mul, peak, sm_bw) - 1, 1);
}

/* One kernel's time (us) on its fewest good blocks (queryModel_lsa). */
static double symk_time(const symk_t *k, arch_t arch, int p, uint64_t nbytes, int *blocks) {
    const double ll_bus = 9;                             /* "2X the bytes, plus some processing" */
    int ar = k->coll == COLL_ALLREDUCE, ag = k->coll == COLL_ALLGATHER, bw = arch >= ARCH_BLACKWELL;
    int most = k->nvls_blocks ? ((bw ? 32 : 16) + p - 1) / p : SYMK_MAX_BLOCKS;
    double bus, mul = 1;
    if (k->ll) bus = (double)p * nbytes * ll_bus, mul = k->mc ? 1.1 : 1;
    else if (ar && !k->mc) bus = (double)(2 * nbytes * (uint64_t)(p - 1) / (uint64_t)p);
    else if (ar) bus = (double)(nbytes / (uint64_t)p + nbytes), mul = p;
    else bus = (double)(p - 1) * nbytes, mul = k->mc ? 0.55 * p : 1;
    double base = bw ? (k->ll ? (ag ? 8.5 : 11) : (ar ? 19.5 : 13.0)) : (k->ll ? 4.5 : 7.8);
    double sm = (bw ? 55 : ar ? 65 : 44) * SYMK_GBPS;
    double peak = (k->mc && ar && !k->ll ? (bw ? 1000 : 480) : bw ? 600 : 320) * SYMK_GBPS;
    double best = symk_model(bus, base, most, sm, mul, peak);
    *blocks = most;
    for (int b = 1; b < most; b++) {
        double t = symk_model(bus, base, b, sm, mul, peak);
        if (t <= 1.025 * best) { *blocks = b; return t; }
    }
    return best;
}

double tuning_sym_time(arch_t arch, int p, coll_t c, uint64_t bytes, int multimem, unsigned protos, const char **kernel,
                       int *blocks) {
    double best = -1;
    int best_blocks = 999;
    if (p < 2 || arch < ARCH_HOPPER) return -1;
    uint64_t nbytes = c == COLL_ALLREDUCE ? bytes : bytes / (uint64_t)p;   /* NCCL's count: a rank's share */
    uint64_t busbytes = (c == COLL_ALLREDUCE ? 1 : (uint64_t)p) * nbytes;
    for (size_t i = 0; i < sizeof symk / sizeof *symk; i++) {
        const symk_t *k = &symk[i];
        int b;
        if (k->coll != c || (k->mc && !multimem) || (k->ll && busbytes >= (2ull << 30))) continue;
        if (protos && !(protos >> (k->ll ? PROTO_LL : PROTO_SIMPLE) & 1)) continue;
        double t = symk_time(k, arch, p, nbytes, &b);
        if (best < 0 || t * (1 + 0.025 * b) < best * (1 + 0.025 * best_blocks)) {
            best = t, best_blocks = b;
            if (kernel) *kernel = k->name;
            if (blocks) *blocks = b;
        }
    }
    return best < 0 ? -1 : best * 1e-6;
}
