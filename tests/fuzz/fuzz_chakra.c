/* fuzz_chakra.c - libFuzzer harness for Chakra traces (baton replay).
 *
 * Any input must decode, or fail with a message naming the file and where;
 * one that decodes is replayed as both ranks of a two-rank trace on
 * tests/data/chakra/uniform4.yaml (its graph, groups, pairs and walk), which
 * must run or say why; never crash, leak, overflow or hang. */
#include <stdlib.h>
#include <string.h>

#include "../../sim/replay/replay.h"
#include "../../sim/answer/run.h"
#include "../../topologies/topo_yaml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static topo_t *t;
    baton_err_t e = {0};
    if (t == NULL && (t = topo_yaml_load("tests/data/chakra/uniform4.yaml", NULL, 0, &e)) == NULL) abort();
    chakra_et_t et[2];
    if (chakra_decode(data, size, "fuzz.et", &et[0], &e) < 0) {
        if (strncmp(e.msg, "fuzz.et: ", 9) != 0) abort();
        return 0;
    }
    if (chakra_decode(data, size, "fuzz.et", &et[1], &e) < 0) abort();   /* the same bytes read the same */
    const char *names[2] = {"fuzz.0.et", "fuzz.1.et"};
    replay_req_t q = {.algo = "ring", .proto = RUN_PROTO_AUTO};
    replay_out_t o;
    if (replay_run(t, et, names, 2, &q, &o, &e) < 0) {
        if (strncmp(e.msg, "fuzz.", 5) != 0 && e.code != BATON_ENOMEM) abort();
    } else {
        char *js = replay_trace_json(&o);
        free(js);
        replay_free(&o);
    }
    chakra_free(&et[0]);
    chakra_free(&et[1]);
    return 0;
}
