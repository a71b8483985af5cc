/* doctor.c - a log against its machine, and the structural changes that
 * explain a shortfall (doctor.h). */
#include "doctor.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../topologies/units.h"

/* The causes in the order they are tried (and listed on a tie with no
 * evidence either way): the hardware first, then what NCCL was told. */
static const struct {
    const char *id, *name, *check, *tell;
} causes[] = {
    {"nics", "fewer NICs in use",
     "ibstat (every port Active, LinkUp, at its rate); ibdev2netdev; NCCL_IB_HCA unset or listing every NIC; "
     "NCCL_DEBUG=INFO's \"NET/IB : Using [0]mlx5_0:1/IB [1]...\" lists the NICs NCCL found",
     "NCCL_DEBUG=INFO \"NET/IB : Using [0]...\" lists fewer NICs than the node has; ibstat shows ports Down"},
    {"netcap", "network below its rate (per-NIC or per-connection cap)",
     "ibstat (Rate: 400 for NDR, 200 for HDR); ib_write_bw between two nodes; switch port counters and errors; "
     "RoCE: PFC/ECN, NCCL_IB_TC, NCCL_IB_GID_INDEX; a cloud's per-flow cap: NCCL_IB_QPS_PER_CONNECTION, "
     "NCCL_NCHANNELS_PER_NET_PEER",
     "ib_write_bw between any two nodes below the line rate (every pair alike); ibstat Rate below the NIC's"},
    {"socket", "NCCL's socket transport instead of IB/RoCE",
     "NCCL_DEBUG=INFO says \"Using network IB\", not \"Using network Socket\"; NCCL_IB_DISABLE unset; ibstat; the "
     "container sees /dev/infiniband (--device, rdma shared device plugin)",
     "NCCL_DEBUG=INFO \"Using network Socket\" (not \"Using network IB\")"},
    {"gdr", "GPUDirect RDMA off: network traffic staged through host memory",
     "lsmod | grep -e nvidia_peermem -e nv_peer_mem (or a DMA-BUF capable kernel and driver); NCCL_DEBUG=INFO "
     "connections \"via NET/IB/0/GDRDMA\" (without /GDRDMA: staged); NCCL_NET_GDR_LEVEL unset; nvidia-smi topo -m "
     "(GPU and NIC under one PCIe switch: PIX/PXB)",
     "NCCL_DEBUG=INFO connections \"via NET/IB/0\" without /GDRDMA; lsmod without nvidia_peermem"},
    {"pcie", "PCIe at a lower generation or width",
     "nvidia-smi -q | grep -A2 -e 'Link Generation' -e 'Link Width' (current against max, under load); "
     "lspci -vv (LnkSta against LnkCap) for the GPUs and NICs; nvidia-smi topo -m",
     "nvidia-smi -q / lspci -vv: a GPU's or NIC's link generation or width below its maximum (LnkSta < LnkCap)"},
    {"nvlink", "NVLink links down",
     "nvidia-smi nvlink -s (every link up at its rate); nvidia-smi nvlink -e (errors); nvidia-smi topo -m (NV18 "
     "between every pair on H100); nvidia-fabricmanager running",
     "nvidia-smi nvlink -s: links inactive or below their rate"},
    {"nvls", "NVLS (NVLink SHARP) off",
     "NCCL_NVLS_ENABLE unset; NCCL_DEBUG=INFO \"NVLS multicast support is available\"; nvidia-fabricmanager "
     "running; nvidia-smi -q | grep -i -A2 fabric (State: Completed)",
     "NCCL_DEBUG=INFO \"NVLS multicast support is not available\", or NCCL_NVLS_ENABLE=0 set by environment"},
    {"pxn", "PXN off (sends through the GPU's own NIC, across rails)",
     "NCCL_PXN_DISABLE unset (NCCL_DEBUG=INFO \"NCCL_PXN_DISABLE set by environment\"); NCCL_P2P_PXN_LEVEL; "
     "nvidia-smi topo -m (each GPU's NIC: PIX)",
     "NCCL_DEBUG=INFO \"NCCL_PXN_DISABLE set by environment\""},
    {"channels", "fewer channels",
     "NCCL_MAX_NCHANNELS / NCCL_MIN_NCHANNELS unset; NCCL_DEBUG=INFO \"N coll channels\"; "
     "NCCL_DEBUG_SUBSYS=TUNING's channel{Lo..Hi} on every call",
     "NCCL_DEBUG=INFO \"N coll channels\" below the machine's"},
    {"algo", "an algorithm forced",
     "NCCL_ALGO unset (NCCL_DEBUG=INFO \"NCCL_ALGO set by environment to ...\"); NCCL_DEBUG_SUBSYS=TUNING names "
     "the algorithm of every call; a tuner plugin (NCCL_TUNER_PLUGIN)",
     "NCCL_DEBUG=INFO \"NCCL_ALGO set by environment\"; NCCL_DEBUG_SUBSYS=TUNING names every call's algorithm"},
    {"proto", "a protocol forced",
     "NCCL_PROTO unset (NCCL_DEBUG=INFO \"NCCL_PROTO set by environment to ...\"); NCCL_DEBUG_SUBSYS=TUNING names "
     "the protocol of every call",
     "NCCL_DEBUG=INFO \"NCCL_PROTO set by environment\"; NCCL_DEBUG_SUBSYS=TUNING names every call's protocol"},
    {"slowgpu", "one slow GPU",
     "nvidia-smi -q -d CLOCK,PERFORMANCE on every GPU (throttled: thermal, power, HW slowdown); nvidia-smi nvlink -s "
     "on each; nccl-tests on subsets of the GPUs to find the one",
     "nccl-tests on subsets of the node's GPUs: slow only with the one GPU; nvidia-smi -q -d PERFORMANCE throttle reasons"},
    {"slownode", "one slow node's network",
     "nccl-tests between pairs of nodes to find the slow one; ibstat and the NICs' error counters there; its NICs' "
     "firmware and PCIe (lspci -vv)",
     "nccl-tests between pairs of nodes: slow only on the pairs with the one node (a network cap: on every pair)"},
};
#define NCAUSES ((int)(sizeof causes / sizeof causes[0]))

static int cause_index(const char *id) {
    for (int i = 0; i < NCAUSES; i++)
        if (!strcmp(causes[i].id, id)) return i;
    return -1;
}

const char *doc_cause_name(const char *id) { int i = cause_index(id); return i < 0 ? "?" : causes[i].name; }
const char *doc_cause_check(const char *id) { int i = cause_index(id); return i < 0 ? "" : causes[i].check; }
const char *doc_cause_tell(const char *id) { int i = cause_index(id); return i < 0 ? "" : causes[i].tell; }

const char *doc_verdict_name(doc_verdict_t v) {
    return v == DOC_BELOW ? "below" : v == DOC_ABOVE ? "above" : v == DOC_UNSURE ? "cannot_tell" : "healthy";
}

/* The file's parameter `name`, or NULL. */
static const char *param(const topo_t *t, const char *name) {
    for (int i = 0; i < topo_nparams(t); i++) {
        const char *n, *v;
        topo_param_at(t, i, &n, &v);
        if (!strcmp(n, name)) return v;
    }
    return NULL;
}

/* NVLink's (or xGMI's) parameter in GB/s, and its links a GPU. */
static const char *link_param(const topo_t *t, int *links) {
    const char *fam = topo_params_c(t)->gpu.family;
    *links = !strcmp(fam, "hopper") || !strcmp(fam, "blackwell") ? 18 : !strcmp(fam, "ampere") ? 12
           : !strcmp(fam, "volta") ? 6 : !strncmp(fam, "cdna", 4) ? 7 : 8;
    return param(t, "nvlink_gbps") ? "nvlink_gbps" : param(t, "xgmi_gbps") ? "xgmi_gbps" : NULL;
}

/* Are there links of this kind on t? */
static int link_is(const topo_t *t, int l, int which);
static int has_links(const topo_t *t, int which) {
    for (int l = 0; l < topo_nlinks(t); l += 2)
        if (link_is(t, l, which)) return 1;
    return 0;
}

static int is_cluster(const topo_t *t) {
    int g = topo_params_c(t)->group_size;
    return g > 0 && topo_whole_ranks(t) > g;
}

static int fail(baton_err_t *e, const char *id, const char *why) {
    return err_set(e, BATON_EINVAL, "--cause %s: %s", id, why);
}

static void add_set(doc_change_t *c, const char *fmt, double x) {
    if (c->nsets < 3) snprintf(c->sets[c->nsets++], sizeof c->sets[0], fmt, x);
}

/* One builder a cause: cause id at value arg (NULL or "": its default, x its
 * number) on t into c, which build() has zeroed and named. */
typedef int (*cause_fn)(topo_t *t, const char *id, const char *arg, double x, doc_change_t *c, baton_err_t *e);

static int build_nics(topo_t *t, const char *id, const char *arg, double x, doc_change_t *c, baton_err_t *e) {
    (void)x;
    const char *v = param(t, "nics");
    int have = v ? atoi(v) : 0, k = arg && *arg ? atoi(arg) : have / 2;
    if (!v) return fail(e, id, "the machine has no `nics` parameter");
    if (k < 1 || k >= have) return fail(e, id, "give fewer NICs than the machine's");
    add_set(c, "nics=%.0f", k);
    snprintf(c->arg, sizeof c->arg, "%d", k);
    return 0;
}

static int build_nvlink(topo_t *t, const char *id, const char *arg, double x, doc_change_t *c, baton_err_t *e) {
    (void)x;
    int links;
    const char *name = link_param(t, &links);
    int k = arg && *arg ? atoi(arg) : links / 2;
    if (!name) return fail(e, id, "the machine has no nvlink_gbps or xgmi_gbps parameter");
    if (k < 1 || k >= links) return fail(e, id, "give the links up, fewer than all");
    char fmt[64];
    snprintf(fmt, sizeof fmt, "%s=%%g", name);
    add_set(c, fmt, atof(param(t, name)) * k / links);
    snprintf(c->arg, sizeof c->arg, "%d", k);
    return 0;
}

/* A share of a rate: PCIe's, one GPU's, one node's, or the network's (its
 * nic_bw where the file has one, else its links). */
static int build_share(topo_t *t, const char *id, const char *arg, double x, doc_change_t *c, baton_err_t *e) {
    (void)arg;
    if (x <= 0) x = 0.5;
    if (x >= 1) return fail(e, id, "give a share of the rate, in (0, 1)");
    c->factor = x;
    if (!strcmp(id, "pcie")) c->links = DOC_L_PCIE;
    else if (!strcmp(id, "slowgpu")) c->links = DOC_L_RANK0;
    else if (!strcmp(id, "slownode")) c->links = DOC_L_NODE0;
    else if (param(t, "nic_bw")) {
        double bw;
        const char *why;
        if (units_bandwidth(param(t, "nic_bw"), &bw, &why) < 0) return fail(e, id, "nic_bw does not read");
        add_set(c, "nic_bw=%gGb/s", bw * 8 / 1e9 * x);
    } else c->links = DOC_L_NET;
    if (c->links == DOC_L_NODE0 && !is_cluster(t)) return fail(e, id, "the machine is one node");
    if (c->links && !has_links(t, c->links)) return fail(e, id, "the machine has no such links");
    snprintf(c->arg, sizeof c->arg, "%g", x);
    return 0;
}

/* GDR off is the machine's own knob (gdr: false, topologies/topo_route.c
 * route_no_gdr): the network's traffic goes through each GPU's host, as NCCL
 * diverts it, and PXN goes with it. A user sets the same in a file. */
static int build_gdr(topo_t *t, const char *id, const char *arg, double x, doc_change_t *c, baton_err_t *e) {
    (void)arg, (void)x;
    if (!is_cluster(t) || !has_links(t, DOC_L_GPU_NIC)) return fail(e, id, "the machine has no GPU-NIC links (gdr: false routes around those)");
    if (!topo_params_c(t)->gdr) return fail(e, id, "the machine runs without GPUDirect RDMA already");
    add_set(c, "gdr=false", 0);
    return 0;
}

/* NCCL's socket transport (topo_params_t.socket, docs/decisions/
 * network-software.md) at "BW/LAT": BW GB/s a TCP stream, LAT us a
 * message in each host's stack (default the knobs'): the machine's own
 * knobs, so the NIC links' cap, the stacks' latency and the proxy thread's
 * messages all come with it. Both are a host's: a fast host's stream moves
 * 8 GB/s at 2.5 us a message (the L40S pair), Polaris's about 4 at 5. */
static int build_socket(topo_t *t, const char *id, const char *arg, double x, doc_change_t *c, baton_err_t *e) {
    (void)x;                                    /* atof's reading would take "abc" or "-1" as the default */
    char *end;
    double lat = TOPO_SOCKET_LAT * 1e6;
    x = TOPO_SOCKET_BW / 1e9;
    if (arg && *arg) {
        x = strtod(arg, &end);
        if (end != arg && *end == '/') lat = strtod(end + 1, &end);
        if (*end != '\0' || !(x > 0 && isfinite(x)) || !(lat > 0 && isfinite(lat)))
            return fail(e, id, "BW[/LAT]: GB/s a TCP stream above 0, and us a message (socket=8 or socket=8/2.5)");
    }
    if (!is_cluster(t) || !has_links(t, DOC_L_NET)) return fail(e, id, "the machine has no network");
    if (topo_params_c(t)->socket) return fail(e, id, "the machine runs NCCL's socket transport already");
    add_set(c, "socket=true", 0);
    add_set(c, "socket_bw=%gGB/s", x);
    add_set(c, "socket_latency=%gus", lat);
    snprintf(c->arg, sizeof c->arg, "%g/%g", x, lat);
    return 0;
}

static int build_pxn(topo_t *t, const char *id, const char *arg, double x, doc_change_t *c, baton_err_t *e) {
    (void)arg, (void)x;
    if (!topo_params_c(t)->pxn) return fail(e, id, "the machine runs without PXN already");
    snprintf(c->sets[c->nsets++], sizeof c->sets[0], "pxn=false");
    return 0;
}

static int build_algo(topo_t *t, const char *id, const char *arg, double x, doc_change_t *c, baton_err_t *e) {
    (void)t, (void)x;
    int i = algo_nccl_index_of_name(arg && *arg ? arg : "Ring");
    if (i < 0) return fail(e, id, "not one of NCCL's algorithms (Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT)");
    c->algos = 1u << i;
    return 0;
}

static int build_proto(topo_t *t, const char *id, const char *arg, double x, doc_change_t *c, baton_err_t *e) {
    (void)t, (void)x;
    int i = proto_parse(arg && *arg ? arg : "Simple");
    if (i <= PROTO_NONE || i >= PROTO_COUNT) return fail(e, id, "LL, LL128 or Simple");
    c->protos = 1u << i;
    return 0;
}

/* baton's channels are rings side by side over the machine's links: a
 * cluster's one per NIC (the file's `channels`); a flat node's one ring
 * already has its links. */
static int build_channels(topo_t *t, const char *id, const char *arg, double x, doc_change_t *c, baton_err_t *e) {
    (void)x;
    int have = topo_params_c(t)->channels, k = arg && *arg ? atoi(arg) : have / 2;
    if (have < 2) return fail(e, id, "the machine runs one channel (a flat node's ring has every link)");
    if (k < 1 || k >= have) return fail(e, id, "give fewer channels than the machine's");
    c->channels = k;
    snprintf(c->arg, sizeof c->arg, "%d", k);
    return 0;
}

static int build_nvls(topo_t *t, const char *id, const char *arg, double x, doc_change_t *c, baton_err_t *e) {
    (void)arg, (void)x;
    if (topo_nvls_reducers(t) == 0) return fail(e, id, "the machine has no NVLS (no reducing NVSwitch)");
    c->algos = ((1u << ALGO_NCCL_COUNT) - 1) & ~(1u << algo_nccl_index("nvls")) & ~(1u << algo_nccl_index("nvls_tree"));
    return 0;
}

/* What a cause's value is: a count (nics, nvlink, channels), a share of a
 * rate in (0, 1), none (a switch off), or its own text (socket's RATE/US,
 * an algorithm's or protocol's name). */
enum { ARG_COUNT, ARG_SHARE, ARG_NONE, ARG_TEXT };

static const struct { const char *id; cause_fn fn; int arg; } builders[] = {
    {"nics", build_nics, ARG_COUNT},        {"nvlink", build_nvlink, ARG_COUNT},   {"pcie", build_share, ARG_SHARE},
    {"netcap", build_share, ARG_SHARE},     {"slowgpu", build_share, ARG_SHARE},   {"slownode", build_share, ARG_SHARE},
    {"gdr", build_gdr, ARG_NONE},           {"socket", build_socket, ARG_TEXT},    {"pxn", build_pxn, ARG_NONE},
    {"algo", build_algo, ARG_TEXT},         {"proto", build_proto, ARG_TEXT},      {"channels", build_channels, ARG_COUNT},
    {"nvls", build_nvls, ARG_NONE},
};

/* A value the cause can take, or why not (arg: NULL or "" is its default). */
static int check_arg(const char *id, const char *arg, int kind, baton_err_t *e) {
    if (arg == NULL || *arg == '\0' || kind == ARG_TEXT) return 0;
    if (kind == ARG_NONE) return fail(e, id, "takes no value (write it alone)");
    char *end;
    double x = strtod(arg, &end);
    if (end == arg || *end != '\0' || !isfinite(x))
        return fail(e, id, kind == ARG_SHARE ? "give a share of the rate, a number in (0, 1)" : "give a whole number");
    if (kind == ARG_SHARE && !(x > 0 && x < 1)) return fail(e, id, "give a share of the rate, in (0, 1)");
    if (kind == ARG_COUNT && (x < 1 || x != (double)(int)x)) return fail(e, id, "give a whole number of at least 1");
    return 0;
}

/* Build cause id at value arg (NULL: its default) on t into c. */
static int build(topo_t *t, const char *id, const char *arg, doc_change_t *c, baton_err_t *e) {
    *c = (doc_change_t){0};
    snprintf(c->id, sizeof c->id, "%s", id);
    snprintf(c->arg, sizeof c->arg, "%s", arg ? arg : "");
    for (size_t i = 0; i < sizeof builders / sizeof builders[0]; i++) {
        if (strcmp(id, builders[i].id)) continue;
        int rc = check_arg(id, arg, builders[i].arg, e);
        return rc < 0 ? rc : builders[i].fn(t, id, arg, arg && *arg ? atof(arg) : 0, c, e);
    }
    return fail(e, id, "no such cause (nics, netcap, socket, gdr, pcie, nvlink, nvls, pxn, channels, algo, proto, "
                "slowgpu, slownode)");
}

int doc_change_parse(topo_t *t, const char *spec, doc_change_t *c, baton_err_t *e) {
    char id[16];
    const char *eq = strchr(spec, '=');
    size_t n = eq ? (size_t)(eq - spec) : strlen(spec);
    if (n == 0 || n >= sizeof id) return fail(e, spec, "ID or ID=VALUE");
    memcpy(id, spec, n);
    id[n] = '\0';
    return build(t, id, eq ? eq + 1 : NULL, c, e);
}

/* Link l's ends' kinds (a <= b by enum order) and whether it is of `which`. */
static int link_is(const topo_t *t, int l, int which) {
    const topo_dlink_t *d = topo_dlink(t, l);
    const topo_node_t *x = topo_node(t, d->src), *y = topo_node(t, d->dst);
    node_kind_t a = x->kind < y->kind ? x->kind : y->kind, b = x->kind < y->kind ? y->kind : x->kind;
    int g = topo_params_c(t)->group_size;
    int nic_sw = (x->kind == NODE_NIC && y->kind == NODE_SWITCH) || (x->kind == NODE_SWITCH && y->kind == NODE_NIC);
    switch (which) {
    case DOC_L_GPU_NIC: return a == NODE_GPU && b == NODE_NIC;
    case DOC_L_PCIE: return (a == NODE_GPU && (b == NODE_NIC || b == NODE_CPU)) || (a == NODE_NIC && b == NODE_CPU);
    case DOC_L_NET:     /* the fabric: NICs to switches, and switches to switches that do not reduce in a node */
        return nic_sw || (is_cluster(t) && x->kind == NODE_SWITCH && y->kind == NODE_SWITCH && !x->reduces && !y->reduces);
    case DOC_L_RANK0: return x->rank == 0 || y->rank == 0;
    case DOC_L_NODE0: {
        /* a link of a NIC that one of node 0's GPUs (ranks 0..g-1) reaches directly, to the fabric */
        if (!nic_sw) return 0;
        int nic = x->kind == NODE_NIC ? d->src : d->dst;
        for (int k = 0; k < topo_nlinks(t); k += 2) {
            const topo_dlink_t *o = topo_dlink(t, k);
            int other = o->src == nic ? o->dst : o->dst == nic ? o->src : -1;
            if (other >= 0 && topo_node(t, other)->rank >= 0 && topo_node(t, other)->rank < (g > 0 ? g : 1)) return 1;
        }
        return 0;
    }
    }
    return 0;
}

static int scale_links(topo_t *t, const doc_change_t *c, baton_err_t *e) {
    for (int l = 0; l < topo_nlinks(t); l += 2) {
        if (!link_is(t, l, c->links)) continue;
        double bw = c->rate > 0 ? c->rate : topo_dlink(t, l)->bw * c->factor;
        if (topo_set_link_bw(t, l, bw, e) < 0) return e->code ? e->code : BATON_EINVAL;
    }
    return 0;
}

int doc_change_apply(doc_load_fn load, void *ctx, const doc_change_t *c, topo_t **out, cal_req_t *q,
                     cal_sample_t *s, int n, baton_err_t *e) {
    const char *sets[3] = {c->sets[0], c->sets[1], c->sets[2]};
    *out = load(ctx, sets, c->nsets, e);
    if (*out == NULL) return e->code ? e->code : BATON_EINVAL;
    if (c->links && scale_links(*out, c, e) < 0) { topo_free(*out); *out = NULL; return e->code; }
    if (c->channels) q->opts.channels = c->channels;
    for (int i = 0; i < n; i++) s[i].nccl_algos = c->algos, s[i].protos = c->protos;
    return 0;
}

void doc_change_value(const topo_t *t, const doc_change_t *c, char *buf, size_t n) {
    const char *id = c->id;
    char bw[16], us[16];
    int links;
    const char *lp = link_param(t, &links);
    if (!strcmp(id, "nics")) snprintf(buf, n, "%s NICs a node in use, of %s (--set %s)", c->arg, param(t, "nics"), c->sets[0]);
    else if (!strcmp(id, "nvlink")) snprintf(buf, n, "%s of %d links up a GPU (--set %s; the file's %s=%s)", c->arg, links,
                                             c->sets[0], lp ? lp : "?", lp ? param(t, lp) : "?");
    else if (!strcmp(id, "netcap") && c->nsets) snprintf(buf, n, "%s a NIC (the file's %s; x %s)", c->sets[0] + 7, param(t, "nic_bw"), c->arg);
    else if (!strcmp(id, "netcap")) snprintf(buf, n, "the network at x %s of its rate", c->arg);
    else if (!strcmp(id, "pcie")) snprintf(buf, n, "the GPUs' and NICs' PCIe at x %s of its rate (x 0.5: one generation "
                                           "lower, or x8 for x16)", c->arg);
    else if (!strcmp(id, "gdr")) snprintf(buf, n, "off (--set gdr=false: through each GPU's host, no PXN; NCCL_NET_GDR_LEVEL=LOC)");
    else if (!strcmp(id, "socket") && sscanf(c->arg, "%15[^/]/%15s", bw, us) == 2)
        snprintf(buf, n, "%s GB/s a TCP stream, %s us a message (--set socket=true --set %s --set %s; NCCL_NET=Socket)",
                 bw, us, c->sets[1], c->sets[2]);
    else if (!strcmp(id, "pxn")) snprintf(buf, n, "off (--set pxn=false; NCCL_PXN_DISABLE=1)");
    else if (!strcmp(id, "algo")) snprintf(buf, n, "NCCL_ALGO=%s", c->arg[0] ? c->arg : "Ring");
    else if (!strcmp(id, "proto")) snprintf(buf, n, "NCCL_PROTO=%s", c->arg[0] ? c->arg : "Simple");
    else if (!strcmp(id, "channels")) snprintf(buf, n, "NCCL_MAX_NCHANNELS=%s", c->arg);
    else if (!strcmp(id, "nvls")) snprintf(buf, n, "NCCL_NVLS_ENABLE=0 (NVLS and NVLSTree not run)");
    else if (!strcmp(id, "slowgpu")) snprintf(buf, n, "rank 0's GPU at x %s of its links' rate", c->arg);
    else if (!strcmp(id, "slownode")) snprintf(buf, n, "node 0's NICs at x %s of their rate", c->arg);
    else snprintf(buf, n, "%s", c->arg);
}

/* The values tried for a cause on t: args[0..k). */
static int grid(const topo_t *t, const char *id, char args[][32], int max) {
    int k = 0;
    if (!strcmp(id, "nics")) {
        const char *v = param(t, "nics");
        for (int d = 1, have = v ? atoi(v) : 0; d < have && k < max; d++)
            if (have % d == 0) snprintf(args[k++], 32, "%d", d);
    } else if (!strcmp(id, "nvlink")) {
        int links;
        link_param(t, &links);
        for (int d = links - 1; d >= 1 && k < max; d--) snprintf(args[k++], 32, "%d", d);
    } else if (!strcmp(id, "netcap")) {
        for (int d = 19; d >= 1 && k < max; d--) snprintf(args[k++], 32, "%g", d * 0.05);
    } else if (!strcmp(id, "pcie")) {
        static const char *v[] = {"0.5", "0.25", "0.125"};
        for (int d = 0; d < 3 && k < max; d++) snprintf(args[k++], 32, "%s", v[d]);
    } else if (!strcmp(id, "socket")) {                /* a slow host's stream .. a fast one's, at three costs */
        static const int v[] = {1, 2, 3, 4, 5, 6, 8, 10, 12};
        static const double us[] = {5, 2.5, 1};
        for (int d = 0; d < 27 && k < max; d++) snprintf(args[k++], 32, "%d/%g", v[d / 3], us[d % 3]);
    } else if (!strcmp(id, "slowgpu") || !strcmp(id, "slownode")) {
        static const char *v[] = {"0.9", "0.75", "0.5", "0.33", "0.25", "0.1"};
        for (int d = 0; d < 6 && k < max; d++) snprintf(args[k++], 32, "%s", v[d]);
    } else if (!strcmp(id, "algo")) {
        static const char *v[] = {"Tree", "Ring", "NVLS", "NVLSTree", "CollNetDirect", "CollNetChain", "PAT"};
        for (int d = 0; d < 7 && k < max; d++) snprintf(args[k++], 32, "%s", v[d]);
    } else if (!strcmp(id, "proto")) {
        static const char *v[] = {"LL", "LL128", "Simple"};
        for (int d = 0; d < 3 && k < max; d++) snprintf(args[k++], 32, "%s", v[d]);
    } else if (!strcmp(id, "channels")) {
        for (int d = 1; d < topo_params_c(t)->channels && k < max; d *= 2) snprintf(args[k++], 32, "%d", d);
    } else if (k < max) args[k++][0] = '\0';      /* gdr, pxn, nvls: one change */
    return k;
}

/* The MAPE of machine m under q on samples s (all, and the largest sizes:
 * from `from` bytes up); -1 where it cannot run them. */
static int score(topo_t *m, const cal_req_t *q, const cal_sample_t *s, int n, uint64_t from, cal_pred_t *p, double *all,
                 double *large) {
    baton_err_t ignored = {0};
    if (cal_predict_all(m, q, s, n, -1, p, &ignored) < 0) return -1;
    *all = cal_mape_of(s, p, n, -1, 0);
    *large = cal_mape_of(s, p, n, -1, from);
    return *all < 0 ? -1 : 0;
}

/* The machines doctor builds, one per cause and value, share routes where
 * they route alike (topo_share_routes): most causes scale rates and move
 * no route, and a 512-rank dragonfly routes 262,144 pairs a machine. The
 * healthy machine is the first to share with; a machine that routes unlike
 * every kept one is kept too (up to DOC_TWINS, and DOC_TWIN_ROUTES routes
 * in all: their caches' memory), so the causes' values after it share
 * with it (docs/decisions/speed.md, "doctor's machines"). */
#define DOC_TWINS 8
#define DOC_TWIN_ROUTES (1u << 22)

typedef struct {
    doc_load_fn load;
    void *ctx;
    topo_t *twin[DOC_TWINS];     /* [0]: the healthy machine (the caller's); the rest ours */
    int ntwins;
} machines_t;

/* Cause c's machine into *m (doc_change_apply), sharing a kept one's routes where it can. */
static int machine_for(machines_t *ms, const doc_change_t *c, topo_t **m, cal_req_t *q, cal_sample_t *s, int n,
                       baton_err_t *e) {
    int rc = doc_change_apply(ms->load, ms->ctx, c, m, q, s, n, e);
    for (int i = 0; rc == 0 && i < ms->ntwins && !topo_share_routes(*m, ms->twin[i]); i++) {}
    return rc;
}

/* Done with m: kept if it routes alike none of the kept and there is room
 * (the kept ones' caches as they are now: machines that shared them grew
 * them), else freed. A folded machine shares with none: not kept. */
static void machine_done(machines_t *ms, topo_t *m) {
    if (m == NULL) return;
    uint64_t routes = topo_nroutes(m);
    for (int i = 1; i < ms->ntwins; i++) routes += topo_nroutes(ms->twin[i]);
    if (topo_route_owner(m) == m && !topo_fold_ranks(m) && ms->ntwins < DOC_TWINS && routes <= DOC_TWIN_ROUTES) {
        ms->twin[ms->ntwins++] = m;
        return;
    }
    topo_free(m);
}

static void machines_free(machines_t *ms) {
    for (int i = 1; i < ms->ntwins; i++) topo_free(ms->twin[i]);
    ms->ntwins = 1;
}

/* Cause id tried over its values: the best into *best; 1, 0 where none runs, or an error. */
static int try_cause(machines_t *ms, const cal_req_t *q, const cal_sample_t *s0, int n, uint64_t from, const char *id,
                     doc_cause_t *best, int *tried, baton_err_t *e) {
    char args[32][32];
    topo_t *t = ms->twin[0];
    int k = grid(t, id, args, 32), found = 0;
    cal_sample_t *s = malloc(((size_t)n + 1) * sizeof *s);
    cal_pred_t *p = malloc(((size_t)n + 1) * sizeof *p);
    if (!s || !p) { free(s); free(p); return err_set(e, BATON_ENOMEM, "out of memory"); }
    for (int i = 0; i < k; i++) {
        doc_change_t c;
        baton_err_t ignored = {0};
        topo_t *m = NULL;
        cal_req_t qc = *q;
        double all, large;
        memcpy(s, s0, (size_t)n * sizeof *s);
        if (build(t, id, args[i], &c, &ignored) < 0) continue;
        if (machine_for(ms, &c, &m, &qc, s, n, &ignored) < 0) continue;
        (*tried)++;
        int rc = score(m, &qc, s, n, from, p, &all, &large);
        machine_done(ms, m);
        if (rc < 0 || (found && all >= best->mape_pct)) continue;
        *best = (doc_cause_t){.change = c, .mape_pct = all, .mape_large_pct = large, .check = doc_cause_check(id)};
        found = 1;
    }
    free(s);
    free(p);
    return found;
}

/* What the log's INFO lines say of cause c (c->said, c->evidence). */
static void weigh(const topo_t *t, const ni_info_t *info, doc_cause_t *c) {
    const ni_fact_t *f = info ? ni_find(info, c->change.id) : NULL;
    if (f == NULL) return;
    int said = f->supports;
    if (!strcmp(f->cause, "nics") && f->value > 0 && param(t, "nics"))
        said = f->value < atoi(param(t, "nics")) ? 1 : -1;
    c->said = said;
    snprintf(c->evidence, sizeof c->evidence, "line %d: %s", f->line, f->text);
}

static int by_mape(const void *a, const void *b) {
    const doc_cause_t *x = a, *y = b;
    if (x->mape_pct != y->mape_pct) return x->mape_pct < y->mape_pct ? -1 : 1;
    return cause_index(x->change.id) - cause_index(y->change.id);     /* the catalogue's order: deterministic */
}

/* A cause the log says happened (its command line, its INFO lines) goes
 * first where the times cannot tell it from the best: its error over all
 * sizes within baton's own on this kind of machine (the band) of the
 * best's, and its largest sizes within the band. A socket run on a fast
 * host fits a capped network nearly as well (the L40S pair: 8.5 against
 * 6.6 %); the log's NCCL_IB_DISABLE=1 says which it was. */
static void promote_said(doc_report_t *r) {
    double best = r->ncauses ? r->cause[0].mape_pct : 0, large = fmax(fabs(r->band.large_lo_pct), r->band.large_hi_pct);
    for (int i = r->ntied; i < r->ncauses; i++) {
        doc_cause_t c = r->cause[i];
        if (c.said != 1 || c.mape_pct > best + r->band.hi_pct || c.mape_large_pct > large) continue;
        memmove(&r->cause[1], &r->cause[0], (size_t)i * sizeof c);
        r->cause[0] = c;
        for (int k = 0; k < r->ncauses; k++) r->cause[k].tie = 0;
        r->ntied = 1;
        return;
    }
}

/* Rank: by MAPE; among those tied with the first, what the log says happened
 * first; what it says did not happen goes last, whatever its MAPE. */
static void rank_causes(doc_report_t *r) {
    qsort(r->cause, (size_t)r->ncauses, sizeof r->cause[0], by_mape);
    if (r->ncauses == 0) return;
    double best = r->cause[0].mape_pct, tie = DOC_TIE_PTS;     /* points, not a share: a log's unexplained
                                                                  error at small sizes adds to every cause alike */
    int k = 0;
    while (k < r->ncauses && r->cause[k].mape_pct <= best + tie) k++;
    doc_cause_t tmp[DOC_MAX_CAUSES];
    int m = 0, tied = 0;
    for (int want = 1; want >= 0; want--)                 /* the tie: what the log says happened first */
        for (int i = 0; i < k; i++)
            if (r->cause[i].said == want) tmp[m++] = r->cause[i];
    tied = m;
    for (int i = k; i < r->ncauses; i++)
        if (r->cause[i].said >= 0) tmp[m++] = r->cause[i];
    for (int i = 0; i < r->ncauses; i++)                  /* what it says did not happen: last */
        if (r->cause[i].said < 0) tmp[m++] = r->cause[i];
    memcpy(r->cause, tmp, (size_t)m * sizeof tmp[0]);
    for (int i = 0; i < r->ncauses; i++) r->cause[i].tie = i > 0 && i < tied;
    r->ntied = tied;
    promote_said(r);
}


/* The verdict at the largest sizes: the top quarter of the log's sizes (as
 * the fidelity table's `top` hold-out; at least one), where a healthy run has
 * reached its rate: an 8 GiB run's 64 MiB-1 GiB still climb on GB200 (0.72-0.98
 * of the 32 GiB rate) and would make a mean from 64 MiB read 8 % short. */
static void judge(doc_report_t *r) {
    int from = r->nrows - (r->nrows + 3) / 4;
    double sum = 0, lo, hi;
    double sim_sum = 0;
    r->sim_rows = 0;
    for (int i = from; i < r->nrows; i++) {
        const doc_row_t *w = &r->rows[i];
        sum += w->exp.time_s / w->meas_s;                     /* measured busbw / expected */
        sim_sum += (w->exp.sim_s > 0 ? w->exp.sim_s : w->exp.time_s) / w->meas_s;
        r->sim_rows += w->exp.sim_s > 0;
    }
    r->nlarge = r->nrows - from;
    r->large_from = r->rows[from].bytes;
    r->ratio = sum / r->nlarge;
    r->sim_ratio = sim_sum / r->nlarge;
    r->shortfall_pct = 100 * (1 - r->ratio);
    lo = r->band.large_lo_pct, hi = r->band.large_hi_pct;        /* the band at a log's largest sizes */
    r->band_lo_pct = lo;
    r->verdict = r->ratio < 1 + lo / 100 ? DOC_BELOW : r->ratio > 1 + hi / 100 ? DOC_ABOVE
               : lo < -DOC_WIDEST_BAND ? DOC_UNSURE : DOC_HEALTHY;
}

/* Can PXN off be seen in this log? NCCL relays a send to another node
 * through the peer GPU on the destination's rail (src/graph/paths.cc, NCCL
 * 2.30.7: addInterStep GPU -> GPU -> NET, when the peer's NIC is closer);
 * rings and trees already leave each node through the sending GPU's own NIC,
 * and a fabric of full bisection carries the cross-rail sends PXN off makes
 * at the same rate: on baton's rail-optimized clusters it changes no time at
 * a log's largest sizes beyond the band (the closed forms' one alpha, the
 * longest route, moves its small sizes and, on cluster-a100's LL128 tree,
 * 64 MiB by 4 %). 1 unseen (the verdict would stay healthy), 0 seen, -1 no
 * PXN to turn off; *change_pct: its shortfall at the largest sizes. */
static int pxn_unseen(machines_t *ms, const cal_req_t *q, const cal_sample_t *s0, int n, uint64_t from,
                      double band_lo_pct, double *change_pct) {
    topo_t *t = ms->twin[0];
    doc_change_t c;
    baton_err_t ignored = {0};
    topo_t *m = NULL;
    cal_req_t qc = *q;
    if (build(t, "pxn", NULL, &c, &ignored) < 0) return -1;
    cal_sample_t *s = malloc(((size_t)n + 1) * sizeof *s);
    cal_pred_t *p0 = malloc(((size_t)n + 1) * sizeof *p0), *p1 = malloc(((size_t)n + 1) * sizeof *p1);
    int rc = -1;
    if (s && p0 && p1) {
        memcpy(s, s0, (size_t)n * sizeof *s);
        if (cal_predict_all(t, q, s, n, -1, p0, &ignored) == 0 &&
            machine_for(ms, &c, &m, &qc, s, n, &ignored) == 0 && cal_predict_all(m, &qc, s, n, -1, p1, &ignored) == 0) {
            double sum = 0;
            int k = 0;
            for (int i = 0; i < n; i++)
                if (s[i].bytes >= from) sum += p0[i].time_s / p1[i].time_s, k++;
            *change_pct = k ? 100 * (1 - sum / k) : 0;        /* the verdict's statistic, as judge() takes it */
            rc = *change_pct < fabs(band_lo_pct);
        }
    }
    machine_done(ms, m);
    free(s), free(p0), free(p1);
    return rc;
}

int doc_examine(doc_load_fn load, void *ctx, topo_t *t, const cal_req_t *q, const cal_sample_t *s0, int n,
                const ni_info_t *info, doc_report_t *out, baton_err_t *e) {
    *out = (doc_report_t){0};
    if (n == 0) return err_set(e, BATON_EINVAL, "the log has no rows to judge");
    cal_sample_t *s = malloc(((size_t)n + 1) * sizeof *s);
    out->rows = calloc((size_t)n + 1, sizeof *out->rows);
    if (!s || !out->rows) { free(s); return err_set(e, BATON_ENOMEM, "out of memory"); }
    ex_band(t, s0[0].coll, 0, &out->band);
    for (int i = 0; i < n; i++) {           /* the healthy machine: as NCCL runs unforced */
        s[i] = s0[i];
        s[i].nccl_algos = 0, s[i].protos = 0;
        int ranks = topo_whole_ranks(s[i].machine ? s[i].machine : t);
        doc_row_t *w = &out->rows[out->nrows++];
        *w = (doc_row_t){.bytes = s[i].bytes, .line = s[i].line, .meas_s = s[i].meas_s,
                         .meas_busbw = run_busbw_factor(s[i].coll, ranks) * (double)s[i].bytes / s[i].meas_s / 1e9};
        if (ex_row(t, q, &s[i], &out->band, &w->exp, e) < 0) { free(s); return e->code ? e->code : BATON_EINVAL; }
    }
    judge(out);
    double sum = 0, sum_large = 0;
    int nl = 0;
    for (int i = 0; i < n; i++) {
        double err = fabs(out->rows[i].exp.time_s - s[i].meas_s) / s[i].meas_s;
        sum += err;
        if (s[i].bytes >= out->large_from) sum_large += err, nl++;
    }
    out->healthy_mape = 100 * sum / n;
    machines_t ms = {.load = load, .ctx = ctx, .twin = {t}, .ntwins = 1};
    out->pxn_unseen = pxn_unseen(&ms, q, s, n, out->large_from, out->band_lo_pct, &out->pxn_change_pct);
    out->healthy_mape_large = nl ? 100 * sum_large / nl : out->healthy_mape;
    for (int i = 0; out->verdict == DOC_BELOW && i < NCAUSES && out->ncauses < DOC_MAX_CAUSES; i++) {
        doc_cause_t c;
        int rc = try_cause(&ms, q, s, n, out->large_from, causes[i].id, &c, &out->tried, e);
        if (rc < 0) { machines_free(&ms); free(s); return rc; }
        if (rc == 0 || c.mape_pct >= out->healthy_mape) continue;     /* no better than the healthy machine */
        int links;
        int xgmi = !strcmp(causes[i].id, "nvlink") && link_param(t, &links) && !strcmp(link_param(t, &links), "xgmi_gbps");
        snprintf(c.name, sizeof c.name, "%s", xgmi ? "xGMI links down" : causes[i].name);
        if (xgmi) c.check = "amd-smi xgmi (link status and rate between every pair); rocm-smi --showtopo; amd-smi metric (xGMI errors)";
        doc_change_value(t, &c.change, c.value, sizeof c.value);
        weigh(t, info, &c);
        out->cause[out->ncauses++] = c;
    }
    machines_free(&ms);
    rank_causes(out);
    if (out->ncauses) out->explained = out->cause[0].mape_large_pct <= fabs(out->band_lo_pct);
    free(s);
    return 0;
}

void doc_free(doc_report_t *r) {
    free(r->rows);
    r->rows = NULL;
}
