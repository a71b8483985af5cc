/* units.h - numbers written with units, as topologies and the CLI accept them.
 *
 * Everything is converted to SI base units: bytes, bytes per second, seconds.
 * Decimal prefixes are powers of 1000 (GB = 1e9 B, as nccl-tests counts),
 * binary prefixes powers of 1024 (GiB); a lower-case b means bits. */
#ifndef BATON_UNITS_H
#define BATON_UNITS_H

#include <stdint.h>

/* "450GB/s", "400Gb/s", "1B/s", "25 GiB/s" -> bytes per second. A bare 0 is
 * allowed (no unit needed for nothing); any other bare number is an error. */
int units_bandwidth(const char *s, double *out, const char **why);

/* "0.6us", "1.5 ms", "2s", "100ns" -> seconds. A bare 0 is allowed. */
int units_time(const char *s, double *out, const char **why);

/* "4", "1KiB", "1GiB", "1GB", "3 MB" -> bytes. A bare integer means bytes.
 * The result must be a whole number of bytes and fit in 64 bits. */
int units_size(const char *s, uint64_t *out, const char **why);

/* Format bytes as "1 GiB", "3 MB"-style text for humans (exact where possible). */
void units_fmt_size(uint64_t bytes, char *buf, int len);

/* Format seconds with an adaptive unit ("6 s", "12.3 us"). */
void units_fmt_time(double s, char *buf, int len);

#endif
