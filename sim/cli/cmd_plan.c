/* cmd_plan.c - `baton plan -t TOPO [-c COLL] [--sizes SPEC] [--sim]`: NCCL's
 * plan on the machine, as NCCL_DEBUG=INFO would show it: how each pair of a
 * node's GPUs is connected, the rings the search found (topologies/graph.h)
 * and, per size, the algorithm, protocol and channels `-a nccl` runs. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../topologies/graph.h"
#include "../../topologies/knobs.h"
#include "../../topologies/topo_yaml.h"
#include "../../topologies/units.h"
#include "cmd.h"
#include "../nccl/nccl.h"
#include "../answer/report.h"
#include "../answer/run.h"
#include "../answer/select.h"
#include "../../validate/tunerfile.h"

static const char help[] =
    "usage: baton plan -t TOPO.yaml [-c COLL] [--sizes SPEC] [--sim] [--fold N] [--json] [--tuner FILE] [--set K=V ...]\n"
    "\n"
    "NCCL's plan on the machine: the path between every two GPUs of a node (NV\n"
    "a direct link, SW switches only, PHB one CPU, SYS two CPUs, NET a NIC), the\n"
    "rings NCCL's search finds over the best of them (channels, order, speed),\n"
    "and per size two answers: what baton expects NCCL to run and how long it\n"
    "takes (`-a nccl`: algorithm, protocol, channels, time, busbw), and what\n"
    "NCCL's own cost model believes (`--model nccl`: its pick and its time).\n"
    "  -c, --coll NAME   allreduce (default), reducescatter, allgather, ...\n"
    "      --sizes SPEC  LO:HI[:xF] or a list (default 1KiB:1GiB:x32)\n"
    "      --sim         time each size with the simulator (default: closed form)\n"
    "      --fold N      a cluster of N nodes or more (default " CMD_FOLD_NODES_S ") is built only\n"
    "                    where its routes differ, as predict's --fold; 0: never\n"
    "      --json        one JSON object: NCCL's view of the machine (nccl_view),\n"
    "                    the columns' names (columns) and per size what baton\n"
    "                    expects NCCL to run (its fields) beside what NCCL's own\n"
    "                    cost model believes (nccl_model; null where it has no\n"
    "                    such collective)\n"
    "      --tuner FILE  NCCL's example tuner CSV (baton select --format nccl-tuner):\n"
    "                    both columns take its first row that fits a size and that\n"
    "                    NCCL can run there (algorithm, protocol, channels), NCCL's\n"
    "                    own choice where none does, as NCCL with the file loaded\n"
    "                    by its example tuner plugin; default $NCCL_TUNER_CONFIG_FILE\n"
    "example:\n"
    "  baton plan -t topologies/dgx1-v100.yaml --sizes 8B:128MiB:x16\n";

static void paths(const topo_t *t, const graph_t *g) {
    printf("paths (node 0, as `nvidia-smi topo -m`; GB/s is the route's bottleneck)\n        ");
    for (int b = 0; b < g->group; b++) printf(" %10.10s", topo_rank_name(t, b));
    printf("\n");
    for (int a = 0; a < g->group; a++) {
        printf("%-8.8s", topo_rank_name(t, a));
        for (int b = 0; b < g->group; b++) {
            const graph_hop_t *h = &g->path[a * g->group + b];
            if (a == b) printf(" %10s", "X");
            else printf(" %4s %5.4g", graph_path_name(h->type), h->bw / 1e9);
        }
        printf("\n");
    }
}

/* The rings NCCL's search finds (graph_rings), as NCCL_DEBUG=INFO lists
 * them, and the channels NCCL runs on them: each ring twice. */
static void rings(const topo_t *t, const graph_t *g) {
    if (g->nrings == 0 && g->stride > 1) {
        printf("rings: every pair of GPUs in a node is alike; the rings are rank order, channel c from local rank\n"
               "       %d c + 1 to %d c: %d GPUs share each NIC, and each ring goes in and out by one\n", g->stride, g->stride, g->stride);
        return;
    }
    if (g->nrings == 0) {
        printf("rings: every pair of GPUs in a node is alike; the rings are rank order, rotated per channel\n");
        return;
    }
    printf("rings: %d over %s paths at %.4g GB/s each (%.4g GB/s in all), ranks in ring order\n", g->nrings,
           graph_path_name(g->worst), g->speed / 1e9, g->nrings * g->speed / 1e9);
    for (int c = 0; c < g->nrings; c++) {
        printf("  channel %2d/%d :", c, g->nrings);
        for (int i = 0; i < g->group; i++) printf(" %d", g->local[c * g->group + i]);
        printf("   (%s", topo_rank_name(t, g->local[c * g->group]));
        for (int i = 1; i < g->group; i++) printf(" %s", topo_rank_name(t, g->local[c * g->group + i]));
        printf(")\n");
    }
    if (g->across)
        printf("  each ring enters a node by its first GPU's NIC and leaves by its last's; every node repeats these orders\n");
    printf("  NCCL (RCCL too) runs each ring twice, %d channels (src/graph/connect.cc ncclTopoPostset: its\n"
           "  channels are twice its search's); baton's ring rows run the %d rings (docs/decisions/network-software.md)\n",
           2 * g->nrings, g->nrings);
}

static void pxn(const topo_t *t) {
    if (topo_params_c(t)->pxn)
        printf("PXN: a GPU sends to another node through the NIC on the destination's rail, over NVLink to that "
               "NIC's GPU first (`--set pxn=false`: through its own NIC)\n");
}

/* NCCL's socket transport, as NCCL_DEBUG=INFO says it (net_socket.cc) and
 * what baton makes of it (topo_params_t.socket). */
static void socket_lines(const topo_t *t) {
    const topo_params_t *p = topo_params_c(t);
    if (!p->socket) return;
    int th = p->socket_threads, streams = th > 1 ? th : 1;
    printf("network: NCCL's socket transport (`socket: true`; NCCL_DEBUG=INFO \"Using network Socket\"), no GPUDirect\n");
    if (th > 0) printf("  NET/Socket: Using %d threads and 1 sockets per thread (NCCL_SOCKET_NTHREADS)\n", th);
    else printf("  no helper threads (NCCL_SOCKET_NTHREADS 0, NCCL's default off AWS and GCP): the proxy thread sends\n");
    printf("  each NIC carries at most %.4g GB/s each way (%d TCP stream%s at socket_bw %.4g GB/s), a message pays\n"
           "  %.4g us in each host's TCP stack%s; NCCL's own model still sees the NICs' speed\n",
           p->socket_bw * streams / 1e9, streams, streams > 1 ? "s" : "", p->socket_bw / 1e9, p->socket_lat * 1e6,
           th > 0 ? "" : ", one after another on its rank's thread");
}

/* Software tag matching (topo_params_t.sw_match): libfabric's CXI
 * provider says it with FI_LOG_LEVEL, NCCL does not; what baton makes of it. */
static void match_lines(const topo_t *t) {
    const topo_params_t *p = topo_params_c(t);
    if (!p->sw_match) return;
    if (p->socket) {
        printf("network: software_matching is libfabric's, which NCCL's socket transport does not use: nothing\n");
        return;
    }
    printf("network: tags matched in software on the host (`software_matching: true`; FI_CXI_RX_MATCH_MODE=software):\n"
           "  each network message a rank sends or receives costs its proxy thread %.4g us, one after another, and\n"
           "  waits that long on its way; a message of more than %d bytes on the wire (libfabric CXI:\n"
           "  FI_CXI_RDZV_THRESHOLD + FI_CXI_RDZV_GET_MIN) goes by rendezvous and ", p->match_lat * 1e6, p->rdzv_above);
    if (p->rdzv_lat > 0)
        printf("waits %.4g us more for the host to match\n  its header and fetch the rest\n", p->rdzv_lat * 1e6);
    else
        printf("waits no longer: rendezvous_latency 0\n");
    printf("  (rendezvous_latency, rendezvous_above); NCCL's own model does not know\n");
}

/* Inline sends (topo_params_t.inline_lat): what baton makes of libfabric's
 * IDCs from GPU memory; neither NCCL nor libfabric says it. */
static void inline_lines(const topo_t *t) {
    const topo_params_t *p = topo_params_c(t);
    if (topo_inline_lat(t) <= 0) return;
    printf("network: a send of at most %d bytes goes inline in the command the CPU writes (libfabric CXI's IDC),\n"
           "  so one from GPU memory (Simple's buffers under GPUDirect RDMA) is copied out first:\n"
           "  %.4g us each, one after another on its rank's proxy thread (inline_latency, inline_max); NCCL's own\n"
           "  model does not know\n", p->inline_max, p->inline_lat * 1e6);
}

/* The proxy's operations (topo_params_t.op_lat): what baton makes of the
 * proxy thread's own work on each connection a call uses across nodes;
 * neither NCCL nor the network's library says it. */
static void op_lines(const topo_t *t) {
    const topo_params_t *p = topo_params_c(t);
    if (topo_op_lat(t) <= 0) return;
    printf("network: the proxy thread spends %.4g us on each operation a call gives it, one after another: one a\n"
           "  channel, peer on another node and direction (an all-to-all's 2 x its remote peers; a ring's or tree's\n"
           "  few) (proxy_op_latency); NCCL's own model does not know\n", p->op_lat * 1e6);
}

/* CollNet: the fabric's reducing switches, as NCCL_DEBUG=INFO names the
 * SHARP trees (one per rail here). */
static void sharp(const topo_t *t) {
    const topo_sharp_t *sh = &topo_params_c(t)->sharp;
    if (sh->rails == 0) return;
    printf("SHARP (CollNet): %d rail%s, each reduced in %d leaf switch%s of up to %d nodes%s: -a collnet\n", sh->rails,
           sh->rails > 1 ? "s" : "", sh->leaves, sh->leaves > 1 ? "es" : "", sh->per_leaf,
           sh->leaves > 1 ? " and one spine that adds the leaves' sums" : "");
    for (int r = 0; r < sh->rails; r++) {
        int l0 = sh->first + r * sh->leaves;
        printf("  rail %d: %s %s", r, sh->leaves > 1 ? "leaves" : "leaf", topo_reducer_name(t, l0));
        if (sh->leaves > 1)
            printf(" .. %s, spine %s", topo_reducer_name(t, l0 + sh->leaves - 1),
                   topo_reducer_name(t, sh->first + sh->rails * sh->leaves + r));
        printf("\n");
    }
}

/* What the machine's NCCL is told (nccl_env:), which both columns follow. */
static void nccl_env(const topo_t *t) {
    char env[320];
    if (cmd_nccl_env_text(t, env, sizeof env)) printf("NCCL is told (nccl_env):%s; both columns pick and size within it\n", env);
}

/* The tuner file the plan follows, if any: its rows and how many apply
 * (put ahead of the machine's rules: tuned). */
typedef struct {
    const char *path;
    tuner_table_t tab;
    int tuned;               /* rows put as the machine's first rules */
    char ignored[512];       /* rows NCCL cannot run there (logplan_rule_text's, "; " between) */
} plan_tuner_t;

/* The library when it is not NCCL (`library:`): its switches and rules
 * (the first `skip` the tuner's, said apart). */
static void library(const topo_t *t, int skip) {
    const topo_library_t *l = &topo_params_c(t)->lib;
    char lo[32], hi[32], al[32];
    if (l->name[0] == 0 && l->ll128 < 0 && l->nrules == skip) return;
    int said = 0;
    for (int i = skip; i < l->nrules; i++) said |= l->rule[i].nccl;
    printf("library: %s%s%s%s\n", l->name[0] ? l->name : "NCCL", !l->name[0] && l->nrules ? ", with rules a calibration read "
           "off its logs" : "", said ? " (in NCCL's names: what its TUNING lines said it ran)" : "",
           l->ll128 == 0 ? ", LL128 off" : "");
    for (int i = skip; i < l->nrules; i++) {
        const topo_lib_rule_t *r = &l->rule[i];
        units_fmt_size(r->min, lo, sizeof lo);
        units_fmt_size(r->max, hi, sizeof hi);
        units_fmt_size(r->align, al, sizeof al);
        printf("  rule: %s on %d ranks, %s..%s%s%s: %s%s/%s", coll_name((coll_t)r->coll), r->ranks, lo, hi,
               r->align > 1 ? " in multiples of " : "", r->align > 1 ? al : "", r->nccl ? "NCCL's " : "", r->algo,
               proto_name((proto_t)r->proto));
        if (r->channels) printf(" on %d channel%s", r->channels, r->channels > 1 ? "s" : "");
        printf("\n");
    }
}

/* NCCL's own model with the tuner file: its first row for the size whose
 * pair the model times (NCCL_ALGO/NCCL_PROTO of the machine's nccl_env
 * allowing it) gets cost 0, so that pair; none: the model's own pick. */
static int model_tuned(topo_t *t, const plan_tuner_t *tu, const tuning_machine_t *m, const run_req_t *q, run_out_t *o,
                       baton_err_t *e) {
    const tuner_rule_t *r;
    for (int k = 0; tu && (r = tunerfile_nth(&tu->tab, q->coll, q->bytes, m->nnodes, m->nranks, k)); k++) {
        run_req_t env = *q, x = *q;
        unsigned am = 1u << algo_nccl_index_of_name(tunerfile_nccl_algo(r)), pm = 1u << tunerfile_proto(r);
        ncclrule_env(t, &env);
        if ((env.nccl_algos && !(env.nccl_algos & am)) || (env.protos && !(env.protos & pm))) continue;
        if (pm == 1u << PROTO_LL128 && !view_ll128(t, q->coll, env.protos)) continue;   /* off: NCCL's cost table */
        x.nccl_algos = am, x.protos = pm;                  /* says IGNORE, a tuner cannot bring it back */
        baton_err_t quiet = {0};
        if (plan_run(t, &x, o, &quiet) == 0) return 0;             /* else IGNORE: the next row's turn */
    }
    return plan_run(t, q, o, e);
}

/* Every size's answers, -a nccl's into ours[] and NCCL's own model's into
 * nccls[] (and NCCL's view of the machine into *m); BATON_EWHOLE where a
 * folded cluster cannot answer one. The tuner's rows go first on t. */
static int per_size(topo_t *t, coll_t coll, const uint64_t *sizes, int n, int sim, tuning_machine_t *m, run_out_t *ours,
                    run_out_t *nccls, plan_tuner_t *tu, baton_err_t *e) {
    algo_opts_t none = {0};
    int rc = view_call(t, &none, coll, 0, m, e);
    if (rc == 0 && tu) rc = tu->tuned = tunerfile_apply(t, &tu->tab, tu->path, tu->ignored, sizeof tu->ignored, e);
    for (int i = 0; i < n && rc >= 0; i++) {
        uint64_t unit = 1, bytes = coll == COLL_ALLTOALL ? coll_whole_bytes(coll, topo_whole_ranks(t), sizes[i], &unit) : sizes[i];
        if (bytes == 0) {                          /* an all-to-all as nccl-tests runs it: nothing below a float a peer */
            ours[i] = nccls[i] = (run_out_t){.bytes = unit};
            continue;
        }
        run_req_t q = {.coll = coll, .algo = "nccl", .bytes = bytes, .predict = !sim, .proto = RUN_PROTO_AUTO};
        if ((rc = run_collective(t, &q, &ours[i], e)) < 0) break;
        engine_result_free(&ours[i].eng);
        q.predict = 1;
        baton_err_t why = {0};                    /* NCCL's model has no all-to-all (p2p): its column says so */
        if ((rc = model_tuned(t, tu, m, &q, &nccls[i], &why)) == BATON_EUNSUP) nccls[i].algo = NULL, rc = 0;
        else if (rc < 0) *e = why;
    }
    return rc < 0 ? rc : 0;
}

/* What the tuner file does here, above the sizes. */
static void tuner_lines(const tuning_machine_t *m, const plan_tuner_t *tu) {
    if (tu == NULL) return;
    printf("tuner: %s (NCCL's example tuner CSV): %d of its %d row%s fit%s this machine (nNodes %d, nRanks %d, one call, "
           "unregistered buffers); both columns take the first that fits a size, NCCL's own choice where none does\n",
           tu->path, tu->tuned, tu->tab.n, tu->tab.n > 1 ? "s" : "", tu->tuned == 1 ? "s" : "", m->nnodes, m->nranks);
    if (tu->ignored[0]) printf("  rows NCCL cannot run here (its cost table's IGNORE), passed over: %s\n", tu->ignored);
}

/* What a rank's bytes to and from its NVLS switch move at in baton: the
 * file's efficiency x g/(g - 1), g the GPUs a switch serves (topo_nvls_eff:
 * NVLS's bus bandwidth held across domain sizes, NCCL 2.28.3's model). */
static void nvls_rate_line(const topo_t *t) {
    double e = topo_params_c(t)->nvls_eff, g = topo_nvls_domain(t);
    if (g == 0) return;
    if (g <= 1) {
        printf("  baton: NVLS at nvls_efficiency %g of the switch's links (one GPU a switch)\n", e);
        return;
    }
    printf("  baton: NVLS at nvls_efficiency %g x %g/%g = %.4g of the switch's links (a domain of %g GPUs;\n"
           "      NVLS's bus bandwidth the same at every domain size, as NCCL's model since 2.28.3)\n",
           e, g, g - 1, topo_nvls_eff(t), g);
}

/* The NVLink domains and NVLS as NCCL sets them up (view_nvls), in the
 * words of its NCCL_DEBUG=INFO lines (init.cc initNvlDomainInfo, nvls.cc
 * "NVLS comm" and "NVLS tuning"), each with where the number comes from. */
static void nvls_lines(topo_t *t, const tuning_machine_t *m) {
    view_nvls_t x;
    char v[16];
    view_nvls(t, m, &x);
    knobs_version_text(topo_params_c(t)->lib.nccl_version ? topo_params_c(t)->lib.nccl_version : TOPO_NCCL_TABLES, v, sizeof v);
    printf("  NCCL %s INFO NVLink domains: %d domains, min ranks per domain: %d, max ranks per domain: %d\n"
           "      (a domain is NCCL's node%s: rings, trees and NVLS are planned per domain)\n", v, x.domains,
           x.per_domain, x.per_domain, x.per_domain > 8 ? ", here a multi-node NVLink clique (MNNVL)" : "");
    if (x.heads == 0) {
        printf("  NCCL %s INFO NVLS multicast support is not available (%s)\n", v,
               m->arch < ARCH_HOPPER ? "before sm90" : "no switch that reduces in a domain");
        return;
    }
    printf("  NCCL %s INFO NVLS comm headRank 0 nHeads %d nvlsRanks %d\n"
           "      (search.cc: min(NCCL_MAX_NVLS_ARITY 32, %s %d))\n", v, x.heads, x.per_domain,
           x.domains > 1 ? "the domain's GPUs with a NIC" : "the domain's GPUs", x.candidates);
    printf("  NCCL %s INFO NVLS tuning: nChannels %d chunkSize %d treeMaxChunkSize %d\n"
           "      (nvls.cc: %s)\n", v, x.channels, x.chunk, x.tree_chunk, x.why);
    nvls_rate_line(t);
}

/* Why LL128 is off where the way to the NICs turns it off (view_ll128), not
 * the file's NCCL_PROTO or library: NCCL says nothing of it, and it changes
 * what runs at middle sizes. */
static void ll128_line(topo_t *t, const tuning_machine_t *m, coll_t coll) {
    const graph_t *g = graph_get(t, NULL);
    if (m->ll128 || !m->nvlink || view_ll128_said(t, coll, 0) >= 0) return;   /* on, PCI, or the file said so */
    if (g == NULL || g->inter > GRAPH_PATH_SOCKETS) return;
    printf("LL128 off: the GPUs reach their NICs %s at best; NCCL's tuning.cc enables\n"
           "  LL128 across nodes only up to PXB (PXN from sm90), NCCL_PROTO=LL128 forces it\n",
           g->inter == GRAPH_PATH_HOST ? "through the host bridge (PHB)" : "across the sockets (SYS)");
}

static void print_sizes(topo_t *t, coll_t coll, const tuning_machine_t *m, const uint64_t *sizes, int n,
                        const run_out_t *ours, const run_out_t *nccls) {
    char v[48] = "";
    if (m->version) {                                  /* the machine names its NCCL: whose tables these are */
        char t_[16];
        knobs_version_text(m->version, t_, sizeof t_);
        snprintf(v, sizeof v, " (NCCL %s's tables)", t_);
    }
    printf("NCCL's model%s sees %d node(s), %s, %d channels at %.4g GB/s each%s\n", v, m->nnodes,
           m->nvlink ? "NVLink" : "PCI", m->nchannels, m->bw,
           m->nvls_channels ? " and NVLS" : "");
    ll128_line(t, m, coll);
    if (m->nvls_channels || topo_params_c(t)->group_size > 8) nvls_lines(t, m);
    printf("%12s  %-10s %-7s %8s %12s %10s   %s\n", "size", "algorithm", "proto", "channels", "time", "busbw",
           "NCCL's own cost model believes");
    int rounded = -1;
    for (int i = 0; i < n; i++) {
        const run_out_t *o = &ours[i], *x = &nccls[i];
        char sz[32], tm[32], tx[32];
        units_fmt_size(sizes[i], sz, sizeof sz);
        if (o->algo == NULL) {
            printf("%12s  - (an all-to-all on %d ranks runs nothing below %llu bytes, a float a peer, as nccl-tests)\n", sz,
                   m->nranks, (unsigned long long)o->bytes);
            continue;
        }
        if (o->bytes != sizes[i]) rounded = i, units_fmt_size(o->bytes, sz, sizeof sz);   /* the size it ran */
        units_fmt_time(o->time_s, tm, sizeof tm);
        units_fmt_time(x->time_s, tx, sizeof tx);
        printf("%12s  %-10s %-7s %8d %12s %7.2f GB/s   ", sz, o->algo->name, proto_name(o->proto),
               report_plan_channels(o, m), tm, o->busbw_GBps);
        if (x->algo) printf("%s/%s %s\n", x->algo->name, proto_name(x->proto), tx);
        else if (m->nranks <= 1) printf("- (one rank: nothing moves)\n");
        else printf("- (its model has no %s)\n", coll_name(o->algo->coll));
    }
    if (rounded >= 0) {
        char sz[32];
        units_fmt_size(sizes[rounded], sz, sizeof sz);
        printf("sizes: an all-to-all runs a size as nccl-tests does, rounded down to a whole float a peer, and the\n"
               "       table says the size it ran (%s: %llu bytes on %d ranks)\n", sz,
               (unsigned long long)ours[rounded].bytes, m->nranks);
    }
}

/* The machine as NCCL plans on it, then the sizes' rows: text. */
static void print_plan(topo_t *t, const graph_t *g, coll_t coll, int sim, const tuning_machine_t *m, const uint64_t *sizes,
                       int n, const run_out_t *ours, const run_out_t *nccls, const plan_tuner_t *tu) {
    printf("plan for %s: %d ranks, %d per node\n", topo_name(t), topo_whole_ranks(t), g->group);
    if (g->path) paths(t, g);
    rings(t, g);
    pxn(t);
    socket_lines(t);
    match_lines(t);
    inline_lines(t);
    op_lines(t);
    sharp(t);
    library(t, tu ? tu->tuned : 0);
    nccl_env(t);
    tuner_lines(m, tu);
    printf("%s: per size, %s (-a nccl; %s),\n%*s and at the right %s (--model nccl)\n", coll_name(coll),
           REPORT_PLAN_EXPECTS, sim ? "simulated" : "closed forms", (int)strlen(coll_name(coll)), "", REPORT_PLAN_BELIEVES);
    print_sizes(t, coll, m, sizes, n, ours, nccls);
    char line[192];
    if (cmd_folded_line(t, "folded: ", line, sizeof line)) fputs(line, stdout);
}

/* The machine's plan: loaded folded where it is a large cluster, and the
 * whole loaded instead when a size needs every rank (the simulator, a step
 * pattern); printed (or as JSON) once every size has its answer. */
static int plan(const char *file, const cmd_sets_t *sets, coll_t coll, const uint64_t *sizes, int n, int sim, int fold,
                int json, plan_tuner_t *tu, baton_err_t *e) {
    run_out_t *ours = calloc((size_t)n + 1, sizeof *ours), *nccls = calloc((size_t)n + 1, sizeof *nccls);
    tuning_machine_t m;
    topo_t *t = ours && nccls ? cmd_load_topo_folded(file, sets->v, sets->n, fold, e) : NULL;
    if (ours == NULL || nccls == NULL) err_set(e, BATON_ENOMEM, "out of memory");
    int rc = t ? per_size(t, coll, sizes, n, sim, &m, ours, nccls, tu, e) : -1;
    int whole = cmd_unfold(rc, &t, file, sets->v, sets->n, e);        /* a size needs every rank */
    if (whole) rc = whole > 0 ? per_size(t, coll, sizes, n, sim, &m, ours, nccls, tu, e) : -1;
    const graph_t *g = rc == 0 ? graph_get(t, e) : NULL;
    char *text = g && json ? report_plan_json(topo_name(t), topo_whole_ranks(t), g->group, coll, &m, n, ours, nccls) : NULL;
    if (g && json && text == NULL) g = NULL, err_set(e, BATON_ENOMEM, "out of memory");
    if (text) puts(text);
    else if (g) print_plan(t, g, coll, sim, &m, sizes, n, ours, nccls, tu);
    free(text);
    free(ours);
    free(nccls);
    topo_free(t);
    return g ? 0 : -1;
}

int cmd_plan(int argc, char **argv) {
    static const struct option opts[] = {{"topo", required_argument, 0, 't'}, {"coll", required_argument, 0, 'c'},
                                         {"sizes", required_argument, 0, 's'}, {"sim", no_argument, 0, 'm'},
                                         {"set", required_argument, 0, 'S'}, {"fold", required_argument, 0, 'f'},
                                         {"json", no_argument, 0, 'j'}, {"help", no_argument, 0, 'h'},
                                         {"tuner", required_argument, 0, 'T'}, {0, 0, 0, 0}};
    const char *file = NULL, *coll_s = "allreduce", *sizes_s = "1KiB:1GiB:x32", *why, *tuner = NULL;
    int ch, sim = 0, fold = CMD_FOLD_NODES, json = 0;
    cmd_sets_t sets = {0};
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":t:c:h", opts, NULL)) != -1) {
        if (ch == 't') file = optarg;
        else if (ch == 'c') coll_s = optarg;
        else if (ch == 's') sizes_s = optarg;
        else if (ch == 'm') sim = 1;
        else if (ch == 'j') json = 1;
        else if (ch == 'T') tuner = optarg;
        else if (ch == 'f') { if (cmd_fold_arg("plan", optarg, &fold)) return EXIT_USAGE; }
        else if (ch == 'S') { if (cmd_add_set("plan", &sets, optarg)) return EXIT_USAGE; }
        else if (ch == 'h') { fputs(help, stdout); return EXIT_OK; }
        else if (ch == ':') return cmd_usage("plan", "option %s needs a value", argv[optind - 1]);
        else return cmd_usage("plan", "unknown option '%s'", argv[optind - 1]);
    }
    if (file == NULL || optind != argc) return cmd_usage("plan", "expected -t TOPO.yaml and nothing else");
    int coll = coll_parse(coll_s);
    if (coll < 0) return cmd_usage("plan", "unknown collective '%s'", coll_s);
    uint64_t *sizes;
    int nsizes;
    if (select_parse_sizes(sizes_s, &sizes, &nsizes, &why) < 0) return cmd_usage("plan", "--sizes %s: %s", sizes_s, why);
    cmd_sizes_note("plan", sizes_s, sizes, nsizes);
    baton_err_t e = {0};
    plan_tuner_t tu = {.path = tuner ? tuner : getenv("NCCL_TUNER_CONFIG_FILE")};
    if (tu.path && !*tu.path) tu.path = NULL;
    if (tu.path && !tuner) fprintf(stderr, "baton plan: NCCL_TUNER_CONFIG_FILE=%s: the plan follows it, as NCCL's example "
                                   "tuner plugin would (--tuner FILE to name another)\n", tu.path);
    int rc = tu.path ? tunerfile_read(tu.path, &tu.tab, &e) : 0;
    if (rc == 0) rc = plan(file, &sets, (coll_t)coll, sizes, nsizes, sim, fold, json, tu.path ? &tu : NULL, &e);
    free(sizes);
    tuner_csv_free(&tu.tab);
    return rc < 0 ? cmd_fail("plan", &e) : EXIT_OK;
}
