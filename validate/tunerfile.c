/* tunerfile.c - a tuner CSV honoured as NCCL would (tunerfile.h). */
#include "tunerfile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sim/nccl/nccl.h"
#include "logplan.h"
#include "tuningplan.h"

/* The CSV's collective index (NCCL's ncclFunc_t: broadcast, reduce,
 * allgather, reducescatter, allreduce) and algorithm index (NCCL_ALGO_*:
 * tree, ring, collnet_direct, collnet_chain, nvls, nvls_tree, pat, the
 * order algo_nccl_index_of_name counts in) in baton's terms. */
static const char *const colls[] = {"broadcast", "reduce", "allgather", "reducescatter", "allreduce"};
static const char *const algos[] = {"tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat"};

int tunerfile_read(const char *path, tuner_table_t *t, baton_err_t *e) {
    memset(t, 0, sizeof *t);
    FILE *f = fopen(path, "r");
    if (f == NULL) return err_set(e, BATON_EIO, "%s: cannot open: %s", path, strerror(errno));
    size_t n = 0, cap = 4096;
    char *text = malloc(cap);
    for (size_t k; text && (k = fread(text + n, 1, cap - n - 1, f)) > 0;) {
        n += k;
        if (n + 1 == cap) {
            char *x = realloc(text, cap *= 2);
            if (x == NULL) free(text);
            text = x;
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (text == NULL) return err_set(e, BATON_ENOMEM, "out of memory");
    text[n] = '\0';
    char why[512];
    int rc = bad ? err_set(e, BATON_EIO, "%s: cannot read", path)
                 : tuner_csv_parse(path, text, t, why, sizeof why) < 0 ? err_set(e, BATON_EPARSE, "%s", why) : 0;
    free(text);
    if (rc == 0 && t->n == 0) rc = err_set(e, BATON_EPARSE, "%s: no rows (collective,min_bytes,max_bytes,...)", path);
    if (rc < 0) tuner_csv_free(t);
    return rc;
}

const tuner_rule_t *tunerfile_nth(const tuner_table_t *tab, coll_t coll, uint64_t bytes, int nnodes, int nranks, int k) {
    for (int i = 0; i < tab->n; i++) {
        const tuner_rule_t *r = &tab->r[i];
        if (r->coll < 0 || r->coll > 4 || coll_parse(colls[r->coll]) != (int)coll) continue;
        if (tuner_csv_match(&(tuner_table_t){.n = 1, .r = (tuner_rule_t *)r}, r->coll, bytes, nnodes, nranks, 1, 0) &&
            k-- == 0)
            return r;
    }
    return NULL;
}

const char *tunerfile_nccl_algo(const tuner_rule_t *r) { return r->algo >= 0 && r->algo < 7 ? algos[r->algo] : "?"; }

proto_t tunerfile_proto(const tuner_rule_t *r) { return (proto_t)(PROTO_LL + r->proto); }

/* Does row r apply to every call on a machine of nnodes x nranks (its
 * count, pipeline and registration fields)? */
static int applies(const tuner_rule_t *r, int nnodes, int nranks) {
    return (r->nnodes < 0 || r->nnodes == nnodes) && (r->nranks < 0 || r->nranks == nranks) &&
           (r->pipeops < 0 || r->pipeops == 1) && (r->regbuff < 0 || r->regbuff == 0) && r->coll >= 0 && r->coll <= 4;
}

int tunerfile_apply(topo_t *t, const tuner_table_t *tab, const char *path, char *why, size_t whyn, baton_err_t *e) {
    tuning_machine_t m;
    algo_opts_t none = {0};
    if (view_machine(t, &none, &m, e) < 0) return -1;
    topo_library_t *l = &topo_params(t)->lib;
    topo_lib_rule_t put[TOPO_MAX_LIB_RULES];
    int n = 0;
    size_t at = 0;
    why[0] = '\0';
    for (int i = 0; i < tab->n; i++) {
        const tuner_rule_t *r = &tab->r[i];
        if (!applies(r, m.nnodes, m.nranks)) continue;
        topo_lib_rule_t x = {.coll = coll_parse(colls[r->coll]), .ranks = topo_whole_ranks(t), .min = r->lo, .max = r->hi,
                             .align = 1, .nccl = 1, .tuner = 1, .channels = r->channels > 0 ? r->channels : 0,
                             .proto = tunerfile_proto(r)};
        snprintf(x.algo, sizeof x.algo, "%s", tunerfile_nccl_algo(r));
        if (!tuningplan_runs(t, &x)) {                    /* NCCL's cost table says IGNORE: the next row's turn */
            char text[128];
            logplan_rule_text(&x, text, sizeof text);
            if (at < whyn) at += (size_t)snprintf(why + at, whyn - at, "%s%s", at ? "; " : "", text);
            continue;
        }
        if (n + l->nrules >= TOPO_MAX_LIB_RULES)
            return err_set(e, BATON_EINVAL, "%s: more than %d rows apply to %s (with its own %d rules)", path,
                           TOPO_MAX_LIB_RULES, topo_name(t), l->nrules);
        put[n++] = x;
    }
    memmove(&l->rule[n], &l->rule[0], (size_t)l->nrules * sizeof l->rule[0]);
    memcpy(&l->rule[0], put, (size_t)n * sizeof put[0]);
    l->nrules += n;
    return n;
}
