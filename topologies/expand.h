/* expand.h - the text layer of topology files: parameters and name ranges.
 *
 *   ${nodes}          the parameter's value, as text ("2", "400Gb/s")
 *   ${nodes*8-1}      integer arithmetic on integer parameters: + - * / %,
 *                     << and parentheses
 *   gpu[0-7]          eight names, gpu0 .. gpu7; several brackets multiply:
 *   n[0-1].g[0-3]     n0.g0 n0.g1 n0.g2 n0.g3 n1.g0 ... (last bracket fastest)
 *   gpu[0,2,5-6]      gpu0 gpu2 gpu5 gpu6: items in the order written
 *
 * Parameters are declared with defaults in the file's `params:` and
 * overridden with --set name=value. No file I/O here; no YAML either. */
#ifndef BATON_EXPAND_H
#define BATON_EXPAND_H

#include <stddef.h>

typedef struct expand_param {
    char *name;
    char *value;
    int used_by_set;     /* overridden from the command line */
    int from_file;       /* declared in the file's params: (expand_mark_file) */
    char *file_value;    /* its value there, once something replaced it; NULL otherwise */
} expand_param_t;

typedef struct expand_params {
    expand_param_t *v;
    int n, cap;
} expand_params_t;

/* Set (or add) a parameter; 0 or -1 when memory runs out. */
int expand_set(expand_params_t *ps, const char *name, const char *value);
/* Mark every parameter so far as the file's: a later expand_set keeps the
 * value it replaces as file_value. */
void expand_mark_file(expand_params_t *ps);
/* The value of a parameter, NULL if none. */
const char *expand_get(const expand_params_t *ps, const char *name);
void expand_free(expand_params_t *ps);

/* Replace every ${...} in `in`; 0, or -1 with *why set. */
int expand_subst(const expand_params_t *ps, const char *in, char *out, size_t outlen, const char **why);
/* expand_subst's reason where a ${...} names no parameter. */
#define EXPAND_UNKNOWN "unknown parameter"
/* The first name inside a ${...} of in that is no parameter of ps (a whole
 * ${name} that is one counts as known, dashes and all), into
 * name (n bytes): 1, or 0 if every one is known (the error was another). */
int expand_unknown(const expand_params_t *ps, const char *in, char *name, size_t n);

#ifndef EXPAND_MAX_NAMES
#define EXPAND_MAX_NAMES 4194304     /* = TOPO_MAX_NODES: no pattern can name more */
#endif
#define EXPAND_STR_(x) #x
#define EXPAND_STR(x) EXPAND_STR_(x)

/* Expand the ranges of a name pattern into a malloc'd array of malloc'd
 * names (*n of them; a name without brackets gives itself). 0 or -1. */
int expand_range(const char *pattern, char ***names, int *n, const char **why);
void expand_names_free(char **names, int n);

/* "true"/"false"/"yes"/"no"/"1"/"0" -> 1/0; -1 if it is none of them. */
int expand_bool(const char *s);

#endif
