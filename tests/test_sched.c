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
        count_ops(&algo_allreduce_binomial, p, &s, &r);
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

/* Rank r + k's op pc is rank r's with every peer moved k on (mod p), the
 * same bytes: what a schedule's `period` k promises (sim/engine/symmetry.c relies
 * on it). 0 if so, else the first op that breaks it. */
static int shifted_program_differs(const sched_t *s, int r, int c) {
    int p = s->nranks, k = s->period, q = (r + k) % p;
    sched_op_t a, b;
    for (uint32_t pc = 0;; pc++) {
        int ha = sched_op(s, r, c, pc, &a), hb = sched_op(s, q, c, pc, &b);
        if (ha != hb) return 1;
        if (!ha) return 0;
        int ok = a.recv == b.recv && a.send == b.send && a.nchunk == b.nchunk &&
                 a.send_chan == b.send_chan && a.recv_chan == b.recv_chan &&
                 (!a.recv || (a.recv_peer + k) % p == b.recv_peer) &&
                 (!a.send || (a.send_peer + k) % p == b.send_peer) &&
                 sched_range_bytes(s, a.chunk, a.nchunk) == sched_range_bytes(s, b.chunk, b.nchunk);
        if (!ok) return 1;
    }
}

/* Every row built for p in 1..24 and 1 or 2 channels (nodes of 4 where
 * they divide) whose schedule makes a promise (`makes`), each rank's and
 * channel's program checked by `breaks` (0: kept); the schedules checked. */
static int check_promise(int (*makes)(const sched_t *), int (*breaks)(const sched_t *, int, int), int pipeline) {
    int ps[] = {1, 2, 3, 5, 7, 8, 16, 24}, checked = 0;
    for (const algo_t *const *a = algo_all(); *a; a++)
        for (size_t i = 0; i < sizeof ps / sizeof *ps; i++)
            for (int ch = 1; ch <= 2; ch++) {
                int p = ps[i];
                algo_opts_t o = {.channels = ch, .group = p % 4 == 0 ? 4 : 0, .pipeline = pipeline};
                sched_t s;
                baton_err_t e = {0};
                if (algo_build(*a, p, (uint64_t)p * 4 * 96, &o, &s, &e) < 0 || !makes(&s)) continue;
                for (int r = 0; r < p; r++)
                    for (int c = 0; c < s.nchannels; c++)
                        cr_assert(!breaks(&s, r, c), "%s (%s) p=%d ch=%d: rank %d channel %d", (*a)->name,
                                  coll_name((*a)->coll), p, ch, r, c);
                checked++;
            }
    return checked;
}

static int has_period(const sched_t *s) { return s->period != 0; }

/* A period must divide p, then shift each program. */
static int period_breaks(const sched_t *s, int r, int c) {
    return s->nranks % s->period != 0 || shifted_program_differs(s, r, c);
}

Test(sched, periodic_schedules_are_shift_invariant) {
    int checked = check_promise(has_period, period_breaks, 0);
    cr_expect_geq(checked, 3 * 8, "the ring rows at least declare a period");
    /* the check itself catches a schedule that is not periodic: rd moves peers by XOR */
    sched_t rd;
    cr_assert_eq(algo_build(algo_find(COLL_ALLREDUCE, "rd"), 8, 8 * 96, NULL, &rd, NULL), 0);
    rd.period = 1;
    int differs = 0;
    for (int r = 0; r < 8; r++) differs |= shifted_program_differs(&rd, r, 0);
    cr_expect(differs, "recursive doubling is not shift-invariant and the check must say so");
}

/* (r, c)'s op pc and op pc + len / reps: the same peers, kinds, channels and
 * chunk count, what a schedule's `reps` promises (sim/nccl/sockmsgs.c counts
 * one stretch). 0 if so, else 1. */
static int repeats_differ(const sched_t *s, int r, int c) {
    uint32_t len = 0;
    sched_op_t a, b;
    while (sched_op(s, r, c, len, &a)) len++;
    if (len % s->reps) return 1;
    for (uint32_t pc = 0, st = len / s->reps; pc + st < len; pc++) {
        sched_op(s, r, c, pc, &a), sched_op(s, r, c, pc + st, &b);
        if (a.send != b.send || a.recv != b.recv || a.nchunk != b.nchunk || a.send_chan != b.send_chan ||
            a.recv_chan != b.recv_chan || (a.send && a.send_peer != b.send_peer) || (a.recv && a.recv_peer != b.recv_peer))
            return 1;
    }
    return 0;
}

static int has_reps(const sched_t *s) { return s->reps != 0; }

Test(sched, repeating_schedules_repeat) {
    int checked = check_promise(has_reps, repeats_differ, 5);
    cr_expect_geq(checked, 4 * 8, "NCCL's trees at least declare their repetitions");
    /* the check itself catches a program that does not repeat: a ring's steps change peers' roles */
    sched_t ring;
    cr_assert_eq(algo_build(&algo_allreduce_ring, 8, 8 * 96, NULL, &ring, NULL), 0);
    ring.reps = 2;
    int differs = 0;
    for (int r = 0; r < 8; r++) differs |= repeats_differ(&ring, r, 0);
    cr_expect(differs, "a ring all-reduce is not one stretch repeated and the check must say so");
}
