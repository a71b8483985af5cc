/* test_replay_share.c - a replay's communications that overlap share the
 * machine (sim/replay/replay_share.h), on tests/data/chakra/uniform4.yaml:
 * four GPUs, a link of 1 GB/s and 1 us between every pair, one send and
 * one receive at a time a GPU (ports: 1), no protocols. A message of m
 * bytes alone takes a + m b; two at once through one port take a + m b and
 * 2(a + m b): a port is held until its message has arrived. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "helpers.h"
#include "../sim/replay/chakra_gen.h"
#include "../sim/replay/replay.h"
#include "../sim/answer/run.h"

#define A 1e-6
#define B 1e-9
#define M 250000ull                 /* bytes a message */

/* Append to et a send to (or receive from) peer of M bytes with tag, or a
 * kernel of us microseconds (peer < 0), after node dep (0: none). */
static void add(chakra_et_t *et, uint64_t id, int type, uint64_t dep, int64_t peer, int64_t tag, uint64_t us) {
    uint64_t deps[1] = {dep};
    chakra_node_t n = {.id = id, .name = "n", .type = type, .deps = deps, .ndeps = dep ? 1 : 0, .duration_us = us};
    if (type == CHAKRA_SEND) n.comm_dst = peer, n.has = CHAKRA_HAS_DST;
    if (type == CHAKRA_RECV) n.comm_src = peer, n.has = CHAKRA_HAS_SRC;
    if (type != CHAKRA_COMP) n.comm_size = M, n.comm_tag = tag, n.has |= CHAKRA_HAS_SIZE | CHAKRA_HAS_TAG;
    baton_err_t e = {0};
    cr_assert_eq(chakra_add(et, &n, &e), 0, "%s", e.msg);
}

static void run(const chakra_et_t *et, int n, int alone, replay_out_t *o) {
    static const char *names[4] = {"r.0.et", "r.1.et", "r.2.et", "r.3.et"};
    topo_t *t = th_load("tests/data/chakra/uniform4.yaml", NULL);
    replay_req_t q = {.algo = "nccl", .proto = RUN_PROTO_AUTO, .alone = alone};
    baton_err_t e = {0};
    cr_assert_eq(replay_run(t, et, names, n, &q, o, &e), 0, "%s", e.msg);
    topo_free(t);
}

static void near(double got, double want, const char *what) {
    cr_assert(fabs(got - want) <= 1e-12 + 1e-9 * want, "%s: %.12g s, by hand %.12g s", what, got, want);
}

/* Rank 0 sends two messages to rank 1 at once (tags 1 and 2): alone each
 * takes a + m b; shared, the second waits for the first to arrive. */
static void two_at_once(chakra_et_t *et) {
    memset(et, 0, 2 * sizeof *et);
    add(&et[0], 1, CHAKRA_SEND, 0, 1, 1, 0);
    add(&et[0], 2, CHAKRA_SEND, 0, 1, 2, 0);
    add(&et[1], 1, CHAKRA_RECV, 0, 0, 1, 0);
    add(&et[1], 2, CHAKRA_RECV, 0, 0, 2, 0);
}

Test(replay_share, two_sends_through_one_port_follow_each_other) {
    chakra_et_t et[2];
    two_at_once(et);
    replay_out_t o;
    run(et, 2, 0, &o);
    near(o.step_s, 2 * (A + M * B), "shared: the second send's end");
    double lo = fmin(o.node[0].end_s, o.node[1].end_s), hi = fmax(o.node[0].end_s, o.node[1].end_s);
    near(lo, A + M * B, "the first send, as alone");
    near(hi, 2 * (A + M * B), "the second");
    cr_expect_eq(o.overlapped, 2);
    cr_expect(o.settled && o.rounds == 2, "a round that shares, one that finds nothing new: %d rounds, settled %d",
              o.rounds, o.settled);
    cr_expect_eq(o.chains, 1);
    near(o.comm[0].shared_hi_s, 2 * (A + M * B), "the kind's longest time shared");
    replay_free(&o);
    run(et, 2, 1, &o);
    near(o.step_s, A + M * B, "--alone: each as if the machine were its own");
    cr_expect_eq(o.rounds, 0);
    replay_free(&o);
    for (int r = 0; r < 2; r++) chakra_free(&et[r]);
}

/* Sends on links and ports of their own do not slow each other: the four
 * sends of a ring (r to r + 1) at once each take a + m b, shared or not. */
Test(replay_share, sends_apart_keep_their_time) {
    chakra_et_t et[4];
    memset(et, 0, sizeof et);
    for (int r = 0; r < 4; r++) {
        add(&et[r], 1, CHAKRA_SEND, 0, (r + 1) % 4, 0, 0);
        add(&et[r], 2, CHAKRA_RECV, 0, (r + 3) % 4, 0, 0);
    }
    replay_out_t o;
    run(et, 4, 0, &o);
    near(o.step_s, A + M * B, "four sends, each its own ports");
    cr_expect_eq(o.overlapped, 4);
    cr_expect(o.settled && o.rounds == 1, "nothing changed in the first round: %d", o.rounds);
    cr_expect_eq(o.comm[0].shared_hi_s, 0, "no time shared differs from alone");
    replay_free(&o);
    for (int r = 0; r < 4; r++) chakra_free(&et[r]);
}

/* A time shared moves what follows, and the next round sees the new
 * overlap: rank 2 sends to rank 1 after a kernel of 400 us. With the two
 * sends of rank 0 alone (both end at 251 us) it overlaps nothing; once they
 * share, the second ends at 502 us, and rank 2's send, ready at 400, waits
 * for rank 1's port: rank 1 receives 0-251 (tag 1), 251-502 (tag 2), then
 * 502-753 from rank 2. */
Test(replay_share, rounds_go_on_until_the_overlaps_settle) {
    chakra_et_t et[3];
    two_at_once(et);
    memset(&et[2], 0, sizeof et[2]);
    add(&et[2], 1, CHAKRA_COMP, 0, -1, 0, 400);
    add(&et[2], 2, CHAKRA_SEND, 1, 1, 3, 0);
    add(&et[1], 3, CHAKRA_RECV, 0, 2, 3, 0);
    replay_out_t o;
    run(et, 3, 1, &o);
    near(o.step_s, 400e-6 + A + M * B, "alone: rank 2's send after its kernel");
    replay_free(&o);
    run(et, 3, 0, &o);
    near(o.step_s, 3 * (A + M * B), "shared: rank 1's port takes the three one after another");
    cr_expect(o.settled && o.rounds == 3, "rounds: the pair, then rank 2's send with them, then nothing: %d", o.rounds);
    cr_expect_eq(o.overlapped, 3);
    replay_free(&o);
    for (int r = 0; r < 3; r++) chakra_free(&et[r]);
}

/* `baton export --chakra --overlap`'s trace: each rank's send follows its
 * forward pass, beside the all-reduce. Alone, the step is the hand sum
 * (the sends end before the all-reduce does); shared on one port a GPU,
 * the last pair (rank 3 to 0) starts with the ring all-reduce, and both
 * take longer. */
Test(replay_share, a_send_beside_the_collective_slows_both) {
    chakra_et_t et[4];
    static const char *names[4] = {"g.0.et", "g.1.et", "g.2.et", "g.3.et"};
    chakra_gen_t g = {.ranks = 4, .comm_type = CHAKRA_ALL_REDUCE, .bytes = 1000000, .compute_us = 100, .skew_us = 10,
                      .host_us = 5, .overlap = 1};
    for (int r = 0; r < 4; r++) {
        baton_err_t e = {0};
        cr_assert_eq(chakra_gen_rank(&g, r, &et[r], &e), 0, "%s", e.msg);
        cr_assert(et[r].nodes[4].deps[0] == 1 && et[r].nodes[6].ndeps == 3, "rank %d: send after the forward pass", r);
    }
    topo_t *t = th_load("tests/data/chakra/uniform4.yaml", NULL);
    replay_out_t alone, shared;
    replay_req_t q = {.algo = "ring", .proto = RUN_PROTO_AUTO, .alone = 1};
    baton_err_t e = {0};
    cr_assert_eq(replay_run(t, et, names, 4, &q, &alone, &e), 0, "%s", e.msg);
    q.alone = 0;
    cr_assert_eq(replay_run(t, et, names, 4, &q, &shared, &e), 0, "%s", e.msg);
    double ring = 2 * 3 * (A + 250000 * B);
    near(alone.step_s, 5e-6 + 130e-6 + ring + 100e-6 + 50e-6, "alone: host, the last forward, ring, backward, optimizer");
    cr_expect(shared.step_s > alone.step_s + A, "shared %.9g s, alone %.9g s", shared.step_s, alone.step_s);
    int k = 0;
    while (k < shared.ncomm - 1 && shared.comm[k].p2p) k++;      /* the all-reduce's kind */
    cr_expect(!shared.comm[k].p2p && shared.comm[k].shared_hi_s > shared.comm[k].each_s,
              "the all-reduce shared %.9g s against %.9g s alone", shared.comm[k].shared_hi_s, shared.comm[k].each_s);
    cr_expect(shared.settled, "settled in %d rounds", shared.rounds);
    replay_free(&alone);
    replay_free(&shared);
    topo_free(t);
    for (int r = 0; r < 4; r++) chakra_free(&et[r]);
}

/* A whole machine's collective whose joint-run form is more than 10 % from
 * its time alone is timed alone, and counted: on two MI300X nodes the
 * 64 MiB ring all-reduce is `baton sim`'s 540 us on NCCL's searched rings
 * and about 2.1 ms in a joint run's rank-order rings, so the walk's starts
 * would fall at the wrong places in it. The sends beside it still share
 * with each other. */
Test(replay_share, a_collective_whose_joint_form_differs_is_timed_alone) {
    static const char *names[16] = {"m.0.et", "m.1.et", "m.2.et", "m.3.et", "m.4.et", "m.5.et", "m.6.et", "m.7.et",
                                    "m.8.et", "m.9.et", "m.10.et", "m.11.et", "m.12.et", "m.13.et", "m.14.et", "m.15.et"};
    chakra_et_t et[16];
    chakra_gen_t g = {.ranks = 16, .comm_type = CHAKRA_ALL_REDUCE, .bytes = 64ull << 20, .compute_us = 100, .skew_us = 10,
                      .host_us = 5, .overlap = 1};
    for (int r = 0; r < 16; r++) {
        baton_err_t e = {0};
        cr_assert_eq(chakra_gen_rank(&g, r, &et[r], &e), 0, "%s", e.msg);
    }
    topo_t *t = th_load("topologies/cluster-mi300x.yaml", "nodes=2");
    replay_out_t o;
    replay_req_t q = {.algo = "nccl", .proto = RUN_PROTO_AUTO};
    baton_err_t e = {0};
    cr_assert_eq(replay_run(t, et, names, 16, &q, &o, &e), 0, "%s", e.msg);
    int k = 0;
    while (k < o.ncomm - 1 && o.comm[k].p2p) k++;
    cr_expect(!o.comm[k].p2p && o.comm[k].conc_s < 0, "the all-reduce's joint form was taken (%g s against %g alone)",
              o.comm[k].conc_s, o.comm[k].each_s);
    cr_expect_eq(o.comm[k].shared_hi_s, 0, "the all-reduce stays at its time alone");
    cr_expect_geq(o.apart, 1, "and is counted apart");
    cr_expect(o.settled, "settled");
    replay_free(&o);
    topo_free(t);
    for (int r = 0; r < 16; r++) chakra_free(&et[r]);
}
