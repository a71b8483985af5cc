/* err.c - the error table's messages and the sticky error setter. */
#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *err_str(int code) {
    switch (code) {
#define BATON_ERR_CASE(name, c, msg) case c: return msg;
        BATON_ERRORS(BATON_ERR_CASE)
#undef BATON_ERR_CASE
    }
    return "unknown error";
}

int err_set(baton_err_t *e, int code, const char *fmt, ...) {
    if (e == NULL || e->code != 0) return code;
    e->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    return code;
}

void err_prefix(baton_err_t *e, const char *fmt, ...) {
    if (e == NULL || e->code == 0) return;
    char head[128], was[sizeof e->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(head, sizeof head, fmt, ap);
    va_end(ap);
    memcpy(was, e->msg, sizeof was);
    snprintf(e->msg, sizeof e->msg, "%s%.*s", head, (int)(sizeof e->msg - strlen(head) - 1), was);
}

void err_clear(baton_err_t *e) {
    if (e == NULL) return;
    e->code = 0;
    e->msg[0] = '\0';
}
