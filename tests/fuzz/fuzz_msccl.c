/* fuzz_msccl.c - libFuzzer harness for MSCCL XML (-a msccl:FILE).
 *
 * Any input must read, check and compile, or fail with a message naming
 * what is wrong; never crash, leak or overflow. */
#include <stdlib.h>

#include "../../algorithms/msccl.h"
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_to_file(data, size, 0);
    baton_err_t e = {0};
    if (path && msccl_check_file(path, &e) < 0 && e.msg[0] == 0) abort();
    return 0;
}
