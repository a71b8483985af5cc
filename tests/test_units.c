/* test_units.c - numbers with units. */
#include <criterion/criterion.h>

#include "../topologies/units.h"

static double bw(const char *s) {
    double v = -1;
    const char *why;
    cr_assert_eq(units_bandwidth(s, &v, &why), 0, "%s should parse", s);
    return v;
}

Test(units, bandwidths_decimal_binary_and_bits) {
    cr_expect_eq(bw("450GB/s"), 450e9);
    cr_expect_eq(bw("400Gb/s"), 50e9);
    cr_expect_eq(bw("1B/s"), 1.0);
    cr_expect_eq(bw("25 GiB/s"), 25.0 * 1073741824.0);
    cr_expect_eq(bw("0"), 0.0);
}

Test(units, times) {
    double v;
    const char *why;
    cr_assert_eq(units_time("0.6us", &v, &why), 0);
    cr_expect_float_eq(v, 0.6e-6, 1e-18);
    cr_assert_eq(units_time("5ns", &v, &why), 0);
    cr_expect_float_eq(v, 5e-9, 1e-20);
    cr_assert_eq(units_time("2 ms", &v, &why), 0);
    cr_expect_float_eq(v, 2e-3, 1e-15);
}

Test(units, sizes_exact) {
    uint64_t v;
    const char *why;
    cr_assert_eq(units_size("4", &v, &why), 0);
    cr_expect_eq(v, 4u);
    cr_assert_eq(units_size("1KiB", &v, &why), 0);
    cr_expect_eq(v, 1024u);
    cr_assert_eq(units_size("1GiB", &v, &why), 0);
    cr_expect_eq(v, 1073741824ull);
    cr_assert_eq(units_size("1GB", &v, &why), 0);
    cr_expect_eq(v, 1000000000ull);
    cr_assert_eq(units_size("1000003", &v, &why), 0);
    cr_expect_eq(v, 1000003ull);
    /* past 2^53 a double rounds: whole digits are read exactly (9007199254740993 had read ...992) */
    cr_assert_eq(units_size("9007199254740993", &v, &why), 0);
    cr_expect_eq(v, 9007199254740993ull);
    cr_assert_eq(units_size("9223372036854775807", &v, &why), 0);
    cr_expect_eq(v, 9223372036854775807ull);
    cr_assert_eq(units_size("8388609GiB", &v, &why), 0);
    cr_expect_eq(v, 8388609ull << 30);
    cr_assert_eq(units_size("18446744073709551615", &v, &why), 0);
    cr_expect_eq(v, 18446744073709551615ull);
    cr_expect_eq(units_size("18446744073709551616", &v, &why), -1, "2^64");
    cr_expect_eq(units_size("16EiB", &v, &why), -1, "2^64");
    cr_assert_eq(units_size("0x40000000000000", &v, &why), 0, "hex, as strtod reads it");
    cr_expect_eq(v, 1ull << 54);
}

Test(units, rejects_bad_input) {
    double d;
    uint64_t u;
    const char *why = NULL;
    cr_expect_neq(units_bandwidth("450", &d, &why), 0, "a bandwidth needs a unit");
    cr_expect_str_eq(why, "missing unit (write e.g. 450GB/s or 400Gb/s)");
    cr_expect_neq(units_bandwidth("-5GB/s", &d, &why), 0);
    cr_expect_neq(units_bandwidth("5 parsecs", &d, &why), 0);
    cr_expect_neq(units_time("3", &d, &why), 0, "a latency needs a unit");
    cr_expect_neq(units_time("fast", &d, &why), 0);
    cr_expect_neq(units_size("1.5", &u, &why), 0, "half a byte");
    cr_expect_neq(units_size("-1", &u, &why), 0);
    cr_expect_neq(units_size("20EiB", &u, &why), 0);
    cr_expect_neq(units_size("", &u, &why), 0);
    /* found by fuzzing: huge values must not become inf in the simulator */
    cr_expect_neq(units_bandwidth("1e300GB/s", &d, &why), 0);
    cr_expect_neq(units_bandwidth("1e-9B/s", &d, &why), 0);
    cr_expect_eq(units_bandwidth("1000000TB/s", &d, &why), 0);
    cr_expect_eq(units_bandwidth("1B/s", &d, &why), 0, "the candy kids' links");
    cr_expect_neq(units_time("1e10s", &d, &why), 0);
    cr_expect_neq(units_time("nan s", &d, &why), 0);
}

Test(units, sizes_print_exactly) {
    char b[64];
    units_fmt_size(1073741824ull, b, sizeof b);
    cr_expect_str_eq(b, "1 GiB");
    units_fmt_size(3000000, b, sizeof b);
    cr_expect_str_eq(b, "3 MB");
    units_fmt_size(1000003, b, sizeof b);
    cr_expect_str_eq(b, "1000003 B");
    units_fmt_size(0, b, sizeof b);
    cr_expect_str_eq(b, "0 B");
    units_fmt_size(1ull << 60, b, sizeof b);        /* every unit the reader takes, printed back */
    cr_expect_str_eq(b, "1 EiB");
    units_fmt_size(2000000000000000000ull, b, sizeof b);
    cr_expect_str_eq(b, "2 EB");
}
