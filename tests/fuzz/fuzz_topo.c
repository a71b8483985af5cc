/* fuzz_topo.c - libFuzzer harness for the YAML topology loader.
 *
 * Any input must give a topology or an error naming a place; never a crash,
 * a leak or a hang. A topology that loads must route between its ranks and
 * yield a cost model, since every command relies on both. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../topologies/topo_yaml.h"
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
    cost_model_t m;
    if (topo_cost_model(t, &m, &e) < 0 && e.msg[0] == 0) abort();
    topo_free(t);
    return 0;
}
