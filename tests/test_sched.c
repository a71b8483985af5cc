/* test_sched.c - chunk layout and the programs' shape. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../algorithms/algo.h"
#include "helpers.h"

Test(sched, chunks_keep_the_remainder) {
    uint64_t off, len, want[] = {3, 3, 2, 2};
    for (uint32_t i = 0; i < 4; i++) {
        sched_chunk(10, 4, i, &off, &len);
        cr_expect_eq(len, want[i], "chunk %u", i);
    }
    /* any n and k: the chunks tile [0, n) exactly and differ by at most one byte */
    uint64_t ns[] = {0, 1, 7, 100, 1000003};
    for (int a = 0; a < 5; a++)
        for (uint32_t k = 1; k <= 130; k++) {
            uint64_t next = 0, lo = UINT64_MAX, hi = 0;
            for (uint32_t i = 0; i < k; i++) {
                sched_chunk(ns[a], k, i, &off, &len);
                cr_assert_eq(off, next, "n=%llu k=%u chunk %u", (unsigned long long)ns[a], k, i);
                next += len;
                lo = len < lo ? len : lo;
                hi = len > hi ? len : hi;
            }
            cr_assert_eq(next, ns[a]);
            cr_assert_leq(hi - lo, 1);
        }
}

/* Every (rank) program sends exactly as many messages as the collective's
 * textbook count and every send has a receive at its peer. */
static void count_ops(const algo_t *a, int p, uint64_t *sends, uint64_t *recvs) {
    sched_t s;
    cr_assert_eq(algo_build(a, p, 1000, NULL, &s, NULL), 0);
    *sends = *recvs = 0;
    for (int r = 0; r < p; r++) {
        sched_op_t op;
        for (uint32_t pc = 0; sched_op(&s, r, 0, pc, &op); pc++) {
            *sends += op.send;
            *recvs += op.recv != RECV_NONE;
        }
    }
}

Test(sched, message_counts) {
    for (int p = 1; p <= 40; p++) {
        uint64_t s, r, lg = (uint64_t)cost_ceil_log2(p);
        count_ops(&algo_allreduce_ring, p, &s, &r);
        cr_expect_eq(s, 2ull * p * (p - 1), "ring p=%d", p);
        cr_expect_eq(r, s);
        count_ops(&algo_allreduce_naive, p, &s, &r);
        cr_expect_eq(s, 2ull * (p - 1), "naive p=%d", p);
        cr_expect_eq(r, s);
        count_ops(&algo_allreduce_tree, p, &s, &r);
        cr_expect_eq(s, 2ull * (p - 1), "tree p=%d: each non-root sends up once and gets one copy", p);
        cr_expect_eq(r, s);
        (void)lg;
    }
}

Test(sched, ring_p4_goal_dump_matches_golden) {
    sched_t s;
    cr_assert_eq(algo_build(&algo_allreduce_ring, 4, 10, NULL, &s, NULL), 0);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cr_assert_eq(sched_dump_goal(&s, f), 0);
    fclose(f);
    char *golden = th_slurp("tests/data/ring-p4-10B.goal");
    cr_assert_not_null(golden);
    cr_expect_str_eq(buf, golden);
    free(buf);
    free(golden);
}
