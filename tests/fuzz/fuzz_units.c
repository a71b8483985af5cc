/* fuzz_units.c - libFuzzer harness for the command line's numbers: sizes,
 * bandwidths, times, size lists ("8B:16GiB:x2"), name ranges and ${...}
 * substitution with its integer arithmetic.
 *
 * Whatever parses must be a value the tool can use: positive finite
 * bandwidths, non-negative finite times, size lists of at least one size. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../sim/answer/select.h"
#include "../../topologies/expand.h"
#include "../../topologies/units.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > 4096) return 0;
    char *s = malloc(size + 1);
    if (s == NULL) return 0;
    memcpy(s, data, size);
    s[size] = 0;
    const char *why = NULL;
    double d;
    uint64_t u, *sizes = NULL;
    int n = 0;
    char **names = NULL;
    if (units_bandwidth(s, &d, &why) == 0 && !(d >= 0 && isfinite(d))) abort();
    if (units_time(s, &d, &why) == 0 && !(d >= 0 && isfinite(d))) abort();
    (void)units_size(s, &u, &why);
    if (select_parse_sizes(s, &sizes, &n, &why) == 0 && (n < 1 || sizes == NULL)) abort();
    free(sizes);
    if (size < 64 && expand_range(s, &names, &n, &why) == 0) {
        if (n < 1) abort();
        expand_names_free(names, n);
    }
    expand_params_t ps = {0};                  /* ${...} substitution and its arithmetic */
    char out[1024];
    if (expand_set(&ps, "nodes", "8") == 0 && expand_set(&ps, "bw", "400Gb/s") == 0 &&
        expand_subst(&ps, s, out, sizeof out, &why) == 0 && strlen(out) >= sizeof out) abort();
    expand_free(&ps);
    free(s);
    return 0;
}
