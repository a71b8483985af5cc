/* fuzz_import.c - libFuzzer harness for `topo import nvsmi`.
 *
 * Any input must import or fail with a message; what it imports must load
 * as a machine (the importer never writes a file the loader refuses). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../topologies/import.h"
#include "../../topologies/topo.h"
#include "../../topologies/topo_yaml.h"
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_to_file(data, size, 0);
    baton_err_t e = {0};
    char *yaml = NULL;
    if (path == NULL) return 0;
    if (import_nvsmi(path, "fuzzed", &yaml, &e) < 0) {
        if (e.msg[0] == 0) abort();
        return 0;
    }
    const char *out = fuzz_to_file((const uint8_t *)yaml, strlen(yaml), 1);
    free(yaml);
    if (out == NULL) return 0;
    topo_t *t = topo_yaml_load(out, NULL, 0, &e);
    if (t == NULL) { fprintf(stderr, "imported file refused: %s\n", e.msg); abort(); }
    topo_free(t);
    return 0;
}
