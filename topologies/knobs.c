/* knobs.c - a machine's engine values, one table (see knobs.h). */
#include "knobs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "expand.h"
#include "units.h"

typedef enum {
    KNOB_COUNT,     /* a whole number from lo to hi */
    KNOB_BOOL,      /* true or false */
    KNOB_BW,        /* a bandwidth: 3GB/s, 400Gb/s */
    KNOB_TIME,      /* a time: 0.6us */
    KNOB_SCALE,     /* a positive factor */
    KNOB_SHARE,     /* a share of something: (0, 1] */
    KNOB_VERSION,   /* an NCCL version baton knows: 2.26.6 (kept as 22606) */
    KNOB_CTA        /* NCCL_CTA_POLICY: 0 default, 1 efficiency, 2 zero, by number or name */
} knob_kind_t;

typedef struct {
    const char *name;
    knob_kind_t kind;
    size_t at;          /* offsetof(topo_params_t, field) */
    int lo, hi;         /* KNOB_COUNT's range; KNOB_BW: lo 1 refuses 0 */
    int overlay;        /* a calibrated overlay may set it (knobs.h) */
} knob_t;

#define AT(f) offsetof(topo_params_t, f)
#define MANY (1 << 30)

/* In the order machine files have always been read (a file's errors name the
 * first bad knob). */
static const knob_t knobs[] = {
    {"ports", KNOB_COUNT, AT(ports), 0, MANY, 1},
    {"reduce_bw", KNOB_BW, AT(reduce_bw), 0, 0, 1},
    {"max_inflight", KNOB_COUNT, AT(max_inflight), 1, MANY, 1},
    {"eager", KNOB_BOOL, AT(eager), 0, 0, 0},
    {"group_size", KNOB_COUNT, AT(group_size), 1, MANY, 0},
    {"p2p", KNOB_BOOL, AT(p2p), 0, 0, 0},
    {"bw_scale", KNOB_SCALE, AT(bw_scale), 0, 0, 1},
    {"lat_scale", KNOB_SCALE, AT(lat_scale), 0, 0, 1},
    {"channels", KNOB_COUNT, AT(channels), 1, TOPO_MAX_CHANNELS, 1},
    {"launch", KNOB_TIME, AT(launch), 0, 0, 1},
    {"nvls_efficiency", KNOB_SHARE, AT(nvls_eff), 0, 0, 1},
    {"nvls_latency", KNOB_TIME, AT(nvls_lat), 0, 0, 1},
    {"host_bw", KNOB_BW, AT(host_bw), 0, 0, 1},
    {"pxn", KNOB_BOOL, AT(pxn), 0, 0, 0},
    {"gdr", KNOB_BOOL, AT(gdr), 0, 0, 0},
    {"stage_bw", KNOB_BW, AT(stage_bw), 0, 0, 1},
    {"stage_latency", KNOB_TIME, AT(stage_lat), 0, 0, 1},
    {"ll_scan", KNOB_TIME, AT(ll_scan), 0, 0, 1},
    {"socket", KNOB_BOOL, AT(socket), 0, 0, 0},
    {"socket_bw", KNOB_BW, AT(socket_bw), 1, 0, 1},    /* lo 1: a rate, 0 is not "none" */
    {"socket_latency", KNOB_TIME, AT(socket_lat), 0, 0, 0},
    {"socket_threads", KNOB_COUNT, AT(socket_threads), 0, 16, 0},
    {"software_matching", KNOB_BOOL, AT(sw_match), 0, 0, 0},
    {"match_latency", KNOB_TIME, AT(match_lat), 0, 0, 0},
    {"rendezvous_latency", KNOB_TIME, AT(rdzv_lat), 0, 0, 1},
    {"rendezvous_above", KNOB_COUNT, AT(rdzv_above), 0, MANY, 0},
    {"inline_latency", KNOB_TIME, AT(inline_lat), 0, 0, 0},
    {"inline_max", KNOB_COUNT, AT(inline_max), 0, MANY, 0},
    {"proxy_op_latency", KNOB_TIME, AT(op_lat), 0, 0, 0},
    {"nccl_version", KNOB_VERSION, AT(lib.nccl_version), 0, 0, 0},
    {"registered", KNOB_BOOL, AT(registered), 0, 0, 0},
    {"nccl_tuner", KNOB_BOOL, AT(nccl_tuner), 0, 0, 0},
    {"cta_policy", KNOB_CTA, AT(cta_policy), 0, 0, 0},
};

#define NKNOBS ((int)(sizeof knobs / sizeof knobs[0]))

static const knob_t *find(const char *name) {
    for (int i = 0; i < NKNOBS; i++)
        if (strcmp(name, knobs[i].name) == 0) return &knobs[i];
    return NULL;
}

int knobs_is(const char *name) { return find(name) != NULL; }

int knobs_overlay(const char *name) {
    const knob_t *k = find(name);
    return k && k->overlay;
}

const char *knobs_name(int i) { return i >= 0 && i < NKNOBS ? knobs[i].name : NULL; }

/* NCCL_CTA_POLICY's values as NCCL's init.cc reads them: the legacy digit or
 * the name (NCCL also takes names joined by '|'; EFFICIENCY|ZERO it warns
 * of and keeps ZERO, which `zero` says alone). */
static const char *const cta_names[] = {"default", "efficiency", "zero"};

static int cta(const char *s, int *out, char *why, size_t len) {
    for (int i = 0; i < 3; i++)
        if ((s[0] == '0' + i && s[1] == '\0') || strcasecmp(s, cta_names[i]) == 0) { *out = i; return 0; }
    snprintf(why, len, "must be NCCL_CTA_POLICY's default, efficiency or zero (0, 1 or 2), not '%s'", s);
    return -1;
}

/* channels: unset (0) is NCCL's own count, which `topo` prints as "auto"
 * and --set takes back. */
static int unset_is_auto(const knob_t *k) { return k->at == AT(channels); }

void knobs_format(const topo_params_t *p, int i, char *buf, size_t len) {
    if (i < 0 || i >= NKNOBS) { snprintf(buf, len, "?"); return; }
    const knob_t *k = &knobs[i];
    const char *at = (const char *)p + k->at;
    int whole = k->kind == KNOB_COUNT || k->kind == KNOB_BOOL || k->kind == KNOB_VERSION || k->kind == KNOB_CTA;
    double x = whole ? *(const int *)(const void *)at : *(const double *)(const void *)at;
    switch (k->kind) {
    case KNOB_COUNT: snprintf(buf, len, unset_is_auto(k) && x == 0 ? "auto" : "%d", (int)x); break;
    case KNOB_BOOL: snprintf(buf, len, "%s", x ? "true" : "false"); break;
    case KNOB_VERSION: knobs_version_text(x > 0 ? (int)x : TOPO_NCCL_TABLES, buf, len); break;
    case KNOB_CTA: snprintf(buf, len, "%s", cta_names[(int)x >= 0 && (int)x < 3 ? (int)x : 0]); break;
    case KNOB_BW: snprintf(buf, len, x > 0 ? "%gGB/s" : "0", x / 1e9); break;
    case KNOB_TIME:
        if (x <= 0) snprintf(buf, len, "0");
        else if (x < 1e-6) snprintf(buf, len, "%gns", x * 1e9);
        else if (x < 1e-3) snprintf(buf, len, "%gus", x * 1e6);
        else snprintf(buf, len, "%gms", x * 1e3);
        break;
    default: snprintf(buf, len, "%g", x); break;
    }
}

static int count(const knob_t *k, const char *s, int *out, char *why, size_t len) {
    char *end;
    errno = 0;
    if (unset_is_auto(k) && strcmp(s, "auto") == 0) { *out = 0; return 0; }   /* back to unset, as topo prints it */
    long x = strtol(s, &end, 10);
    if (end != s && *end == '\0' && errno == 0 && x >= k->lo && x <= k->hi) { *out = (int)x; return 0; }
    if (k->hi < MANY) snprintf(why, len, "must be a whole number from %d to %d%s", k->lo, k->hi, unset_is_auto(k) ? ", or auto" : "");
    else snprintf(why, len, "must be a whole number, at least %d", k->lo);
    return -1;
}

static int number(const knob_t *k, const char *s, double *out, char *why, size_t len) {
    char *end;
    double x = strtod(s, &end);
    int share = k->kind == KNOB_SHARE;
    if (end != s && *end == '\0' && x > 0 && (!share || x <= 1)) { *out = x; return 0; }
    snprintf(why, len, share ? "must be a share in (0, 1]" : "must be a positive number");
    return -1;
}

void knobs_version_text(int v, char *buf, size_t len) {
    snprintf(buf, len, "%d.%d.%d", v / 10000, v / 100 % 100, v % 100);
}

int knobs_version(const char *s, int *out, char *why, size_t len) {
    int major, minor, patch = 0, n = 0;
    char lo[16], hi[16];
    if ((sscanf(s, "%d.%d.%d%n", &major, &minor, &patch, &n) == 3 && s[n] == '\0') ||
        (sscanf(s, "%d.%d%n", &major, &minor, &n) == 2 && s[n] == '\0' && (patch = 0, 1))) {
        int v = major * 10000 + minor * 100 + patch;
        if (major >= 0 && minor >= 0 && minor < 100 && patch >= 0 && patch < 100 && v >= TOPO_NCCL_OLDEST &&
            v <= TOPO_NCCL_TABLES) { *out = v; return 0; }
    }
    knobs_version_text(TOPO_NCCL_OLDEST, lo, sizeof lo);
    knobs_version_text(TOPO_NCCL_TABLES, hi, sizeof hi);
    snprintf(why, len, "must be an NCCL version baton knows the rules of, %s to %s (NCCL's source, "
             "docs/decisions/machines-2026.md)", lo, hi);     /* the callers name the value */
    return -1;
}

int knobs_set(topo_params_t *p, const char *name, const char *s, char *why, size_t len) {
    const knob_t *k = find(name);
    char *at = (char *)p + (k ? k->at : 0);
    const char *u = NULL;
    double x;
    int b;
    if (k == NULL) return snprintf(why, len, "is not a machine value"), -1;
    switch (k->kind) {
    case KNOB_COUNT: return count(k, s, (int *)(void *)at, why, len);
    case KNOB_BOOL:
        if ((b = expand_bool(s)) < 0) return snprintf(why, len, "must be true or false"), -1;
        *(int *)(void *)at = b;
        return 0;
    case KNOB_BW:
        if (units_bandwidth(s, &x, &u) < 0) return snprintf(why, len, "must be a bandwidth: %s", u), -1;
        if (k->lo > 0 && !(x > 0)) return snprintf(why, len, "must be a bandwidth above 0 (at 0 every message takes forever)"), -1;
        *(double *)(void *)at = x;
        return 0;
    case KNOB_TIME:
        if (units_time(s, &x, &u) < 0) return snprintf(why, len, "must be a time: %s", u), -1;
        *(double *)(void *)at = x;
        return 0;
    case KNOB_SCALE:
    case KNOB_SHARE: return number(k, s, (double *)(void *)at, why, len);
    case KNOB_VERSION: return knobs_version(s, (int *)(void *)at, why, len);
    case KNOB_CTA: return cta(s, (int *)(void *)at, why, len);
    }
    return -1;
}
