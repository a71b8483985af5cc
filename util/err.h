/* err.h - one error table for the whole library.
 *
 * Library functions return 0 or a negative code from BATON_ERRORS and, when
 * given one, fill a baton_err_t with a sentence a user can act on
 * ("file:line:col: what is wrong"). Only the command line (sim/cli/) prints it. */
#ifndef BATON_ERR_H
#define BATON_ERR_H

#include <stddef.h>

#define BATON_ERRORS(X)                                   \
    X(BATON_OK,          0, "ok")                         \
    X(BATON_ENOMEM,     -1, "out of memory")              \
    X(BATON_EINVAL,     -2, "invalid argument")           \
    X(BATON_EPARSE,     -3, "parse error")                \
    X(BATON_EUNSUP,     -4, "unsupported")                \
    X(BATON_EIO,        -5, "input/output error")         \
    X(BATON_ESCHED,     -6, "inconsistent schedule")      \
    X(BATON_EVERIFY,    -7, "verification failed")       \
    X(BATON_EWHOLE,     -8, "needs the whole machine")

enum {
#define BATON_ERR_ENUM(name, code, msg) name = code,
    BATON_ERRORS(BATON_ERR_ENUM)
#undef BATON_ERR_ENUM
};

typedef struct baton_err {
    int code;
    char msg[512];
} baton_err_t;

/* The table's message for a code ("unsupported"). */
const char *err_str(int code);

/* Record code and a printf-style detail in e (e may be NULL); returns code so
 * callers can write `return err_set(e, BATON_EINVAL, "...")`. The first error
 * wins: a later call does not overwrite an earlier one. */
int err_set(baton_err_t *e, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Put a printf-style context before e's recorded message ("collective 2: "
 * + what went wrong); nothing when e is NULL or holds no error. */
void err_prefix(baton_err_t *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Forget any recorded error. */
void err_clear(baton_err_t *e);

#endif
