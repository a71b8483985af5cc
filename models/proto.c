/* proto.c - protocol defaults and their effect on the alpha-beta model. */
#include "proto.h"

#include <strings.h>

static const char *const names[PROTO_COUNT] = {"none", "LL", "LL128", "Simple"};

proto_cost_t proto_default(proto_t p) {
    switch (p) {
    case PROTO_LL: return (proto_cost_t){0.6e-6, 0.5, 6.6e-6, 0};
    case PROTO_LL128: return (proto_cost_t){1.9e-6, 120.0 / 128.0, 14.0e-6, 0};
    case PROTO_SIMPLE: return (proto_cost_t){3.4e-6, 1.0, 8.4e-6, 0};
    default: return (proto_cost_t){0, 1.0, 0, 0};
    }
}

const char *proto_name(proto_t p) { return p >= 0 && p < PROTO_COUNT ? names[p] : "?"; }

int proto_parse(const char *s) {
    for (int i = 0; i < PROTO_COUNT; i++)
        if (strcasecmp(s, names[i]) == 0) return i;
    return -1;
}

cost_model_t proto_apply(const cost_model_t *m, const proto_cost_t *c) {
    cost_model_t r = *m;
    r.alpha += c->msg_latency;
    r.beta /= c->efficiency;
    r.beta_path /= c->efficiency;
    r.across.alpha += c->msg_latency;
    r.across.beta /= c->efficiency;
    r.across.beta_path /= c->efficiency;
    r.helper_beta /= c->efficiency;
    r.rdzv_above *= c->efficiency;          /* the wire's threshold in the payload's bytes */
    return r;
}
