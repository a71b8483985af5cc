/* test_engine.c - the event queue and the engine's resource rules. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../sim/engine/evq.h"
#include "../topologies/topo_yaml.h"
#include "../util/par.h"
#include "helpers.h"

Test(evq, orders_by_time_then_insertion) {
    evq_t q;
    evq_init(&q);
    /* many equal times: ties must come out in push order */
    for (uint32_t i = 0; i < 5000; i++) cr_assert_eq(evq_push(&q, (double)(i % 7), 0, i), 0);
    evq_item_t it, prev = {-1, 0, 0, 0};
    uint32_t n = 0;
    while (evq_pop(&q, &it) > 0) {
        cr_assert(it.t > prev.t || (it.t == prev.t && it.id > prev.id), "out of order at %u", n);
        prev = it;
        n++;
    }
    cr_expect_eq(n, 5000u);
    evq_free(&q);
}

/* evq_pop_until against pops one by one: two queues fed alike, one drained
 * by windows (a bound, a room that is sometimes smaller than the run), the
 * other by evq_pop; every window must be exactly the pops due by its bound,
 * in order, with pushes (some before the base) in between. */
Test(evq, pop_until_matches_single_pops) {
    evq_t a, b;
    evq_item_t w[300], it;
    uint64_t x = 99;
    double now = 0;
    evq_init(&a), evq_init(&b);
    for (int round = 0; round < 400; round++) {
        for (int k = 0; k < 150; k++) {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            double t = x % 11 == 0 ? now * 0.9 : now + (double)(x % 8) * 1e-9 * (x % 3);
            cr_assert_eq(evq_push(&a, t, 0, (uint32_t)k), 0);
            cr_assert_eq(evq_push(&b, t, 0, (uint32_t)k), 0);
        }
        double bound = now + (double)(x % 5) * 1e-9;
        uint32_t room = 1 + (uint32_t)(x % 300);
        int n = evq_pop_until(&a, bound, w, room);
        cr_assert_geq(n, 0);
        for (int i = 0; i < n; i++) {
            cr_assert_eq(evq_pop(&b, &it), 1);
            cr_assert(it.t == w[i].t && it.seq == w[i].seq, "round %d, item %d differs", round, i);
            cr_assert_leq(w[i].t, bound);
        }
        if ((uint32_t)n < room && evq_peek(&b, &it) == 1) cr_assert_gt(it.t, bound, "round %d stopped early", round);
        cr_assert_eq(evq_size(&a), evq_size(&b));
        if (n > 0) now = w[n - 1].t;
        if (round % 50 == 49) now += 1e-6;
    }
    evq_free(&a), evq_free(&b);
}

Test(evq, random_times_pop_sorted) {
    evq_t q;
    evq_init(&q);
    srand(7);
    for (int i = 0; i < 20000; i++) evq_push(&q, rand() / (double)RAND_MAX, 0, 0);
    evq_item_t it;
    double last = -1;
    while (evq_pop(&q, &it) > 0) {
        cr_assert_geq(it.t, last);
        last = it.t;
    }
    evq_free(&q);
}

/* Pushes and pops interleaved at random, with many equal times, times
 * before the last pop (which must still come out first, in order) and -0.0:
 * every pop must be the (time, insertion) minimum a linear scan finds. */
Test(evq, interleaved_matches_a_linear_scan) {
    enum { OPS = 40000 };
    evq_t q;
    evq_item_t *ref = malloc(OPS * sizeof *ref), it;
    uint32_t nref = 0, seq = 0;
    uint64_t x = 12345;
    double now = 0;
    evq_init(&q);
    for (int op = 0; op < OPS; op++) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        if (x % 5 < 3 || nref == 0) {                 /* push: later, now, a tie, or (rarely) earlier */
            double t = x % 97 == 0 ? now * 0.5 : x % 3 == 0 ? now : now + (double)(x % 1000) * 1e-6;
            if (x % 1009 == 0) t = -0.0 + now * 0;
            cr_assert_eq(evq_push(&q, t, 0, seq), 0);
            ref[nref++] = (evq_item_t){t + 0.0, seq, 0, seq};
            seq++;
            continue;
        }
        uint32_t m = 0;
        for (uint32_t k = 1; k < nref; k++)
            if (ref[k].t < ref[m].t || (ref[k].t == ref[m].t && ref[k].seq < ref[m].seq)) m = k;
        cr_assert_eq(evq_pop(&q, &it), 1);
        cr_assert(it.id == ref[m].id && it.t == ref[m].t, "pop %d: got %u at %g, want %u at %g",
                  op, it.id, it.t, ref[m].id, ref[m].t);
        now = it.t;
        ref[m] = ref[--nref];
        cr_assert_eq(evq_size(&q), nref);
    }
    while (nref > 0) {
        uint32_t m = 0;
        for (uint32_t k = 1; k < nref; k++)
            if (ref[k].t < ref[m].t || (ref[k].t == ref[m].t && ref[k].seq < ref[m].seq)) m = k;
        cr_assert_eq(evq_pop(&q, &it), 1);
        cr_assert_eq(it.id, ref[m].id);
        ref[m] = ref[--nref];
    }
    cr_expect_eq(evq_pop(&q, &it), 0, "empty");
    evq_free(&q);
    free(ref);
}

/* Programs for hand-made schedules: param[0] selects a case. */
static int two_sends_prog(const sched_t *s, int r, int c, uint32_t pc, sched_op_t *op) {
    (void)c;
    *op = (sched_op_t){.nchunk = 1};
    if (s->param[0] == 0) {            /* rank 0 sends to 1 and to 2 at once */
        if (r == 0 && pc < 2) { op->send = 1; op->send_peer = 1 + (int)pc; return 1; }
        if (r > 0 && pc == 0) { op->recv = RECV_COPY; op->recv_peer = 0; return 1; }
        return 0;
    }
    if (s->param[0] == 1) {            /* both wait to receive first: deadlock */
        if (pc == 0) { op->recv = RECV_COPY; op->recv_peer = 1 - r; return 1; }
        if (pc == 1) { op->send = 1; op->send_peer = 1 - r; return 1; }
        return 0;
    }
    /* mismatched chunks: rank 0 sends chunk 1, rank 1 expects chunk 0 */
    if (r == 0 && pc == 0) { *op = op_send(1, 1, 1); return 1; }
    if (r == 1 && pc == 0) { *op = op_recv(0, 0, 1, RECV_COPY); return 1; }
    return 0;
}

static int run_case(topo_t *t, int which, engine_result_t *r, baton_err_t *e) {
    sched_t s = {.coll = COLL_ALLREDUCE, .algo = "test", .nranks = topo_nranks(t), .nchannels = 1,
                 .bytes = 1000, .prog = two_sends_prog, .param = {which}};
    sched_layout(&s, 2, 1);
    return engine_run(&s, t, NULL, r, e);
}

Test(engine, single_port_serialises_sends) {
    topo_t *t = th_full(3, 1e9, 1e-6, 1, 0);      /* 500 B chunks: 0.5 us each */
    engine_result_t r;
    cr_assert_eq(run_case(t, 0, &r, NULL), 0);
    cr_expect_float_eq(r.time_s, 2 * (1e-6 + 0.5e-6), 1e-18);
    topo_free(t);
}

Test(engine, multi_port_full_mesh_sends_in_parallel) {
    topo_t *t = th_full(3, 1e9, 1e-6, 0, 0);
    engine_result_t r;
    cr_assert_eq(run_case(t, 0, &r, NULL), 0);
    cr_expect_float_eq(r.time_s, 1e-6 + 0.5e-6, 1e-18);
    topo_free(t);
}

Test(engine, a_shared_link_is_reserved_fifo) {
    topo_t *t = th_star(3, 1e9, 1e-6, 0, 0);      /* both sends leave over rank 0's one link */
    engine_result_t r;
    cr_assert_eq(run_case(t, 0, &r, NULL), 0);
    cr_expect_float_eq(r.time_s, 1e-6 + 2 * 0.5e-6, 1e-18, "latency once, bytes queue");
    topo_free(t);
}

Test(engine, two_ports_serve_two_at_once) {
    topo_t *t = th_full(3, 1e9, 1e-6, 2, 0);
    engine_result_t r;
    cr_assert_eq(run_case(t, 0, &r, NULL), 0);
    cr_expect_float_eq(r.time_s, 1e-6 + 0.5e-6, 1e-18);
    topo_free(t);
}

Test(engine, deadlock_is_reported_not_hung) {
    topo_t *t = th_full(2, 1e9, 0, 1, 0);
    engine_result_t r;
    baton_err_t e = {0};
    cr_expect_eq(run_case(t, 1, &r, &e), BATON_ESCHED);
    cr_expect(strstr(e.msg, "deadlock") != NULL, "%s", e.msg);
    topo_free(t);
}

Test(engine, mismatched_chunks_are_reported) {
    topo_t *t = th_full(2, 1e9, 0, 1, 0);
    engine_result_t r;
    baton_err_t e = {0};
    cr_expect_eq(run_case(t, 2, &r, &e), BATON_ESCHED);
    cr_expect(strstr(e.msg, "expects chunks 0+1") != NULL, "%s", e.msg);
    topo_free(t);
}

Test(engine, rank_count_must_match) {
    topo_t *t = th_full(4, 1e9, 0, 1, 0);
    sched_t s;
    cr_assert_eq(algo_build(&algo_allreduce_ring, 5, 10, NULL, &s, NULL), 0);
    engine_result_t r;
    baton_err_t e = {0};
    cr_expect_eq(engine_run(&s, t, NULL, &r, &e), BATON_EINVAL);
    topo_free(t);
}

/* The same inputs give bit-identical results. */
Test(engine, deterministic) {
    topo_t *t = th_star(37, 3e9, 0.7e-6, 0, 11e9);
    engine_result_t a, b;
    cr_assert_eq(th_sim(t, "ring", 999983, VERIFY_SIGNATURE, &a, NULL), 0);
    cr_assert_eq(th_sim(t, "ring", 999983, VERIFY_SIGNATURE, &b, NULL), 0);
    cr_expect(memcmp(&a.time_s, &b.time_s, sizeof a.time_s) == 0);
    cr_expect_eq(a.events, b.events);
    topo_free(t);
}

/* Engine state does not grow with messages: a bounded number of sends in
 * flight per stream is honoured (1 slot still completes, just slower). */
Test(engine, one_send_slot_still_completes) {
    topo_t *t = th_full(6, 1e9, 1e-6, 0, 0);
    topo_params(t)->max_inflight = 1;
    engine_result_t r;
    baton_err_t e = {0};
    cr_assert_eq(th_sim(t, "naive", 4000, VERIFY_DATA, &r, &e), 0, "%s", e.msg);
    cr_expect_eq(r.verified, 1);
    /* five sends of 4 us + 1 us each, one after another, after the gather */
    cr_expect_float_eq(r.time_s, 5 * 5e-6 + 5 * 5e-6, 1e-15);
    topo_free(t);
}

/* The critical path accounts for every second of the run, and on the candy
 * kids it is the story: naive is Anna hearing three kids then telling Dan
 * after two others (8 s waiting for her one voice); the ring is six passes. */
Test(engine, critical_path_adds_up_and_tells_the_story) {
    baton_err_t e = {0};
    topo_t *t = topo_yaml_load("topologies/candy-kids.yaml", NULL, 0, &e);
    cr_assert_not_null(t, "%s", e.msg);
    const char *algos[] = {"naive", "tree", "ring"};
    int steps[] = {4, 3, 6};       /* tree: two 16 s branches tie; the first recorded, Anna->Ben, waited 4 s for Anna */
    double wait[] = {8, 4, 0};
    for (int i = 0; i < 3; i++) {
        sched_t s;
        cr_assert_eq(algo_build(algo_find(COLL_ALLREDUCE, algos[i]), 4, 4, NULL, &s, NULL), 0);
        engine_opts_t o = {.record = 1};
        engine_result_t r;
        cr_assert_eq(engine_run(&s, t, &o, &r, NULL), 0);
        engine_path_t cp;
        cr_assert_eq(engine_critical_path(&r, &cp), 0);
        cr_expect_float_eq(cp.transfer_s + cp.wait_s + cp.reduce_s + cp.idle_s, r.time_s, 1e-12, "%s", algos[i]);
        cr_expect_eq(cp.steps, steps[i], "%s: %d steps", algos[i], cp.steps);
        cr_expect_float_eq(cp.wait_s, wait[i], 1e-12, "%s", algos[i]);
        engine_result_free(&r);
    }
    topo_free(t);
    /* and on a bigger, contended run the parts still add up */
    t = th_star(16, 10e9, 1e-6, 0, 20e9);
    sched_t s;
    cr_assert_eq(algo_build(&algo_allreduce_dbtree, 16, 1 << 22, NULL, &s, NULL), 0);
    engine_opts_t o = {.record = 1, .contention = CONTENTION_FAIR};
    engine_result_t r;
    cr_assert_eq(engine_run(&s, t, &o, &r, NULL), 0);
    engine_path_t cp;
    cr_assert_eq(engine_critical_path(&r, &cp), 0);
    cr_expect_float_eq(cp.transfer_s + cp.wait_s + cp.reduce_s + cp.idle_s, r.time_s, 1e-9 * r.time_s);
    engine_result_free(&r);
    topo_free(t);
}

/* A send that waits for a port takes its own route when the port frees, not
 * whatever route its stream used last: root 0 broadcasts naively over links
 * of 10, 10 and 1 GB/s through one port, so the three sends take 0.1 + 0.1 +
 * 1 s under both contention models (fair sharing once took 2.1 s: the
 * waiting send to rank 2 borrowed rank 3's slow link). */
Test(engine, a_waiting_send_keeps_its_route) {
    topo_t *t = topo_create("fan");
    th_add_ranks(t, 4, "r");
    for (int i = 1; i < 4; i++) topo_add_link(t, 0, i, i < 3 ? 10e9 : 1e9, 0, NULL);
    for (int i = 1; i < 4; i++)                 /* every pair must be joined; the broadcast does not use these */
        for (int j = i + 1; j < 4; j++) topo_add_link(t, i, j, 1e9, 0, NULL);
    topo_params(t)->ports = 1;
    topo_params(t)->max_inflight = 4;
    cr_assert_eq(topo_finalize(t, "test", NULL), 0);
    const algo_t *naive = algo_find(COLL_BROADCAST, "naive");
    for (int m = 0; m < 2; m++) {
        sched_t s;
        engine_result_t r;
        engine_opts_t o = {.contention = m ? CONTENTION_FAIR : CONTENTION_FIFO};
        cr_assert_eq(algo_build(naive, 4, 1000000000, NULL, &s, NULL), 0);
        cr_assert_eq(engine_run(&s, t, &o, &r, NULL), 0);
        cr_expect_float_eq(r.time_s, 1.2, 1e-9, "%s: %.9g s", m ? "fair" : "fifo", r.time_s);
    }
    topo_free(t);
}

static topo_t *ring_of(int n, const char *path) {
    char yaml[256];
    snprintf(yaml, sizeof yaml, "name: ring\nnodes:\n  - {name: \"g[0-%d]\"}\ngenerate:\n"
             "  - {torus: \"g[0-%d]\", dims: [%d], bw: 10GB/s, latency: 1us}\n", n - 1, n - 1, n);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fputs(yaml, f);
    fclose(f);
    return th_load(path, NULL);
}

/* Store and forward on a 64-node bidirectional ring: in two-shot's step k
 * every rank sends m = n/64 bytes k ranks on (the short way round), so each
 * directed link carries one message per hop time and nothing ever queues:
 * the whole all-reduce is 2 x (sum over k of min(k, 64-k) = 1,024 hops) x
 * (L + m/B), by hand. Booking every hop when a message starts (the old
 * engine) made later messages wait for links booked far ahead: 7.8x that. */
Test(engine, store_and_forward_ring_shift_never_queues) {
    topo_t *t = ring_of(64, "build/ring64-test.yaml");
    sched_t s;
    uint64_t n = 64u << 20;
    cr_assert_eq(algo_build(algo_find(COLL_ALLREDUCE, "twoshot"), 64, n, NULL, &s, NULL), 0);
    engine_result_t r;
    engine_opts_t o = {.store_forward = 1};
    cr_assert_eq(engine_run(&s, t, &o, &r, NULL), 0);
    double hop = 1e-6 + (double)(n / 64) / 10e9;
    cr_expect_float_eq(r.time_s, 2 * 1024 * hop, 1e-9 * r.time_s, "%.9g s, want %.9g", r.time_s, 2 * 1024 * hop);
    o.contention = CONTENTION_NONE;                 /* no queueing to remove: the same */
    engine_result_t none;
    cr_assert_eq(engine_run(&s, t, &o, &none, NULL), 0);
    cr_expect_float_eq(none.time_s, r.time_s, 1e-12 * r.time_s);
    topo_free(t);
}

/* Store and forward through a switch, by hand: 1000 B messages at 1 GB/s
 * (1 us a link), 0.5 us latency a link; rank 0 sends to 1 and to 2 at once.
 * Unlimited ports: A uses 0's link 0-1 us, reaches the switch at 1.5 and
 * rank 1 at 1.5 + 1 + 0.5 = 3 us; B queues behind A on 0's link only (1-2
 * us), then has its own link down: 4 us. One port: B starts when A has
 * arrived (3 us): 6 us. */
Test(engine, store_and_forward_through_a_switch_by_hand) {
    for (int ports = 0; ports <= 1; ports++) {
        topo_t *t = th_star(3, 1e9, 1e-6, ports, 0);
        sched_t s = {.coll = COLL_ALLREDUCE, .algo = "test", .nranks = 3, .nchannels = 1,
                     .bytes = 2000, .prog = two_sends_prog, .param = {0}};
        sched_layout(&s, 2, 1);
        engine_result_t r;
        engine_opts_t o = {.store_forward = 1};
        cr_assert_eq(engine_run(&s, t, &o, &r, NULL), 0);
        cr_expect_float_eq(r.time_s, ports ? 6e-6 : 4e-6, 1e-18, "ports %d: %.9g s", ports, r.time_s);
        topo_free(t);
    }
}

/* Every algorithm still verifies hop by hop, on a ring where routes forward. */
Test(engine, store_and_forward_verifies_on_a_ring) {
    topo_t *t = ring_of(7, "build/ring7-test.yaml");
    const char *names[] = {"ring", "twoshot", "rabenseifner", "rd", "oneshot"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        const algo_t *a = algo_find(COLL_ALLREDUCE, names[i]);
        cr_assert_not_null(a, "%s", names[i]);
        sched_t s;
        cr_assert_eq(algo_build(a, 7, 7001, NULL, &s, NULL), 0, "%s", names[i]);
        engine_result_t r;
        engine_opts_t o = {.store_forward = 1, .verify = VERIFY_DATA};
        baton_err_t e = {0};
        cr_expect_eq(engine_run(&s, t, &o, &r, &e), 0, "%s: %s", names[i], e.msg);
        cr_expect(r.verified, "%s", names[i]);
    }
    topo_free(t);
}

/* A run told to give up past a rival's time (engine_opts_t.give_up_after,
 * run_collective's other protocols) stops there and says so, its time
 * infinite; told a time at or after its own end, it is the whole run, event
 * for event. A ring all-reduce on a 16-GPU star: 2(p-1) steps. */
Test(engine, a_run_gives_up_only_past_the_rivals_time) {
    topo_t *t = th_star(16, 10e9, 1e-6, 0, 20e9);
    sched_t s;
    cr_assert_eq(algo_build(algo_find(COLL_ALLREDUCE, "ring"), 16, 1 << 24, NULL, &s, NULL), 0);
    engine_result_t whole, at, past;
    cr_assert_eq(engine_run(&s, t, NULL, &whole, NULL), 0);
    engine_opts_t o = {.give_up_after = whole.time_s};
    cr_assert_eq(engine_run(&s, t, &o, &at, NULL), 0);
    cr_expect(!at.gave_up && at.time_s == whole.time_s && at.events == whole.events, "%.17g %.17g", at.time_s, whole.time_s);
    o.give_up_after = whole.time_s / 2;
    cr_assert_eq(engine_run(&s, t, &o, &past, NULL), 0);
    cr_expect(past.gave_up && isinf(past.time_s), "gave up: %d, %g", past.gave_up, past.time_s);
    cr_expect_lt(past.events, whole.events * 3 / 4, "stopped about halfway: %llu of %llu events",
                 (unsigned long long)past.events, (unsigned long long)whole.events);
    engine_result_free(&whole);
    engine_result_free(&at);
    engine_result_free(&past);
    topo_free(t);
}

/* A rival beside the run (engine_opts_t.give_up_shared, run_collective's
 * protocols in worker processes) is read at the engine's ticks: a rival
 * finished at the run's own time changes nothing, event for event; one
 * finished sooner stops it, by the clock or by the busiest link's bound
 * (which is set up for a rival not yet finished too); none finished yet
 * lets it run whole. A ring all-reduce of 1 GiB on 128 Polaris nodes under
 * Simple: 512 ranks, about 800,000 events, a dozen ticks. */
Test(engine, a_rival_beside_the_run_stops_it_only_past_its_time) {
    topo_t *t = th_load("topologies/polaris.yaml", "nodes=128");
    sched_t s;
    cr_assert_eq(algo_build(algo_find(COLL_ALLREDUCE, "ring"), 512, 1 << 30, NULL, &s, NULL), 0);
    proto_cost_t pc = proto_default(PROTO_SIMPLE);
    engine_opts_t o = {.proto = &pc};
    engine_result_t whole, r;
    cr_assert_eq(engine_run(&s, t, &o, &whole, NULL), 0);
    cr_assert_gt(whole.events, 4 * ENGINE_TICK, "%llu events", (unsigned long long)whole.events);
    par_min_t *m = par_min_new();
    cr_assert(m);
    o.give_up_shared = m;                                  /* no rival finished */
    cr_assert_eq(engine_run(&s, t, &o, &r, NULL), 0);
    cr_expect(!r.gave_up && r.time_s == whole.time_s && r.events == whole.events);
    engine_result_free(&r);
    par_min_offer(m, whole.time_s);                        /* one finished at this run's time */
    cr_assert_eq(engine_run(&s, t, &o, &r, NULL), 0);
    cr_expect(!r.gave_up && r.time_s == whole.time_s && r.events == whole.events, "%.17g %.17g", r.time_s, whole.time_s);
    engine_result_free(&r);
    par_min_offer(m, 0.5 * whole.time_s);                  /* one finished sooner */
    cr_assert_eq(engine_run(&s, t, &o, &r, NULL), 0);
    cr_expect(r.gave_up && isinf(r.time_s), "gave up: %d", r.gave_up);
    cr_expect_lt(r.events, whole.events * 3 / 4, "%llu of %llu events", (unsigned long long)r.events,
                 (unsigned long long)whole.events);
    engine_result_free(&r);
    par_min_free(m);
    engine_result_free(&whole);
    topo_free(t);
}

/* The busiest link's bound (xfer.c, xfer_bound_setup) gives up only what
 * cannot win. The oracle is the whole run: told its own time as the
 * rival's, a run ends whole, at the same time after the same events, on
 * every machine, row and protocol here (one link, a NIC and a switch, a
 * reducing switch, a dragonfly's pooled links, one port, LL's and LL128's
 * rates); told 0.9 of it, a 512 MiB run gives up. A bound that counted a
 * link's holds wrong by more than the tie would fail the first (too much)
 * or the second on the ring (too little: it would run to 0.9). */
static void gives_up_exactly(topo_t *t, coll_t c, const char *row, proto_t pr, uint64_t *events_whole,
                             uint64_t *events_past) {
    sched_t s;
    baton_err_t e = {0};
    uint64_t p = (uint64_t)topo_nranks(t), n = (512u << 20) / p * p;     /* what every row takes */
    cr_assert_eq(algo_build(algo_find(c, row), (int)p, n, NULL, &s, &e), 0, "%s: %s", row, e.msg);
    proto_cost_t pc = proto_default(pr);
    engine_opts_t o = {.proto = &pc};
    engine_result_t whole, at, past;
    cr_assert_eq(engine_run(&s, t, &o, &whole, &e), 0, "%s: %s", row, e.msg);
    o.give_up_after = whole.time_s;
    cr_assert_eq(engine_run(&s, t, &o, &at, &e), 0, "%s: %s", row, e.msg);
    cr_expect(!at.gave_up && at.time_s == whole.time_s && at.events == whole.events, "%s/%s on %s: %.17g %.17g, %llu of %llu events",
              row, proto_name(pr), topo_name(t), at.time_s, whole.time_s, (unsigned long long)at.events,
              (unsigned long long)whole.events);
    o.give_up_after = 0.9 * whole.time_s;
    cr_assert_eq(engine_run(&s, t, &o, &past, &e), 0, "%s: %s", row, e.msg);
    cr_expect(past.gave_up, "%s/%s on %s: ran whole under 0.9 of its time", row, proto_name(pr), topo_name(t));
    if (events_whole) *events_whole = whole.events, *events_past = past.events;
    engine_result_free(&whole);
    engine_result_free(&at);
    engine_result_free(&past);
}

Test(engine, the_busiest_links_bound_gives_up_only_what_cannot_win) {
    struct { const char *path, *sets; coll_t c; const char *row; } k[] = {
        {"topologies/cluster-h100.yaml", "nodes=2", COLL_ALLREDUCE, "ring"},
        {"topologies/cluster-h100.yaml", "nodes=2", COLL_ALLREDUCE, "nccltree"},
        {"topologies/cluster-h100.yaml", "nodes=2", COLL_ALLREDUCE, "hier"},
        {"topologies/cluster-h100.yaml", "nodes=2", COLL_ALLTOALL, "pairwise"},
        {"topologies/cluster-h100.yaml", "nodes=2,eager=true", COLL_ALLREDUCE, "ring"},
        {"topologies/hgx-b200.yaml", NULL, COLL_ALLREDUCE, "nvls"},
        {"topologies/hgx-b200.yaml", NULL, COLL_ALLREDUCE, "rabenseifner"},
        {"topologies/polaris.yaml", "nodes=40", COLL_ALLREDUCE, "ring"},
        {"topologies/polaris.yaml", "nodes=40", COLL_ALLTOALL, "pairwise"},
        {"topologies/dgx1-v100.yaml", NULL, COLL_ALLREDUCE, "dbtree"},
    };
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        topo_t *t = th_load(k[i].path, k[i].sets);
        for (proto_t pr = PROTO_LL; pr <= PROTO_SIMPLE; pr++) gives_up_exactly(t, k[i].c, k[i].row, pr, NULL, NULL);
        topo_free(t);
    }
    topo_t *one = th_star(8, 10e9, 1e-6, 1, 20e9);          /* one port a rank: ports booked beside the links */
    gives_up_exactly(one, COLL_ALLREDUCE, "ring", PROTO_SIMPLE, NULL, NULL);
    gives_up_exactly(one, COLL_ALLREDUCE, "naive", PROTO_SIMPLE, NULL, NULL);
    topo_free(one);
    topo_t *two = th_star(8, 10e9, 1e-6, 2, 20e9);          /* two ports a rank: pick_port's choice */
    gives_up_exactly(two, COLL_ALLTOALL, "pairwise", PROTO_SIMPLE, NULL, NULL);
    gives_up_exactly(two, COLL_ALLREDUCE, "naive", PROTO_LL, NULL, NULL);
    topo_free(two);
    topo_t *star = th_star(16, 10e9, 1e-6, 0, 20e9);
    uint64_t all, stopped;
    gives_up_exactly(star, COLL_ALLGATHER, "ring", PROTO_SIMPLE, &all, &stopped);
    cr_expect_lt(stopped * 20, all, "a ring busy on every link all along stops at once: %llu of %llu events",
                 (unsigned long long)stopped, (unsigned long long)all);
    topo_free(star);
}

/* Eager receives (`eager: true`): a send lands in its receiver's slot before
 * the receive is posted, so a ring's chunk pays each hop's own latency once,
 * where rendezvous paces every step at the slowest hop. A 1 KiB all-gather
 * ring on LL over 4 H100 nodes (32 ranks, 4 network hops of the 32): one
 * node's ring gives an NVLink hop (7 hops after LL's base), rendezvous on 4
 * nodes the network hop (31 steps at it), and eagerly the chunk's 31 hops
 * are the ring's 32 less one NVLink hop: base + 4 net + 27 NVLink. The data
 * verify either way. */
static double ring_1k(int nodes, int eager) {
    char cmd[256];
    snprintf(cmd, sizeof cmd, "sim -t cluster-h100 --set nodes=%d --set eager=%s -c allgather -s 1KiB -a ring "
             "--proto LL --verify --json", nodes, eager ? "true" : "false");
    return th_cli_num(cmd, "time_s");
}

Test(engine, eager_receives_pay_each_hop_once) {
    const double base = 6.6e-6;                           /* LL's once per call (NCCL's table) */
    double nv = (ring_1k(1, 0) - base) / 7, net = (ring_1k(4, 0) - base) / 31;
    cr_assert(net > 2 * nv, "an NVLink hop %g s, a network one %g s", nv, net);
    cr_expect_float_eq(ring_1k(1, 1), ring_1k(1, 0), 1e-12, "one node: every hop alike, eager changes nothing");
    double want = base + 4 * net + 27 * nv, got = ring_1k(4, 1);
    cr_expect(fabs(got - want) < 0.005 * want, "eager %g s, want %g s (rendezvous %g s)", got, want, ring_1k(4, 0));
}
