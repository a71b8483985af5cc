/* test_replay.c - Chakra traces in (sim/replay/chakra.c, sim/replay/replay.c): the
 * shipped trace's time is the sum it implies on a uniform machine, worked
 * by hand from the closed forms; traces Google's encoder wrote read alike;
 * nodes never start before their dependencies end; a collective starts at
 * its last rank's arrival; the timeline is JSON whose slices nest per track;
 * truncated or garbled files give FILE: node N and never crash. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "helpers.h"
#include "../sim/replay/chakra_gen.h"
#include "../sim/replay/replay.h"
#include "../sim/answer/run.h"

#define DIR "tests/data/chakra/"

/* uniform4.yaml: alpha 1 us, beta 1 ns a byte, no protocols. */
#define A 1e-6
#define B 1e-9

static void read_all(const char *prefix, int n, chakra_et_t *et, const char **names, char (*buf)[256]) {
    for (int r = 0; r < n; r++) {
        snprintf(buf[r], 256, "%s.%d.et", prefix, r);
        names[r] = buf[r];
        baton_err_t e = {0};
        cr_assert_eq(chakra_read(buf[r], &et[r], &e), 0, "%s", e.msg);
    }
}

static void replay(topo_t *t, const chakra_et_t *et, const char **names, int n, const char *algo, replay_out_t *o) {
    replay_req_t q = {.algo = algo, .proto = RUN_PROTO_AUTO};
    baton_err_t e = {0};
    cr_assert_eq(replay_run(t, et, names, n, &q, o, &e), 0, "%s", e.msg);
}

static void near(double got, double want, const char *what) {
    cr_assert(fabs(got - want) <= 1e-12 + 1e-9 * want, "%s: %.12g s, the hand sum %.12g s", what, got, want);
}

/* The sum chakra_gen.h's trace implies: rank 0 waits for rank p-1's
 * longer forward pass, then all go together. */
Test(replay, shipped_trace_is_the_hand_sum_on_a_uniform_machine) {
    chakra_et_t et[4];
    const char *names[4];
    char buf[4][256];
    read_all(DIR "example", 4, et, names, buf);
    topo_t *t = th_load(DIR "uniform4.yaml", NULL);
    replay_out_t o;
    replay(t, et, names, 4, "ring", &o);
    double n = 1e6, p = 4;
    double ring = 2 * (p - 1) * (A + n / p * B);      /* ring all-reduce's closed form */
    double msg = A + n / p * B;                       /* a send of n/p bytes */
    double host = 5e-6, fwd_last = 100e-6 + 3 * 10e-6, bwd = 100e-6, opt = 50e-6;
    near(o.step_s, host + fwd_last + ring + bwd + msg + opt, "step");
    cr_expect_eq(o.critical, 0);
    const replay_rank_t *k = &o.rank[0];              /* rank 0: forward 100 us, then waits 30 us */
    near(k->compute_s, 100e-6 + bwd + opt, "compute");
    near(k->overhead_s, host, "overhead");
    near(k->wait_s, 30e-6, "waiting");
    near(k->transport_s, 30e-6 + ring + msg, "transport");
    near(k->compute_s + k->transport_s + k->overhead_s + k->idle_s, o.step_s, "the buckets' sum");
    near(o.rank[3].wait_s, 0, "the last to arrive waits for no one");
    cr_expect_eq(o.untimed, 0);
    cr_expect_eq(o.insts, 5, "the all-reduce and four send/recv pairs");
    cr_expect_eq(o.overlapped, 4, "the four pairs run at once; the all-reduce alone");
    replay_free(&o);
    for (int r = 0; r < 4; r++) chakra_free(&et[r]);
    topo_free(t);
}

/* protoc wrote these (tests/data/chakra/protoc/make.sh): fields baton never
 * writes (start time, inputs, double and list attributes, a metadata
 * node), comm_size as uint64, sint64 and fixed64, comm_tag -1 as int32 and
 * sfixed32, ids that start at 10, a group named "0" on two of the
 * machine's four ranks. The hand sum: rank 0's kernel 20 us, the send of
 * 1000 bytes, rank 1's kernel 7 us, the two-rank ring all-reduce of 2000. */
Test(replay, protoc_written_trace_reads_and_sums) {
    chakra_et_t et[2];
    const char *names[2];
    char buf[2][256];
    read_all(DIR "protoc/foreign", 2, et, names, buf);
    cr_assert_eq(et[0].n, 4);
    cr_expect_str_eq(et[0].version, "1.0.2-chakra.0.0.4");
    cr_expect_str_eq(et[0].nodes[0].name, "aten::mm");
    cr_expect_eq(et[0].nodes[0].duration_us, 20);
    cr_expect_eq(et[0].nodes[1].comm_tag, -1);
    cr_expect_eq(et[1].nodes[0].comm_tag, -1);
    cr_expect_eq(et[1].nodes[0].comm_size, 1000);
    cr_expect_eq(et[1].nodes[2].comm_size, 2000);
    cr_expect_str_eq(et[0].nodes[2].pg, "0");
    topo_t *t = th_load(DIR "uniform4.yaml", NULL);
    replay_out_t o;
    replay(t, et, names, 2, NULL, &o);
    double send = A + 1000 * B, ring2 = 2 * (A + 1000 * B);
    near(o.step_s, 20e-6 + send + 7e-6 + ring2, "step");
    near(o.rank[0].wait_s, 7e-6, "rank 0 waits for rank 1's kernel");
    cr_expect_eq(o.untimed, 1);
    cr_expect(o.insts == 2 && o.overlapped == 0, "one send, then one all-reduce: %llu, %llu overlapped",
              (unsigned long long)o.insts, (unsigned long long)o.overlapped);
    replay_free(&o);
    for (int r = 0; r < 2; r++) chakra_free(&et[r]);
    topo_free(t);
}

/* Traces of p ranks made in memory, replayed on a full mesh. */
static void generated(int p, uint64_t bytes, chakra_et_t *et, const char **names, char (*buf)[256]) {
    chakra_gen_t g = {.ranks = p, .comm_type = CHAKRA_ALL_REDUCE, .bytes = bytes, .compute_us = 40, .skew_us = 3, .host_us = 2};
    for (int r = 0; r < p; r++) {
        baton_err_t e = {0};
        cr_assert_eq(chakra_gen_rank(&g, r, &et[r], &e), 0, "%s", e.msg);
        snprintf(buf[r], 256, "gen.%d.et", r);
        names[r] = buf[r];
    }
}

static const replay_node_t *at(const replay_out_t *o, int r, uint32_t i) { return &o->node[o->offset[r] + i]; }

/* Every node starts at or after the end of each node it depends on, and a
 * rank's kernels never overlap; every rank's collective starts at once,
 * at the latest arrival. For 1, 2, 3, 5, 7 and 8 ranks. */
Test(replay, dependencies_and_arrivals_are_respected) {
    const int ps[] = {1, 2, 3, 5, 7, 8};
    for (int c = 0; c < 6; c++) {
        int p = ps[c];
        chakra_et_t et[8];
        const char *names[8];
        char buf[8][256];
        generated(p, 1 << 20, et, names, buf);
        topo_t *t = th_full(p, 10e9, 1e-6, 1, 0);
        replay_out_t o;
        replay(t, et, names, p, "ring", &o);
        double latest = 0, coll_start = -1;
        for (int r = 0; r < p; r++) {
            double kernel_end = 0;
            for (uint32_t i = 0; i < et[r].n; i++) {
                const chakra_node_t *nd = &et[r].nodes[i];
                const replay_node_t *x = at(&o, r, i);
                cr_assert(x->start_s >= x->ready_s && x->end_s >= x->start_s, "p=%d rank %d node %u", p, r, i);
                for (uint32_t d = 0; d < nd->ndeps; d++)
                    cr_assert(x->ready_s >= at(&o, r, (uint32_t)nd->deps[d])->end_s, "p=%d rank %d node %u before its dep", p, r, i);
                if (nd->type == CHAKRA_COMP && !nd->is_cpu_op) {
                    cr_assert(x->start_s >= kernel_end, "p=%d rank %d: kernels overlap", p, r);
                    kernel_end = x->end_s;
                }
                if (nd->type == CHAKRA_COLL) {
                    if (x->ready_s > latest) latest = x->ready_s;
                    if (coll_start < 0) coll_start = x->start_s;
                    cr_assert_eq(x->start_s, coll_start, "p=%d: rank %d starts the collective apart", p, r);
                }
            }
        }
        cr_expect_eq(coll_start, latest, "p=%d: the collective starts at the last arrival", p);
        cr_expect_eq(o.rank[p - 1].wait_s, 0, "p=%d: the last to arrive waits for no one", p);
        replay_free(&o);
        for (int r = 0; r < p; r++) chakra_free(&et[r]);
        topo_free(t);
    }
}

/* What baton writes reads back the same, a negative tag and a process
 * group included. */
Test(replay, written_then_read_is_the_same) {
    chakra_et_t et = {0}, back;
    uint64_t deps[3] = {1, 2, 3};
    chakra_node_t n = {.id = 9, .name = "x", .type = CHAKRA_SEND, .deps = deps, .ndeps = 3, .nctrl = 1, .duration_us = 77,
                       .comm_size = 1ull << 40, .comm_src = 0, .comm_dst = 5, .comm_tag = -3, .is_cpu_op = 1,
                       .has = CHAKRA_HAS_SIZE | CHAKRA_HAS_SRC | CHAKRA_HAS_DST | CHAKRA_HAS_TAG};
    snprintf(n.pg, sizeof n.pg, "tp-0");
    baton_err_t e = {0};
    cr_assert_eq(chakra_add(&et, &n, &e), 0);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cr_assert_eq(chakra_write(f, &et), 0);
    fclose(f);
    cr_assert_eq(chakra_decode((const uint8_t *)text, len, "mem", &back, &e), 0, "%s", e.msg);
    cr_assert_eq(back.n, 1);
    const chakra_node_t *b = &back.nodes[0];
    cr_expect(b->id == 9 && b->type == CHAKRA_SEND && b->ndeps == 3 && b->nctrl == 1 && b->deps[2] == 3);
    cr_expect(b->duration_us == 77 && b->comm_size == 1ull << 40 && b->comm_dst == 5 && b->comm_tag == -3 && b->is_cpu_op);
    cr_expect_str_eq(b->pg, "tp-0");
    cr_expect_str_eq(b->name, "x");
    free(text);
    chakra_free(&et);
    chakra_free(&back);
}

/* Every cut of a shipped file, and every byte of it turned to 0xff or 0x00,
 * either reads or says the file and where; never a crash or a read past
 * the end (the ASan build runs this too). A cut inside a node names it. */
Test(replay, truncated_or_garbled_files_name_file_and_node) {
    size_t len;
    char *raw = th_slurp(DIR "example.1.et");
    cr_assert_not_null(raw);
    FILE *f = fopen(DIR "example.1.et", "rb");
    fseek(f, 0, SEEK_END);
    len = (size_t)ftell(f);
    fclose(f);
    uint8_t *buf = malloc(len);
    int named = 0;
    for (size_t cut = 0; cut < len; cut++) {
        memcpy(buf, raw, cut);
        chakra_et_t et;
        baton_err_t e = {0};
        if (chakra_decode(buf, cut, "example.1.et", &et, &e) == 0) { chakra_free(&et); continue; }
        cr_assert(!strncmp(e.msg, "example.1.et: ", 14), "cut at %zu: %s", cut, e.msg);
        named += strstr(e.msg, ": node ") != NULL;
    }
    cr_expect_gt(named, 300, "cuts inside nodes name the node (%d of %zu)", named, len);
    for (size_t i = 0; i < len; i++)
        for (int v = 0; v < 2; v++) {
            memcpy(buf, raw, len);
            buf[i] = v ? 0xff : 0x00;
            chakra_et_t et;
            baton_err_t e = {0};
            if (chakra_decode(buf, len, "example.1.et", &et, &e) == 0) chakra_free(&et);
            else cr_assert(!strncmp(e.msg, "example.1.et: ", 14), "byte %zu = %d: %s", i, v ? 0xff : 0, e.msg);
        }
    free(buf);
    free(raw);
}

/* A trace wrong beyond its bytes: each error names the file and the node. */
static void says(const char *want, void (*spoil)(chakra_et_t *et)) {
    chakra_et_t et[4];
    const char *names[4];
    char buf[4][256];
    generated(4, 4000, et, names, buf);
    spoil(et);
    topo_t *t = th_load(DIR "uniform4.yaml", NULL);
    replay_out_t o;
    replay_req_t q = {.algo = "ring", .proto = RUN_PROTO_AUTO};
    baton_err_t e = {0};
    cr_expect_lt(replay_run(t, et, names, 4, &q, &o, &e), 0, "%s: replayed", want);
    cr_expect(strstr(e.msg, want) != NULL, "wanted '%s', got '%s'", want, e.msg);
    for (int r = 0; r < 4; r++) chakra_free(&et[r]);
    topo_free(t);
}
static void dup_id(chakra_et_t *et) { et[2].nodes[3].id = 1; }
static void missing_dep(chakra_et_t *et) { et[1].nodes[3].deps[0] = 99; }
static void bad_size(chakra_et_t *et) { et[3].nodes[2].comm_size = 8; }
static void lost_recv(chakra_et_t *et) { et[1].nodes[5].comm_tag = 4; }
static void cycle(chakra_et_t *et) { et[0].nodes[0].deps = realloc(et[0].nodes[0].deps, 8), et[0].nodes[0].deps[0] = 6, et[0].nodes[0].ndeps = 1; }
static void gather(chakra_et_t *et) { for (int r = 0; r < 4; r++) et[r].nodes[2].comm_type = CHAKRA_GATHER; }
static void self_send(chakra_et_t *et) { et[2].nodes[4].comm_dst = 2; }
static void deadlock(chakra_et_t *et) { et[1].nodes[5].deps[0] = 1, et[1].nodes[2].deps[0] = 5; }  /* recv, then all-reduce */
static void odd_kind(chakra_et_t *et) { et[1].nodes[1].type = 99; }          /* the forward pass, 43 us */
static void no_kind(chakra_et_t *et) { et[2].nodes[3].type = CHAKRA_INVALID; }  /* the backward pass */
static void forever(chakra_et_t *et) { et[0].nodes[1].duration_us = UINT64_MAX; }
static void recv_size(chakra_et_t *et) { et[1].nodes[5].comm_size = 8; }
static void twice(chakra_et_t *et) {
    et[3].nodes[3].type = CHAKRA_COLL;            /* the backward pass becomes a second all-reduce */
    et[3].nodes[3].comm_type = CHAKRA_ALL_REDUCE;
    et[3].nodes[3].comm_size = 4000;
    et[3].nodes[3].has |= CHAKRA_HAS_TYPE | CHAKRA_HAS_SIZE;
}

Test(replay, wrong_traces_name_file_and_node) {
    says("gen.2.et: node 3: id 1 again (node 1 has it)", dup_id);
    says("gen.1.et: node 3: depends on id 99, which no node of the file has", missing_dep);
    says("gen.3.et: node 2: collective 0 of its process group: all-reduce of 8 bytes here, all-reduce of 4000 bytes in gen.0.et", bad_size);
    says("rank 0 sends 1 message to rank 1 with tag 0, which posts 0 receives", lost_recv);
    says("gen.0.et: node 0: its dependencies form a cycle, or wait on one", cycle);
    says("gen.0.et: node 2: gather: baton has no such collective", gather);
    says("gen.2.et: node 4: a send to or from its own rank", self_send);
    says("gen.0.et: node 2: its all-reduce waits for ranks of its process group ('') that never reach it", deadlock);
    says("gen.3.et: process group '': 2 collectives, but gen.0.et has 1: the ranks disagree", twice);
    says("gen.1.et: node 1: node type 99, none of Chakra's NodeTypes (1-7), takes 43 us", odd_kind);
    says("gen.2.et: node 3: INVALID_NODE, none of Chakra's NodeTypes (1-7), takes 40 us", no_kind);
    says("gen.0.et: node 1: a duration of 18446744073709551615 us (duration_micros), more than 10^12 us", forever);
    says("gen.1.et: node 5: a receive of 8 bytes paired with a send of 1000 bytes (gen.0.et, node 4)", recv_size);
}

/* What a new-user sweep found: an empty all-reduce (comm_size 0 on every
 * rank) takes nothing, as NCCL discards it without a launch (sim refuses
 * one; replay had timed it at the row's latency); a JSON file is said to be
 * JSON, not a Chakra trace whose metadata is cut short. */
Test(replay, an_empty_collective_is_free_and_json_is_named) {
    chakra_et_t et[4];
    const char *names[4];
    char buf[4][256];
    generated(4, 0, et, names, buf);
    topo_t *t = th_load(DIR "uniform4.yaml", NULL);
    replay_out_t o;
    replay_req_t q = {.algo = "ring", .proto = RUN_PROTO_AUTO};
    baton_err_t e = {0};
    cr_assert_eq(replay_run(t, et, names, 4, &q, &o, &e), 0, "%s", e.msg);
    int colls = 0;
    for (int i = 0; i < o.ncomm; i++)
        if (!o.comm[i].p2p) {
            colls++;
            cr_expect_eq(o.comm[i].each_s, 0, "an empty all-reduce takes %g s", o.comm[i].each_s);
            cr_expect_str_eq(o.comm[i].algo, "empty");
        }
    cr_expect_eq(colls, 1);
    replay_free(&o);
    for (int r = 0; r < 4; r++) chakra_free(&et[r]);
    topo_free(t);
    const char *json = "{\n  \"schema\": \"1.0.3-chakra.0.0.4\", \"nodes\": []\n}\n";
    chakra_et_t j;
    cr_expect_lt(chakra_decode((const uint8_t *)json, strlen(json), "trace.0.json", &j, &e), 0);
    cr_expect(strstr(e.msg, "trace.0.json: JSON, not a Chakra execution trace") != NULL, "%s", e.msg);
}

/* The timeline: valid JSON, a slice per node plus one per wait, names for
 * every track, and on each track slices that nest or are apart (what
 * Perfetto's importer needs of complete events on one thread). */
Test(replay, timeline_is_perfetto_json_whose_slices_nest) {
    chakra_et_t et[4];
    const char *names[4];
    char buf[4][256];
    read_all(DIR "example", 4, et, names, buf);
    topo_t *t = th_load(DIR "uniform4.yaml", NULL);
    replay_out_t o;
    replay(t, et, names, 4, "ring", &o);
    char *js = replay_trace_json(&o);
    cJSON *j = cJSON_Parse(js);
    cr_assert_not_null(j, "not JSON");
    cJSON *ev = cJSON_GetObjectItem(j, "traceEvents"), *x;
    int slices = 0, meta = 0, waits = 0;
    double s[64][3];                        /* pid, tid, ts, dur of each slice */
    int ns = 0;
    cJSON_ArrayForEach(x, ev) {
        const char *ph = cJSON_GetObjectItem(x, "ph")->valuestring;
        if (!strcmp(ph, "M")) { meta++; continue; }
        cr_assert_str_eq(ph, "X");
        slices++;
        waits += !strcmp(cJSON_GetObjectItem(x, "cat")->valuestring, "wait");
        cr_assert_lt(ns, 64);
        s[ns][0] = cJSON_GetObjectItem(x, "pid")->valuedouble * 100 + cJSON_GetObjectItem(x, "tid")->valuedouble;
        s[ns][1] = cJSON_GetObjectItem(x, "ts")->valuedouble;
        s[ns][2] = s[ns][1] + cJSON_GetObjectItem(x, "dur")->valuedouble;
        ns++;
    }
    cr_expect_eq(slices, 4 * 7 + 3, "a slice per node, and rank 0..2's waits");
    cr_expect_eq(waits, 3);
    cr_expect_eq(meta, 4 * 6, "per rank: its name, order, and kernels, host and two communication tracks");
    for (int a = 0; a < ns; a++)
        for (int b = 0; b < ns; b++) {
            if (a == b || s[a][0] != s[b][0]) continue;
            int apart = s[a][2] <= s[b][1] || s[b][2] <= s[a][1];
            int nested = (s[a][1] >= s[b][1] && s[a][2] <= s[b][2]) || (s[b][1] >= s[a][1] && s[b][2] <= s[a][2]);
            cr_assert(apart || nested, "track %g: [%g, %g] and [%g, %g] overlap", s[a][0], s[a][1], s[a][2], s[b][1], s[b][2]);
        }
    cJSON_Delete(j);
    free(js);
    replay_free(&o);
    for (int r = 0; r < 4; r++) chakra_free(&et[r]);
    topo_free(t);
}

/* The command: the shipped trace (files in any order: their names say the
 * ranks), its JSON, and the generator writing it again byte for byte. */
Test(replay, command_line) {
    th_says("replay -t " DIR "uniform4.yaml -a ring " DIR "example.3.et " DIR "example.1.et " DIR "example.0.et " DIR
            "example.2.et",
            0, "step        2.042 ms (rank 0 ends last)", 1);
    cJSON *j = th_cli_json("replay -t " DIR "uniform4.yaml -a ring --json " DIR "example.0.et " DIR "example.1.et " DIR
                           "example.2.et " DIR "example.3.et");
    near(th_jnum(j, "step_s"), 2042e-6, "--json step_s");
    cr_expect(cJSON_IsNull(cJSON_GetObjectItem(j, "memory_s")), "memory: the trace cannot say");
    cJSON_Delete(j);
    char *out = NULL;
    int rc = th_sh("d=$(mktemp -d) && " "${BATON_BIN:-build/baton} export --chakra -c allreduce -s 1MB -p 4 -o $d --name example"
                   " >/dev/null && for r in 0 1 2 3; do cmp $d/example.$r.et " DIR "example.$r.et || exit 1; done; rm -r $d",
                   &out);
    cr_expect_eq(rc, 0, "the generator no longer writes the shipped trace: %s", out);
    free(out);
    th_says("replay -t " DIR "uniform4.yaml " DIR "example.0.et " DIR "example.0.et", 2, "both say rank 0", 1);
    th_says("replay -t " DIR "uniform4.yaml " DIR "example.5.et", 2, "says rank 5, but there is only 1 file", 1);
    th_says("replay -t " DIR "uniform4.yaml " DIR "example.0.et", 1, "example.0.et: node 4: a send with rank 1, but the trace has ranks 0..0", 1);
    th_says("replay -t hgx-h100 " DIR "uniform4.yaml", 1, "uniform4.yaml: metadata:", 1);
    th_says("export --chakra -c allreduce -p 4", 2, "--chakra needs -c COLLECTIVE, -p RANKS and -o DIR", 1);
    /* a trace's files all or none: rank 2's place taken by a directory leaves no rank's file */
    rc = th_sh("d=$(mktemp -d) && mkdir $d/t.2.et && ! ${BATON_BIN:-build/baton} export --chakra -c allreduce -s 1MB -p 4"
               " -o $d --name t 2>$d/err && grep -q 't.2.et: cannot write: Is a directory (no file of the trace written)' $d/err"
               " && test \"$(ls $d | tr '\\n' ' ')\" = 'err t.2.et ' ; s=$?; rm -r $d; exit $s", &out);
    cr_expect_eq(rc, 0, "a partial trace was left: %s", out);
    free(out);
    th_says("export --msccl -c allreduce -a ring -p 4 --overlap", 2, "--overlap is --chakra's", 1);
}
