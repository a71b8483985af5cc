/* topo.h - a machine as a graph: nodes, full-duplex links, ranks, routes.
 *
 * Nodes are GPUs, switches, NICs or CPUs (root complexes). A link joins two
 * nodes and is full duplex: it is stored as two directed links, 2i (a->b) and
 * 2i+1 (b->a), each with its own bandwidth and latency. Ranks are nodes that
 * run a collective's program (normally GPUs), numbered 0..p-1.
 *
 * Routes are shortest paths in hops that pass only through transit nodes
 * (switches, NICs, CPUs; not GPUs unless marked, as a torus does). Where several next hops are equally
 * short (the spines of a fat-tree), the destination's port number on its
 * switch picks one (destination-mod-k, as InfiniBand's fat-tree routing
 * does): flows to one leaf's hosts spread over all spines, and the same
 * inputs always give the same routes. They are computed on first use and
 * cached per (source, destination) rank pair, so a ring on 4,096 ranks stores
 * 4,096 routes, not 16 million.
 *
 * Ownership: topo_create returns an empty topology owned by the caller;
 * names are copied; topo_free releases everything. */
#ifndef BATON_TOPO_H
#define BATON_TOPO_H

#include <stdint.h>

#include "../models/cost.h"
#include "../util/err.h"
#include "../models/gpu.h"
#include "../models/proto.h"

typedef enum { NODE_GPU = 0, NODE_SWITCH, NODE_NIC, NODE_CPU, NODE_KIND_COUNT } node_kind_t;

typedef struct topo_node {
    char *name;
    node_kind_t kind;
    int rank;            /* -1 if the node is not a rank */
    int line, col;       /* where it was declared (0 if built in code) */
    int transit;         /* may routes pass through it? GPUs: no (an NVLink GPU
                            does not relay for others), others: yes */
    int reduces;         /* a switch that adds what it receives (NVLS, SHARP) */
    int hidden;          /* made by topo_finalize (a CPU's host memory when p2p is off),
                            not written back by topo_write */
} topo_node_t;

typedef struct topo_dlink {
    int src, dst;        /* node indices */
    double bw;           /* bytes per second, > 0 */
    double lat;          /* seconds, >= 0 */
} topo_dlink_t;

typedef struct topo_route {
    const int32_t *links;  /* directed link ids, source to destination */
    int nlinks;
    double lat;            /* sum of the links' latencies (cut-through) */
    double bw;             /* the bottleneck link's bandwidth */
} topo_route_t;

typedef struct topo topo_t;

/* Limits, stated so that a file asking for more gets an error, not an
 * exhausted machine: 4 M nodes (a 1 M-GPU cluster with its switches and
 * NICs) and 16 M directed links (400 MiB of link records). */
#ifndef TOPO_MAX_NODES                 /* the fuzz build lowers them, to stay fast */
#define TOPO_MAX_NODES 4194304
#endif
#define TOPO_MAX_CHANNELS 64           /* as --channels */
#ifndef TOPO_MAX_LINKS
#define TOPO_MAX_LINKS 16777216
#endif

/* What a calibrated machine (a file that `extends:` another) says of its fit:
 * the rule it was fitted with (commands warn when run under another) and how
 * far off its predictions were on sizes the fit did not see. */
#define TOPO_MAX_SEEN 16     /* runs of sizes (per collective, rank count, -g) a calibration's logs cover */
typedef struct topo_seen {
    int coll, ranks;     /* coll_t, rank count */
    uint64_t min, max;   /* the smallest and largest size of a run of fitted sizes without a hole, bytes */
    int gpus_per_thread; /* the logs' -g (nGpus): GPUs one host thread launched on in turn */
} topo_seen_t;
typedef struct topo_calib {
    int present;         /* 1: the machine carries a calibration record */
    char algo[32], proto[16], model[16];   /* -a, --proto, --model it was fitted with */
    char contention[8];  /* the simulator's --contention it was fitted under (model des: fifo,
                            fair or none; a record of des without one: fifo); "" otherwise */
    double mape_pct;     /* in sample; -1 unknown */
    double cv_mape_pct;  /* held out (cross-validation); -1 unknown */
    double band_lo_pct, band_hi_pct;       /* 90 % of held-out errors lie in [lo, hi] %; both 0 if unknown */
    double large_lo_pct, large_hi_pct;     /* the same over sizes >= 64 MiB alone (band_large_pct); both 0 if
                                              unknown: a band for the large sizes that mid sizes' misses do not widen */
    int nseen;           /* what the fitted sizes covered (`seen:`), where the band holds; 0: not recorded */
    topo_seen_t seen[TOPO_MAX_SEEN];
    char what_if[96];    /* the first --set K=V that moved the machine from what its logs ran
                            (another value than the file records): no band; "" if none */
    char nccl[64];       /* the NCCL versions the logs state ("2.19.3, 2.27.3+cuda12.9"); "" unknown */
} topo_calib_t;

/* A shipped machine's measured error on its own public logs at their
 * hardware, uncalibrated (`fidelity:`): the band doctor and expect give it
 * where its kind's would call those very logs below the machine. */
#define TOPO_MAX_FIDELITY 12    /* mfile_calib.c says "1 to 12" */
typedef struct topo_fidelity {
    int n;
    struct {
        int coll;        /* coll_t */
        int socket;      /* -1 any transport; 0 or 1: only where the machine's `socket` knob is that */
        int min_ranks, max_ranks;   /* only where the machine's ranks are within (0: no bound) */
        double large_pct, all_pct;
    } band[TOPO_MAX_FIDELITY];
    char logs[160];      /* which logs measured it */
    char machine[64];    /* the machine whose file said it: a base's, where this one extends it */
} topo_fidelity_t;

/* The collective library on the machine where it is not NCCL's own rules
 * (`library:`): what `-a nccl` then follows. A rule is an algorithm the
 * library runs in place of its tuner's pick (RCCL's MSCCL files: coll, rank
 * count, a size range, sizes a multiple of `align` bytes). */
#define TOPO_MAX_LIB_RULES 64
typedef struct topo_lib_rule {
    int coll;            /* coll_t */
    int ranks;           /* the rank count it is written for */
    uint64_t min, max;   /* bytes, both included */
    uint64_t align;      /* the size must be a multiple of this (MSCCL: chunks x element) */
    char algo[24];       /* a row of the registry (algos), or with `nccl` NCCL's algorithm */
    int nccl;            /* 1: algo is NCCL's name for an algorithm (algo_t.nccl: tree, ring,
                            nvls, nvls_tree, collnet_direct), as a log's TUNING lines give
                            it: -a nccl picks among baton's rows of it */
    int channels;        /* the channels NCCL ran it on (the lines' channel{Lo..Hi}); 0:
                            as NCCL sizes the call */
    int proto;           /* proto_t */
    double max_busbw;    /* bytes/s of bus bandwidth the library's kernel for it reaches at
                            most (MSCCL's thread blocks, not the links); 0: none */
    int tuner;           /* 1: a tuner file's row (plan/validate --tuner: validate/tunerfile.h),
                            not NCCL's word on what a log ran */
    unsigned protos;     /* NCCL_PROTO of the run whose TUNING lines gave it (1 << proto_t; 0:
                            none): whether LL128 may run where the path turns it off */
} topo_lib_rule_t;

#define TOPO_NCCL_TABLES 23007   /* sim/nccl/tuning.c's tables: NCCL 2.30.7 */
#define TOPO_NCCL_OLDEST 21800   /* the oldest NCCL whose rules baton knows: 2.18.1 */
typedef struct topo_library {
    char name[48];       /* e.g. "RCCL 2.22 on gfx942"; empty: NCCL */
    int ll128;           /* -1: NCCL's rule (on NVLink paths); 0: never (RCCL off gfx90a/gfx950) */
    int nccl_version;    /* the NCCL the machine runs, 2.26.6 as 22606 (`library: {nccl: 2.26.6}`,
                            --set nccl_version=): its version rules (PAT from 2.23, symmetric
                            kernels from 2.27, the CE all-gather from 2.29); 0: baton's tables'
                            own, TOPO_NCCL_TABLES */
    int nrules;
    topo_lib_rule_t rule[TOPO_MAX_LIB_RULES];
} topo_library_t;

/* A fabric whose switches reduce (InfiniBand SHARP, NCCL's CollNet), from a
 * rail-optimized fat_tree with `sharp: true`: rail r's leaves (per_leaf
 * nodes each, rail-major) reduce its nodes' blocks, and when a rail has
 * several leaves spine r adds theirs. first: the leaves' index among the
 * reducing switches (helper ranks; the nodes' own switches come first). */
typedef struct topo_sharp {
    int rails;           /* 0: no SHARP fabric */
    int per_leaf;        /* nodes a leaf serves on its rail */
    int leaves;          /* leaves per rail */
    int first;           /* reducer index of rail 0's first leaf */
} topo_sharp_t;

/* A dragonfly fabric (topologies/dragonfly.h), recorded for routing: its
 * routers are nodes first .. first + routers - 1, per_group a group. */
typedef struct topo_dragonfly {
    int routers;         /* 0: no dragonfly */
    int first, per_group, groups;
    int globals, links;  /* global ports a router, global links a pair of groups */
    int adaptive;        /* 1: links pooled (a hub a group, a cable a group pair) and pairs
                            across groups spread over Valiant paths */
    int hub0;            /* adaptive: group g's hub is node hub0 + g; -1 if not pooled */
} topo_dragonfly_t;

/* NCCL's socket transport where the file says nothing of its host:
 * TOPO_SOCKET_BW one TCP stream each way (a server core's copies through
 * the kernel: single-stream iperf3 on 100-400 Gb/s hosts reaches 25-40
 * Gb/s, ESnet fasterdata's 100G host tuning; an estimate, 32 Gb/s) and
 * TOPO_SOCKET_LAT what a message costs each side's thread in its TCP stack,
 * and adds one way (NCCL's proxy polls its sockets, so no wakeup is paid:
 * a polled TCP round trip on such hosts is ~10 us; an estimate, 5 us).
 * docs/decisions/network-software.md. */
#define TOPO_SOCKET_BW 4e9
#define TOPO_SOCKET_LAT 5e-6

/* What software tag matching costs a network message on the host where the
 * file does not say (topo_params_t.match_lat): read off Polaris's NCCL 2.18
 * logs, setup 5 (FI_CXI_RX_MATCH_MODE=software) against setup 4 (the NIC
 * matches) at 2 and 8 nodes; no public figure was found.
 * docs/decisions/network-software.md, "Software tag matching". */
#define TOPO_MATCH_LAT 2.7e-6

/* What a rendezvous message waits under software matching where the file
 * does not say (topo_params_t.rdzv_lat): read off Polaris's NCCL 2.18
 * setup-5 all-reduce and all-gather logs at 2 and 8 nodes (the sum of
 * their MAPEs least at 5 us of 0-12, with every network message waiting
 * its match_lat too; 8 us before it did); no public figure was found. And the
 * largest eager message: libfabric 1.x's CXI defaults, CXIP_RDZV_THRESHOLD
 * 2048 + rdzv_get_min 2049 (prov/cxi cxip_info.c, cxip_txc.c
 * max_eager_size). docs/decisions/network-software.md, "Rendezvous". */
#define TOPO_RDZV_LAT 5e-6
#define TOPO_RDZV_ABOVE 4097

/* The largest payload libfabric's CXI provider sends inline in its command
 * (an IDC: "Always use IDCs when the payload fits", prov/cxi cxip_msg.c;
 * CXIP_INJECT_SIZE = C_MAX_IDC_PAYLOAD_UNR, 192 bytes, cassini_hw_defs.h):
 * topo_params_t.inline_max unless the file says. */
#define TOPO_INLINE_MAX 192
#define TOPO_P2P_LL_MAX 16384          /* NCCL_P2P_LL_THRESHOLD's default (enqueue.cc, 2.18-2.30) */

/* A machine's `launch` unless its file sets one (topo_params_t.launch). */
#define TOPO_LAUNCH_DEFAULT 2.8e-6

typedef struct topo_params {
    int ports;           /* transfers a rank may send (and receive) at once; 0 = unlimited */
    double reduce_bw;    /* bytes/s a rank reduces; 0 = reductions are free */
    int max_inflight;    /* sends a stream may have posted and unfinished */
    int eager;           /* 1: a send may land before its receive is posted, in one of the
                            receiver's slots (NCCL's connection FIFO of NCCL_STEPS, here
                            max_inflight, a stream's sends held until received); 0:
                            rendezvous, a receive posted when its stream reaches it
                            (a reducing switch's messages are eager either way) */
    int group_size;      /* ranks per group (node) for hierarchical algorithms; 0 = none */
    int group_size_line, group_size_col;   /* where the file says it (0: not the file: a --set, a default) */
    int group_size_set;  /* 1: --set said it */
    int channels;        /* channels (rings side by side) when a command gives none; 0 = 1.
                            NCCL opens about one per NIC of a node on a cluster */
    int p2p;             /* 1: GPUs reach each other directly; 0: GPU-to-GPU traffic is
                            staged in host memory: routed via the nearest CPU (and with
                            host_bw, into its memory and out: "CPU.hostmem") */
    int pxn;             /* 1: a GPU sends across nodes through the NIC of the peer on
                            the destination's rail, over NVLink (NCCL's PXN); 0: through
                            its own NIC (default) */
    int gdr;             /* 1: NICs read and write GPU memory (GPUDirect RDMA, default);
                            0: network traffic goes through the GPU's host, as NCCL
                            diverts it when GDR is off (topo_route.c route_no_gdr) */
    double host_bw;      /* bytes/s each way between a CPU and its memory for staged
                            traffic (p2p off); 0: no such hop */
    double stage_bw;     /* bytes/s each way a GPU moves through host memory when it
                            both writes staged data and reads it (p2p off: NCCL's SHM
                            transport; every rank of a ring, the middle of a chain); its
                            SMs copy, not the links, so a ceiling like max_busbw; 0: none */
    double ll_scan;      /* seconds NCCL's network proxy spends reading one LL line's flags
                            before it posts a step (net.cc): the host's; 0: none */
    int socket;          /* 1: NCCL's socket transport carries the network (NCCL_NET=Socket:
                            no IB/RoCE verbs and no network plugin, NCCL falls back to
                            TCP; net_socket.cc): each NIC's links carry at most
                            socket_bw x streams and each crossing pays socket_lat
                            (topo_finalize); 0: RDMA, the links' own rates */
    double socket_bw;    /* bytes/s one TCP stream moves each way (what one thread's
                            send()/recv() copies through the kernel reach) */
    double socket_lat;   /* seconds a message across the network pays in the two hosts'
                            TCP stacks beyond the links */
    int socket_threads;  /* NCCL_SOCKET_NTHREADS: helper threads a connection's data is
                            split over; 0 (NCCL's default off AWS and GCP): the proxy
                            thread sends it on one socket itself */
    int sw_match;        /* 1: the network's library matches tags in software, on the host
                            (libfabric's CXI provider under FI_CXI_RX_MATCH_MODE=software,
                            Slingshot): each network message a rank sends or receives
                            costs its proxy thread match_lat, one after another
                            (ncclrule.c proxy_floor); 0: the NIC matches them */
    double match_lat;    /* seconds one network message costs the host where sw_match */
    double rdzv_lat;     /* seconds a network message longer than rdzv_above bytes on the
                            wire waits beyond its links where sw_match: it goes by
                            rendezvous (a header, the rest fetched by a Get) and the host,
                            not the NIC, matches the header and issues the Get
                            (topo_rdzv_lat); 0: none */
    int rdzv_above;      /* bytes on the wire (a protocol's flags and all) a message may
                            have and still go eagerly (libfabric CXI's max_eager_size:
                            FI_CXI_RDZV_THRESHOLD + FI_CXI_RDZV_GET_MIN) */
    double inline_lat;   /* seconds a rank's proxy thread spends, one send after another,
                            on a network send of at most inline_max bytes from GPU memory:
                            the network's library sends such a payload inline in the
                            command the CPU writes, so it first copies it out of GPU
                            memory (libfabric CXI's IDC; ncclrule.c proxy_inline); 0: none */
    double op_lat;       /* seconds a rank's proxy thread spends, one after another, on each
                            operation it runs on a connection to another node: a call's
                            each channel's each peer there, each direction (NCCL's
                            ncclProxyOp: posting it, its requests, retiring it), beyond
                            its messages' own costs; not under NCCL's sockets (ncclrule.c
                            proxy_ops); 0: none */
    int p2p_ll_max;      /* bytes of a peer's message NCCL's send/recv runs on LL at most
                            (NCCL_P2P_LL_THRESHOLD; default TOPO_P2P_LL_MAX, 16384) */
    int p2p_net_ll;      /* 1: p2p network connections have LL buffers
                            (NCCL_ALLOC_P2P_NET_LL_BUFFERS=1; default 0: Simple across nodes) */
    int inline_max;      /* bytes a send may have and go inline (TOPO_INLINE_MAX): Simple's, whose
                            bytes on the wire are its payload */
    double stage_lat;    /* seconds each ring step of a staged Simple transfer pays beyond
                            the links (its flag, then the data, read back from host memory:
                            a pipeline's fill the ceiling adds); 0: none */
    proto_cost_t proto[PROTO_COUNT];   /* the protocols on this machine */
    int no_protocols;    /* `protocols: none`: a textbook machine (the candy kids); --proto
                            auto then means none, the plain alpha-beta model */
    int plain;           /* the file says nothing of NCCL (no protocols:, arch:, gpu:, library:
                            or nccl_env:): no_protocols, and one channel unless it says
                            channels: -- the alpha-beta simulators' own terms (issue 53) */
    int said_protocols;  /* a protocols: key was read (the file's or an included one's) */
    double bw_scale;     /* every link's bandwidth x this (achieved / datasheet; default 1) */
    double lat_scale;    /* every link's latency x this (default 1) */
    double nvls_lat;     /* seconds a collective that reduces in switches pays once (their
                            multimem operations and semaphores; NCCL's NVLS latency);
                            default 0 */
    double nvls_eff;     /* the share of link bandwidth (g - 1)/g of a rank's bytes to or
                            from a reducing switch of g ranks get (multimem operations;
                            topo_nvls_eff; NCCL's nvlsEfficiency is 0.85 on Hopper
                            against its own 370 GB/s); default 1 */
    int arch;            /* the GPUs' generation for NCCL's tables (arch_t), -1
                            unknown (then Ampere's, and `plan` says so) */
    double launch;       /* seconds a host thread spends launching on each further GPU
                            it drives (nccl-tests -g N: N launches in turn); default
                            2.8 us, docs/reference/nccl.md 4.2 (8 x A100, -g 8 vs one
                            process per GPU: 40.1 vs 20.3 us over 7 more launches) */
    int has_gpu;         /* 1: the file names or describes its GPUs (`gpu:`) */
    gpu_spec_t gpu;      /* their peak math, memory and launch cost (models/gpu.h) */
    topo_calib_t calib;  /* from a calibrated machine's `calibration:` record */
    topo_fidelity_t fidelity;   /* `fidelity:`, n 0 where the file has none */
    char nccl_env[2][64];   /* NCCL_ALGO, NCCL_PROTO as the machine's NCCL runs (`nccl_env:`; NCCL's list
                               syntax, algo_nccl_env_mask): -a nccl and --proto auto pick within them; "" unset */
    int nccl_nch[4];     /* NCCL_MIN_NCHANNELS, NCCL_MAX_NCHANNELS, NCCL_MIN_CTAS, NCCL_MAX_CTAS
                            (`nccl_env:`, 1-64; 0 unset): topo_nccl_channels */
    topo_library_t lib;  /* the collective library when not NCCL (`library:`) */
    int registered;      /* 1: the buffers are registered as symmetric windows
                            (ncclCommWindowRegister, `registered: true` or --set
                            registered=true): NCCL 2.27+ runs its symmetric kernels, 2.29+
                            its copy-engine all-gather on Blackwell */
    int cta_policy;      /* NCCL_CTA_POLICY (`cta_policy:`, --set cta_policy=zero or 2): 0
                            default, 1 efficiency, 2 zero (no kernel: NCCL 2.28+ runs all-gather and
                            all-to-all on the copy engines where the buffers are registered
                            in one NVLink domain) */
    int nccl_tuner;      /* 1: -a nccl runs what NCCL's own cost model picks (--model nccl's
                            algorithm and protocol; `nccl_tuner: true` or --set
                            nccl_tuner=true), timed by baton; 0: the fastest of NCCL's rows
                            by baton's closed forms (docs/decisions/nccl-choice.md) */
    topo_sharp_t sharp;  /* reducing fabric switches (`sharp: true` on a fat_tree) */
    topo_dragonfly_t dragonfly;   /* a dragonfly generator's routers (adaptive routing) */
    int neff;            /* link classes with an efficiency (`link_efficiency:`) */
    struct { char name[24]; double eff; } class_eff[16];   /* the share of the file's rate they carry */
} topo_params_t;

topo_t *topo_create(const char *name);
int topo_rename(topo_t *t, const char *name);   /* a calibrated machine's own name */
/* The machine files t was read from (a calibrated machine, what it extends,
 * and so on), by device and inode: topo_add_source records one (at most
 * TOPO_MAX_SOURCES; the overlay chain is shorter), topo_read_from says
 * whether a file is one of them (so calibrate -o does not write over one). */
#define TOPO_MAX_SOURCES 10
void topo_add_source(topo_t *t, unsigned long long dev, unsigned long long ino);
int topo_read_from(const topo_t *t, unsigned long long dev, unsigned long long ino);
void topo_free(topo_t *t);

/* Record a parameter the topology was built with (for summaries), and
 * file_value, its file's value where the command line replaced it (NULL
 * otherwise). */
int topo_add_param(topo_t *t, const char *name, const char *value, const char *file_value);
int topo_nparams(const topo_t *t);
void topo_param_at(const topo_t *t, int i, const char **name, const char **value);
/* The value the file gave parameter `name` before any --set; NULL where the
 * machine has no such parameter. */
const char *topo_param_file_value(const topo_t *t, const char *name);

/* Add a node; returns its index or a negative error (duplicate name). */
int topo_add_node(topo_t *t, const char *name, node_kind_t kind, int line, int col,
                  baton_err_t *e);
/* Add a full-duplex link with the same bandwidth and latency both ways. */
int topo_add_link(topo_t *t, int a, int b, double bw, double lat, baton_err_t *e);
/* The same, declared at line:col of the file (for errors about the link). */
int topo_add_link_at(topo_t *t, int a, int b, double bw, double lat, int line, int col, baton_err_t *e);
/* Mark a switch as reducing in the network (before topo_finalize). */
void topo_set_reduces(topo_t *t, int node, int reduces);
/* Reducing switches, usable as helper ranks nranks, nranks + 1, ... in
 * schedules and routes. */
int topo_nreducers(const topo_t *t);
/* How many of them are the nodes' own (NVLS), declared before a reducing
 * fabric's (SHARP, topo_sharp_t.first): all of them where the fabric does
 * not reduce. Helper rank nranks + i is reducer i. */
int topo_nvls_reducers(const topo_t *t);
/* The share of a link's rate a transfer to or from an NVLS switch moves its
 * bytes at: nvls_eff x g/(g - 1), g the ranks a switch serves (NCCL's
 * constant bus bandwidth; nvls_eff itself where g <= 1). topo_nvls_share:
 * for a run of nranks ranks over `helpers` helper ranks (g = nranks over
 * those of them that are NVLS switches); topo_nvls_eff: the whole machine's
 * (what its closed forms see), topo_nvls_domain its g (0: no NVLS switch). */
double topo_nvls_share(const topo_t *t, int nranks, int helpers);
double topo_nvls_eff(const topo_t *t);
double topo_nvls_domain(const topo_t *t);

/* Let routes pass through a node (or not); before topo_finalize. */
void topo_set_transit(topo_t *t, int node, int transit);
/* Routes from and to a GPU hung off one switch port are that switch's
 * routes plus the port (the default, 1). With 0 every pair is searched in
 * full: the reference the tests and the loader's fuzzer hold the shortcut
 * to. Cached routes are forgotten (pointers taken before are invalid). */
void topo_set_route_shortcut(topo_t *t, int on);
/* How many graph searches routing has run since topo_finalize. */
uint64_t topo_nsearches(const topo_t *t);
uint32_t topo_nroutes(const topo_t *t);   /* routes in t's own cache */
/* Set full-duplex link l (and its reverse, l ^ 1) to bandwidth bw, after
 * topo_finalize (calibration); cached routes are re-rated where every
 * node's rates keep their order (topo_routes_settle), else forgotten, so
 * route pointers taken before may be invalid. */
int topo_set_link_bw(topo_t *t, int l, double bw, baton_err_t *e);

/* Directed link l's rate and latency without NCCL's socket transport (what
 * NCCL reads as a NIC's speed; what its file declared, at its class's
 * efficiency): its own on a machine that runs none. */
double topo_line_bw(const topo_t *t, int l);
double topo_line_lat(const topo_t *t, int l);
/* nc channels as the machine's NCCL is told to bound them (nccl_env's
 * NCCL_MIN/MAX_NCHANNELS and NCCL_MIN/MAX_CTAS; connect.cc, NCCL 2.18-2.30:
 * the rings' and trees' count capped by both maxima, then raised to both
 * minima; nvls: NVLS's channels, clamped by the CTA bounds alone, nvls.cc). */
int topo_nccl_channels(const topo_t *t, int nc, int nvls);
/* nccl_env's names of topo_params_t.nccl_nch's four bounds, in its order. */
extern const char *const topo_nccl_bounds[4];

/* A socket-transport machine's per-stream rate (topo_params_t.socket_bw),
 * its NIC links set again from their line rates (calibration fits it);
 * -1 with e set on a machine that runs RDMA. */
int topo_set_socket_bw(topo_t *t, double bw, baton_err_t *e);
/* One result a higher layer derives from the machine and caches on it (the
 * ring search, topologies/graph.c): NULL until set; free_fn(p) runs at
 * topo_free, at the next set, and when a link's bandwidth changes (then it
 * is forgotten). */
void *topo_derived(const topo_t *t);
void topo_set_derived(topo_t *t, void *p, void (*free_fn)(void *));
/* A second slot with the same lifetime, for a layer above (sim/answer/run.c keeps
 * the link loads of the patterns it has costed there). */
void *topo_memo(const topo_t *t);
void topo_set_memo(topo_t *t, void *p, void (*free_fn)(void *));
/* A third, kept when a link's bandwidth changes (freed at topo_free and at
 * the next set): for what does not depend on the machine's rates
 * (sim/form/peers.c keeps the patterns' destinations there). */
void *topo_patterns(const topo_t *t);
void topo_set_patterns(topo_t *t, void *p, void (*free_fn)(void *));
/* Give node `node` rank number `rank` (before topo_finalize). */
int topo_set_rank(topo_t *t, int node, int rank, baton_err_t *e);

/* Freeze the graph: ranks must be 0..p-1 without gaps and all reachable from
 * each other. Errors name the offending node's file position when known. */
int topo_finalize(topo_t *t, const char *file, baton_err_t *e);

int topo_nranks(const topo_t *t);
/* A folded machine (topo_yaml_load_folded): the cluster's nodes, ranks and
 * reducing switches it stands for; 0 when it is not folded. */
int topo_fold_nodes(const topo_t *t);
int topo_fold_witnesses(const topo_t *t);   /* the nodes built */
int topo_fold_ranks(const topo_t *t);
int topo_fold_reducers(const topo_t *t);
/* A cluster of copies as large as --fold asks that still loaded whole (a
 * dragonfly): why, as static text; NULL otherwise. */
const char *topo_fold_whole_why(const topo_t *t);
void topo_set_fold_whole_why(topo_t *t, const char *why);
/* The ranks t stands for: a folded cluster's whole count, else its own. */
int topo_whole_ranks(const topo_t *t);
/* Mark t as `witnesses` of a cluster of `nodes` copies (each copy holds the
 * same ranks and reducing switches); an error if they do not divide evenly.
 * map (fold.h; t owns it, NULL: none) names the witness pair standing for
 * two nodes; the nodes from fabric_first on are the fabric's (the
 * generator's switches), the ones before the copies'. */
struct fold_map;
int topo_set_fold(topo_t *t, int nodes, int witnesses, struct fold_map *map, int fabric_first, baton_err_t *e);
/* Ranks of two witness nodes, *fsrc -> *fdst, whose route has the latency and
 * bandwidth of whole ranks src -> dst's (ranks numbered node by node): 0, or
 * -1 if no witnesses are as far apart (or t keeps no map). */
int topo_fold_stand_in(topo_t *t, int src, int dst, int *fsrc, int *fdst);
/* The links every node of a folded cluster has a copy of (its parts' links,
 * and its NICs' to and from the fabric), numbered alike in every witness:
 * how many (-1: the witnesses are not copies of one node); built link l's
 * number (-1: the fabric's own) and, in *owner, its witness; a built link
 * of number i. Every message that loads node k's copy of a link starts or
 * ends in node k. */
int topo_fold_copies(const topo_t *t);
int topo_fold_copy(const topo_t *t, int l, int *owner);
int topo_fold_copy_link(const topo_t *t, int i);
/* A folded cluster's zeroed buffer of at least `bytes`, kept for the next
 * caller (pages of a large one are touched once, not per pattern): the
 * caller leaves it zero. NULL if out of memory. */
void *topo_fold_scratch(topo_t *t, size_t bytes);
/* How a witness route (its n links) crosses the fabric (fold.h), and the
 * rate of the fabric's own links on it (0 if they differ): 1 if it does,
 * 0 if it stays inside a node, -1 if the whole cluster's route cannot be
 * read off it (its destination's leaf, as built, has too few ports to key
 * destination-mod-k). */
struct fold_cross;
int topo_fold_cross(const topo_t *t, const int32_t *links, int n, struct fold_cross *cr, double *bw);
/* The whole cluster's fabric links (fold_map_fabric_links), and the ones a
 * route from node k to node x crossing as cr says takes (fold_map_cross). */
long topo_fold_fabric_links(const topo_t *t);
int topo_fold_cross_ids(const topo_t *t, int k, int x, const struct fold_cross *cr, long *id);
int topo_nnodes(const topo_t *t);
int topo_nlinks(const topo_t *t);            /* directed links */
const char *topo_name(const topo_t *t);
const topo_node_t *topo_node(const topo_t *t, int i);
const topo_dlink_t *topo_dlink(const topo_t *t, int i);
int topo_rank_node(const topo_t *t, int rank);
const char *topo_rank_name(const topo_t *t, int rank);
/* The name of reducing switch i (helper rank nranks + i). */
const char *topo_reducer_name(const topo_t *t, int i);
topo_params_t *topo_params(topo_t *t);
const topo_params_t *topo_params_c(const topo_t *t);
/* The library's rule (`library: rules:`) for coll on p ranks at n bytes
 * under protocol proto (-1: any), or NULL; with said 0, rules read off NCCL's
 * own TUNING lines (topo_lib_rule_t.nccl) do not count. */
const topo_lib_rule_t *topo_library_rule(const topo_t *t, int coll, int p, uint64_t n, int proto, int said);
const char *topo_kind_name(node_kind_t k);
int topo_kind_parse(const char *s);

/* A link's class, the kinds of its ends in a fixed order ("gpu-switch",
 * "nic-switch", "gpu-gpu"): what `link_efficiency:` and calibration scale.
 * Kinds, not rates, so a class survives --set nic_bw=... or nodes=64. */
const char *topo_link_class(const topo_t *t, int l, char *buf, size_t n);
/* 1 if s names a class ("a-b" of two kinds in that order), else 0. */
int topo_link_class_valid(const char *s);
/* A class's efficiency (achieved / the rate its links were declared with;
 * 1 unless set) and setting it: the class's links go to declared x eff. */
double topo_class_efficiency(const topo_t *t, const char *cls);
int topo_set_class_efficiency(topo_t *t, const char *cls, double eff, baton_err_t *e);
int topo_find_node(const topo_t *t, const char *name);
/* "; did you mean 'gpu1'?" for a name no node has: the closest of the first
 * TOPO_HINT_NODES nodes' names (an error path; a bound keeps it quick on a
 * million-node cluster), or "". A static buffer, like suggest_hint. */
#define TOPO_HINT_NODES 65536
const char *topo_node_hint(const topo_t *t, const char *name);

/* The node of `kind` fewest hops from `node` through transit nodes (ties:
 * the lowest index), -1 if none: a GPU's NIC. O(nodes reached). */
int topo_nearest(topo_t *t, int node, node_kind_t kind);
/* The same node, and what a shortest way there crosses: cross[k] nodes of
 * kind k strictly between the two (of the shortest ways, one that crosses
 * the fewest CPUs at each hop): a GPU's NIC behind a PCIe switch, or the
 * host bridge. */
int topo_nearest_via(topo_t *t, int node, node_kind_t kind, int cross[NODE_KIND_COUNT]);

/* Route between two ranks (or helper ranks: reducing switches), cached; out->links stays valid until topo_free,
 * so callers may keep a route. */
int topo_route(topo_t *t, int src_rank, int dst_rank, topo_route_t *out, baton_err_t *e);
/* The same route without keeping it: out->links are valid only until the
 * next call on t (a summary over every rank: latencies, bottlenecks). */
int topo_route_peek(topo_t *t, int src_rank, int dst_rank, topo_route_t *out, baton_err_t *e);
/* 1 if route r passes a NIC: a message on it crosses the network, where
 * a transport's own costs (rendezvous_latency) apply. */
int topo_route_crosses_nic(const topo_t *t, const topo_route_t *r);
/* What a network message longer than rdzv_above bytes on the wire waits
 * beyond its links on t: rdzv_lat where the host matches tags (sw_match)
 * on RDMA (NCCL's socket transport never goes through libfabric), else 0:
 * the NIC matches a rendezvous header and issues its Get itself. */
double topo_rdzv_lat(const topo_t *t);
/* What every network message waits for the host to match its tag: match_lat
 * where it matches in software (sw_match), not under the socket transport;
 * 0: none. */
double topo_match_lat(const topo_t *t);
/* What the proxy thread spends on each operation a call gives it across
 * nodes: op_lat on RDMA, 0 under the socket transport (its cost is its
 * messages'). */
double topo_op_lat(const topo_t *t);
/* What a send from GPU memory of at most inline_max bytes costs the proxy
 * thread, copied out for libfabric's inline command: inline_lat on RDMA
 * with GPUDirect RDMA (Simple's buffers in GPU memory), else 0. */
double topo_inline_lat(const topo_t *t);

/* Machines that route alike (topo_twin.c): the same shape, latencies and
 * routing knobs, and each node's rates in the same order where routes
 * compare them; their routes are the same links, only the rates differ.
 * topo_share_routes(t, twin): t looks its routes up in twin's cache (1), or
 * keeps its own (0: not alike). twin must outlive t; the share ends when
 * either's rates change out of the order they had (in order, it stands:
 * topo_routes_settle). topo_route_owner: whose cache t's routes are in;
 * topo_route_epoch: that cache's age (another once its routes are
 * forgotten), for what is computed from the routes alone. */
int topo_routes_alike(const topo_t *a, const topo_t *b);
int topo_share_routes(topo_t *t, topo_t *twin);
topo_t *topo_route_owner(topo_t *t);
uint64_t topo_route_epoch(topo_t *t);
/* A passing change of rates (sim/nccl/view.c: NCCL's count of every link,
 * then the file's again): topo_routes_aside puts t's routes aside (0; -1
 * without memory: nothing changes), topo_routes_back brings them back if
 * the rates rank again as they were found at (re-rated at the next lookup
 * where a rate differs), else drops them. One at a time. A change of t's
 * own rates, with nothing aside, keeps its routes the same way. */
int topo_routes_aside(topo_t *t);
void topo_routes_back(topo_t *t);

/* The uniform machine a closed form sees: alpha = worst path latency and
 * beta = 1 / worst bottleneck bandwidth over the pairs (0, r) and (r, r+1),
 * gamma from reduce_bw, ports from the parameters. */
int topo_cost_model(topo_t *t, cost_model_t *m, baton_err_t *e);

#endif
