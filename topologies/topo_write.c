/* topo_write.c - plain fprintf: the format is simple and flow-style. */
#include "topo_write.h"

#include <string.h>

#include "../models/arch.h"
#include "../algorithms/sched.h"

static void comment_lines(FILE *f, const char *c) {
    while (c && *c) {
        const char *nl = strchr(c, '\n');
        int n = nl ? (int)(nl - c) : (int)strlen(c);
        fprintf(f, "# %.*s\n", n, c);
        c = nl ? nl + 1 : c + n;
    }
}

/* Seconds and bytes/s with units, exactly enough digits to read back. */
static void fmt_bw(char *b, int n, double v) { snprintf(b, n, "%.17gB/s", v); }
static void fmt_s(char *b, int n, double v) { snprintf(b, n, "%.17gs", v); }

static void write_protocols(FILE *f, const topo_params_t *p) {
    char a[64], b[64], c[64];
    fprintf(f, "protocols:%s\n", p->no_protocols ? " none" : "");
    for (int i = PROTO_LL; i < PROTO_COUNT && !p->no_protocols; i++) {
        fmt_s(a, sizeof a, p->proto[i].msg_latency);
        fmt_s(c, sizeof c, p->proto[i].base_latency);
        fprintf(f, "  %s: {latency: %s, efficiency: %.17g, base: %s", proto_name((proto_t)i), a, p->proto[i].efficiency, c);
        if (p->proto[i].max_busbw > 0) fmt_bw(b, sizeof b, p->proto[i].max_busbw), fprintf(f, ", max_busbw: %s", b);
        fprintf(f, "}\n");
    }
}

/* YAML's double-quoted scalar: a name or path may hold ": " or " #" (a
 * plain scalar would not read back), quotes, backslashes, even newlines. */
void topo_write_quoted(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c < 0x20 || c == 0x7f) { fprintf(f, "\\x%02x", c); continue; }
        if (c == '"' || c == '\\') fputc('\\', f);
        fputc(c, f);
    }
    fputc('"', f);
}

/* gpu: its name when it is the built-in one, else every number (exactly). */
static void write_gpu(FILE *f, const topo_params_t *p) {
    const gpu_spec_t *g = &p->gpu, *known = gpu_find(g->name);
    char a[64], b[64], c[64];
    if (!p->has_gpu) return;
    if (known && gpu_same(g, known)) { fprintf(f, "gpu: %s\n", g->name); return; }
    fmt_bw(a, sizeof a, g->hbm_bw);
    fmt_s(b, sizeof b, g->launch);
    fmt_s(c, sizeof c, g->graph_launch);
    fprintf(f, "gpu: {name: "), topo_write_quoted(f, g->name);
    fprintf(f, ", bf16: %.17gFLOPS, fp8: %.17gFLOPS, hbm_bw: %s, hbm: %.0f, launch: %s, graph_launch: %s}\n",
            g->flops[GPU_BF16], g->flops[GPU_FP8], a, g->hbm_bytes, b, c);
}

/* library: the collective library's name, LL128 switch and rules. */
/* nccl_env: what the machine's NCCL is told (NCCL_ALGO, NCCL_PROTO, its channel bounds, its
 * p2p protocol's switches where they are not NCCL's defaults), if anything. */
static void write_nccl_env(FILE *f, const topo_params_t *p) {
    static const char *const vars[2] = {"NCCL_ALGO", "NCCL_PROTO"};
    const int *b = p->nccl_nch;
    int p2p = p->p2p_ll_max != TOPO_P2P_LL_MAX || p->p2p_net_ll;
    if (!p->nccl_env[0][0] && !p->nccl_env[1][0] && !b[0] && !b[1] && !b[2] && !b[3] && !p2p) return;
    fprintf(f, "nccl_env:\n");
    for (int i = 0; i < 2; i++)
        if (p->nccl_env[i][0]) fprintf(f, "  %s: ", vars[i]), topo_write_quoted(f, p->nccl_env[i]), fprintf(f, "\n");
    for (int i = 0; i < 4; i++)
        if (b[i]) fprintf(f, "  %s: %d\n", topo_nccl_bounds[i], b[i]);
    if (p2p) fprintf(f, "  NCCL_P2P_LL_THRESHOLD: %d\n  NCCL_ALLOC_P2P_NET_LL_BUFFERS: %d\n", p->p2p_ll_max, p->p2p_net_ll);
}

static void write_library(FILE *f, const topo_library_t *l) {
    if (l->name[0] == 0 && l->ll128 < 0 && l->nrules == 0) return;
    fprintf(f, "library:\n");
    if (l->name[0]) fprintf(f, "  name: "), topo_write_quoted(f, l->name), fprintf(f, "\n");
    if (l->ll128 >= 0) fprintf(f, "  ll128: %s\n", l->ll128 ? "true" : "false");
    if (l->nrules) fprintf(f, "  rules:\n");
    for (int i = 0; i < l->nrules; i++) {
        const topo_lib_rule_t *r = &l->rule[i];
        char bw[64] = "";
        if (r->max_busbw > 0) fmt_bw(bw, sizeof bw, r->max_busbw);
        fprintf(f, "    - {coll: %s, ranks: %d, min: %llu, max: %llu, align: %llu, %s: %s, proto: %s",
                coll_name((coll_t)r->coll), r->ranks, (unsigned long long)r->min, (unsigned long long)r->max,
                (unsigned long long)r->align, r->nccl ? "nccl_algo" : "algo", r->algo, proto_name((proto_t)r->proto));
        if (r->channels) fprintf(f, ", channels: %d", r->channels);
        fprintf(f, "%s%s}\n", bw[0] ? ", max_busbw: " : "", bw);
    }
}

/* calibration: the rule it was fitted under, its errors and band, what the
 * logs ran (seen), their NCCL, the date and the logs. */
static void write_record(FILE *f, const topo_calib_t *k, const char *const *logs, int nlogs, const char *date) {
    fprintf(f, "calibration:\n  algo: %s\n  proto: %s\n  model: %s\n", k->algo, k->proto, k->model);
    if (k->contention[0]) fprintf(f, "  contention: %s\n", k->contention);
    if (k->mape_pct >= 0) fprintf(f, "  mape_pct: %.4f\n", k->mape_pct);
    if (k->cv_mape_pct >= 0) fprintf(f, "  cv_mape_pct: %.4f\n", k->cv_mape_pct);
    if (k->band_lo_pct < k->band_hi_pct) fprintf(f, "  band_pct: [%.4f, %.4f]\n", k->band_lo_pct, k->band_hi_pct);
    if (k->large_lo_pct < k->large_hi_pct)
        fprintf(f, "  band_large_pct: [%.4f, %.4f]\n", k->large_lo_pct, k->large_hi_pct);
    if (k->nseen) fprintf(f, "  seen:\n");
    for (int i = 0; i < k->nseen; i++)
        fprintf(f, "    - {coll: %s, ranks: %d, min: %llu, max: %llu, gpus_per_thread: %d}\n", coll_name((coll_t)k->seen[i].coll),
                k->seen[i].ranks, (unsigned long long)k->seen[i].min, (unsigned long long)k->seen[i].max,
                k->seen[i].gpus_per_thread);
    if (k->nccl[0]) fprintf(f, "  nccl: "), topo_write_quoted(f, k->nccl), fprintf(f, "\n");
    if (date) fprintf(f, "  date: %s\n", date);
    fprintf(f, "  logs:\n");
    for (int i = 0; i < nlogs; i++) fprintf(f, "    - "), topo_write_quoted(f, logs[i]), fprintf(f, "\n");
}

int topo_write_overlay(const topo_t *t, const char *base, const char *const *params, int nparams,
                       const char *const *logs, int nlogs, const char *date, const char *comment, FILE *f) {
    const topo_params_t *p = topo_params_c(t);
    const topo_calib_t *k = &p->calib;
    char a[64];
    comment_lines(f, comment);
    fprintf(f, "name: "), topo_write_quoted(f, topo_name(t));
    fprintf(f, "\nextends: ");
    topo_write_quoted(f, base);
    fprintf(f, "\n");
    if (nparams) fprintf(f, "params:\n");
    for (int i = 0; i < nparams; i++) {
        const char *eq = strchr(params[i], '=');
        if (eq == NULL) continue;
        fprintf(f, "  %.*s: ", (int)(eq - params[i]), params[i]);
        topo_write_quoted(f, eq + 1);
        fprintf(f, "\n");
    }
    fprintf(f, "lat_scale: %.17g\n", p->lat_scale);
    fmt_bw(a, sizeof a, p->reduce_bw);
    fprintf(f, "reduce_bw: %s\n", p->reduce_bw > 0 ? a : "0");
    if (p->stage_bw > 0) fmt_bw(a, sizeof a, p->stage_bw), fprintf(f, "stage_bw: %s\n", a);
    if (p->stage_lat > 0) fmt_s(a, sizeof a, p->stage_lat), fprintf(f, "stage_latency: %s\n", a);
    if (p->ll_scan > 0) fmt_s(a, sizeof a, p->ll_scan), fprintf(f, "ll_scan: %s\n", a);
    if (p->sw_match && !p->socket) fmt_s(a, sizeof a, p->rdzv_lat), fprintf(f, "rendezvous_latency: %s\n", a);
    if (p->socket) fmt_bw(a, sizeof a, p->socket_bw), fprintf(f, "socket_bw: %s\n", a);
    if (!p->no_protocols) write_protocols(f, p);
    if (p->neff) fprintf(f, "link_efficiency:\n");
    for (int i = 0; i < p->neff; i++) fprintf(f, "  %s: %.17g\n", p->class_eff[i].name, p->class_eff[i].eff);
    write_library(f, &p->lib);             /* whole: an overlay's library replaces its base's (a fitted ceiling) */
    write_nccl_env(f, p);
    write_record(f, k, logs, nlogs, date);
    return ferror(f) ? BATON_EIO : 0;
}

/* A link's rate as its file declared it: what it carries (at its line rate)
 * over its class's efficiency (1 unless link_efficiency: set one). */
static double declared_bw(const topo_t *t, int l) {
    char cls[64];
    return topo_line_bw(t, l) / topo_class_efficiency(t, topo_link_class(t, l, cls, sizeof cls));
}

/* The whole machine: links at their declared rates and the classes'
 * efficiencies as link_efficiency, so it reads back as it was: what a link
 * carries for the engine, and the line rate NCCL's own model sees (a
 * Polaris NIC carries 0.732 of Slingshot's rate; NCCL plans for all of it). */
static int write_flat(const topo_t *t, const char *comment, FILE *f) {
    const topo_params_t *p = topo_params_c(t);
    char a[64], b[64], c[64];
    comment_lines(f, comment);
    fprintf(f, "name: "), topo_write_quoted(f, topo_name(t));
    fprintf(f, "\nports: %d\nmax_inflight: %d\np2p: %s\nbw_scale: %.17g\nlat_scale: %.17g\n", p->ports, p->max_inflight,
            p->p2p ? "true" : "false", p->bw_scale, p->lat_scale);
    if (p->host_bw > 0) fmt_bw(a, sizeof a, p->host_bw), fprintf(f, "host_bw: %s\n", a);
    if (p->stage_bw > 0) fmt_bw(a, sizeof a, p->stage_bw), fprintf(f, "stage_bw: %s\n", a);
    if (p->stage_lat > 0) fmt_s(a, sizeof a, p->stage_lat), fprintf(f, "stage_latency: %s\n", a);
    if (p->ll_scan > 0) fmt_s(a, sizeof a, p->ll_scan), fprintf(f, "ll_scan: %s\n", a);
    if (p->sw_match) fmt_s(a, sizeof a, p->match_lat), fprintf(f, "software_matching: true\nmatch_latency: %s\n", a);
    if (p->sw_match)
        fmt_s(a, sizeof a, p->rdzv_lat), fprintf(f, "rendezvous_latency: %s\nrendezvous_above: %d\n", a, p->rdzv_above);
    if (p->inline_lat > 0)
        fmt_s(a, sizeof a, p->inline_lat), fprintf(f, "inline_latency: %s\ninline_max: %d\n", a, p->inline_max);
    if (p->op_lat > 0) fmt_s(a, sizeof a, p->op_lat), fprintf(f, "proxy_op_latency: %s\n", a);
    if (p->socket) {   /* the links below at line rate and latency: applied again at load */
        fmt_bw(a, sizeof a, p->socket_bw), fmt_s(c, sizeof c, p->socket_lat);
        fprintf(f, "socket: true\nsocket_bw: %s\nsocket_latency: %s\nsocket_threads: %d\n", a, c, p->socket_threads);
    }
    if (p->cta_policy) fprintf(f, "cta_policy: %d\n", p->cta_policy);
    if (p->pxn) fprintf(f, "pxn: true\n");
    if (p->eager) fprintf(f, "eager: true\n");
    if (!p->gdr) fprintf(f, "gdr: false\n");
    if (p->registered) fprintf(f, "registered: true\n");
    if (p->nccl_tuner) fprintf(f, "nccl_tuner: true\n");
    fmt_bw(a, sizeof a, p->reduce_bw);
    fprintf(f, "reduce_bw: %s\n", p->reduce_bw > 0 ? a : "0");
    if (p->group_size) fprintf(f, "group_size: %d\n", p->group_size);
    if (p->channels) fprintf(f, "channels: %d\n", p->channels);
    fmt_s(a, sizeof a, p->launch);
    fprintf(f, "launch: %s\n", p->launch > 0 ? a : "0");
    if (p->nvls_eff != 1) fprintf(f, "nvls_efficiency: %.17g\n", p->nvls_eff);
    if (p->nvls_lat > 0) fmt_s(a, sizeof a, p->nvls_lat), fprintf(f, "nvls_latency: %s\n", a);
    if (p->arch >= 0) fprintf(f, "arch: %s\n", arch_name((arch_t)p->arch));
    write_gpu(f, p);
    write_protocols(f, p);
    write_library(f, &p->lib);
    write_nccl_env(f, p);
    if (p->neff) fprintf(f, "link_efficiency:\n");
    for (int i = 0; i < p->neff; i++) fprintf(f, "  %s: %.17g\n", p->class_eff[i].name, p->class_eff[i].eff);
    if (p->sharp.rails)
        fprintf(f, "sharp_fabric: {rails: %d, per_leaf: %d, leaves: %d, first: %d}\n", p->sharp.rails,
                p->sharp.per_leaf, p->sharp.leaves, p->sharp.first);
    fprintf(f, "nodes:\n");
    for (int i = 0; i < topo_nnodes(t); i++) {
        const topo_node_t *n = topo_node(t, i);
        if (n->hidden) continue;                        /* made again when the file is loaded */
        fprintf(f, "  - {name: "), topo_write_quoted(f, n->name);
        fprintf(f, ", kind: %s", topo_kind_name(n->kind));
        if (n->rank >= 0) fprintf(f, ", rank: %d", n->rank);
        if (n->transit != (n->kind != NODE_GPU)) fprintf(f, ", transit: %s", n->transit ? "true" : "false");
        if (n->reduces) fprintf(f, ", reduce: true");
        fprintf(f, "}\n");
    }
    fprintf(f, "links:\n");
    for (int l = 0; l < topo_nlinks(t); l += 2) {
        const topo_dlink_t *d = topo_dlink(t, l);
        if (topo_node(t, d->src)->hidden || topo_node(t, d->dst)->hidden) continue;
        double lat = topo_line_lat(t, l);
        fmt_bw(b, sizeof b, declared_bw(t, l));
        fmt_s(c, sizeof c, lat);
        fprintf(f, "  - {a: "), topo_write_quoted(f, topo_node(t, d->src)->name);
        fprintf(f, ", b: "), topo_write_quoted(f, topo_node(t, d->dst)->name);
        fprintf(f, ", bw: %s, latency: %s}\n", b, lat > 0 ? c : "0");
    }
    return ferror(f) ? BATON_EIO : 0;
}

int topo_write_yaml(const topo_t *t, const char *comment, FILE *f) { return write_flat(t, comment, f); }

int topo_write_standalone(const topo_t *t, const char *const *logs, int nlogs, const char *date, const char *comment,
                          FILE *f) {
    int rc = write_flat(t, comment, f);
    if (rc == 0) write_record(f, &topo_params_c(t)->calib, logs, nlogs, date);
    return rc == 0 && ferror(f) ? BATON_EIO : rc;
}
