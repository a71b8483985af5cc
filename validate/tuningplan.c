/* tuningplan.c - the plan NCCL says it ran (tuningplan.h). */
#include "tuningplan.h"

#include <stdio.h>
#include <string.h>

#include "logplan.h"

static int same_plan(const nt_plan_t *a, const nt_plan_t *b) {
    return strcmp(a->algo, b->algo) == 0 && a->proto == b->proto && a->channels == b->channels;
}

void tuningplan_rules(const nt_log_t *log, int ranks, topo_lib_rule_t *out, int *n, int max) {
    for (int i = 0; i < log->nrows;) {
        const nt_plan_t *p = nt_row_plan(log, i);
        int j = i + 1;
        if (p == NULL) { i++; continue; }
        while (j < log->nrows && nt_row_plan(log, j) && same_plan(p, nt_row_plan(log, j)) &&
               log->rows[j].bytes > log->rows[j - 1].bytes)
            j++;
        if (*n < max) {
            out[*n] = (topo_lib_rule_t){.coll = (int)log->coll, .ranks = ranks, .min = log->rows[i].bytes,
                                        .max = log->rows[j - 1].bytes, .align = 1, .nccl = 1, .channels = p->channels,
                                        .proto = p->proto, .protos = log->env_proto.mask};
            snprintf(out[(*n)++].algo, sizeof out->algo, "%s", p->algo);
        }
        i = j;
    }
}

int tuningplan_runs(topo_t *t, const topo_lib_rule_t *r) {
    topo_library_t *l = &topo_params(t)->lib;
    topo_lib_rule_t saved = l->rule[0];
    int nrules = l->nrules;
    l->rule[0] = *r, l->nrules = 1;
    run_req_t q = {.coll = (coll_t)r->coll, .algo = "nccl", .bytes = r->min, .predict = 1, .proto = RUN_PROTO_AUTO,
                   .protos = r->protos};                /* as that run's NCCL was told */
    run_out_t o;
    baton_err_t quiet = {0};
    int ok = run_collective(t, &q, &o, &quiet) == 0;
    l->rule[0] = saved, l->nrules = nrules;
    return ok;
}

int tuningplan_apply(topo_t *t, const topo_lib_rule_t *r, int n, char *why, size_t whyn) {
    topo_library_t *l = &topo_params(t)->lib;
    size_t at = 0;
    int added = 0;
    why[0] = '\0';
    for (int i = 0; i < n; i++) {
        if (r[i].ranks != topo_whole_ranks(t)) continue;
        if (l->nrules < TOPO_MAX_LIB_RULES && tuningplan_runs(t, &r[i])) {
            l->rule[l->nrules++] = r[i], added++;
            continue;
        }
        char text[128];
        logplan_rule_text(&r[i], text, sizeof text);
        if (at < whyn) at += (size_t)snprintf(why + at, whyn - at, "%s%s", at ? "; " : "", text);
    }
    return added;
}

const topo_lib_rule_t *tuningplan_rule(const topo_t *t, const cal_sample_t *x) {
    const topo_t *on = x->machine ? x->machine : t;
    const topo_lib_rule_t *r = topo_library_rule(on, x->coll, topo_whole_ranks(on), x->bytes, -1, 1);
    return r && r->nccl && !r->tuner ? r : NULL;
}

int tuningplan_guess(topo_t *t, const cal_req_t *q, const cal_sample_t *x, const char **algo, proto_t *proto,
                     baton_err_t *e) {
    if (tuningplan_rule(t, x) == NULL || strcmp(q->algo, "nccl")) return 0;
    cal_req_t g = *q;
    g.unsaid = 1;                                   /* the other rules, without NCCL's word */
    double time;
    int rc = cal_predict(t, &g, x, &time, algo, proto, e);
    return rc < 0 ? rc : 1;
}

int tuningplan_same(coll_t coll, const char *a, proto_t pa, const char *b, proto_t pb) {
    const algo_t *x = algo_find(coll, a), *y = algo_find(coll, b);
    return pa == pb && x && y && (x == y || (x->nccl && y->nccl && strcmp(x->nccl, y->nccl) == 0));
}
