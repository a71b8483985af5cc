/* expand.c - ${...} substitution with integer arithmetic, and name ranges.
 *
 * The arithmetic is a recursive-descent parser over one string (shift = expr
 * {<< expr}, expr = term {(+|-) term}, term = unary {(*|/|%) unary}, unary =
 * [-] atom, atom = number | name | (shift)); errors stop it with a reason,
 * never a crash. */
#include "expand.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int expand_set(expand_params_t *ps, const char *name, const char *value) {
    for (int i = 0; i < ps->n; i++)
        if (strcmp(ps->v[i].name, name) == 0) {
            char *v = strdup(value);
            if (v == NULL) return -1;
            if (ps->v[i].from_file && ps->v[i].file_value == NULL) ps->v[i].file_value = ps->v[i].value;
            else free(ps->v[i].value);
            ps->v[i].value = v;
            return 0;
        }
    if (ps->n == ps->cap) {
        int nc = ps->cap ? ps->cap * 2 : 16;
        expand_param_t *v = realloc(ps->v, (size_t)nc * sizeof *v);
        if (v == NULL) return -1;
        ps->v = v;
        ps->cap = nc;
    }
    expand_param_t *p = &ps->v[ps->n];
    *p = (expand_param_t){strdup(name), strdup(value), 0, 0, NULL};
    if (!p->name || !p->value) { free(p->name); free(p->value); return -1; }
    ps->n++;
    return 0;
}

const char *expand_get(const expand_params_t *ps, const char *name) {
    for (int i = 0; i < ps->n; i++)
        if (strcmp(ps->v[i].name, name) == 0) return ps->v[i].value;
    return NULL;
}

void expand_mark_file(expand_params_t *ps) {
    for (int i = 0; i < ps->n; i++) ps->v[i].from_file = 1;
}

void expand_free(expand_params_t *ps) {
    for (int i = 0; i < ps->n; i++) { free(ps->v[i].name); free(ps->v[i].value); free(ps->v[i].file_value); }
    free(ps->v);
    *ps = (expand_params_t){0};
}

int expand_bool(const char *s) {
    if (!strcmp(s, "true") || !strcmp(s, "yes") || !strcmp(s, "1")) return 1;
    if (!strcmp(s, "false") || !strcmp(s, "no") || !strcmp(s, "0")) return 0;
    return -1;
}

/* ---- integer expressions ------------------------------------------------ */

typedef struct {
    const char *s;
    const expand_params_t *ps;
    const char *why;
    int depth;           /* of parentheses and unary minus, against stack exhaustion */
} parser_t;

/* Checked 64-bit arithmetic (GCC and Clang builtins): an overflow is an
 * error in the file, never a wrapped number or undefined behaviour. */
static int64_t checked(parser_t *p, char op, int64_t a, int64_t b) {
    int64_t r = 0;
    int bad = op == '+' ? __builtin_add_overflow(a, b, &r)
            : op == '-' ? __builtin_sub_overflow(a, b, &r)
            : __builtin_mul_overflow(a, b, &r);
    if (bad) { p->why = "arithmetic overflows 64 bits"; return 0; }
    return r;
}

/* A whole number, as text: strtoll's saturation at +-2^63 is an error. */
static int64_t whole(parser_t *p, const char *text, char **end) {
    errno = 0;
    int64_t x = strtoll(text, end, 10);
    if (errno == ERANGE) p->why = "number does not fit in 64 bits";
    return x;
}

static int64_t shift(parser_t *p);

static void skip(parser_t *p) { while (isspace((unsigned char)*p->s)) p->s++; }

static int64_t atom(parser_t *p) {
    skip(p);
    if (*p->s == '(') {
        p->s++;
        if (++p->depth > 64) { p->why = "expression nested too deeply"; return 0; }
        int64_t v = shift(p);
        p->depth--;
        skip(p);
        if (p->why) return 0;
        if (*p->s != ')') { p->why = "missing ')'"; return 0; }
        p->s++;
        return v;
    }
    if (isdigit((unsigned char)*p->s)) return whole(p, p->s, (char **)&p->s);
    if (isalpha((unsigned char)*p->s) || *p->s == '_') {
        char name[64];
        size_t n = 0;
        while ((isalnum((unsigned char)*p->s) || *p->s == '_') && n + 1 < sizeof name) name[n++] = *p->s++;
        name[n] = '\0';
        const char *v = expand_get(p->ps, name);
        char *end;
        if (v == NULL) { p->why = EXPAND_UNKNOWN; return 0; }
        int64_t x = whole(p, v, &end);
        if (end == v || *end) { p->why = "arithmetic on a parameter that is not a whole number"; return 0; }
        return x;
    }
    p->why = "expected a number, a parameter or '('";
    return 0;
}

static int64_t unary(parser_t *p) {
    skip(p);
    if (*p->s == '-') {
        p->s++;
        if (++p->depth > 64) { p->why = "expression nested too deeply"; return 0; }
        int64_t v = unary(p);
        p->depth--;
        return checked(p, '-', 0, v);
    }
    return atom(p);
}

static int64_t term(parser_t *p) {
    int64_t v = unary(p);
    for (;;) {
        skip(p);
        char op = *p->s;
        if (p->why || (op != '*' && op != '/' && op != '%')) return v;
        p->s++;
        int64_t r = unary(p);
        if (op != '*' && r == 0) { p->why = "division by zero"; return 0; }
        if (op != '*' && v == INT64_MIN && r == -1) { p->why = "arithmetic overflows 64 bits"; return 0; }
        v = op == '*' ? checked(p, '*', v, r) : op == '/' ? v / r : v % r;
    }
}

static int64_t expr(parser_t *p) {
    int64_t v = term(p);
    for (;;) {
        skip(p);
        char op = *p->s;
        if (p->why || (op != '+' && op != '-')) return v;
        p->s++;
        int64_t r = term(p);
        v = checked(p, op, v, r);
    }
}

static int64_t shift(parser_t *p) {
    int64_t v = expr(p);
    for (;;) {
        skip(p);
        if (p->why || p->s[0] != '<' || p->s[1] != '<') return v;
        p->s += 2;
        int64_t r = expr(p);
        if (r < 0 || r > 62) { p->why = "shift out of range"; return 0; }
        if (v < 0 || v > (INT64_MAX >> r)) { p->why = "arithmetic overflows 64 bits"; return 0; }
        v <<= r;
    }
}

/* One ${...}: a bare parameter gives its text; anything else is arithmetic. */
static int subst_one(const expand_params_t *ps, const char *body, char *out, size_t len, const char **why) {
    const char *v = expand_get(ps, body);
    if (v) {
        if (strlen(v) >= len) { *why = "value too long"; return -1; }
        strcpy(out, v);
        return 0;
    }
    parser_t p = {body, ps, NULL, 0};
    int64_t x = shift(&p);
    skip(&p);
    if (!p.why && *p.s) p.why = "unexpected text in ${...}";
    if (p.why) { *why = p.why; return -1; }
    snprintf(out, len, "%lld", (long long)x);
    return 0;
}

int expand_unknown(const expand_params_t *ps, const char *in, char *name, size_t n) {
    for (const char *o = strstr(in, "${"); o; o = strstr(o + 2, "${")) {
        const char *close = strchr(o, '}');
        size_t len = close ? (size_t)(close - o - 2) : 0;
        if (len && len < n) {                          /* ${nic-bw}: a parameter named whole */
            memcpy(name, o + 2, len), name[len] = '\0';
            if (expand_get(ps, name) != NULL) continue;
        }
        for (const char *s = o + 2; s < (close ? close : o + strlen(o)); s++) {
            if (!isalpha((unsigned char)*s) && *s != '_') continue;
            size_t k = 0;
            while ((isalnum((unsigned char)s[k]) || s[k] == '_') && k + 1 < n) name[k] = s[k], k++;
            name[k] = '\0';
            if (expand_get(ps, name) == NULL) return 1;
            s += k;
        }
    }
    return 0;
}

int expand_subst(const expand_params_t *ps, const char *in, char *out, size_t outlen, const char **why) {
    size_t o = 0;
    while (*in) {
        if (in[0] == '$' && in[1] == '{') {
            const char *close = strchr(in + 2, '}');
            char body[256], val[256];
            if (close == NULL) { *why = "'${' without '}'"; return -1; }
            size_t bl = (size_t)(close - in - 2);
            if (bl >= sizeof body) { *why = "${...} too long"; return -1; }
            memcpy(body, in + 2, bl);
            body[bl] = '\0';
            if (subst_one(ps, body, val, sizeof val, why) < 0) return -1;
            size_t vl = strlen(val);
            if (o + vl >= outlen) { *why = "text too long after substitution"; return -1; }
            memcpy(out + o, val, vl);
            o += vl;
            in = close + 1;
            continue;
        }
        if (o + 1 >= outlen) { *why = "text too long"; return -1; }
        out[o++] = *in++;
    }
    out[o] = '\0';
    return 0;
}

/* ---- ranges ------------------------------------------------------------ */

/* The items of the bracket at open ("[0-7]", "[0,3,5-6]"): each a first
 * and last (equal for one number), in the order written; *close at ']'.
 * Returns the number of items, or -1 with *why. At most `max` items. */
static int bracket_items(const char *open, long *first, long *last, int max, const char **close, const char **why) {
    const char *s = open + 1;
    int k = 0;
    for (;;) {
        char *end;
        long a = strtol(s, &end, 10), b = a;
        if (end == s) { *why = "a range is written [first-last] or [a,b,c-d], e.g. gpu[0-7]"; return -1; }
        if (*end == '-') {
            const char *bs = end + 1;
            b = strtol(bs, &end, 10);
            if (end == bs) { *why = "a range is written [first-last] or [a,b,c-d], e.g. gpu[0-7]"; return -1; }
        }
        if (a < 0 || b < a) { *why = "a range must go up: [first-last] with 0 <= first <= last"; return -1; }
        if (b > INT32_MAX) { *why = "a number in a name is at most 2147483647"; return -1; }
        if (b - a >= EXPAND_MAX_NAMES) { *why = "a pattern names at most " EXPAND_STR(EXPAND_MAX_NAMES) " nodes"; return -1; }
        if (k == max) { *why = "too many items in one bracket"; return -1; }
        first[k] = a, last[k++] = b;
        if (*end == ']') { *close = end; return k; }
        if (*end != ',') { *why = "a range is written [first-last] or [a,b,c-d], e.g. gpu[0-7]"; return -1; }
        s = end + 1;
    }
}

#define BRACKET_ITEMS 256    /* a folded cluster's witness list is a few dozen */

/* Expand the first bracket of pat into names, recursing on the rest. */
static int range_rec(const char *pat, char ***names, int *n, int *cap, const char **why) {
    const char *open = strchr(pat, '['), *close;
    if (open == NULL) {
        if (*n >= EXPAND_MAX_NAMES) { *why = "a pattern names at most " EXPAND_STR(EXPAND_MAX_NAMES) " nodes"; return -1; }
        if (*n == *cap) {
            int nc = *cap ? *cap * 2 : 16;
            char **v = realloc(*names, (size_t)nc * sizeof *v);
            if (v == NULL) { *why = "out of memory"; return -1; }
            *names = v;
            *cap = nc;
        }
        if (((*names)[*n] = strdup(pat)) == NULL) { *why = "out of memory"; return -1; }
        (*n)++;
        return 0;
    }
    long first[BRACKET_ITEMS], last[BRACKET_ITEMS];
    int items = bracket_items(open, first, last, BRACKET_ITEMS, &close, why);
    if (items < 0) return -1;
    size_t pre = (size_t)(open - pat), rest = strlen(close + 1);
    char *buf = malloc(pre + 24 + rest + 1);
    if (buf == NULL) { *why = "out of memory"; return -1; }
    memcpy(buf, pat, pre);
    int rc = 0;
    for (int k = 0; k < items && rc == 0; k++)
        for (long i = first[k]; i <= last[k] && rc == 0; i++) {
            size_t w = pre + (size_t)sprintf(buf + pre, "%ld", i);
            memcpy(buf + w, close + 1, rest + 1);
            rc = range_rec(buf, names, n, cap, why);
        }
    free(buf);
    return rc;
}

/* How many names pattern's well-formed brackets multiply to, capped just
 * past the limit: checked before expanding, so a huge product fails at once. */
static long range_count(const char *pat) {
    long total = 1, first[BRACKET_ITEMS], last[BRACKET_ITEMS];
    const char *close, *why;
    for (const char *open = strchr(pat, '['); open && total <= EXPAND_MAX_NAMES; open = strchr(open + 1, '[')) {
        int items = bracket_items(open, first, last, BRACKET_ITEMS, &close, &why);
        if (items < 0) break;                      /* range_rec says what is wrong with it */
        long count = 0;
        for (int k = 0; k < items; k++) count += last[k] - first[k] + 1;
        total = count > EXPAND_MAX_NAMES ? EXPAND_MAX_NAMES + 1L : total * count;
    }
    return total;
}

int expand_range(const char *pattern, char ***names, int *n, const char **why) {
    int cap = 0;
    *names = NULL;
    *n = 0;
    if (range_count(pattern) > EXPAND_MAX_NAMES) { *why = "a pattern names at most " EXPAND_STR(EXPAND_MAX_NAMES) " nodes"; return -1; }
    if (range_rec(pattern, names, n, &cap, why) < 0) { expand_names_free(*names, *n); *names = NULL; *n = 0; return -1; }
    return 0;
}

void expand_names_free(char **names, int n) {
    for (int i = 0; i < n; i++) free(names[i]);
    free(names);
}
