/* fuzz_input.c - scratch files for the fuzzers (see fuzz_input.h). */
#include "fuzz_input.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

const char *fuzz_to_file(const uint8_t *data, size_t size, int which) {
    static char paths[2][64];
    char *path = paths[which & 1];
    if (path[0] == 0) snprintf(path, sizeof paths[0], "/tmp/baton-fuzz-%ld-%d", (long)getpid(), which & 1);
    FILE *f = fopen(path, "wb");
    if (f == NULL) return NULL;
    int ok = fwrite(data, 1, size, f) == size;
    if (fclose(f) != 0 || !ok) return NULL;
    return path;
}
