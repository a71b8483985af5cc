/* test_scale.c - machines at scale (topologies/polaris.yaml) and a fit
 * that stays physical (validate/calibrate.c, cal_unphysical). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../topologies/topo_yaml.h"
#include "../validate/calibrate.h"
#include "helpers.h"

/* Polaris by name, at its full 560 nodes: 2,240 GPUs, 1,120 NICs on 70
 * switches of 16, in groups of 32 switches: 3 groups. */
Test(scale, polaris_loads_by_name_at_560_nodes) {
    const char *sets[] = {"nodes=560"};
    baton_err_t e = {0};
    topo_t *t = topo_yaml_load("topologies/polaris.yaml", sets, 1, &e);
    cr_assert_not_null(t, "%s", e.msg);
    cr_expect_eq(topo_nranks(t), 2240);
    const topo_dragonfly_t *d = &topo_params(t)->dragonfly;
    cr_expect_eq(d->routers, 70);
    cr_expect_eq(d->groups, 3);
    cr_expect_eq(d->adaptive, 1);
    topo_free(t);
    th_says("topo polaris --set nodes=8", 0, "32 ranks", 1);
}

static cal_param_t param(cal_kind_t kind, const char *cls, const char *name, double v, double lo, double hi, int at) {
    cal_param_t p = {.kind = kind, .value = v, .given = 1, .lo = lo, .hi = hi, .seen = 1, .at_bound = at};
    snprintf(p.cls, sizeof p.cls, "%s", cls);
    snprintf(p.name, sizeof p.name, "%s", name);
    return p;
}

/* An efficiency below 0.5 or a parameter at its bound is named with the
 * mechanism it stands for; an efficiency at 1 (the line rate) and values
 * inside their bounds are not. */
Test(scale, an_unphysical_fit_names_the_missing_mechanism) {
    cal_fit_t f = {0};
    f.p[f.k++] = param(CAL_LINK_EFF, "nic-switch", "nic-switch efficiency", 0.16, 0.02, 1, 0);
    f.p[f.k++] = param(CAL_LINK_EFF, "gpu-gpu", "gpu-gpu efficiency", 1, 0.02, 1, 1);
    f.p[f.k++] = param(CAL_PROTO_LAT, "", "LL128 latency x", 9.95, 0.1, 10, 1);
    f.p[f.k++] = param(CAL_PROTO_LAT, "", "LL latency x", 2.3, 0.1, 10, 0);
    f.p[f.k++] = param(CAL_LINK_EFF, "gpu-switch", "gpu-switch efficiency", 0.7, 0.02, 1, 0);
    char why[2048];
    int hard = -1;
    cr_expect_eq(cal_unphysical(&f, why, sizeof why, &hard), 2, "%s", why);
    cr_expect_eq(hard, 1, "only the link efficiency below 0.5 refuses the fit");
    cr_expect_not_null(strstr(why, "nic-switch efficiency 0.16 (below 0.5): the network moves less than half"), "%s", why);
    cr_expect_not_null(strstr(why, "TCP sockets"), "%s", why);
    cr_expect_not_null(strstr(why, "LL128 latency x 9.95 (at its upper bound): a per-message cost the model lacks"), "%s", why);
    cr_expect_null(strstr(why, "gpu-gpu"), "an efficiency at 1 is the line rate: %s", why);
    cr_expect_null(strstr(why, "gpu-switch"), "%s", why);
    f.p[0].value = 0.1, f.p[0].kept = 1;        /* kept at the file's value: not the fit's */
    f.p[0].given = 0.1;
    cr_expect_eq(cal_unphysical(&f, NULL, 0, &hard), 1);
    cr_expect_eq(hard, 0);
}

/* calibrate on the Polaris TCP-socket logs (setup 1) at 2 + 8 nodes: the
 * fit needs the network at a fraction of its line rate, so it is refused
 * with the mechanism named, and no file is written; --accept-unphysical
 * writes it. */
Test(scale, calibrate_refuses_an_unphysical_fit) {
    const char *out = "/tmp/baton_scale_refused.yaml";
    char cmd[1024], *text = NULL;
    remove(out);
    snprintf(cmd, sizeof cmd, "calibrate -t polaris --cv 0 --nccl-tests "
             "validate/logs/nccl-tests-scale/polaris_nccl_2_18_n2_all_reduce_setup1.txt "
             "validate/logs/nccl-tests-scale/polaris_nccl_2_18_n8_all_reduce_setup1.txt -o %s", out);
    cr_expect_eq(th_cli(cmd, &text, 0), 1, "%s", text);
    cr_expect_not_null(strstr(text, "the fit is not physical"), "%s", text);
    cr_expect_not_null(strstr(text, "the network moves less than half its line rate"), "%s", text);
    cr_expect_not_null(strstr(text, "not written"), "%s", text);
    cr_expect_neq(access(out, F_OK), 0, "%s was written", out);
    free(text);
    strcat(cmd, " --accept-unphysical");
    cr_expect_eq(th_cli(cmd, &text, 0), 0, "%s", text);
    cr_expect_not_null(strstr(text, "written anyway (--accept-unphysical)"), "%s", text);
    cr_expect_eq(access(out, F_OK), 0);
    free(text);
    remove(out);
}
