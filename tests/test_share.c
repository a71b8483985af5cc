/* test_share.c - max-min fair sharing (models/share.c): hand-worked cases,
 * and the incremental refill against a from-scratch progressive filling
 * over random flows that come and go. */
#include <criterion/criterion.h>

#include <math.h>

#include "../models/share.h"

Test(share, two_flows_halve_one_alone_gets_all) {
    double cap[] = {10};
    int32_t l0[] = {0};
    share_t *s = share_create(1, cap);
    cr_assert_eq(share_add(s, 0, l0, 1, 100, 1), 0);
    cr_expect_float_eq(share_rate(s, 1), 10, 1e-12);
    cr_assert_eq(share_add(s, 0, l0, 1, 100, 2), 0);
    cr_expect_float_eq(share_rate(s, 1), 5, 1e-12);
    cr_expect_float_eq(share_rate(s, 2), 5, 1e-12);
    double when;
    uint32_t tag = 0;
    cr_assert(share_next(s, &when, &tag));
    cr_expect_float_eq(when, 20, 1e-12, "both finish at 100 / 5");
    share_remove(s, when, tag);
    cr_expect_float_eq(share_rate(s, tag == 1 ? 2 : 1), 10, 1e-12, "the survivor gets it all");
    share_free(s);
}

/* The textbook case: link A (capacity 1) carries flows 1 and 2, link B
 * (capacity 2) carries flows 2 and 3. Max-min: 1 and 2 get 1/2 on A, and 3
 * takes what B has left, 3/2. */
Test(share, max_min_three_flows) {
    double cap[] = {1, 2};
    int32_t a[] = {0}, ab[] = {0, 1}, b[] = {1};
    share_t *s = share_create(2, cap);
    share_add(s, 0, a, 1, 1, 1);
    share_add(s, 0, ab, 2, 1, 2);
    share_add(s, 0, b, 1, 1, 3);
    cr_expect_float_eq(share_rate(s, 1), 0.5, 1e-12);
    cr_expect_float_eq(share_rate(s, 2), 0.5, 1e-12);
    cr_expect_float_eq(share_rate(s, 3), 1.5, 1e-12);
    share_free(s);
}

/* From scratch: raise every unfrozen flow's rate together; when a link is
 * full, freeze its flows; repeat (the definition, O(levels x flows x path)). */
#define NL 12
#define NF 64
typedef struct { int32_t links[4]; int n, live; } rflow_t;

static void reference(const double *cap, const rflow_t *f, int nf, double *rate) {
    double room[NL];
    int users[NL] = {0}, frozen[NF] = {0};
    for (int l = 0; l < NL; l++) room[l] = cap[l];
    for (int i = 0; i < nf; i++) {
        frozen[i] = !f[i].live || f[i].n == 0;
        rate[i] = f[i].live && f[i].n == 0 ? 1e300 : 0;
        for (int k = 0; !frozen[i] && k < f[i].n; k++) users[f[i].links[k]]++;
    }
    for (;;) {
        int best = -1;
        for (int l = 0; l < NL; l++)
            if (users[l] > 0 && (best < 0 || room[l] / users[l] < room[best] / users[best])) best = l;
        if (best < 0) return;
        double x = room[best] / users[best];
        for (int i = 0; i < nf; i++) {
            int on = 0;
            for (int k = 0; !frozen[i] && k < f[i].n; k++) on |= f[i].links[k] == best;
            if (!on) continue;
            frozen[i] = 1, rate[i] = x;
            for (int k = 0; k < f[i].n; k++) room[f[i].links[k]] -= x, users[f[i].links[k]]--;
        }
    }
}

/* 2,000 random starts and ends in bursts of 1-4 (an instant's changes, one
 * refill), flows over 0-4 of 12 links: every live flow's rate is the
 * definition's after every burst. A refill that missed a flow joined to the
 * change through other flows' links would leave it at its old rate. */
Test(share, incremental_refill_is_max_min_fair) {
    double cap[NL];
    rflow_t f[NF] = {{{0}, 0, 0}};
    double want[NF];
    uint64_t x = 42;
#define RND(m) ((int)((x = x * 6364136223846793005ull + 1442695040888963407ull) >> 33) % (m))
    for (int l = 0; l < NL; l++) cap[l] = 1 + RND(10);
    share_t *s = share_create(NL, cap);
    cr_assert_not_null(s);
    int live = 0, checked = 0;
    for (int op = 0; op < 2000; op++) {
        int i = RND(NF);
        if (f[i].live) {
            cr_assert_eq(share_remove(s, 0, (uint32_t)i), 0);
            f[i].live = 0, live--;
        } else {
            f[i].n = RND(5), f[i].live = 1, live++;
            for (int k = 0; k < f[i].n; k++) {          /* distinct links */
                int l, dup;
                do {
                    l = RND(NL), dup = 0;
                    for (int m = 0; m < k; m++) dup |= f[i].links[m] == l;
                } while (dup);
                f[i].links[k] = l;
            }
            cr_assert_eq(share_add(s, 0, f[i].links, f[i].n, 1e9, (uint32_t)i), 0);
        }
        if (RND(4) != 0) continue;                  /* more changes in this instant */
        reference(cap, f, NF, want);
        for (int j = 0; j < NF; j++) {
            if (!f[j].live) continue;
            double got = share_rate(s, (uint32_t)j);
            cr_assert(fabs(got - want[j]) <= 1e-9 * want[j], "op %d flow %d: %.17g, the definition %.17g", op, j, got, want[j]);
            checked++;
        }
    }
#undef RND
    cr_expect_gt(checked, 5000, "only %d rates checked", checked);
    cr_expect_gt(live, 0);
    share_free(s);
}
