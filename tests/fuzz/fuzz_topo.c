/* fuzz_topo.c - libFuzzer harness for the YAML topology loader.
 *
 * Any input must give a topology or an error naming a place; never a crash,
 * a leak or a hang. A topology that loads must route between its ranks and
 * yield a cost model, since every command relies on both; on small ones
 * every route must be the full search's (the switch-port shortcut is an
 * optimisation, never a different answer). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../topologies/topo_yaml.h"
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* All routes among n ranks (and reducers), with the shortcut and without: equal. */
static void routes_agree(topo_t *t, int n) {
    int32_t *links = malloc((size_t)n * n * ((size_t)topo_nnodes(t) + 1) * sizeof *links);
    int *len = malloc((size_t)n * n * sizeof *len);
    double *lat = malloc((size_t)n * n * sizeof *lat);
    if (!links || !len || !lat) abort();
    for (int pass = 0; pass < 2; pass++) {
        topo_set_route_shortcut(t, pass == 0);
        for (int i = 0; i < n * n; i++) {
            topo_route_t rt;
            baton_err_t e = {0};
            int32_t *mine = links + (size_t)i * (topo_nnodes(t) + 1);
            int rc = topo_route(t, i / n, i % n, &rt, &e), got = rc < 0 ? -1 : rt.nlinks;
            if (pass == 0) { len[i] = got; lat[i] = rc < 0 ? 0 : rt.lat; }
            else if (len[i] != got || (rc == 0 && lat[i] != rt.lat)) abort();
            for (int k = 0; k < got; k++)
                if (pass == 0) mine[k] = rt.links[k];
                else if (mine[k] != rt.links[k]) abort();
        }
    }
    topo_set_route_shortcut(t, 1);
    free(links);
    free(len);
    free(lat);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_to_file(data, size, 0);
    baton_err_t e = {0};
    if (path == NULL) return 0;
    topo_t *t = topo_yaml_load(path, NULL, 0, &e);
    if (t == NULL) {
        if (e.msg[0] == 0) abort();                 /* an error must say what */
        return 0;
    }
    int p = topo_nranks(t);
    if (p < 1) abort();
    if (topo_nnodes(t) > 4096) {         /* the cost model is O(ranks x links): big files load only */
        topo_free(t);
        return 0;
    }
    topo_route_t rt;
    if (topo_route(t, 0, p - 1, &rt, &e) < 0 && e.msg[0] == 0) abort();
    int all = p + topo_nreducers(t);
    if (all <= 24 && topo_nnodes(t) <= 256) routes_agree(t, all);
    cost_model_t m;
    if (topo_cost_model(t, &m, &e) < 0 && e.msg[0] == 0) abort();
    topo_free(t);
    return 0;
}
