/* fuzz_nccltests.c - libFuzzer harness for the nccl-tests log reader.
 *
 * Any input must parse or fail with a message. A log that parses must
 * survive a round trip: what nt_write prints, nt_parse reads back as the
 * same collective, rank count and rows (sizes exactly). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../validate/nccltests.h"
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void round_trip(const nt_log_t *log) {
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (m == NULL) return;
    int rc = nt_write(log, m);
    fclose(m);
    const char *path = rc == 0 ? fuzz_to_file((const uint8_t *)text, len, 1) : NULL;
    free(text);
    if (path == NULL) return;
    nt_log_t back;
    baton_err_t e = {0};
    if (nt_parse(path, 0, &back, &e) < 0) abort();
    if (back.coll != log->coll || back.ranks != log->ranks || back.nrows != log->nrows) abort();
    for (int i = 0; i < log->nrows; i++)
        if (back.rows[i].bytes != log->rows[i].bytes) abort();
    nt_free(&back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_to_file(data, size, 0);
    baton_err_t e = {0};
    nt_log_t log;
    if (path == NULL) return 0;
    if (nt_parse(path, 0, &log, &e) < 0) {
        if (e.msg[0] == 0) abort();
        return 0;
    }
    round_trip(&log);
    nt_free(&log);
    return 0;
}
