/* tuning.c - NCCL 2.30.7's tuning model, table for table (see tuning.h).
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
    if (a == TUNING_NVLS_TREE && (p != 2 || m->nvls_channels < 2 || m->nnodes == 1 || nvls_eff[m->arch] == 0 ||
                                  c != COLL_ALLREDUCE))
        return 0;                                       /* NVLS in each node, a tree between them */
    if (a == TUNING_COLLNET_DIRECT && (p != 2 || !m->collnet || !m->nvlink || c != COLL_ALLREDUCE)) return 0;
    if (a == TUNING_PAT && ((c != COLL_ALLGATHER && c != COLL_REDUCE_SCATTER) || p != 2 || m->nnodes != m->nranks ||
                            (m->version ? m->version : 23007) < TUNING_PAT_SINCE))
        return 0;                                       /* ncclPatEnable: one GPU per node, Simple, 2.23+ */
    if (p == 1 && !m->ll128) return 0;
    return 1;
}

double tuning_latency_us(const tuning_machine_t *m, coll_t c, tuning_algo_t a, proto_t proto) {
    int p = proto - PROTO_LL, ppn = m->nranks / m->nnodes, n = m->nranks, nn = m->nnodes;
    int intra_hw = m->nvlink ? HW_NVLINK : HW_PCI;
    double lat = base_lat[a][p], intra = hw_lat[intra_hw][a][p];
    double inter = hw_lat[HW_NET][ppn == 1 ? TUNING_TREE : a][p];
    if (a == TUNING_RING && (c == COLL_BROADCAST || c == COLL_REDUCE)) {
        int hw = nn == 1 ? intra_hw : HW_NET;
        return lat + nsteps(c, n) * (p == 2 ? hw_lat[hw][TUNING_TREE][2] : hw_lat[hw][TUNING_RING][p]);
    }
    if (a == TUNING_RING) {
        double overhead = nn > 1 ? (m->cpu_amd ? 2.0 : 1.0) * (p == 2 ? 3 : 1) : 0;
        int inter_steps = nn == 1 ? 0 : c == COLL_ALLREDUCE ? 2 * (nn - 1) : nn - 1;
        if (overhead > intra) intra = overhead;
        return lat + (nsteps(c, n) - inter_steps) * intra + inter_steps * inter;
    }
    if (a == TUNING_TREE) return lat + 2 * ((ppn - 1) * intra + log2i(nn) * inter);
    if (a == TUNING_COLLNET_DIRECT) return lat + 2 * ((ppn > 1 ? 1 : 0) * intra + (ppn - 1) * 0.4) + inter;
    if (a == TUNING_NVLS_TREE) return lat + intra + 2 * log2i(nn) * inter;
    if (a == TUNING_PAT) return lat + log2i(nn) * (inter / 3.5) + n * 2.8;   /* "still a linear part" */
    return intra + (nn > 1 ? inter : 0);                    /* NVLS: the base is dropped */
}

/* NCCL's algorithm bandwidth in GB/s (section 1.4); 0: disabled. */
static double algo_bw(const tuning_machine_t *m, coll_t c, tuning_algo_t a, int p) {
    int col = m->nnodes <= 2 ? m->nnodes - 1 : 2, n = m->nranks, ppn = n / m->nnodes;
    int cpu_row = m->nnodes == 1 ? (int)m->arch : m->cpu_amd ? 1 : 0;
    double ll_cap = ll_max[cpu_row][col], bus;
    int nvls = a == TUNING_NVLS || a == TUNING_NVLS_TREE, nch = nvls ? m->nvls_channels : m->nchannels;
    if (nvls) {
        double intra = m->nvls_bw * nvls_eff[m->arch] * (nch - 1) / nch;
        intra *= c == COLL_ALLREDUCE ? 2 : (double)(ppn - 1) / ppn;
        double inter = m->nvls_inter * (a == TUNING_NVLS_TREE && m->nnodes <= 2 ? 2 : 1);   /* two nodes: both ways */
        double ch = m->nnodes > 1 && inter < intra ? inter : intra;                      /* min(intraBw, interBw) */
        if (a == TUNING_NVLS_TREE && nvls_tree_max[m->arch][col] < ch) ch = nvls_tree_max[m->arch][col];
        bus = nch * ch;
    } else {
        bus = nch * m->bw;
    }
    if (a == TUNING_RING && p == 0) bus = bus * 0.5 < ll_cap ? bus * 0.5 : ll_cap;
    if (a == TUNING_RING && p == 1) bus = 0.92 * bus < nch * ring_ll128_max[m->arch][col] ? 0.92 * bus : nch * ring_ll128_max[m->arch][col];
    if (a == TUNING_TREE && c == COLL_ALLREDUCE) bus = 0.92 * bus < nch * tree_max[m->arch][col] ? 0.92 * bus : nch * tree_max[m->arch][col];
    if (a == TUNING_TREE && p == 0) bus = bus / 3.8 < ll_cap ? bus / 3.8 : ll_cap;
    if (a == TUNING_TREE && p == 1) {
        double x = bus * (m->nnodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0), cap = nch * tree_ll128_max[m->arch][col];
        bus = x < cap ? x : cap;
    }
    if (a == TUNING_COLLNET_DIRECT) {                  /* Simple only: the heads' share of the node's channels */
        double factor = (double)ppn / nch;
        factor -= (factor - 1) / 2;
        bus /= factor;
        if (m->arch >= ARCH_HOPPER) bus *= 0.85;
    }
    if (a == TUNING_PAT) bus *= (m->version ? m->version : 23007) < TUNING_PAT_075_SINCE ? 0.85 : 0.75;
    if (a == TUNING_TREE || a == TUNING_COLLNET_DIRECT) return bus * 0.5;
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

int tuning_pick(const tuning_machine_t *m, coll_t c, uint64_t n, tuning_algo_t *a, proto_t *p, double *time_s) {
    int found = -1;
    for (int ai = 0; ai < TUNING_ALGO_COUNT; ai++)
        for (int pi = PROTO_LL; pi <= PROTO_SIMPLE; pi++) {
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

double tuning_sym_time(arch_t arch, int p, coll_t c, uint64_t bytes, int multimem, const char **kernel, int *blocks) {
    double best = -1;
    int best_blocks = 999;
    if (p < 2 || arch < ARCH_HOPPER) return -1;
    uint64_t nbytes = c == COLL_ALLREDUCE ? bytes : bytes / (uint64_t)p;   /* NCCL's count: a rank's share */
    uint64_t busbytes = (c == COLL_ALLREDUCE ? 1 : (uint64_t)p) * nbytes;
    for (size_t i = 0; i < sizeof symk / sizeof *symk; i++) {
        const symk_t *k = &symk[i];
        int b;
        if (k->coll != c || (k->mc && !multimem) || (k->ll && busbytes >= (2ull << 30))) continue;
        double t = symk_time(k, arch, p, nbytes, &b);
        if (best < 0 || t * (1 + 0.025 * b) < best * (1 + 0.025 * best_blocks)) {
            best = t, best_blocks = b;
            if (kernel) *kernel = k->name;
            if (blocks) *blocks = b;
        }
    }
    return best < 0 ? -1 : best * 1e-6;
}
