/* ntlines.h - an nccl-tests log's lines, whichever form it came in.
 *
 * nccl-tests (2.17 on) writes its results as JSON too, `-J FILE.json`
 * (src/util.cu: each writer prints a text line and emits the same values
 * to the JSON beside it). A file whose first non-blank byte is '{' is read
 * as that JSON, and handed on as the text lines the same run prints: the
 * header (# nThread ...), one Rank line a rank, the column header, the rows,
 * the footer, and "NCCL INFO NAME set by environment to VALUE" for each
 * NCCL_* variable its `env` list holds (what NCCL_DEBUG=INFO prints for
 * the variables NCCL reads). One reader (nccltests.c, ncclinfo.c) then
 * reads both forms, so they cannot drift apart. Any other file is handed
 * on line by line as it is. */
#ifndef BATON_NTLINES_H
#define BATON_NTLINES_H

#include "../util/err.h"

/* Called per line (a writable copy) with its line in the file (a JSON
 * row's: where its object starts); < 0 stops the reading with that. */
typedef int (*ntl_fn)(void *ctx, char *line, int lineno, baton_err_t *e);

/* Each line of path to fn; 0, or < 0 with "path:line: what" (a JSON file
 * that does not read, or is not nccl-tests' output) or fn's error. *json
 * (where not NULL): 1 for a JSON file. */
int ntl_each(const char *path, ntl_fn fn, void *ctx, int *json, baton_err_t *e);

/* Bytes per element of an nccl-tests type name ("float", "bf16", ...), as
 * both forms write it; 0 if unknown. */
int ntl_type_size(const char *type);

#endif
