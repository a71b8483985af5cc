/* ncclinfo.c - NCCL_DEBUG=INFO lines as evidence (see ncclinfo.h). The
 * patterns are NCCL's own format strings (NCCL 2.18-2.27: net_ib.cc's
 * "NET/IB : Using", net.cc's "Using network", transport/net.cc's "via
 * NET/%s/%d%s%s" with "/GDRDMA", init.cc's "%d coll channels", nvls.cc's
 * "NVLS multicast support is %savailable", param.cc's "%s set by
 * environment to %s"). */
#include "ncclinfo.h"

#include "ntlines.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void add(ni_info_t *x, const char *cause, int line, int supports, int value, const char *s) {
    if (x->n >= NI_MAX) return;
    ni_fact_t *f = &x->fact[x->n++];
    const char *p = strstr(s, "NCCL INFO ");
    p = p ? p + 10 : s;
    snprintf(f->cause, sizeof f->cause, "%s", cause);
    f->line = line, f->supports = supports, f->value = value;
    snprintf(f->text, sizeof f->text, "%.*s", (int)strcspn(p, "\r\n"), p);
}

/* Only the first fact of a kind for a cause (a log says it once per rank). */
static int seen(const ni_info_t *x, const char *cause, int supports) {
    for (int i = 0; i < x->n; i++)
        if (!strcmp(x->fact[i].cause, cause) && x->fact[i].supports == supports) return 1;
    return 0;
}

static void once(ni_info_t *x, const char *cause, int line, int supports, int value, const char *s) {
    if (!seen(x, cause, supports)) add(x, cause, line, supports, value, s);
}

/* "NAME set by environment to VALUE": the value, or NULL. */
static const char *env_value(const char *s, const char *name) {
    const char *p = strstr(s, name);
    if (p == NULL || strncmp(p + strlen(name), " set by environment to ", 23)) return NULL;
    return p + strlen(name) + 23;
}

static void environment(ni_info_t *x, const char *s, int line) {
    const char *v;
    if ((v = env_value(s, "NCCL_ALGO"))) once(x, "algo", line, 1, 0, s);
    if ((v = env_value(s, "NCCL_PROTO"))) once(x, "proto", line, 1, 0, s);
    if ((v = env_value(s, "NCCL_NVLS_ENABLE")) && atoi(v) == 0) once(x, "nvls", line, 1, 0, s);
    if ((v = env_value(s, "NCCL_PXN_DISABLE")) && atoi(v) == 1) once(x, "pxn", line, 1, 0, s);
    if ((v = env_value(s, "NCCL_IB_DISABLE")) && atoi(v) == 1) once(x, "socket", line, 1, 0, s);
    if ((v = env_value(s, "NCCL_MAX_NCHANNELS"))) once(x, "channels", line, 1, atoi(v), s);
    if ((v = env_value(s, "NCCL_NET_GDR_LEVEL")) && (!strncmp(v, "LOC", 3) || v[0] == '0'))
        once(x, "gdr", line, 1, 0, s);
}

/* "NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB": the NICs listed. */
static int nics_listed(const char *s) {
    int k = 0;
    for (const char *p = strstr(s, "Using"); p && (p = strchr(p, '[')); p++) k++;
    return k;
}

static void network(ni_info_t *x, const char *s, int line) {
    if (strstr(s, "NET/IB : Using") || strstr(s, "NET/IB: Using")) {
        if (!seen(x, "nics", 0) && !seen(x, "nics", 1)) add(x, "nics", line, 0, nics_listed(s), s);
        once(x, "socket", line, -1, 0, s);
    }
    if (strstr(s, "Using network Socket") || strstr(s, "NET/Socket : Using")) once(x, "socket", line, 1, 0, s);
    if (strstr(s, "Using network IB")) once(x, "socket", line, -1, 0, s);
    const char *via = strstr(s, " via NET/");
    if (via) {
        if (strstr(via, "/GDRDMA")) once(x, "gdr", line, -1, 0, s);
        else if (!strstr(via, "Socket")) once(x, "gdr", line, 1, 0, s);
    }
}

static void channels(ni_info_t *x, const char *s, int line) {
    const char *p = strstr(s, " coll channels");
    if (p) {
        const char *b = p;
        while (b > s && b[-1] >= '0' && b[-1] <= '9') b--;
        once(x, "channels", line, 0, atoi(b), s);
    }
    if (strstr(s, "NVLS multicast support is not available")) once(x, "nvls", line, 1, 0, s);
    else if (strstr(s, "NVLS multicast support is available")) once(x, "nvls", line, -1, 0, s);
}

static void header(ni_info_t *x, const char *s) {
    const char *p = strstr(s, "maxBytes ");
    if (p) x->max_bytes = strtoull(p + 9, NULL, 10);
    if ((p = strstr(s, "step: "))) {
        int f = atoi(p + 6);
        if (strstr(p, "(factor)")) x->factor = f;
    }
}

/* The run's own command line or environment, as a log's header often
 * carries it (`mpirun -x NCCL_IB_DISABLE=1 ...`, `export NCCL_NET=Socket`):
 * what NCCL was told, before it says so itself. */
static void command(ni_info_t *x, const char *s, int line) {
    if (strstr(s, "NCCL_IB_DISABLE=1") || strstr(s, "NCCL_NET=Socket")) once(x, "socket", line, 1, 0, s);
}

static int each_line(void *ctx, char *buf, int line, baton_err_t *e) {
    ni_info_t *out = ctx;
    (void)e;
    command(out, buf, line);
    if (strstr(buf, "# nThread")) header(out, buf);
    if (strstr(buf, "Avg bus bandwidth")) out->footer = 1;
    if (!strstr(buf, "NCCL INFO")) return 0;
    out->info_lines++;
    environment(out, buf, line);
    network(out, buf, line);
    channels(out, buf, line);
    return 0;
}

/* The text log's lines, or those nccl-tests' JSON stands for (ntlines.h). */
int ni_read(const char *path, ni_info_t *out, baton_err_t *e) {
    *out = (ni_info_t){0};
    return ntl_each(path, each_line, out, NULL, e);
}

const ni_fact_t *ni_find(const ni_info_t *x, const char *cause) {
    for (int i = 0; i < x->n; i++)
        if (!strcmp(x->fact[i].cause, cause)) return &x->fact[i];
    return NULL;
}

int ni_truncated(const ni_info_t *x, uint64_t last_bytes) {
    if (x->footer || x->max_bytes == 0 || x->factor < 2) return 0;
    return last_bytes * (uint64_t)x->factor <= x->max_bytes;
}
