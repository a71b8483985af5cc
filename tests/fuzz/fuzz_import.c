/* fuzz_import.c - libFuzzer harness for `topo import nvsmi` and `nccl-xml`.
 *
 * Any input must import or fail with a message, both ways; what imports must
 * load as a machine (the importers never write a file the loader refuses). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../topologies/import.h"
#include "../../topologies/topo.h"
#include "../../topologies/topo_yaml.h"
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void one(const char *path, int (*import)(const char *, const char *, char **, baton_err_t *)) {
    baton_err_t e = {0};
    char *yaml = NULL;
    if (import(path, "fuzzed", &yaml, &e) < 0) {
        if (e.msg[0] == 0) abort();
        return;
    }
    const char *out = fuzz_to_file((const uint8_t *)yaml, strlen(yaml), 1);
    free(yaml);
    if (out == NULL) return;
    topo_t *t = topo_yaml_load(out, NULL, 0, &e);
    if (t == NULL) { fprintf(stderr, "imported file refused: %s\n", e.msg); abort(); }
    topo_free(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_to_file(data, size, 0);
    if (path == NULL) return 0;
    one(path, import_nvsmi);
    one(path, import_nccl_xml);
    return 0;
}
