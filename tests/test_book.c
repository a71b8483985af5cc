/* test_book.c - FIFO link bookings with backfilling (sim/engine/book.c): a worked
 * case, and random bookings against the definition (the earliest start at
 * which no link's earlier bookings overlap, found over every booking kept). */
#include <criterion/criterion.h>

#include <stdlib.h>

#include "../sim/engine/book.h"

/* Link a carries message 1 over [0, 10). Message 2 needs a and b: it starts
 * at 10, and b keeps the hole [0, 10). Message 3 (b alone, 4 s) fits in the
 * hole at 0; message 4 (b, 7 s, at 1) does not fit in what is left, [4, 10),
 * and waits for b's last booking to end. */
Test(book, a_short_message_backfills_the_hole_a_long_route_left) {
    book_t b;
    cr_assert_eq(book_init(&b, 2), 0);
    int32_t a[] = {0}, ab[] = {0, 1}, bb[] = {1};
    double ten[] = {10}, two[] = {5, 5}, four[] = {4}, seven[] = {7};
    double t = book_fit(&b, a, ten, 1, 0, 0);
    cr_expect_float_eq(t, 0, 1e-15);
    cr_assert_eq(book_take(&b, a, ten, 1, t, 0), 0);
    t = book_fit(&b, ab, two, 2, 0, 0);
    cr_expect_float_eq(t, 10, 1e-15, "message 2 waits for link a");
    cr_assert_eq(book_take(&b, ab, two, 2, t, 0), 0);
    t = book_fit(&b, bb, four, 1, 0, 0);
    cr_expect_float_eq(t, 0, 1e-15, "message 3 goes in b's hole");
    cr_assert_eq(book_take(&b, bb, four, 1, t, 0), 0);
    t = book_fit(&b, bb, seven, 1, 1, 1);
    cr_expect_float_eq(t, 15, 1e-15, "message 4 does not fit in [4, 10): after message 2");
    book_free(&b);
}

#define NL 6
#define NB 4000

typedef struct { double s, e; } iv_t;

/* The definition: the earliest t >= t0 free on every link for its own
 * time, over every booking ever made (it is a booking's end or t0). */
static double brute_fit(iv_t (*bk)[NB], const int *nbk, const int32_t *l, const double *own, int n, double t0) {
    double best = -1;
    for (int c = -1; c < NL; c++)
        for (int j = c < 0 ? 0 : 0; j < (c < 0 ? 1 : nbk[c]); j++) {
            double t = c < 0 ? t0 : bk[c][j].e;
            if (t < t0 || (best >= 0 && t >= best)) continue;
            int ok = 1;
            for (int i = 0; i < n && ok; i++)
                for (int k = 0; k < nbk[l[i]] && ok; k++)
                    ok = !(t < bk[l[i]][k].e && bk[l[i]][k].s < t + own[i]);
            if (ok) best = t;
        }
    return best;
}

Test(book, random_bookings_take_the_earliest_start_that_fits) {
    static iv_t bk[NL][NB];
    int nbk[NL] = {0};
    book_t b;
    cr_assert_eq(book_init(&b, NL), 0);
    srand(7);
    double now = 0;
    int backfilled = 0;
    for (int m = 0; m < 600; m++) {
        now += (rand() % 4) * 0.5;             /* time goes on, sometimes not at all */
        int n = 1 + rand() % 3;
        int32_t l[3];
        double own[3];
        for (int i = 0; i < n; i++) {
            int dup;
            do {
                l[i] = rand() % NL;
                dup = 0;
                for (int k = 0; k < i; k++) dup |= l[k] == l[i];
            } while (dup);
            own[i] = (1 + rand() % 8) * 0.25;
        }
        double t0 = now + (rand() % 3) * 0.75;
        double want = brute_fit(bk, nbk, l, own, n, t0), got = book_fit(&b, l, own, n, t0, now);
        cr_assert_float_eq(got, want, 1e-12, "message %d: %g, the definition %g", m, got, want);
        for (int i = 0; i < n; i++) {
            int later = 0;
            for (int k = 0; k < nbk[l[i]]; k++) later |= bk[l[i]][k].s >= got + own[i];
            backfilled += later;
            bk[l[i]][nbk[l[i]]++] = (iv_t){got, got + own[i]};
        }
        cr_assert_eq(book_take(&b, l, own, n, got, now), 0);
    }
    cr_expect_gt(backfilled, 50, "the random bookings backfill (%d)", backfilled);
    book_free(&b);
}
