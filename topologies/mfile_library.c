/* mfile_library.c - the collective library a machine runs (library:): its
 * name, its NCCL version (whose rules -a nccl follows), and its rules -- for
 * a call's collective, rank count and size, the algorithm and protocol it
 * runs -- in baton's names (algo:) or NCCL's (nccl_algo:); and what that
 * NCCL is told (nccl_env:). */
#include "mfile_library.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../algorithms/algo.h"
#include "expand.h"
#include "knobs.h"

/* Does baton have a row of coll that NCCL calls name (algo_t.nccl)? */
static int nccl_has(coll_t coll, const char *name) {
    for (const algo_t *const *a = algo_all(); *a; a++)
        if ((*a)->coll == coll && (*a)->nccl && strcmp((*a)->nccl, name) == 0) return 1;
    return 0;
}

/* The rule's algorithm: `algo:` a row of the registry, or `nccl_algo:`
 * NCCL's name for one (a log's TUNING lines), whose rows -a nccl picks among. */
static int read_rule_algo(mfile_t *c, ynode_t *v, topo_lib_rule_t *r) {
    char s[MF_TEXT];
    ynode_t *at = mf_get(c, v, "nccl_algo");
    int rc;
    r->nccl = at != NULL;
    if (r->nccl && mf_get(c, v, "algo")) return mf_fail(c, v, "a rule has 'algo' or 'nccl_algo', not both", NULL, NULL);
    if (!r->nccl && (rc = mf_need(c, v, "algo", s, &at)) < 0) return rc;
    if (r->nccl && (rc = mf_text(c, at, "nccl_algo", s)) < 0) return rc;
    if (!r->nccl && algo_find((coll_t)r->coll, s) == NULL)
        return mf_fail(c, at, "no algorithm '%s' for this collective (see `baton algos`)", s, NULL);
    if (r->nccl && !nccl_has((coll_t)r->coll, s))
        return mf_fail(c, at, "no row of NCCL's algorithm '%s' for this collective (tree, ring, nvls, nvls_tree, collnet_direct)",
                    s, NULL);
    snprintf(r->algo, sizeof r->algo, "%.23s", s);        /* the names are shorter */
    return 0;
}

/* {coll: allreduce, ranks: 8, min: 1KiB, max: 64KiB, align: 1KiB, algo: direct, proto: LL,
 * max_busbw: 210GB/s}; max_busbw may be left out (no ceiling); nccl_algo: tree in place of
 * algo, and channels: 16, for a plan a log's TUNING lines gave */
static int read_rule(mfile_t *c, ynode_t *v, topo_lib_rule_t *r) {
    static const char *const keys[] = {"coll", "ranks", "min", "max", "align", "algo", "nccl_algo", "proto", "channels",
                                       "max_busbw", NULL};
    char s[MF_TEXT];
    ynode_t *at = NULL;
    int rc = ydoc_is_map(v) ? mf_only_keys(c, v, keys, "a library rule")
           : mf_fail(c, v, "a rule is {coll:, ranks:, min:, max:, align:, algo:, proto:}", NULL, NULL);
    if (rc == 0 && (rc = mf_need(c, v, "coll", s, &at)) == 0 && (r->coll = coll_parse(s)) < 0)
        rc = mf_fail(c, at, "unknown collective '%s'", s, NULL);
    if (rc == 0 && (rc = mf_need(c, v, "ranks", s, &at)) == 0) rc = mf_get_int(c, at, "ranks", 1, &r->ranks);
    if (rc == 0) rc = mf_get_size(c, v, "min", &r->min);
    if (rc == 0) rc = mf_get_size(c, v, "max", &r->max);
    r->align = 1;
    if (rc == 0 && mf_get(c, v, "align") && (rc = mf_get_size(c, v, "align", &r->align)) == 0 && r->align == 0)
        rc = mf_fail(c, mf_get(c, v, "align"), "'align' must be at least 1 byte", NULL, NULL);
    if (rc == 0 && r->min > r->max) rc = mf_fail(c, v, "'min' is above 'max'", NULL, NULL);
    if (rc == 0) rc = read_rule_algo(c, v, r);
    if (rc == 0 && (rc = mf_need(c, v, "proto", s, &at)) == 0 && (r->proto = proto_parse(s)) <= PROTO_NONE)
        rc = mf_fail(c, at, "unknown protocol '%s' (LL, LL128 or Simple)", s, NULL);
    if (rc == 0 && (at = mf_get(c, v, "channels")) && (rc = mf_get_int(c, at, "channels", 1, &r->channels)) == 0 &&
        r->channels > TOPO_MAX_CHANNELS)
        rc = mf_fail(c, at, "'channels' must be at most 64", NULL, NULL);
    if (rc == 0 && mf_get(c, v, "max_busbw")) rc = mf_get_bw(c, v, "max_busbw", &r->max_busbw);
    return rc;
}

/* library: {name: "RCCL 2.22 (gfx942)", ll128: false, rules: [...]}: the
 * collective library when it is not NCCL, for -a nccl; {nccl: 2.26.6}: the
 * NCCL it runs, whose version rules -a nccl follows (knobs_version). */
int mf_read_library(mfile_t *c, ynode_t *root) {
    static const char *const keys[] = {"name", "ll128", "rules", "nccl", NULL};
    ynode_t *m = mf_get(c, root, "library"), *v;
    topo_library_t *l = &topo_params(c->t)->lib;
    char s[MF_TEXT];
    int rc;
    if (m == NULL) return 0;
    if (!ydoc_is_map(m)) return mf_fail(c, m, "'library' is a mapping (name:, ll128:, rules:)", NULL, NULL);
    if ((rc = mf_only_keys(c, m, keys, "a library")) < 0) return rc;
    int version = l->nccl_version;                   /* the base's, unless this one says */
    *l = (topo_library_t){.ll128 = -1, .nccl_version = version};   /* an overlay's replaces its base's whole */
    if ((v = mf_get(c, m, "nccl"))) {
        char why[200];
        if ((rc = mf_text(c, v, "nccl", s)) < 0) return rc;
        if (knobs_version(s, &l->nccl_version, why, sizeof why) < 0) return mf_fail(c, v, "'nccl' %s, not '%s'", why, s);
    }
    if ((v = mf_get(c, m, "name")) && (rc = mf_text(c, v, "name", s)) < 0) return rc;
    if (v && strlen(s) >= sizeof l->name) return mf_fail(c, v, "a library's name is at most 47 characters", NULL, NULL);
    if (v) snprintf(l->name, sizeof l->name, "%.47s", s);
    if ((v = mf_get(c, m, "ll128"))) {
        if ((rc = mf_text(c, v, "ll128", s)) < 0) return rc;
        if (strcmp(s, "true") && strcmp(s, "false")) return mf_fail(c, v, "'ll128' is true or false, not '%s'", s, NULL);
        l->ll128 = strcmp(s, "true") == 0;
    }
    if ((v = mf_get(c, m, "rules")) == NULL) return 0;
    if (!ydoc_is_seq(v))
        return mf_fail(c, v, "'rules' is a list of {coll:, ranks:, min:, max:, algo: (or nccl_algo:), proto:}", NULL, NULL);
    for (int it = 0; it < ydoc_len(v); it++) {
        if (l->nrules == TOPO_MAX_LIB_RULES) return mf_fail(c, ydoc_item(c->doc, v, it), "more than 64 library rules", NULL, NULL);
        if ((rc = read_rule(c, ydoc_item(c->doc, v, it), &l->rule[l->nrules++])) < 0) return rc;
    }
    return 0;
}

/* FI_CXI_RX_MATCH_MODE (libfabric's CXI provider, Slingshot: fi_cxi(7)):
 * "software" matches every receive's tag on the host (software_matching),
 * "hardware" and "hybrid" in the NIC (hybrid falls back to software only
 * when the NIC's match resources run out, which baton does not model). A
 * `software_matching` the file or --set gives explicitly wins. */
static int read_match_env(mfile_t *c, ynode_t *root, ynode_t *m) {
    ynode_t *v = mf_get(c, m, "FI_CXI_RX_MATCH_MODE");
    char s[MF_TEXT];
    int rc;
    if (v == NULL) return 0;
    if ((rc = mf_text(c, v, "FI_CXI_RX_MATCH_MODE", s)) < 0) return rc;
    if (strcmp(s, "software") && strcmp(s, "hardware") && strcmp(s, "hybrid"))
        return mf_fail(c, v, "FI_CXI_RX_MATCH_MODE must be hardware, software or hybrid, not '%s'", s, NULL);
    if (!expand_get(&c->params, "software_matching") && !mf_get(c, root, "software_matching"))
        topo_params(c->t)->sw_match = strcmp(s, "software") == 0;
    return 0;
}

/* nccl_env's whole number `name` of m, from lo to hi, into *x: 1 if there,
 * 0 if not (*x kept), < 0 with an error at its line naming `what` it counts. */
static int env_whole(mfile_t *c, ynode_t *m, const char *name, long lo, long hi, const char *what, long *x) {
    ynode_t *v = mf_get(c, m, name);
    char s[MF_TEXT], *end;
    int rc;
    if (v == NULL) return 0;
    if ((rc = mf_text(c, v, name, s)) < 0) return rc;
    long y = strtol(s, &end, 10);
    if (end == s || *end != '\0' || y < lo || y > hi) {
        char fmt[160];                            /* mf_fail takes two strings: `what` goes into the format */
        snprintf(fmt, sizeof fmt, "%%s '%%s': a whole number of %s", what);
        return mf_fail(c, v, fmt, name, s);
    }
    *x = y;
    return 1;
}

/* FI_CXI_RDZV_THRESHOLD and FI_CXI_RDZV_GET_MIN (fi_cxi(7)): a message of
 * more than their sum goes by rendezvous (cxip_txc.c max_eager_size), so
 * they set rendezvous_above; the one not given keeps libfabric 1.x's default
 * (2048, 2049). A `rendezvous_above` the file or --set gives explicitly wins. */
static int read_rdzv_env(mfile_t *c, ynode_t *root, ynode_t *m) {
    static const char *const names[2] = {"FI_CXI_RDZV_THRESHOLD", "FI_CXI_RDZV_GET_MIN"};
    long x[2] = {2048, 2049};
    int said = 0;
    for (int i = 0; i < 2; i++) {
        int rc = env_whole(c, m, names[i], 0, 1L << 30, "bytes from 0 to 1073741824", &x[i]);
        if (rc < 0) return rc;
        said |= rc;
    }
    if (said && !expand_get(&c->params, "rendezvous_above") && !mf_get(c, root, "rendezvous_above"))
        topo_params(c->t)->rdzv_above = (int)(x[0] + x[1]);
    return 0;
}

/* nccl_env's p2p protocol: NCCL_P2P_LL_THRESHOLD, the largest peer's
 * message NCCL's send/recv runs on LL (bytes), and
 * NCCL_ALLOC_P2P_NET_LL_BUFFERS 0 or 1, whether its network connections
 * have LL buffers (enqueue.cc, net.cc; ncclrule_p2p_proto). One not given
 * keeps what the file this one extends said (else NCCL's default). */
static int read_p2p_env(mfile_t *c, ynode_t *m) {
    long most = topo_params(c->t)->p2p_ll_max, net = topo_params(c->t)->p2p_net_ll;
    int rc = env_whole(c, m, "NCCL_P2P_LL_THRESHOLD", 0, 1L << 30, "bytes from 0 to 1073741824", &most);
    if (rc < 0 || (rc = env_whole(c, m, "NCCL_ALLOC_P2P_NET_LL_BUFFERS", 0, 1, "0 or 1", &net)) < 0) return rc;
    topo_params(c->t)->p2p_ll_max = (int)most;
    topo_params(c->t)->p2p_net_ll = (int)net;
    return 0;
}

/* nccl_env's network: NCCL_NET "Socket" (or NCCL_IB_DISABLE 1 without a
 * plugin named) is NCCL's socket transport, "IB" or a plugin's name RDMA;
 * NCCL_SOCKET_NTHREADS its helper threads (0-16, net_socket.cc's
 * MAX_THREADS). A `socket` knob the file or --set gives explicitly wins. */
static int read_net_env(mfile_t *c, ynode_t *root, ynode_t *m) {
    topo_params_t *p = topo_params(c->t);
    ynode_t *net = mf_get(c, m, "NCCL_NET"), *off = mf_get(c, m, "NCCL_IB_DISABLE"), *th = mf_get(c, m, "NCCL_SOCKET_NTHREADS");
    char s[MF_TEXT], why[160];
    int rc, sock = -1;
    if (net) {
        if ((rc = mf_text(c, net, "NCCL_NET", s)) < 0) return rc;
        sock = strcmp(s, "Socket") == 0;
    }
    if (off) {
        if ((rc = mf_text(c, off, "NCCL_IB_DISABLE", s)) < 0) return rc;
        if (strcmp(s, "0") && strcmp(s, "1")) return mf_fail(c, off, "NCCL_IB_DISABLE must be 0 or 1, not '%s'", s, NULL);
        if (sock < 0 && s[0] == '1') sock = 1;
    }
    if (sock >= 0 && !expand_get(&c->params, "socket") && !mf_get(c, root, "socket")) p->socket = sock;
    if (th) {
        if ((rc = mf_text(c, th, "NCCL_SOCKET_NTHREADS", s)) < 0) return rc;
        if (knobs_set(p, "socket_threads", s, why, sizeof why) < 0) return mf_fail(c, th, "NCCL_SOCKET_NTHREADS %s", why, NULL);
    }
    return 0;
}

/* NCCL_NET_GDR_LEVEL: the farthest GPU-NIC path NCCL uses GPUDirect RDMA
 * over (src/graph/paths.cc ncclTopoCheckGdr and ncclGetLevel, NCCL 2.30.7:
 * a path type's name, LOC NVL NVB C2C PIX PXB P2C PXN PHB SYS, or the old
 * numbers 0-5 for LOC PIX PXB PHB SYS SYS). A file's GPU and NIC share a
 * PCIe switch (PIX): a level nearer than PIX (LOC, NVL, NVB, C2C, 0) turns
 * GDR off (gdr: false); the others keep it. There is no NCCL_NET_GDR_DISABLE. */
static int gdr_level(mfile_t *c, ynode_t *v) {
    static const char *const off[] = {"LOC", "NVL", "NVB", "C2C", NULL};
    static const char *const on[] = {"PIX", "PXB", "P2C", "PXN", "PHB", "SYS", NULL};
    char s[MF_TEXT], *end;
    int rc, gdr = -1;
    if (v == NULL) return 0;
    if ((rc = mf_text(c, v, "NCCL_NET_GDR_LEVEL", s)) < 0) return rc;
    for (int i = 0; off[i]; i++) gdr = !strcmp(s, off[i]) ? 0 : gdr;
    for (int i = 0; on[i]; i++) gdr = !strcmp(s, on[i]) ? 1 : gdr;
    long x = strtol(s, &end, 10);
    if (gdr < 0 && end != s && *end == '\0' && x >= 0) gdr = x > 0;
    if (gdr < 0) return mf_fail(c, v, "NCCL_NET_GDR_LEVEL '%s': a path type (LOC, NVL, NVB, C2C, PIX, PXB, P2C, PXN, PHB, "
                                "SYS) or a number, as NCCL reads it", s, NULL);
    if (gdr == 0) topo_params(c->t)->gdr = 0;
    return 0;
}

/* NCCL_MIN_NCHANNELS, NCCL_MAX_NCHANNELS, NCCL_MIN_CTAS, NCCL_MAX_CTAS: the
 * bounds NCCL puts on its channels (connect.cc; nvls.cc for NVLS's), each a
 * whole number from 1 to MAXCHANNELS 64 (init.cc caps the CTAs there; a
 * count below 1 NCCL ignores, so a file saying so is wrong). */
static int channel_bounds(mfile_t *c, ynode_t *m) {
    const char *const *names = topo_nccl_bounds;
    for (int i = 0; i < 4; i++) {
        long x = 0;
        int rc = env_whole(c, m, names[i], 1, 64, "channels from 1 to 64 (NCCL's MAXCHANNELS)", &x);
        if (rc < 0) return rc;
        if (rc) topo_params(c->t)->nccl_nch[i] = (int)x;
    }
    return 0;
}

/* nccl_env: {NCCL_ALGO: "Ring", NCCL_PROTO: "^LL128", NCCL_NET: Socket,
 * NCCL_NET_GDR_LEVEL: LOC, NCCL_MAX_NCHANNELS: 4}: what the machine's NCCL is told (its
 * environment, /etc/nccl.conf), in NCCL's own list syntax; every name is
 * checked here, for every collective. */
int mf_read_nccl_env(mfile_t *c, ynode_t *root) {
    static const char *const keys[] = {"NCCL_ALGO", "NCCL_PROTO", "NCCL_NET_GDR_LEVEL", "NCCL_NET", "NCCL_IB_DISABLE",
                                       "NCCL_SOCKET_NTHREADS", "NCCL_MIN_NCHANNELS", "NCCL_MAX_NCHANNELS",
                                       "NCCL_MIN_CTAS", "NCCL_MAX_CTAS", "FI_CXI_RX_MATCH_MODE", "FI_CXI_RDZV_THRESHOLD",
                                       "FI_CXI_RDZV_GET_MIN", "NCCL_P2P_LL_THRESHOLD", "NCCL_ALLOC_P2P_NET_LL_BUFFERS",
                                       NULL};
    ynode_t *m = mf_get(c, root, "nccl_env"), *v;
    topo_params_t *p = topo_params(c->t);
    char s[MF_TEXT];
    int rc = 0;
    if (m == NULL) return 0;
    if (!ydoc_is_map(m) || (rc = mf_only_keys(c, m, keys, "nccl_env")) < 0)
        return rc < 0 ? rc : mf_fail(c, m, "'nccl_env' must be a mapping {NCCL_ALGO: ..., NCCL_PROTO: ...}", NULL, NULL);
    for (int i = 0; i < 2 && rc == 0; i++) {
        if ((v = mf_get(c, m, keys[i])) == NULL) continue;
        if ((rc = mf_text(c, v, keys[i], s)) < 0) return rc;
        if (strlen(s) >= sizeof p->nccl_env[i]) return mf_fail(c, v, "%s: a list of at most 63 characters", keys[i], NULL);
        for (int coll = 0; coll < COLL_COUNT; coll++) {
            unsigned mask;
            if (algo_nccl_env_mask(s, (coll_t)coll, i == 0, &mask) < 0)
                return mf_fail(c, v, i == 0 ? "NCCL_ALGO '%s': a name NCCL does not have (Tree, Ring, CollNetDirect, "
                                           "CollNetChain, NVLS, NVLSTree, PAT; a list, ^ for all but)"
                                         : "NCCL_PROTO '%s': a name NCCL does not have (LL, LL128, Simple; a list, ^ "
                                           "for all but)", s, NULL);
        }
        memcpy(p->nccl_env[i], s, strlen(s) + 1);           /* it fits: checked above */
    }
    if (rc == 0) rc = gdr_level(c, mf_get(c, m, keys[2]));
    if (rc == 0) rc = channel_bounds(c, m);
    if (rc == 0) rc = read_net_env(c, root, m);
    if (rc == 0) rc = read_rdzv_env(c, root, m);
    if (rc == 0) rc = read_p2p_env(c, m);
    return rc < 0 ? rc : read_match_env(c, root, m);
}
