/* test_tuner.c - the NCCL tuner plugin, without a GPU: the harness
 * (tests/tuner/harness.c) dlopen()s build/libnccl-tuner-baton.so as NCCL
 * does, looks up each interface version NCCL resolves, calls init,
 * getCollInfo with a cost table and finalize, and what the plugin sets must
 * be what `baton select --format nccl-tuner` says for that call. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

#define MAXQ 256

/* The plugin and the harness beside the binary under test. */
static void paths(char *plugin, char *harness, size_t n) {
    const char *bin = getenv("BATON_BIN") ? getenv("BATON_BIN") : "build/baton";
    const char *slash = strrchr(bin, '/');
    int d = slash ? (int)(slash - bin) : 1;
    snprintf(plugin, n, "%.*s/libnccl-tuner-baton.so", d, slash ? bin : ".");
    snprintf(harness, n, "%.*s/tuner_harness", d, slash ? bin : ".");
}

/* The sanitizer build has no plugin: an ASan library cannot be dlopen()ed
 * by a plain harness (make test-plain runs these). Says so and returns 1. */
static int sanitizer_build(void) {
    const char *bin = getenv("BATON_BIN");
    if (bin == NULL || strstr(bin, "san") == NULL) return 0;
    fprintf(stderr, "tuner: %s is the sanitizer build, without the plugin; make test-plain runs these\n", bin);
    return 1;
}

/* Run the harness: env, version, ranks, nodes, the queries; its output. */
static int harness(const char *env, int v, int ranks, int nodes, const char *queries, char **out) {
    char plugin[512], h[512], cmd[8192];
    paths(plugin, h, sizeof plugin);
    snprintf(cmd, sizeof cmd, "printf '%s' | %s %s %s %d %d %d 2>&1", queries, env, h, plugin, v, ranks, nodes);
    return th_sh(cmd, out);
}

/* Each row of select's tuner table (its first, last and a middle byte
 * count, below 1 TiB) as queries, and what each must get, in order. */
static int queries_from_select(const char *select_args, char *q, size_t qn, char want[][128]) {
    char *sel = NULL;
    cr_assert_eq(th_cli(select_args, &sel, 1), 0, "baton %s", select_args);
    int n = 0;
    size_t ql = 0;
    q[0] = '\0';
    for (char *save, *line = strtok_r(sel, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char coll[32], algo[32], proto[16];
        unsigned long long lo, hi;
        if (line[0] == '#' || sscanf(line, "%31[^,],%llu,%llu,%31[^,],%15[^,]", coll, &lo, &hi, algo, proto) != 5) continue;
        if (hi > (1ULL << 40)) hi = 1ULL << 40;
        unsigned long long at[3] = {lo, lo + (hi - lo) / 2, hi};
        for (int k = 0; k < 3 && n < MAXQ; k++, n++) {
            ql += (size_t)snprintf(q + ql, qn - ql, "%s %llu\\n", coll, at[k]);
            snprintf(want[n], 128, "%s %llu %s %s", coll, at[k], algo, proto);
        }
    }
    free(sel);
    cr_assert(n >= 6, "select gave %d rows' queries", n / 3);
    return n;
}

static void answers_as_select(const char *select_args, const char *env, int ranks, int nodes, const int *versions, int nv) {
    static char q[MAXQ * 48], want[MAXQ][128];
    int n = queries_from_select(select_args, q, sizeof q, want);
    for (int i = 0; i < nv; i++) {
        char *out = NULL;
        int rc = harness(env, versions[i], ranks, nodes, q, &out);
        cr_assert_eq(rc, 0, "v%d: %s", versions[i], out);
        cr_assert(strstr(out, "name baton\n"), "v%d: %s", versions[i], out);
        for (int k = 0; k < n; k++) {
            char line[160];
            snprintf(line, sizeof line, "%.127s 0\n", want[k]);        /* channels left to NCCL: select writes -1 */
            cr_expect(strstr(out, line), "v%d: wants '%s' in:\n%s", versions[i], want[k], out);
        }
        free(out);
    }
}

Test(tuner, every_version_answers_as_select_on_one_node) {
    if (sanitizer_build()) return;
    const int v[] = {2, 3, 4, 5, 6};
    answers_as_select("select -t hgx-h100 -c allreduce,allgather,reducescatter,broadcast,reduce --format nccl-tuner",
                      "BATON_TUNER_MACHINE=hgx-h100", 8, 1, v, 5);
}

Test(tuner, two_nodes_by_set_as_select) {
    if (sanitizer_build()) return;
    const int v[] = {6};
    answers_as_select("select -t cluster-h100 --set nodes=2 -c allreduce --format nccl-tuner",
                      "BATON_TUNER_MACHINE=cluster-h100 BATON_TUNER_SET=nodes=2", 16, 2, v, 1);
}

/* A table file as NCCL's example plugin reads it: the first row that fits
 * the call (collective, size, nodes, ranks) wins, its channels are set; a
 * pair NCCL marked unusable is left to NCCL. */
Test(tuner, table_file_rows_in_order_with_channels) {
    if (sanitizer_build()) return;
    char *out = NULL;
    const char *q = "allreduce 100\\nallreduce 65536\\nallgather 5\\nallreduce 2000000\\nallreduce 70000 ring ll128\\n";
    cr_assert_eq(harness("BATON_TUNER_FILE=tests/data/tuner/channels.conf", 6, 8, 1, q, &out), 0, "%s", out);
    cr_expect(strstr(out, "allreduce 100 ring ll 0\n"), "%s", out);          /* the tree row is for 2 nodes */
    cr_expect(strstr(out, "allreduce 65536 ring ll128 4\n"), "%s", out);
    cr_expect(strstr(out, "allgather 5 ring simple 6\n"), "%s", out);        /* pat's row is for 16 ranks */
    cr_expect(strstr(out, "allreduce 2000000 none none 0\n"), "%s", out);    /* no row: NCCL's own */
    cr_expect(strstr(out, "allreduce 70000 none none 0\n"), "%s", out);      /* marked unusable: NCCL's own */
    free(out);
    cr_assert_eq(harness("BATON_TUNER_FILE=tests/data/tuner/channels.conf", 2, 16, 2, "allreduce 100\\nallgather 5\\n", &out), 0, "%s", out);
    cr_expect(strstr(out, "allreduce 100 tree ll 2\n"), "%s", out);
    cr_expect(strstr(out, "allgather 5 pat simple 0\n"), "%s", out);
    free(out);
}

/* A table that does not read fails init with the reason (every
 * communicator would); a communicator of another size than the machine's
 * (a job's 4-rank tensor-parallel groups beside its 8-rank one, a split's
 * children) gets NCCL's own choices and a warning, where failing its init
 * failed the job's start. */
Test(tuner, bad_table_fails_init_and_another_size_is_left_to_nccl) {
    if (sanitizer_build()) return;
    char *out = NULL;
    cr_assert_eq(harness("BATON_TUNER_FILE=tests/data/tuner/bad.conf", 6, 8, 1, "", &out), 1, "%s", out);
    cr_expect(strstr(out, "tests/data/tuner/bad.conf:2: unknown algorithm"), "%s", out);
    free(out);
    cr_assert_eq(harness("BATON_TUNER_MACHINE=hgx-h100", 4, 16, 2, "allreduce 100\\n", &out), 0, "%s", out);
    cr_expect(strstr(out, "hgx-h100 has 8 ranks, the communicator 16: NCCL's own choices"), "%s", out);
    cr_expect(strstr(out, "allreduce 100 none none 0\n"), "%s", out);
    free(out);
    cr_assert_eq(harness("BATON_TUNER_MACHINE=hgx-h100", 4, 4, 1, "allreduce 100\\n", &out), 0, "%s", out);
    cr_expect(strstr(out, "allreduce 100 none none 0\n"), "4 of its 8 GPUs: NCCL's own: %s", out);
    free(out);
    cr_assert_eq(harness("BATON_TUNER_MACHINE=", 6, 8, 1, "allreduce 100\\n", &out), 0, "%s", out);   /* none: NCCL's own */
    cr_expect(strstr(out, "allreduce 100 none none 0\n"), "%s", out);
    free(out);
}
