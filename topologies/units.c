/* units.c - parse and print numbers with units.
 *
 * One small scanner (number, optional spaces, unit word) and three tables of
 * unit words; the tables are the only difference between a size, a time and a
 * bandwidth. Parsing is strict: trailing junk, negative values and values that
 * are not finite are errors, because a silently misread bandwidth gives a
 * silently wrong answer. */
#include "units.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *word;
    double scale;
} unit_t;

static const unit_t bw_units[] = {
    {"B/s", 1}, {"KB/s", 1e3}, {"MB/s", 1e6}, {"GB/s", 1e9}, {"TB/s", 1e12},
    {"KiB/s", 1024.0}, {"MiB/s", 1048576.0}, {"GiB/s", 1073741824.0},
    {"TiB/s", 1099511627776.0},
    {"b/s", 0.125}, {"bps", 0.125}, {"Kb/s", 1e3 / 8}, {"Mb/s", 1e6 / 8},
    {"Gb/s", 1e9 / 8}, {"Tb/s", 1e12 / 8}, {"Gbps", 1e9 / 8}, {"Mbps", 1e6 / 8},
    {NULL, 0}};

static const unit_t time_units[] = {
    {"s", 1}, {"ms", 1e-3}, {"us", 1e-6}, {"\xc2\xb5s", 1e-6}, {"ns", 1e-9},
    {NULL, 0}};

static const unit_t size_units[] = {
    {"", 1}, {"B", 1}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
    {"K", 1024.0}, {"M", 1048576.0}, {"G", 1073741824.0},
    {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0},
    {"TiB", 1099511627776.0}, {"PB", 1e15}, {"PiB", 1125899906842624.0},
    {"EB", 1e18}, {"EiB", 1152921504606846976.0}, {NULL, 0}};

/* Split "  12.5 GB/s " into 12.5 and "GB/s"; returns -1 on malformed text. */
static int scan(const char *s, double *num, char *word, size_t wlen) {
    if (s == NULL) return -1;
    while (isspace((unsigned char)*s)) s++;
    if (*s == '-' ) return -2;
    char *end;
    double v = strtod(s, &end);
    if (end == s || !isfinite(v)) return -1;
    while (isspace((unsigned char)*end)) end++;
    size_t n = strlen(end);
    while (n > 0 && isspace((unsigned char)end[n - 1])) n--;
    if (n >= wlen) return -1;
    memcpy(word, end, n);
    word[n] = '\0';
    *num = v;
    return 0;
}

static int lookup(const unit_t *t, const char *word, double *scale) {
    for (; t->word; t++)
        if (strcmp(t->word, word) == 0) { *scale = t->scale; return 0; }
    return -1;
}

/* The range a bandwidth or a time may take: wide enough for candy passed at
 * 1 B/s and for any fabric, narrow enough that no product or sum of them in
 * the simulator can overflow to inf. */
#define UNITS_MIN_BW 1e-3
#define UNITS_MAX_BW 1e18
#define UNITS_MAX_TIME 1e9

/* An unknown unit's message names the units the table has, so the user
 * need not guess again (the tables above, by family). */
#define UNITS_BW_LIST "unknown bandwidth unit (units: B/s KB/s MB/s GB/s TB/s, KiB/s MiB/s GiB/s TiB/s; " \
    "bits: b/s Kb/s Mb/s Gb/s Tb/s, bps Mbps Gbps)"
#define UNITS_TIME_LIST "unknown time unit (units: s ms us ns; \xc2\xb5s for us)"
#define UNITS_SIZE_LIST "unknown size unit (units: B KB MB GB TB PB EB = 10^3 steps, " \
    "KiB MiB GiB TiB PiB EiB = 2^10 steps, K M G = KiB MiB GiB; none: bytes)"

static int parse(const unit_t *table, const char *s, double *out,
                 const char **why, const char *what, const char *units) {
    double v, scale;
    char word[32];
    int rc = scan(s, &v, word, sizeof word);
    if (rc == -2) { *why = "negative values are not allowed"; return -1; }
    if (rc < 0) { *why = "not a number with a unit"; return -1; }
    if (word[0] == '\0') {
        if (v == 0) { *out = 0; return 0; }
        *why = what;
        return -1;
    }
    if (lookup(table, word, &scale) < 0) { *why = units; return -1; }
    *out = v * scale;
    return 0;
}

int units_bandwidth(const char *s, double *out, const char **why) {
    if (parse(bw_units, s, out, why, "missing unit (write e.g. 450GB/s or 400Gb/s)", UNITS_BW_LIST) < 0) return -1;
    if (*out != 0 && !(*out >= UNITS_MIN_BW && *out <= UNITS_MAX_BW)) {
        *why = "bandwidth out of range (0, or 0.001 B/s to 1000000 TB/s)";
        return -1;
    }
    return 0;
}

int units_time(const char *s, double *out, const char **why) {
    if (parse(time_units, s, out, why, "missing unit (write e.g. 0.6us, 5ns or 1s)", UNITS_TIME_LIST) < 0) return -1;
    if (!(*out <= UNITS_MAX_TIME)) { *why = "time out of range (at most 1e9 s)"; return -1; }
    return 0;
}

/* A size of 2^53 bytes or more, where the double above rounds: written
 * as whole digits (a count, or a whole number of a unit), those digits
 * read as an integer, exactly (9007199254740993 had read ...992): 1, or
 * -1 past 2^64. A fraction or an exponent keeps the double's value, as
 * below 2^53: 0. */
static int exact_digits(const char *s, double scale, uint64_t *out, const char **why) {
    while (*s == ' ' || *s == '\t') s++;
    errno = 0;
    char *end;
    unsigned long long n = strtoull(s, &end, 10);
    if (end == s || *end == '.' || *end == 'e' || *end == 'E' || *end == 'x' || *end == 'X') return 0;   /* strtod's forms */
    if (errno == ERANGE) { *why = "size must be below 2^64 bytes (16 EiB)"; return -1; }
    uint64_t k = (uint64_t)scale;
    if (k != 0 && n > UINT64_MAX / k) { *why = "size must be below 2^64 bytes (16 EiB)"; return -1; }
    *out = (uint64_t)n * k;
    return 1;
}

int units_size(const char *s, uint64_t *out, const char **why) {
    double v, scale;
    char word[32];
    int rc = scan(s, &v, word, sizeof word);
    if (rc == -2) { *why = "negative sizes are not allowed"; return -1; }
    if (rc < 0) { *why = "not a size (write e.g. 4, 1KiB, 1GiB, 1GB)"; return -1; }
    if (lookup(size_units, word, &scale) < 0) { *why = UNITS_SIZE_LIST; return -1; }
    double bytes = v * scale;
    int exact = bytes >= 9007199254740992.0 ? exact_digits(s, scale, out, why) : 0;   /* past 2^53 a double rounds */
    if (exact != 0) return exact < 0 ? -1 : 0;
    if (bytes >= 18446744073709551616.0) { *why = "size must be below 2^64 bytes (16 EiB)"; return -1; }
    if (bytes != floor(bytes)) { *why = "size is not a whole number of bytes"; return -1; }
    *out = (uint64_t)bytes;
    return 0;
}

/* The largest unit that divides the size exactly, binary first (1 GiB, 3 MB, 10 B). */
void units_fmt_size(uint64_t b, char *buf, int len) {
    static const char *bin[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};   /* as far as size_units reads */
    static const char *dec[] = {"B", "KB", "MB", "GB", "TB", "PB", "EB"};
    int i = 0, j = 0;
    uint64_t v = b, w = b;
    while (i < 6 && v >= 1024 && v % 1024 == 0) { v /= 1024; i++; }
    while (j < 6 && w >= 1000 && w % 1000 == 0) { w /= 1000; j++; }
    if (j > i) snprintf(buf, len, "%llu %s", (unsigned long long)w, dec[j]);
    else snprintf(buf, len, "%llu %s", (unsigned long long)v, bin[i]);
}

void units_fmt_time(double s, char *buf, int len) {
    double a = fabs(s);
    if (a == 0 || a >= 1) snprintf(buf, len, "%.6g s", s);
    else if (a >= 1e-3) snprintf(buf, len, "%.6g ms", s * 1e3);
    else if (a >= 1e-6) snprintf(buf, len, "%.6g us", s * 1e6);
    else snprintf(buf, len, "%.6g ns", s * 1e9);
}
