/* fuzz_input.h - the fuzzers' one shared helper: the loaders read files, so
 * each input is written to a private temporary file first. */
#ifndef BATON_FUZZ_INPUT_H
#define BATON_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>

/* Write data to this process's scratch file (suffix names the kind, e.g.
 * ".yaml"); returns its path, or NULL (the input is then skipped). */
const char *fuzz_to_file(const uint8_t *data, size_t size, int which);

#endif
