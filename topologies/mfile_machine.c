/* mfile_machine.c - a machine file's own numbers beside its graph: its
 * protocols' costs, its link classes' efficiencies, its GPU, a flat file's
 * SHARP fabric, and the plain alpha-beta default of a file that says
 * nothing of NCCL. A file that extends another (topo_yaml.c) sets these too. */
#include "mfile_machine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* protocols: {LL: {latency: 0.6us, efficiency: 0.5, base: 6.6us,
 * max_busbw: 39GB/s}, ...}: any field left out keeps NCCL's default. */
int mf_read_protocols(mfile_t *c, ynode_t *root) {
    static const char *const keys[] = {"latency", "efficiency", "base", "max_busbw", NULL};
    ynode_t *pm = mf_get(c, root, "protocols");
    if (pm == NULL) return 0;
    topo_params(c->t)->said_protocols = 1;
    if (ydoc_scalar(pm) && strcmp(ydoc_scalar(pm), "none") == 0) { topo_params(c->t)->no_protocols = 1; return 0; }
    if (!ydoc_is_map(pm)) return mf_fail(c, pm, "'protocols' maps LL, LL128 and Simple to their costs (or is 'none')", NULL, NULL);
    for (int p = 0; p < ydoc_len(pm); p++) {
        ynode_t *kn = ydoc_key(c->doc, pm, p), *v = ydoc_value(c->doc, pm, p);
        const char *name = ydoc_scalar(kn);
        int pr = name ? proto_parse(name) : -1, rc = 0;
        if (pr <= PROTO_NONE) return mf_fail(c, kn, "unknown protocol '%s' (LL, LL128 or Simple)", name ? name : "?", NULL);
        if (!ydoc_is_map(v)) return mf_fail(c, v, "a protocol is {latency: ..., efficiency: ..., base: ...}", NULL, NULL);
        if ((rc = mf_only_keys(c, v, keys, "a protocol")) < 0) return rc;
        proto_cost_t *pc = &topo_params(c->t)->proto[pr];
        ynode_t *ev = mf_get(c, v, "efficiency");
        if (mf_get(c, v, "latency") && (rc = mf_get_time(c, v, "latency", &pc->msg_latency)) < 0) return rc;
        if (mf_get(c, v, "base") && (rc = mf_get_time(c, v, "base", &pc->base_latency)) < 0) return rc;
        if (mf_get(c, v, "max_busbw") && (rc = mf_get_bw(c, v, "max_busbw", &pc->max_busbw)) < 0) return rc;
        if (ev) {
            char s[MF_TEXT], *end;
            if ((rc = mf_text(c, ev, "efficiency", s)) < 0) return rc;
            pc->efficiency = strtod(s, &end);
            if (end == s || *end || !(pc->efficiency > 0 && pc->efficiency <= 1))
                return mf_fail(c, ev, "efficiency must be a number in (0, 1], not '%s'", s, NULL);
        }
    }
    return 0;
}

/* link_efficiency: {gpu-switch: 0.82, nic-switch: 0.93}: the share of their
 * declared rate the links of a class carry (achieved / line rate). */
int mf_read_efficiency(mfile_t *c, ynode_t *root) {
    ynode_t *m = mf_get(c, root, "link_efficiency");
    if (m == NULL) return 0;
    if (!ydoc_is_map(m))
        return mf_fail(c, m, "'link_efficiency' maps link classes (gpu-switch, nic-switch, ...) to shares of their rate", NULL, NULL);
    for (int p = 0; p < ydoc_len(m); p++) {
        ynode_t *kn = ydoc_key(c->doc, m, p), *v = ydoc_value(c->doc, m, p);
        const char *k = ydoc_scalar(kn);
        char s[MF_TEXT], *end;
        int rc;
        if (k == NULL || !topo_link_class_valid(k) || strlen(k) >= 24)
            return mf_fail(c, kn, "'%s' is not a link class: the kinds of its ends, gpu first and switch last "
                        "(gpu-switch, gpu-nic, gpu-gpu, nic-switch, cpu-cpu, switch-switch, ...)", k ? k : "?", NULL);
        if ((rc = mf_text(c, v, k, s)) < 0) return rc;
        double eff = strtod(s, &end);
        if (end == s || *end || !(eff > 0 && eff <= 1))
            return mf_fail(c, v, "an efficiency is a share of the link's rate in (0, 1], not '%s'", s, NULL);
        if (topo_set_class_efficiency(c->t, k, eff, c->e) < 0) return -1;
    }
    return 0;
}

/* "989.4TFLOPS", "2.25PFLOPS": a peak rate; the unit is required. */
static int get_flops(mfile_t *c, ynode_t *v, const char *key, double *out) {
    char s[MF_TEXT], *end;
    int rc = mf_text(c, v, key, s);
    if (rc < 0) return rc;
    double x = strtod(s, &end);
    double unit = !strcmp(end, "TFLOPS") ? 1e12 : !strcmp(end, "PFLOPS") ? 1e15 : !strcmp(end, "GFLOPS") ? 1e9
                : !strcmp(end, "FLOPS") ? 1 : 0;
    if (end == s || unit == 0 || !(x >= 0) || x > 1e9)
        return mf_fail(c, v, "'%s' is a peak rate with its unit (989.4TFLOPS, 2.25PFLOPS), not '%s'", key, s);
    *out = x * unit;
    return 0;
}

/* gpu: h100-sxm, or gpu: {like: h100-sxm, hbm_bw: 3TB/s, ...}: the GPU's own
 * numbers (models/gpu.h), for the step's compute, memory and overhead. */
int mf_read_gpu(mfile_t *c, ynode_t *root) {
    static const char *const keys[] = {"like", "name", "bf16", "fp8", "hbm_bw", "hbm", "launch", "graph_launch", NULL};
    ynode_t *m = mf_get(c, root, "gpu"), *v;
    topo_params_t *p = topo_params(c->t);
    char s[MF_TEXT];
    int rc;
    if (m == NULL) return 0;
    ynode_t *base = ydoc_is_map(m) ? mf_get(c, m, "like") : m;
    gpu_spec_t g;
    memset(&g, 0, sizeof g);
    if (base) {
        if ((rc = mf_text(c, base, "gpu", s)) < 0) return rc;
        const gpu_spec_t *known = gpu_find(s);
        if (known == NULL) return mf_fail(c, base, "unknown GPU '%s' (`baton gpus` lists them; or describe it: "
                                       "gpu: {name: ..., bf16: ...TFLOPS, hbm_bw: ...TB/s, hbm: ...GB})%s", s, gpu_hint(s));
        g = *known;
    }
    if (ydoc_is_map(m)) {
        if ((rc = mf_only_keys(c, m, keys, "'gpu'")) < 0) return rc;
        if ((v = mf_get(c, m, "name")) && (rc = mf_text(c, v, "name", s)) < 0) return rc;
        if (v) snprintf(g.name, sizeof g.name, "%.23s", s);
        if ((v = mf_get(c, m, "bf16")) && (rc = get_flops(c, v, "bf16", &g.flops[GPU_BF16])) < 0) return rc;
        if ((v = mf_get(c, m, "fp8")) && (rc = get_flops(c, v, "fp8", &g.flops[GPU_FP8])) < 0) return rc;
        if (mf_get(c, m, "hbm_bw") && (rc = mf_get_bw(c, m, "hbm_bw", &g.hbm_bw)) < 0) return rc;
        if (mf_get(c, m, "launch") && (rc = mf_get_time(c, m, "launch", &g.launch)) < 0) return rc;
        if (mf_get(c, m, "graph_launch") && (rc = mf_get_time(c, m, "graph_launch", &g.graph_launch)) < 0) return rc;
        if (mf_get(c, m, "hbm")) {
            uint64_t b;
            if ((rc = mf_get_size(c, m, "hbm", &b)) < 0) return rc;
            g.hbm_bytes = (double)b;
        }
        if (g.name[0] == 0) return mf_fail(c, m, "a GPU described here needs a 'name' (or 'like: h100-sxm')", NULL, NULL);
        if (!(g.flops[GPU_BF16] > 0) || !(g.hbm_bw > 0))
            return mf_fail(c, m, "GPU '%s' needs its bf16 peak and hbm_bw (or 'like:' a known GPU)", g.name, NULL);
    }
    p->gpu = g;
    p->has_gpu = 1;
    return 0;
}

/* sharp_fabric: what a fat_tree with `sharp: true` recorded, in a flat file
 * (topo_write.c), whose switches are written out with `reduce: true`. */
int mf_read_sharp(mfile_t *c, ynode_t *root) {
    static const char *const keys[] = {"rails", "per_leaf", "leaves", "first", NULL};
    ynode_t *m = mf_get(c, root, "sharp_fabric"), *v;
    topo_sharp_t *sh = &topo_params(c->t)->sharp;
    int *out[] = {&sh->rails, &sh->per_leaf, &sh->leaves, &sh->first}, rc = 0;
    if (m == NULL) return 0;
    if (sh->rails) return mf_fail(c, m, "'sharp_fabric' and a fat_tree with `sharp: true`: only one fabric may reduce", NULL, NULL);
    if (!ydoc_is_map(m) || (rc = mf_only_keys(c, m, keys, "sharp_fabric")) < 0)
        return rc < 0 ? rc : mf_fail(c, m, "'sharp_fabric' must be a mapping {rails:, per_leaf:, leaves:, first:}", NULL, NULL);
    for (int i = 0; keys[i] && rc == 0; i++) {
        if ((v = mf_get(c, m, keys[i])) == NULL) return mf_fail(c, m, "'sharp_fabric' needs '%s'", keys[i], NULL);
        rc = mf_get_int(c, v, keys[i], i == 3 ? 0 : 1, out[i]);
    }
    return rc;
}

/* A file that says nothing of NCCL -- no protocols:, arch:, gpu:, library:
 * or nccl_env: -- describes links, not a library: it gets the plain
 * alpha-beta model by default (--proto auto means none) and one channel
 * unless it says channels:, the terms ASTRA-sim's and SMPI's platforms are
 * read in (issue 53: with NCCL's protocols and several rings baton read
 * 1.3-9.6x off on them). --proto and --channels still choose. */
void mf_plain_default(mfile_t *c, ynode_t *root) {
    static const char *const nccl[] = {"arch", "gpu", "library", "nccl_env", NULL};
    topo_params_t *p = topo_params(c->t);
    if (p->said_protocols) return;
    for (int i = 0; nccl[i]; i++)
        if (mf_get(c, root, nccl[i])) return;
    p->plain = p->no_protocols = 1;
    if (p->channels == 0) p->channels = 1;
}
