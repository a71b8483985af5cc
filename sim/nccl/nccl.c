/* nccl.c - the plan for a call, in NCCL's order (nccl.h): the rules of
 * ncclrule.c and the model of plan.c asked in turn. */
#include "nccl.h"
#include "plan.h"

#include <string.h>

#include "../../topologies/graph.h"
#include "../../topologies/topo.h"

/* A machine whose NCCL is said to follow its own cost model (`nccl_tuner:
 * true`): -a nccl then runs NCCL's pick (algorithm and protocol, within the
 * call's NCCL_ALGO and NCCL_PROTO), not the fastest row by baton's closed
 * forms; a rule of the machine's library still comes first. */
static int tuner(topo_t *t, run_req_t *q, const topo_lib_rule_t *rule, baton_err_t *e) {
    unsigned pm;
    if (!topo_params_c(t)->nccl_tuner || rule || strcmp(q->algo, "nccl") != 0) return 0;
    const char *row = NULL;
    int rc = plan_pick(t, q, &row, &pm, e);
    const algo_t *a = rc == 1 ? algo_find(q->coll, row) : NULL;
    proto_t pr = (proto_t)__builtin_ctz(pm ? pm : 1);
    if (a == NULL || !ncclrule_runs_at(t, a, q->proto == RUN_PROTO_AUTO ? pr : (proto_t)q->proto, topo_whole_ranks(t), q->bytes,
                                       q->protos))
        return rc < 0 ? rc : 0;                    /* a pick baton has no row for: its own choice, unmarked */
    q->nccl_row = row;
    if (q->proto == RUN_PROTO_AUTO) q->protos = pm;
    return rc;
}

/* With registered buffers on one NVLink domain NCCL runs a symmetric
 * kernel, the one its own model picks (ncclSymkPickKernel: NCCL_PROTO does
 * not enter it, a protocol asked of baton does): -a nccl runs the row that
 * moves that kernel's data, with its protocol (ncclrule_sym_kernel). */
static void sym_kernel(topo_t *t, run_req_t *q, const topo_lib_rule_t *rule) {
    int p = topo_whole_ranks(t);
    unsigned asked = ncclrule_protos(q->proto, 0);
    if (rule || strcmp(q->algo, "nccl") || q->proto == PROTO_NONE) return;   /* none: the textbook model, no kernel */
    const char *f = ncclrule_forced(t, q->coll, p, q->bytes, asked, ncclrule_algos(q->nccl_algo, q->nccl_algos));
    ncclrule_sym_t k;
    if (f == NULL || strcmp(f, "symmetric") || !ncclrule_sym_kernel(t, q->coll, p, q->bytes, asked, &k)) return;
    q->nccl_row = k.row, q->nccl_kernel = k.kernel;
    if (q->proto == RUN_PROTO_AUTO) q->protos = 1u << k.proto;
}

int nccl_group_pick(topo_t *t, const run_req_t *q, const int32_t *ranks, int n, const char **row, unsigned *protos,
                    baton_err_t *e) {
    *row = NULL, *protos = 0;
    if (!topo_params_c(t)->nccl_tuner || strcmp(q->algo, "nccl") != 0 || n < 2) return 0;
    return plan_pick_ranks(t, q, n, ncclrule_nodes(t, ranks, n), row, protos, e);
}

int nccl_call(topo_t *t, run_req_t *q, nccl_plan_t *x, baton_err_t *e) {
    ncclrule_env(t, q);
    x->rule = ncclrule_library(t, q);
    x->tuned = tuner(t, q, x->rule, e);
    if (x->tuned >= 0) sym_kernel(t, q, x->rule);
    return x->tuned < 0 ? x->tuned : 0;
}

/* Row a's options o as NCCL cuts it under protocol pr, n bytes on p ranks
 * (its C channels): the steps where none was asked (pipelined, the row's
 * own 0), LL's fill; the steps (0: the row's own). */
static int cut(topo_t *t, const algo_t *a, proto_t pr, int p, uint64_t n, int C, int asked, algo_opts_t *o) {
    int steps = asked ? 0 : ncclrule_pipeline(t, a, pr, p, o->group, graph_node_nics(t), C, n);
    if (steps) o->pipeline = steps;
    o->fill = ncclrule_fill(a, pr);
    return steps;
}

/* NCCL's channels for n bytes where none were asked: its count for the
 * size (ncclrule_channels), not the family's default (domain_rings). */
static void nccl_channels(const algo_t *a, proto_t pr, int p, uint64_t n, int said, algo_opts_t *o) {
    int C = ncclrule_channels(a, pr, p, n, o->channels, said);
    if (C != o->channels) o->channels = C, o->domain_rings = 0, o->channels_machine = 0;
}

/* Row a's own options o (algo_row_opts) as policy c cuts it for NCCL
 * (RUN_CUT_NCCL, RUN_CUT_SIZED or RUN_CUT_LOWER), in place: NCCL's channels for the size
 * where none were asked (under RUN_CUT_SIZED a log's TUNING rule's count,
 * rule_channels, first), then its steps where no pipeline was asked and its
 * fill; a pinned --pipeline K under RUN_CUT_LOWER keeps the user's steps
 * and no fill (the one cut -a auto and select's cells price). The steps
 * (0: the row's own). The listings and the run both cut here. */
static int nccl_cut_opts(topo_t *t, const algo_t *a, proto_t pr, int p, uint64_t n, run_cut_t c, int channels_asked,
                         int rule_channels, algo_opts_t *o) {
    if (!channels_asked) nccl_channels(a, pr, p, n, c == RUN_CUT_SIZED ? rule_channels : 0, o);
    if (c == RUN_CUT_LOWER && o->pipeline) return 0;
    return cut(t, a, pr, p, n, o->channels, o->pipeline != 0, o);
}

/* -a auto's listing (RUN_CUT_LOWER): NCCL's cut beside the row's own, or
 * the own alone where they are the same. */
static const algo_opts_t *cut_size(const form_filter_t *f, const algo_t *a, const algo_opts_t *o, algo_opts_t *tmp) {
    const nccl_cut_t *x = (const nccl_cut_t *)f;
    *tmp = *o;
    int steps = nccl_cut_opts(x->t, a, x->pr, x->p, x->n, RUN_CUT_LOWER, x->channels_asked, 0, tmp);
    return steps || tmp->fill != o->fill || tmp->channels != o->channels ? tmp : o;
}

nccl_cut_t nccl_cut_listing(topo_t *t, proto_t pr, int p, uint64_t n, int channels_asked) {
    return (nccl_cut_t){{NULL, cut_size, 1}, t, pr, p, n, channels_asked};
}

/* The rows NCCL may run: its own, with protocol pr where one is named, of
 * the family it runs without its tuner, of the algorithm a library rule
 * names, within the call's NCCL_ALGO; each priced as NCCL cuts it. */
typedef struct {
    nccl_cut_t c;
    const char *forced, *family;
    unsigned allowed;
    unsigned protos;         /* the call's NCCL_PROTO (0: none given): whether LL128 runs (view_ll128) */
    int rule_channels;       /* a log's TUNING rule's count (--channels given: c.channels_asked) */
    const char *kernel_row;  /* the row of NCCL's symmetric kernel (run_req_t.nccl_kernel): it alone */
} rows_filter_t;

static int keep(const form_filter_t *f, const algo_t *a) {
    const rows_filter_t *x = (const rows_filter_t *)f;
    if (x->kernel_row) return strcmp(a->name, x->kernel_row) == 0;      /* not an NCCL family row: oneshot, direct */
    if (a->nccl == NULL || (x->c.pr != PROTO_NONE && !ncclrule_runs_at(x->c.t, a, x->c.pr, x->c.p, x->c.n, x->protos)))
        return 0;
    if (x->forced && strcmp(a->nccl, x->forced)) return 0;            /* NCCL runs that family, no tuner */
    if (x->family && strcmp(a->nccl, x->family)) return 0;
    int ni = x->allowed ? algo_nccl_index(a->nccl) : -1;
    return !(ni >= 0 && !(x->allowed >> ni & 1));                     /* NCCL_ALGO leaves it out */
}

/* Row a priced as -a nccl runs it (nccl_size): NCCL's channels for the
 * size where none were asked, then its cut. */
static const algo_opts_t *nccl_sized(const form_filter_t *f, const algo_t *a, const algo_opts_t *o, algo_opts_t *tmp) {
    const rows_filter_t *x = (const rows_filter_t *)f;
    *tmp = *o;
    nccl_cut_opts(x->c.t, a, x->c.pr, x->c.p, x->c.n, RUN_CUT_SIZED, x->c.channels_asked, x->rule_channels, tmp);
    return tmp;
}

static rows_filter_t filter(topo_t *t, coll_t coll, proto_t pr, int p, uint64_t n, const char *family, unsigned allowed,
                            unsigned protos, unsigned asked, const char *kernel_row) {
    const char *forced = ncclrule_forced(t, coll, p, n, asked, ncclrule_algos(family, allowed));   /* the call's, not pr's */
    return (rows_filter_t){{{keep, nccl_sized, 0}, t, pr, p, n, 1}, forced, family, allowed, protos, 0, kernel_row};
}

int nccl_rows(topo_t *t, const run_req_t *q, const run_req_t *q_in, const nccl_plan_t *x, const cost_model_t *m,
              proto_t pr, int p, const algo_t **rows, double *closed) {
    const proto_cost_t *pc = &topo_params_c(t)->proto[pr];
    double times[FORM_MAX_ROWS];
    rows_filter_t f = filter(t, q->coll, pr, p, q->bytes, q->nccl_algo, q->nccl_algos, q->protos,
                             ncclrule_protos(q->proto, q->protos), q->nccl_kernel ? q->nccl_row : NULL);
    f.c.channels_asked = q_in->opts.channels != 0;
    f.rule_channels = x->rule ? x->rule->channels : 0;
    int k = form_list(t, q->coll, m, pc, p, q->bytes, &q->opts, &f.c.f, rows, times, FORM_MAX_ROWS);
    if (k > 0 && q->nccl_row) {                     /* nccl_tuner: NCCL's model named the row */
        int j = 0;
        for (int i = 0; i < k; i++) if (strcmp(rows[i]->name, q->nccl_row) == 0) rows[j] = rows[i], times[j++] = times[i];
        k = j;
    }
    int best = form_lowest(times, k), kept = 0;
    if (k < 0 || best < 0) return k < 0 ? k : 0;
    for (int i = 0; i < k; i++) if (times[i] <= times[best] * NCCL_SLACK) closed[kept] = times[i], rows[kept++] = rows[i];
    return kept;
}

run_cut_t nccl_cut_of(const run_req_t *q) {
    if (q->cut != RUN_CUT_ALGO) return q->cut;
    return !strcmp(q->algo, "nccl") ? RUN_CUT_SIZED : !strcmp(q->algo, "auto") ? RUN_CUT_LOWER : RUN_CUT_OWN;
}

int nccl_size(topo_t *t, const run_req_t *q, const run_req_t *q_in, const nccl_plan_t *x, const algo_t *a, proto_t pr,
              int p, run_req_t *qc) {
    algo_opts_t tmp;
    run_cut_t c = nccl_cut_of(q);
    *qc = *q;
    if (c == RUN_CUT_OWN) return 0;
    int asked = q_in->opts.channels != 0;
    if (!asked) qc->opts.channels = algo_row_opts(a, &q->opts, &tmp)->channels;   /* NCCL's count down from the row's own */
    return nccl_cut_opts(t, a, pr, p, q->bytes, c, asked, x->rule ? x->rule->channels : 0, &qc->opts);
}
