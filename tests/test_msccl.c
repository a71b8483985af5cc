/* test_msccl.c - MSCCL XML in: algorithms written for the tests
 * (tests/data/msccl/gen.py, in msccl-tools' format) verify in data and
 * signature modes and take the catalogue's own rows' simulated times; a
 * broken one is caught at its first wrong chunk; bad files give FILE:LINE. */
#include <criterion/criterion.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"
#include "../algorithms/msccl.h"

#define DIR "tests/data/msccl/"

static const algo_t *load(const char *file) {
    char spec[256];
    baton_err_t e = {0};
    snprintf(spec, sizeof spec, "msccl:" DIR "%s", file);
    const algo_t *a = msccl_load(spec, &e);
    cr_assert_not_null(a, "%s: %s", file, e.msg);
    return a;
}

/* Run row a on t with n bytes (verified as asked); its time. */
static double run(topo_t *t, const algo_t *a, uint64_t n, verify_mode_t v) {
    engine_result_t r;
    baton_err_t e = {0};
    int rc = th_run(t, a, n, NULL, v, &r, &e);
    cr_assert_eq(rc, 0, "%s, %llu bytes: %s", a->name, (unsigned long long)n, e.msg);
    if (v != VERIFY_NONE) cr_assert_eq(r.verified, 1, "%s, %llu bytes: not verified", a->name, (unsigned long long)n);
    double time = r.time_s;
    engine_result_free(&r);
    return time;
}

/* File row and catalogue row take the same simulated time on t, for sizes
 * that divide and that do not, verified in data mode (small) and signature mode. */
static void same_as(topo_t *t, const algo_t *mine, const algo_t *theirs, int p) {
    const uint64_t ns[] = {(uint64_t)p, (uint64_t)p * 1000 + 3, 1003, 1 << 20, 10000019};
    for (int i = 0; i < 5; i++) {
        verify_mode_t v = (uint64_t)p * ns[i] <= (1u << 20) ? VERIFY_DATA : VERIFY_SIGNATURE;
        double a = run(t, mine, ns[i], v), b = run(t, theirs, ns[i], VERIFY_NONE);
        cr_assert(a > 0 && a == b, "%s vs %s, p=%d, %llu bytes: %.9g s vs %.9g s", mine->name, theirs->name, p,
                  (unsigned long long)ns[i], a, b);
    }
}

Test(msccl, ring_allreduce_is_the_catalogue_ring) {
    const int ps[] = {2, 5, 8};
    for (int i = 0; i < 3; i++) {
        char file[64];
        snprintf(file, sizeof file, "ring_allreduce_%d.xml", ps[i]);
        const algo_t *a = load(file);
        topo_t *machines[] = {th_full(ps[i], 10e9, 1e-6, 1, 20e9), th_star(ps[i], 25e9, 2e-6, 0, 0)};
        for (int m = 0; m < 2; m++) {
            same_as(machines[m], a, &algo_allreduce_ring, ps[i]);
            topo_free(machines[m]);
        }
    }
}

Test(msccl, allpairs_allreduce_is_direct) {
    const int ps[] = {3, 8};
    for (int i = 0; i < 2; i++) {
        char file[64];
        snprintf(file, sizeof file, "allpairs_allreduce_%d.xml", ps[i]);
        const algo_t *a = load(file);
        topo_t *machines[] = {th_full(ps[i], 10e9, 1e-6, 0, 20e9), th_star(ps[i], 25e9, 2e-6, 0, 0)};
        for (int m = 0; m < 2; m++) {
            same_as(machines[m], a, &algo_allreduce_direct, ps[i]);
            topo_free(machines[m]);
        }
    }
}

/* Two nodes of four on a full mesh (every pair its own link, latency L,
 * bandwidth B, m = n / 8), single-port (a rank sends one message at a
 * time): the swap across nodes takes L + m/B; then each node's ring carries
 * two blocks a step, one after the other: 2(g - 1) = 6 more messages of
 * L + m/B each, 7(L + m/B) in all. */
Test(msccl, hierarchical_allgather_by_hand) {
    const algo_t *a = load("hier_allgather_2x4.xml");
    cr_assert_eq(a->coll, COLL_ALLGATHER);
    double L = 1e-6, B = 10e9;
    topo_t *t = th_full(8, B, L, 1, 0);
    const uint64_t ns[] = {8000, 8 << 20};
    for (int i = 0; i < 2; i++) {
        double m = (double)ns[i] / 8, want = 7 * (L + m / B);
        double got = run(t, a, ns[i], i == 0 ? VERIFY_DATA : VERIFY_SIGNATURE);
        cr_assert_float_eq(got, want, want * 1e-9, "%llu bytes: %.9g s, by hand %.9g s", (unsigned long long)ns[i], got, want);
    }
    run(t, a, 1001, VERIFY_DATA);       /* blocks of unequal size verify too */
    topo_free(t);
}

Test(msccl, broken_algorithm_is_caught_at_its_first_wrong_chunk) {
    const algo_t *a = load("broken_ring_allreduce_8.xml");
    topo_t *t = th_full(8, 10e9, 1e-6, 1, 20e9);
    const verify_mode_t modes[] = {VERIFY_DATA, VERIFY_SIGNATURE};
    const char *where[] = {"rank 3 holds a wrong result in byte 2000 (chunk 2)", "rank 3 holds a wrong result in chunk 2 "};
    for (int i = 0; i < 2; i++) {
        engine_result_t r;
        baton_err_t e = {0};
        int rc = th_run(t, a, 8000, NULL, modes[i], &r, &e);
        cr_assert_eq(rc, BATON_EVERIFY, "mode %d: rc %d (%s)", i, rc, e.msg);
        cr_assert(strstr(e.msg, where[i]), "mode %d: %s", i, e.msg);
    }
    topo_free(t);
}

Test(msccl, wrong_gpu_count_and_collective_are_refused) {
    const algo_t *a = load("ring_allreduce_5.xml");
    topo_t *t = th_full(8, 10e9, 1e-6, 1, 20e9);
    sched_t s;
    baton_err_t e = {0};
    cr_assert_eq(algo_build(a, 8, 1000, NULL, &s, &e), BATON_EUNSUP);
    cr_assert(strstr(e.msg, "written for 5 GPUs, not 8"), "%s", e.msg);
    topo_free(t);
    cr_assert_null(msccl_find(COLL_ALLGATHER, a->name));
    cr_assert_eq(msccl_find(COLL_ALLREDUCE, a->name), a);
}

Test(msccl, bad_files_name_file_and_line) {
    static const struct { const char *file, *says; } bad[] = {
        {"unclosed.xml", "unclosed.xml:7: no element found"},
        {"badtype.xml", "badtype.xml:4: <step type=\"sr\">: not one of"},
        {"nongpus.xml", "nongpus.xml:1: <algo> lacks the attribute 'ngpus'"},
        {"scratch.xml", "scratch.xml:5: a scratch buffer (s)"},
        {"missingrecv.xml", "missingrecv.xml:12: send 2 of thread block 0 (GPU 1 to GPU 0) has no receive"},
        {"offbounds.xml", "offbounds.xml:4: chunks 7..7 of buffer i: it has 2 chunks"},
        {"badpeer.xml", "badpeer.xml:3: thread block 0 of GPU 0 sends to GPU 5: not another GPU of 2"},
        {"nosuchfile.xml", "cannot open"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char spec[256];
        baton_err_t e = {0};
        snprintf(spec, sizeof spec, "msccl:" DIR "bad/%s", bad[i].file);
        cr_assert_null(msccl_load(spec, &e), "%s loaded", bad[i].file);
        cr_assert(e.code < 0 && strstr(e.msg, bad[i].says), "%s: %s", bad[i].file, e.msg);
    }
}

Test(msccl, cli_sim_predict_select) {
    th_says("sim -t hgx-h100 -c allreduce -a msccl:" DIR "ring_allreduce_8.xml -s 1MiB --verify", 0, "verified yes", 1);
    th_says("predict -t hgx-h100 -c allreduce -a msccl:" DIR "allpairs_allreduce_8.xml -s 1MiB", 0, "(simulated)", 1);
    th_says("select -t hgx-h100 -c allreduce --sizes 1MiB --algos ring,msccl:" DIR "ring_allreduce_8.xml", 0,
            "msccl:" DIR "ring_allreduce_8.xml", 1);
    th_says("sim -t hgx-h100 -c allreduce -a msccl:" DIR "broken_ring_allreduce_8.xml -s 8000 --verify", 1,
            "rank 3 holds a wrong result in byte 2000 (chunk 2)", 1);
    th_says("sim -t hgx-h100 -c allreduce -a msccl:" DIR "bad/badtype.xml -s 1MiB", 1, "badtype.xml:4:", 1);
    th_says("sim -t hgx-h100 -c allgather -a msccl:" DIR "ring_allreduce_8.xml -s 1MiB", 1, "is an MSCCL allreduce, not allgather", 1);
}

/* ---- out: export, read back, verify, the same simulated time ---------------- */

/* Row a exported for p ranks (options o) and read back: 1 (and the read row
 * in *back), or 0 with the reason MSCCL cannot say it in why. */
static int round_trip(const algo_t *a, int p, const algo_opts_t *o, const algo_t **back, char *why, size_t n) {
    sched_t s;
    baton_err_t e = {0};
    if (algo_build(a, p, 1 << 20, o, &s, &e) < 0) { snprintf(why, n, "build: %s", e.msg); return 0; }
    char path[128];
    snprintf(path, sizeof path, "/tmp/baton-msccl-%d-%s-%s-%d-%d.xml", (int)getpid(), coll_name(a->coll), a->name, p,
             o ? o->channels : 0);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    int rc = msccl_export(&s, "Simple", f, NULL, &e);
    fclose(f);
    if (rc < 0) {
        remove(path);
        cr_assert_eq(rc, BATON_EUNSUP, "%s %s p=%d: %s", coll_name(a->coll), a->name, p, e.msg);
        snprintf(why, n, "%s", e.msg);
        return 0;
    }
    char spec[160];
    snprintf(spec, sizeof spec, "msccl:%s", path);
    *back = msccl_load(spec, &e);
    remove(path);
    cr_assert_not_null(*back, "%s %s p=%d: read back: %s", coll_name(a->coll), a->name, p, e.msg);
    cr_assert_eq((*back)->coll, a->coll);
    return 1;
}

Test(msccl, export_round_trip_every_row) {
    const algo_t *const *rows = algo_all();
    const int ps[] = {2, 3, 5, 8};
    int said = 0, refused = 0;
    char names[1024] = "";
    for (int i = 0; rows[i]; i++)
        for (int k = 0; k < 4; k++) {
            const algo_t *a = rows[i], *b = NULL;
            int p = ps[k];
            algo_opts_t o = {.channels = a == &algo_allreduce_ring ? 2 : 0, .group = p == 8 ? 4 : 0};
            char why[600];
            if (!round_trip(a, p, &o, &b, why, sizeof why)) {
                cr_assert(strncmp(why, "build: ", 7) == 0 || strstr(why, "MSCCL"), "%s %s: %s", coll_name(a->coll), a->name, why);
                refused += strncmp(why, "build: ", 7) != 0;
                continue;
            }
            said++;
            if (k == 3) snprintf(names + strlen(names), sizeof names - strlen(names), " %s/%s", coll_name(a->coll), a->name);
            topo_t *t = th_star(p, 25e9, 2e-6, 0, 0);
            const uint64_t ns[] = {(uint64_t)p * 240, 6u << 20};
            for (int j = 0; j < 2; j++) {
                engine_result_t x, y;
                baton_err_t e = {0};
                verify_mode_t v = j == 0 ? VERIFY_DATA : VERIFY_SIGNATURE;
                cr_assert_eq(th_run(t, a, ns[j], &o, VERIFY_NONE, &x, &e), 0, "%s", e.msg);
                cr_assert_eq(th_run(t, b, ns[j], &o, v, &y, &e), 0, "%s %s p=%d read back: %s", coll_name(a->coll), a->name, p, e.msg);
                cr_assert_eq(y.verified, 1);
                cr_assert(x.time_s == y.time_s, "%s %s p=%d, %llu bytes: %.9g s, read back %.9g s", coll_name(a->coll), a->name,
                          p, (unsigned long long)ns[j], x.time_s, y.time_s);
                engine_result_free(&x), engine_result_free(&y);
            }
            topo_free(t);
        }
    /* the rows the format says at 8 ranks (hier in groups of 4 changes peers) */
    cr_assert_str_eq(names, " allreduce/ring allreduce/oneshot allreduce/direct reducescatter/ring reducescatter/direct"
                            " allgather/ring allgather/direct", "%s", names);
    cr_assert(said >= 30 && refused > 100, "said %d, refused %d", said, refused);
}

Test(msccl, cli_export) {
    th_says("export --msccl -c allreduce -a ring -p 4", 0, "<algo name=\"baton allreduce ring\" proto=\"Simple\"", 1);
    th_says("export --msccl -c allreduce -a rd -p 4", 1, "a stream sends to more than one peer", 1);
    th_says("export --msccl -c broadcast -a chain -p 4", 1, "the file has no root", 1);
    th_says("export -c allreduce -a ring -p 4", 2, "--msccl", 1);
}
