/* test_doctor.c - baton expect and baton doctor (validate/expect.h, validate/doctor.h).
 *
 * The sick logs are baton's own: `expect --cause ID=V --format nccl-tests`
 * on a shipped machine; doctor, given the healthy machine and nothing else,
 * must name that cause first (or, where the change gives the very same
 * times as another, tied first with it) at the value it was made with. The
 * real logs are validate/logs' (MANIFEST): those that ran at their hardware
 * are called healthy, those marked "below:" get a verdict and a cause. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../validate/doctor.h"
#include "../validate/expect.h"
#include "helpers.h"

/* `baton expect MACHINE --cause CAUSE --format nccl-tests` into a new temporary file (its path, malloc'd). */
static char *sick_log_of(const char *machine, const char *cause, const char *coll) {
    char path[] = "/tmp/baton_doctor_XXXXXX", cmd[1024], *out = NULL;
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    close(fd);
    const char *bin = getenv("BATON_BIN");
    snprintf(cmd, sizeof cmd, "%s expect %s %s%s %s%s --format nccl-tests 2>&1 > %s",   /* notes into out, not the tests' output */
             bin ? bin : "build/baton", machine, cause ? "--cause " : "", cause ? cause : "", coll ? "-c " : "",
             coll ? coll : "", path);
    cr_assert_eq(th_sh(cmd, &out), 0, "%s: %s", cmd, out ? out : "");
    free(out);
    return strdup(path);
}

static char *sick_log(const char *machine, const char *cause) { return sick_log_of(machine, cause, NULL); }

static cJSON *doctor(const char *machine, const char *log) {
    char args[1024];
    snprintf(args, sizeof args, "doctor %s --json --nccl-tests %s", machine, log);
    return th_cli_json(args);
}

static const char *str(cJSON *j, const char *k) {
    cJSON *x = cJSON_GetObjectItemCaseSensitive(j, k);
    cr_assert(cJSON_IsString(x), "no string %s", k);
    return x->valuestring;
}

static cJSON *cause_at(cJSON *j, int i) {
    cJSON *c = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "causes"), i);
    cr_assert_not_null(c, "no cause %d", i);
    return c;
}

typedef struct {
    const char *machine, *cause, *id, *tied;   /* tied: the cause whose times are alike (NULL: none) */
    const char *coll;                          /* the log's collective (NULL: all-reduce) */
} sick_t;

#define H100 "-t cluster-h100 --set nodes=2"
#define A100 "-t cluster-a100 --set nodes=2"
/* Every cause of doctor's table on a shipped machine where it applies.
 * Where two causes give the
 * same times (or within DOC_TIE_PTS), the tie is the physics of a log of
 * times, printed as a group with what tells them apart: */
static const sick_t sick[] = {
    {H100, "nics=4", "nics", NULL, NULL},
    {H100, "nics=1", "nics", NULL, NULL},
    {H100, "nvlink=9", "nvlink", NULL, NULL},
    {H100, "nvls", "nvls", NULL, NULL},
    {H100, "algo=Ring", "algo", NULL, NULL},
    {H100, "proto=LL", "proto", NULL, NULL},
    {H100, "slowgpu=0.5", "slowgpu", NULL, NULL},
    {A100, "channels=2", "channels", NULL, NULL},
    {A100, "channels=4", "channels", NULL, NULL},
    {"-t hgx-h100", "nvlink=12", "nvlink", NULL, NULL},
    {"-t hgx-h100", "algo=Ring", "algo", NULL, NULL},
    /* GDR off goes through each GPU's host (gdr: false): its switch's uplink
     * carries a byte's GPU write and NIC read, and PXN goes: not PCIe at half */
    {A100, "gdr", "gdr", NULL, NULL},
    {"-t cluster-b200 --set nodes=2", "gdr", "gdr", NULL, NULL},
    /* on four nodes NCCL's tree tells one slow node from a capped network */
    {"-t cluster-a100 --set nodes=4", "slownode=0.5", "slownode", NULL, NULL},
    /* two nodes: every byte that crosses the network crosses node 0's NICs */
    {H100, "netcap=0.5", "netcap", "slownode", NULL},
    {H100, "slownode=0.5", "slownode", "netcap", NULL},
    {A100, "netcap=0.5", "netcap", "slownode", NULL},
    {A100, "slownode=0.5", "slownode", "netcap", NULL},
    /* a slow network and a slow GPU-NIC path: the network's rate at 0.65 of
     * HDR's 25 is one GPU-NIC path at 15.75 GB/s */
    {A100, "pcie=0.5", "pcie", "netcap", NULL},
    /* NCCL's socket transport (a TCP stream's cap, its stacks' latency, the
     * proxy thread's messages in turn) is no longer a slow link: apart */
    {A100, "pcie=0.25", "pcie", NULL, NULL},
    {A100, "pcie=0.125", "pcie", NULL, NULL},
    {A100, "socket=4/5", "socket", NULL, NULL},
    {A100, "socket=8/2.5", "socket", NULL, NULL},
    /* PXN off sends across rails through the spines: seen where they are
     * oversubscribed and the traffic crosses rails (an all-to-all); an
     * all-reduce's rings stay on their rails (a_healthy_log_is_healthy) */
    {"-t cluster-h100 --set nodes=16 --set oversubscription=4", "pxn", "pxn", NULL, "alltoall"},
};

/* Cause id in the log's tie group (its entry in causes[], NULL if not there). */
static cJSON *in_tie(cJSON *j, const char *id) {
    cJSON *g = cJSON_GetObjectItemCaseSensitive(j, "tie_group"), *x;
    cJSON_ArrayForEach(x, g) if (!strcmp(str(x, "id"), id)) {
        cr_expect(strlen(str(x, "tell")) > 20, "%s: what tells it apart", id);
        for (int i = 0; i < cJSON_GetArraySize(g); i++)
            if (!strcmp(str(cause_at(j, i), "id"), id)) return cause_at(j, i);
    }
    return NULL;
}

Test(doctor, each_cause_is_named_first_blind_at_its_value) {
    for (size_t i = 0; i < sizeof sick / sizeof sick[0]; i++) {
        const sick_t *x = &sick[i];
        char *log = sick_log_of(x->machine, x->cause, x->coll), want[64];
        cJSON *j = doctor(x->machine, log);
        cr_expect_str_eq(str(j, "verdict"), "below", "%s --cause %s", x->machine, x->cause);
        snprintf(want, sizeof want, "--cause %s", x->cause);
        cJSON *first = cause_at(j, 0);
        if (x->tied == NULL) {
            cr_expect_str_eq(str(first, "id"), x->id, "%s --cause %s: first %s", x->machine, x->cause, str(first, "id"));
            cr_expect_str_eq(str(first, "expect"), want, "%s: the value it implies", x->cause);
            cr_expect(th_jnum(first, "mape_pct") < 0.5, "%s: a cause made this way fits its own log", x->cause);
        } else {                  /* the tie group first, the cause in it at its value, the group printed */
            cJSON *c = in_tie(j, x->id), *o = in_tie(j, x->tied);
            cr_expect(c != NULL && o != NULL, "%s %s: %s and %s tied first (first %s)", x->machine, x->cause, x->id,
                      x->tied, str(first, "id"));
            if (c) cr_expect_str_eq(str(c, "expect"), want, "%s: the value it implies", x->cause);
            cr_expect(th_jnum(first, "mape_pct") < 0.5, "%s", x->cause);
        }
        cJSON_Delete(j);
        unlink(log);
        free(log);
    }
}

/* The text says the tie and what tells its causes apart. */
Test(doctor, a_tie_is_printed_with_what_tells_it_apart) {
    char *log = sick_log(A100, "slownode=0.5"), args[512];
    snprintf(args, sizeof args, "doctor " A100 " --nccl-tests %s", log);
    th_says(args, 0, "a tie: netcap and slownode fit the times alike", 1);
    th_says(args, 0, "    slownode: nccl-tests between pairs of nodes: slow only on the pairs with the one node", 1);
    unlink(log);
    free(log);
}

/* The log's NCCL_DEBUG=INFO lines break the tie the times cannot: a
 * connection "via NET/IB/0/GDRDMA" says GPUDirect ran, so a half-rate GPU-NIC
 * path is the PCIe; one without it says it did not. */
static void with_info(const char *log, const char *line) {
    char cmd[1024], *out = NULL;
    snprintf(cmd, sizeof cmd, "sed -i '3a %s' %s", line, log);
    cr_assert_eq(th_sh(cmd, &out), 0);
    free(out);
}

/* doctor's report on machine's log made sick by cause, with one INFO line added. */
static cJSON *doctor_told(const char *machine, const char *cause, const char *info) {
    char *log = sick_log(machine, cause);
    with_info(log, info);
    cJSON *j = doctor(machine, log);
    unlink(log);
    free(log);
    return j;
}

Test(doctor, info_lines_break_a_tie_and_are_named) {
    const char *gdr = "host:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA";
    const char *staged = "host:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0";
    /* pcie at 1/8; "Using network IB" says the socket transport did not run: last */
    cJSON *j = doctor_told(A100, "pcie=0.125", "host:1:2 [0] NCCL INFO Using network IB");
    cr_expect_str_eq(str(cause_at(j, 0), "id"), "pcie");
    int n = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "causes"));
    cJSON *last = cause_at(j, n - 1);                  /* what the log says did not happen: last */
    cr_expect_str_eq(str(last, "id"), "socket");
    cr_expect_eq(th_jnum(last, "said"), -1, "the log says IB ran");
    cr_expect(strstr(str(last, "evidence"), "Using network IB") != NULL);
    cJSON_Delete(j);
    /* a GDRDMA connection: GPUDirect ran; gdr, if tried at all, last */
    j = doctor_told(A100, "pcie=0.5", gdr);
    cr_expect_str_eq(str(cause_at(j, 0), "id"), "pcie");
    n = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "causes"));
    for (int i = 0; i < n; i++)
        if (!strcmp(str(cause_at(j, i), "id"), "gdr")) cr_expect(i == n - 1 && th_jnum(cause_at(j, i), "said") == -1);
    cJSON_Delete(j);
    j = doctor_told(A100, "gdr", staged);
    cr_expect_str_eq(str(cause_at(j, 0), "id"), "gdr");
    cr_expect_eq(th_jnum(cause_at(j, 0), "said"), 1);
    cJSON_Delete(j);
}

Test(doctor, socket_transport_said_by_the_log) {
    cJSON *j = doctor_told(A100, "socket=4", "host:1:2 [0] NCCL INFO Using network Socket");
    cr_expect_str_eq(str(cause_at(j, 0), "id"), "socket");
    cr_expect_eq(th_jnum(cause_at(j, 0), "said"), 1);
    cJSON_Delete(j);
}

/* A healthy machine's own rows are healthy, with nothing to blame; so are
 * changes the collective's times do not show (PXN off on a rail-optimized
 * fat-tree: the rings stay on their rails). */
Test(doctor, a_healthy_log_is_healthy) {
    const char *m[] = {H100, A100, "-t hgx-h100", "-t pcie-2gpu --set p2p=false", "-t mi300x"};
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) {
        char *log = sick_log(m[i], NULL);
        cJSON *j = doctor(m[i], log);
        cr_expect_str_eq(str(j, "verdict"), "healthy", "%s", m[i]);
        cr_expect(fabs(th_jnum(j, "shortfall_pct")) < 0.01, "%s: its own rows", m[i]);
        cr_expect_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "causes")), 0);
        cr_expect(!strncmp(str(cJSON_GetObjectItemCaseSensitive(j, "band"), "source"), "uncalibrated: ", 14),
                  "%s: the band says where it is from", m[i]);
        cJSON_Delete(j);
        unlink(log);
        free(log);
    }
    /* PXN off: the rings stay on their rails and the fabric has full
     * bisection; doctor says it cannot be seen (pxn_unseen) */
    const char *pxn[] = {H100, A100, "-t cluster-b200 --set nodes=2"};
    for (size_t i = 0; i < sizeof pxn / sizeof pxn[0]; i++) {
        char *log = sick_log(pxn[i], "pxn");
        cJSON *j = doctor(pxn[i], log);
        cr_expect_str_eq(str(j, "verdict"), "healthy", "%s", pxn[i]);
        cr_expect(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "pxn_unseen")), "%s: PXN cannot be seen", pxn[i]);
        cJSON_Delete(j);
        unlink(log);
        free(log);
    }
    cJSON *j = doctor("-t hgx-h100", "validate/logs/nccl-tests/a100x8_nvswitch_oci_bmgpu48_allreduce.txt");
    cr_expect(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(j, "pxn_unseen")), "one node: no PXN to turn off");
    cJSON_Delete(j);
}

/* Logs a and b hold the same rows (their # lines aside). */
static void expect_same_rows(const char *a, const char *b, const char *what) {
    char cmd[1024], *out = NULL;
    snprintf(cmd, sizeof cmd, "diff %s %s | grep -v '^[<>] #' | grep '^[<>]' && exit 1; exit 0", a, b);
    cr_expect_eq(th_sh(cmd, &out), 0, "%s: %s", what, out);
    free(out);
}

/* Run a shell command that must succeed. */
static void sh_ok(const char *cmd) {
    char *out = NULL;
    cr_assert_eq(th_sh(cmd, &out), 0, "%s", cmd);
    free(out);
}

/* GDR off is one mechanism wherever it is said: --cause gdr, --set
 * gdr=false, a file's nccl_env NCCL_NET_GDR_LEVEL=LOC give the same times;
 * PIX keeps GDR; a file whose GPUs have no NIC beside them says so. */
Test(expect, gdr_off_is_one_knob) {
    char *a = sick_log(A100, "gdr"), *b = sick_log(A100 " --set gdr=false", NULL), cmd[1024];
    expect_same_rows(a, b, "--cause gdr against --set gdr=false");
    const char *yaml = "/tmp/baton_doctor_gdr.yaml";
    snprintf(cmd, sizeof cmd, "cp topologies/cluster-a100.yaml %s && echo 'nccl_env: {NCCL_NET_GDR_LEVEL: LOC}' >> %s", yaml, yaml);
    sh_ok(cmd);
    char *c = sick_log("-t /tmp/baton_doctor_gdr.yaml --set nodes=2", NULL);
    expect_same_rows(b, c, "LOC");
    snprintf(cmd, sizeof cmd, "sed -i 's/LOC}/PIX}/' %s", yaml);
    sh_ok(cmd);
    char *d = sick_log("-t /tmp/baton_doctor_gdr.yaml --set nodes=2", NULL), *h = sick_log(A100, NULL);
    expect_same_rows(d, h, "PIX");
    snprintf(cmd, sizeof cmd, "sed -i 's/PIX}/BAD}/' %s", yaml);
    sh_ok(cmd);
    th_says("topo /tmp/baton_doctor_gdr.yaml", 1, "NCCL_NET_GDR_LEVEL 'BAD'", 1);
    th_says("topo cluster-p4d --set gdr=false", 1, "gdr: false needs a GPU with a NIC or a CPU beside it", 1);
    char *logs[] = {a, b, c, d, h};
    for (int i = 0; i < 5; i++) unlink(logs[i]), free(logs[i]);
    unlink(yaml);
}

/* Every MANIFEST log with a machine: `below:` ones get a verdict below and
 * at least one ranked cause; the others are healthy, or where the band's
 * low edge is wider than 30 % (Polaris's libfabric logs, GB200 beyond two
 * racks) "cannot_tell", never healthy. No log is excepted:
 * the GKE pairs of one GPU and one NIC a node are marked below by what
 * their NICs carry against a healthy one-NIC log's (MANIFEST), not by
 * baton's model; Polaris's by its own fidelity bands (doctor.md). */
Test(doctor, shipped_logs_healthy_or_below_as_marked) {
    FILE *f = fopen("validate/logs/MANIFEST", "r");
    char line[2048];
    int healthy = 0, below = 0, unsure = 0;
    cr_assert_not_null(f);
    while (fgets(line, sizeof line, f)) {
        char log[512], machine[64], sets[256], args[1024];
        int ranks, used;
        if (line[0] == '#' || sscanf(line, "%511s %63s %d %255s %n", log, machine, &ranks, sets, &used) < 4) continue;
        if (!strcmp(machine, "-")) continue;
        int marked = !strncmp(line + used, "below:", 6);
        int k = snprintf(args, sizeof args, "doctor -t %s --json --nccl-tests validate/logs/%s", machine, log);
        for (char *s = strcmp(sets, "-") ? strtok(sets, ",") : NULL; s; s = strtok(NULL, ","))
            k += snprintf(args + k, sizeof args - (size_t)k, " --set %s", s);
        cJSON *j = th_cli_json(args);
        if (marked) {
            cr_expect_str_eq(str(j, "verdict"), "below", "%s", log);
            cr_expect(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "causes")) >= 1, "%s: a ranked cause", log);
            below++;
        } else {
            double edge = th_jnum(cJSON_GetObjectItemCaseSensitive(j, "band"), "large_low_pct");
            cr_expect_str_eq(str(j, "verdict"), edge < -DOC_WIDEST_BAND ? "cannot_tell" : "healthy", "%s: shortfall %.1f %%, "
                             "band edge %.0f %%", log, th_jnum(j, "shortfall_pct"), edge);
            healthy += edge >= -DOC_WIDEST_BAND, unsure += edge < -DOC_WIDEST_BAND;
        }
        cJSON_Delete(j);
    }
    fclose(f);
    cr_expect(healthy >= 17 && below >= 6 && unsure >= 10, "%d healthy, %d below, %d cannot tell: MANIFEST read", healthy,
              below, unsure);
}

Test(doctor, the_socket_log_is_read_as_the_socket_transport) {
    cJSON *j = th_cli_json("doctor -t cluster-pcie --set gpus=1 --set sockets=1 --set group_size=1 --set nic_bw=181Gb/s "
                           "--json --nccl-tests validate/logs/nccl-tests-extra/l40sx2_2node_tcpsocket_schmaustech_allreduce.txt");
    cr_expect_str_eq(str(cause_at(j, 0), "id"), "socket");
    cr_expect(th_jnum(j, "shortfall_pct") > 50);
    cJSON_Delete(j);
}

Test(doctor, fail_below_exits_3_for_health_checks) {
    char *log = sick_log(H100, "nics=4"), args[512], *out = NULL;
    snprintf(args, sizeof args, "doctor " H100 " --fail-below 10 --nccl-tests %s", log);
    cr_expect_eq(th_cli(args, &out, 0), 3);
    cr_expect(strstr(out, "--fail-below") != NULL, "%s", out);
    free(out);
    snprintf(args, sizeof args, "doctor " H100 " --fail-below 90 --nccl-tests %s", log);
    cr_expect_eq(th_cli(args, &out, 0), 0, "a 31 %% shortfall is not 90 %% below the band");
    free(out);
    unlink(log);
    free(log);
}

Test(doctor, bad_input_is_named) {
    /* a log of another rank count: an error naming both */
    th_says("doctor -t hgx-h100 --nccl-tests validate/logs/nccl-tests/a100x16_2node_oci_roce_allreduce.txt", 1,
            "ran on 16 ranks; hgx-h100 has 8", 1);
    /* another GPU: a warning */
    th_says("doctor -t hgx-h100 --nccl-tests validate/logs/nccl-tests/a100x8_nvswitch_oci_bmgpu48_allreduce.txt", 0,
            "ran on NVIDIA A100-SXM4-40GB (ampere); hgx-h100's GPU is h100-sxm (hopper)", 1);
    /* cut short: its header promises larger sizes, no footer */
    char *log = sick_log(H100, NULL), cmd[512], *out = NULL;
    snprintf(cmd, sizeof cmd, "sed -i '/^ *67108864 /,$d' %s", log);
    cr_assert_eq(th_sh(cmd, &out), 0);
    free(out);
    snprintf(cmd, sizeof cmd, "doctor " H100 " --nccl-tests %s", log);
    th_says(cmd, 0, "cut short?", 1);
    unlink(log);
    free(log);
    th_says("doctor -t hgx-h100 --nccl-tests /nonexistent.txt", 1, "/nonexistent.txt", 1);
    th_says("doctor -t hgx-h100 --fail-below x --nccl-tests a", 2, "--fail-below PCT", 1);
    /* a rack's log of 8 ranks (said by NCCL's "nranks 8" lines) against the whole rack: which knob sizes it */
    th_says("doctor -t gb200-nvl72 --nccl-tests validate/logs/nccl-tests-2026/GB200x8_2trays-MNNVL-IMEX_oci-hpc-oke-README_"
            "all_reduce.txt", 1, "ran on 8 ranks; gb200-nvl72 has 72: not a log of this machine (size it to the log's: "
            "--set racks=N or --set trays=N)", 1);
}

/* A machine whose file measures baton's error on its own logs (polaris's
 * fidelity:) is judged by that band, not its kind's. The libfabric
 * all-reduce runs at the NIC rate the file has (read off these logs): 1.3 %
 * below, within the band of 11 %: healthy, exit 0 under --fail-below. The
 * all-to-all, 41 % under baton at its top, is not below (a health check must
 * not drain it), but within a band of 58 % doctor cannot tell (exit 4: neither
 * pass nor drain), and the band says whose error it is; the socket
 * transport's band is its own (the 128-node socket all-reduce, a third of
 * the 2- and 8-node rate, stays below). */
Test(doctor, a_machines_own_logs_set_its_band) {
    char *out = NULL;
    const char *ar = "validate/logs/nccl-tests-scale/polaris_nccl_2_18_n2_all_reduce_setup4.txt";
    const char *log = "validate/logs/nccl-tests-scale/polaris_nccl_2_18_n2_alltoall_setup4.txt";
    char args[512];
    snprintf(args, sizeof args, "doctor -t polaris --set nodes=2 --set nccl_version=2.18 --fail-below 10 --nccl-tests %s", ar);
    cr_expect_eq(th_cli(args, &out, 1), 0, "%s", out);
    cr_expect(strstr(out, "verdict: healthy: busbw at >= 8 MiB is 1.3 % below the machine's") != NULL, "%s", out);
    cr_expect(strstr(out, "the band's low edge -11.0 %") != NULL, "%s", out);
    free(out);
    snprintf(args, sizeof args, "doctor -t polaris --set nodes=2 --set nccl_version=2.18 --fail-below 10 -c alltoall "
             "--nccl-tests %s", log);
    cr_expect_eq(th_cli(args, &out, 1), 4, "%s", out);
    cr_expect(strstr(out, "verdict: cannot tell: busbw at >= 16 MiB is 41.3 % below the machine's") != NULL, "%s", out);
    cr_expect(strstr(out, "band: uncalibrated: baton's measured error on the logs polaris's file names (Polaris's 23 logs") != NULL, "%s", out);
    cr_expect(strstr(out, "+-58 % at a log's largest sizes") != NULL, "%s", out);
    free(out);
    snprintf(args, sizeof args, "doctor -t polaris --set nodes=2 --set nccl_version=2.18 -c alltoall --json --nccl-tests %s", log);
    cJSON *j = th_cli_json(args);
    cJSON *band = cJSON_GetObjectItemCaseSensitive(j, "band");
    cr_expect_str_eq(str(band, "kind"), "this machine's own logs");
    cJSON_Delete(j);
    j = th_cli_json("doctor -t polaris --set nodes=128 --set socket=true --set nccl_version=2.18 --json --nccl-tests "
                    "validate/logs/nccl-tests-scale/polaris_nccl_2_18_n128_all_reduce_setup1.txt");
    cr_expect_str_eq(str(j, "verdict"), "below");
    cr_expect_float_eq(th_jnum(cJSON_GetObjectItemCaseSensitive(j, "band"), "large_low_pct"), -21, 1e-9, "the socket band");
    cJSON_Delete(j);
}

/* A fidelity record the reader cannot use: an error at its line. */
Test(doctor, a_bad_fidelity_record_is_named) {
    const char *cases[][2] = {
        {"  bands:\n    - {coll: allfoo, large: 5, all: 5}\n", "bad-fidelity.yaml:9:14: unknown collective 'allfoo'"},
        {"  bands:\n    - {coll: allreduce, large: -3, all: 5}\n", "'large' is a percentage above 0"},
        {"  bands:\n    - {coll: allreduce, socket: maybe, large: 3, all: 5}\n", "'socket' is true or false"},
        {"  bands: []\n", "'bands' is a list of 1 to 12"},
        {"  bands:\n    - {coll: allreduce, min_ranks: 0, large: 3, all: 5}\n", "'min_ranks' is a whole number of ranks"},
        {"  bands:\n    - {coll: allreduce, min_ranks: 9, max_ranks: 8, large: 3, all: 5}\n", "max_ranks is below its min_ranks"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        FILE *f = fopen("build/bad-fidelity.yaml", "w");
        cr_assert_not_null(f);
        fprintf(f, "nodes:\n  - {name: \"g[0-1]\"}\n  - {name: sw, kind: switch}\nlinks:\n"
                   "  - {a: \"g[0-1]\", b: sw, bw: 10GB/s, latency: 1us}\nfidelity:\n  logs: two\n%s", cases[i][0]);
        fclose(f);
        th_says("topo build/bad-fidelity.yaml --check", 1, cases[i][1], 1);
    }
}

/* A band may hold for some rank counts only: gb200-nvl72's file records
 * baton's error at the largest sizes up to one rack (7 %: the 8-rank OCI
 * log's 6.3 %, the rack's 1 %), two (3 %, raised to
 * the 5 % floor, EX_BAND_FLOOR) and twenty (51 %: NVLSTree under the
 * file's default NCCL) apart, so each rack count gets its own (its
 * CoreWeave logs, MANIFEST). */
Test(doctor, a_band_by_rank_count) {
    const char *racks[] = {"1", "2", "20"};
    const double large[] = {7, EX_BAND_FLOOR, 51};
    for (int i = 0; i < 3; i++) {
        char args[128];
        snprintf(args, sizeof args, "expect -t gb200-nvl72 --set racks=%s --sizes 8GiB --format json", racks[i]);
        cJSON *j = th_cli_json(args), *band = cJSON_GetObjectItemCaseSensitive(j, "band");
        cr_expect_float_eq(th_jnum(band, "large_low_pct"), -large[i], 1e-9, "racks=%s", racks[i]);
        cJSON_Delete(j);
    }
}

/* CoreWeave's twenty racks, healthy, under the NCCL a user gets without
 * --set nccl_version (2.30.7's rules keep NVLSTree there, 50 % fast of the
 * log at the top): inside the 51 % band, so doctor cannot tell; under the
 * 9 % the 2.26 rules alone gave, it read `below` (a review found it). */
Test(doctor, twenty_racks_under_the_default_nccl_cannot_tell) {
    cJSON *j = th_cli_json("doctor -t gb200-nvl72 --set racks=20 --json --nccl-tests "
                           "validate/logs/nccl-tests-2026/GB200x1440_20racks-MNNVL-IB_coreweave-nccl-tests-README_all_reduce.txt");
    cr_expect_str_eq(str(j, "verdict"), "cannot_tell");
    cr_expect(th_jnum(j, "shortfall_pct") > 40, "NVLSTree's top sizes: %.1f %%", th_jnum(j, "shortfall_pct"));
    cJSON_Delete(j);
}

/* Warnings reach stdout too, where a health-check script reads: another
 * GPU's log, and grouped calls or no warm-up (as validate says them). */
Test(doctor, warnings_are_in_the_report) {
    char *out = NULL;
    cr_assert_eq(th_cli("doctor -t hgx-h100 --nccl-tests validate/logs/nccl-tests/a100x8_nvswitch_oci_bmgpu48_allreduce.txt",
                        &out, 1), 0, "%s", out);
    cr_expect(strstr(out, "warning: validate/logs/nccl-tests/a100x8_nvswitch_oci_bmgpu48_allreduce.txt ran on NVIDIA "
                          "A100-SXM4-40GB") != NULL, "%s", out);
    free(out);
    char *log = sick_log(H100, NULL), cmd[512];
    snprintf(cmd, sizeof cmd, "sed -i 's/warmup iters: 5/warmup iters: 0/; s/agg iters: 1/agg iters: 4/' %s", log);
    cr_assert_eq(th_sh(cmd, &out), 0);
    free(out);
    snprintf(cmd, sizeof cmd, "doctor " H100 " --nccl-tests %s", log);
    cr_assert_eq(th_cli(cmd, &out, 1), 0, "%s", out);
    cr_expect(strstr(out, ":2: agg iters 4 (nccl-tests -m 4)") != NULL, "%s", out);
    cr_expect(strstr(out, ":2: warmup iters 0 (nccl-tests -w 0)") != NULL, "%s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "doctor " H100 " --json --nccl-tests %s", log);
    cJSON *j = th_cli_json(cmd);
    cr_expect_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "warnings")), 2);
    cJSON_Delete(j);
    unlink(log);
    free(log);
}

/* expect's nccl-tests output is a log baton's reader takes back at the
 * times it printed: validate on the same machine finds no error. */
Test(expect, its_nccl_tests_log_reads_back) {
    const char *colls[] = {"allreduce", "allgather", "reducescatter", "broadcast", "alltoall"};
    for (size_t i = 0; i < sizeof colls / sizeof colls[0]; i++) {
        char m[128], args[512];
        snprintf(m, sizeof m, "-t hgx-h100 -c %s --sizes 1KiB:256MiB:x8", colls[i]);
        char *log = sick_log(m, NULL);
        snprintf(args, sizeof args, "validate -t hgx-h100 --json --nccl-tests %s", log);
        cJSON *j = th_cli_json(args);
        cr_expect(th_jnum(j, "mape_pct") < 0.01, "%s", colls[i]);
        cr_expect_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "rows")), 7, "%s: every size", colls[i]);
        cJSON_Delete(j);
        unlink(log);
        free(log);
    }
}

/* On 72 ranks (not a power of two) the all-gather's and reduce-scatter's
 * sizes are what nccl-tests runs, a multiple of 16 bytes a rank (its log
 * had no rows at all: 1 GiB is not a multiple of 72 floats), and the log
 * reads back at the machine's own times. */
Test(expect, a_rack_all_gathers_what_nccl_tests_runs) {
    const char *colls[] = {"allgather", "reducescatter"};
    for (size_t i = 0; i < 2; i++) {
        char m[128], args[512];
        snprintf(m, sizeof m, "-t gb200-nvl72 -c %s --sizes 1KiB:1GiB:x32", colls[i]);
        char *log = sick_log(m, NULL);
        snprintf(args, sizeof args, "validate -t gb200-nvl72 --json --nccl-tests %s", log);
        cJSON *j = th_cli_json(args), *rows = cJSON_GetObjectItemCaseSensitive(j, "rows");
        cr_expect_eq(cJSON_GetArraySize(rows), 4, "%s: 32 KiB to 1 GiB, each rounded down (1 KiB runs nothing)", colls[i]);
        cr_expect_eq(th_jnum(cJSON_GetArrayItem(rows, 3), "bytes"), 1073741824 / 1152 * 1152, "%s", colls[i]);
        cr_expect(th_jnum(j, "mape_pct") < 0.01, "%s", colls[i]);
        cJSON_Delete(j);
        unlink(log);
        free(log);
    }
}

/* nccl-tests' all-to-all runs a multiple of p floats: expect's default
 * sizes on 128 ranks (8 B up) leave out what rounds to nothing, say so, and
 * the log reads back; predict says why a size is not one. */
Test(expect, an_alltoall_runs_what_nccl_tests_runs) {
    char *out = NULL;
    cr_assert_eq(th_sh("${BATON_BIN:-build/baton} expect -t cluster-h100 --set nodes=16 -c alltoall --sizes 8B:4KiB:x2,1000B "
                       "--format nccl-tests 2>&1", &out), 0, "%s", out);
    cr_expect(strstr(out, "runs nothing below 512 bytes") != NULL && strstr(out, "6 sizes left out") != NULL, "%s", out);
    free(out);
    char *log = sick_log_of("-t cluster-h100 --set nodes=16 --sizes 8B:4KiB:x2,1000B", NULL, "alltoall");
    nt_log_t l = th_parse_log(log, 128);
    cr_expect_eq(l.nrows, 4, "512 B to 4 KiB, and 1000 B as 512 B once: %d rows", l.nrows);
    for (int i = 0; i < l.nrows; i++) cr_expect_eq(l.rows[i].bytes % 512, 0, "%llu B", (unsigned long long)l.rows[i].bytes);
    nt_free(&l);
    unlink(log);
    free(log);
    th_says("predict -t cluster-h100 --set nodes=16 -c alltoall -s 8B -a nccl", 1,
            "on 128 ranks: alltoall pairwise needs the size to be a multiple of the rank count (8 bytes over 128 ranks)", 1);
}

Test(expect, the_band_names_its_source) {
    th_says("expect -t hgx-h100 --sizes 1GiB", 0, "band: uncalibrated: baton's measured error on one node", 1);
    th_says("expect -t cluster-h100 --sizes 1GiB", 0, "on a cluster over RDMA", 1);
    th_says("expect -t pcie-2gpu --set p2p=false --sizes 1GiB", 0, "staged through host memory", 1);
    cJSON *j = th_cli_json("expect -t hgx-h100 --sizes 1GiB --format json");
    cJSON *b = cJSON_GetObjectItemCaseSensitive(j, "band"), *r = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "rows"), 0);
    double busbw = th_jnum(r, "busbw_GBps");
    cr_expect_float_eq(th_jnum(r, "busbw_low_GBps"), busbw * (1 + th_jnum(b, "large_low_pct") / 100), 1e-6 * busbw);
    cr_expect(th_jnum(r, "fast_us") < th_jnum(r, "time_us") && th_jnum(r, "time_us") < th_jnum(r, "slow_us"));
    cJSON_Delete(j);
    /* a calibrated machine: its record's band, and its own log healthy against it */
    char *out = NULL;
    cr_assert_eq(th_cli("calibrate -t hgx-a100 --nccl-tests validate/logs/nccl-tests/a100x8_nvswitch_oci_bmgpu48_allreduce.txt "
                        "-o /tmp/baton_doctor_cal.yaml", &out, 0), 0, "%s", out);
    free(out);
    th_says("expect -t /tmp/baton_doctor_cal.yaml --sizes 1GiB", 0, "band: baton_doctor_cal's calibration: 90 % of errors", 1);
    cJSON *k = th_cli_json("doctor -t /tmp/baton_doctor_cal.yaml --json --nccl-tests "
                           "validate/logs/nccl-tests/a100x8_nvswitch_oci_bmgpu48_allreduce.txt");
    cr_expect_str_eq(str(k, "verdict"), "healthy");
    cr_expect_str_eq(str(cJSON_GetObjectItemCaseSensitive(k, "band"), "kind"), "calibrated");
    cJSON_Delete(k);
    unlink("/tmp/baton_doctor_cal.yaml");
    th_says("expect -t hgx-h100 --cause nics=2", 1, "no `nics` parameter", 1);
    th_says("expect -t hgx-h100 --cause bogus", 1, "no such cause", 1);
}

/* examples/node-health-check.sh (the Slurm prolog's use) prints what it says it does. */
Test(doctor, node_health_check_example_prints_its_expected_output) {
    const char *bin = getenv("BATON_BIN");
    char cmd[512], *out = NULL;
    snprintf(cmd, sizeof cmd, "sh examples/node-health-check.sh %s", bin ? bin : "build/baton");
    cr_assert_eq(th_sh(cmd, &out), 0, "%s", out);
    char *want = th_slurp("examples/node-health-check.expected");
    cr_assert_not_null(want);
    cr_expect_str_eq(out, want);
    free(out);
    free(want);
}

/* GDR off on cluster-a100 (one GPU and one NIC under a PCIe switch, Gen4
 * x16 = 31.5 GB/s): each ring's bytes cross the switch's uplink twice a
 * direction (the GPU's write and the NIC's read of a send, the NIC's write
 * and the GPU's read of a receive), so 8 rings move at most 8 x 31.5 / 2 =
 * 126 GB/s of bus bandwidth, against 8 x 25 over HDR with GDR. Under a NIC
 * slower than half the uplink (100 Gb/s = 12.5 GB/s) GDR off costs nothing. */
Test(expect, gdr_off_shares_the_switch_uplink) {
    cJSON *j = th_cli_json("sim -t cluster-a100 --set gdr=false -c allreduce -a ring -s 1GiB --json");
    double bus = th_jnum(j, "busbw_GBps");
    cr_expect(bus <= 126.0 && bus > 0.98 * 126.0, "ring busbw %.2f GB/s, the uplink's bound 126", bus);
    cJSON_Delete(j);
    j = th_cli_json("sim -t cluster-a100 --set gdr=false --set nic_bw=100Gb/s -c allreduce -a ring -s 1GiB --json");
    cJSON *k = th_cli_json("sim -t cluster-a100 --set nic_bw=100Gb/s -c allreduce -a ring -s 1GiB --json");
    cr_expect_float_eq(th_jnum(j, "busbw_GBps"), th_jnum(k, "busbw_GBps"), 0.01 * th_jnum(k, "busbw_GBps"),
                       "the NIC binds: %.2f against %.2f", th_jnum(j, "busbw_GBps"), th_jnum(k, "busbw_GBps"));
    cJSON_Delete(j);
    cJSON_Delete(k);
}

/* With host_bw, a node's staged bytes share its host memory: each of 8 GPU
 * sends and 8 NIC receives is written into it and read out, 16 flows a
 * direction, so at 200 GB/s the 8 rings move at most 8 x 200 / 16 = 100 GB/s
 * of busbw (below the uplink's 126); at 400 GB/s the uplink binds again.
 * Max-min fair sharing: FIFO reservations hold a fast link for a transfer's
 * bottleneck time (topologies/topo.c add_host_memory). */
Test(expect, gdr_off_shares_host_memory) {
    cJSON *j = th_cli_json("sim -t cluster-a100 --set gdr=false --set host_bw=200GB/s -c allreduce -a ring -s 1GiB "
                           "--contention fair --json");
    double bus = th_jnum(j, "busbw_GBps");
    cr_expect(bus <= 100.0 && bus > 0.95 * 100.0, "ring busbw %.2f GB/s, host memory's bound 100", bus);
    cJSON_Delete(j);
    j = th_cli_json("sim -t cluster-a100 --set gdr=false --set host_bw=400GB/s -c allreduce -a ring -s 1GiB "
                    "--contention fair --json");
    bus = th_jnum(j, "busbw_GBps");
    cr_expect(bus <= 126.0 && bus > 0.95 * 126.0, "ring busbw %.2f GB/s, the uplink's bound 126", bus);
    cJSON_Delete(j);
}

/* --cause's values are checked: a share in (0, 1), a whole count, no value
 * for a switch; each refusal names the cause and what it takes. */
Test(expect, a_cause_value_it_cannot_take_is_refused) {
    const char *bad[][2] = {{"slowgpu=0", "slowgpu: give a share of the rate, in (0, 1)"},
                            {"slownode=-1", "slownode: give a share of the rate, in (0, 1)"},
                            {"netcap=abc", "netcap: give a share of the rate, a number in (0, 1)"},
                            {"channels=abc", "channels: give a whole number"},
                            {"nics=2.5", "nics: give a whole number of at least 1"},
                            {"gdr=1", "gdr: takes no value"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char args[256];
        snprintf(args, sizeof args, "expect -t cluster-h100 --set nodes=2 --sizes 1GiB --cause %s", bad[i][0]);
        th_says(args, 1, bad[i][1], 1);
    }
}

/* -c that the log's columns contradict (an all-reduce asked of a log whose
 * redop is none) is read as asked, with a warning. */
Test(doctor, a_coll_its_columns_deny_is_warned) {
    const char *log = "validate/logs/nccl-tests-2026/B200x16_2nodes-GKE-A4-gIB-RoCE_dranet-gke-rdma-doc_all_gather.txt";
    char args[512];
    snprintf(args, sizeof args, "doctor -t cluster-b200 -c allreduce --nccl-tests %s", log);
    th_says(args, 0, "-c allreduce, but its columns are allgather's (redop and root)", 1);
    snprintf(args, sizeof args, "doctor -t cluster-b200 -c alltoall --nccl-tests %s", log);
    th_says(args, 0, "but its columns are", 0);
}

/* A log expect writes for machine m (its --set values) under cause, into
 * file: doctor cannot tell, though the log shows more than 10 % short. */
static void cannot_tell(const char *m, const char *call, const char *cause, const char *file) {
    char cmd[512], *out = NULL;
    snprintf(cmd, sizeof cmd, "build/baton expect -t %s %s --cause %s --format nccl-tests > %s", m, call, cause, file);
    cr_assert_eq(th_sh(cmd, &out), 0, "%s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "doctor -t %s --json --nccl-tests %s", m, file);
    cJSON *j = th_cli_json(cmd);
    cr_expect_str_eq(str(j, "verdict"), "cannot_tell", "%s", m);
    cr_expect(th_jnum(j, "shortfall_pct") > 10, "%s under %s shows: %.1f %%", m, cause, th_jnum(j, "shortfall_pct"));
    cJSON_Delete(j);
}

/* Where the band is wider than 30 % (Polaris's libfabric all-to-all: 58 %
 * at the largest sizes, where its logs run at 42-59 % of the NICs' rate;
 * GB200 beyond two racks: 51 %), a cluster whose every NIC runs at half its
 * rate (Polaris: 50 % slower; GB200 at 0.3 of it: 43 %) stays inside it:
 * doctor says it cannot tell, not healthy, and under --fail-below exits 4
 * (neither pass nor the 3 of a run below). */
Test(doctor, a_band_too_wide_cannot_tell) {
    char *out = NULL;
    cannot_tell("gb200-nvl72 --set racks=16", "-c allreduce --sizes 512MiB:16GiB:x2", "netcap=0.3", "build/gb200-halfnic.txt");
    cannot_tell("polaris --set nodes=8", "-c alltoall --sizes 16MiB:1GiB:x2", "netcap=0.5", "build/polaris-halfnic.txt");
    cr_expect_eq(th_cli("doctor -t polaris --set nodes=8 --fail-below 0 --nccl-tests build/polaris-halfnic.txt", &out, 0),
                 4, "%s", out);
    cr_expect(strstr(out, "too wide to judge") != NULL, "%s", out);
    free(out);
}

/* A run that returned wrong results (#wrong in 14 rows of the shipped 8 x
 * A100 log, its times untouched) or that an NCCL failure cut short is
 * broken, whatever its times say: verdict "broken" with the reason, the
 * times' own verdict beside it, exit 5 with or without --fail-below (a
 * health check had kept the node: "healthy", exit 0). The times alone
 * still read healthy. */
Test(doctor, a_broken_run_is_broken_whatever_its_times) {
    char *out = NULL;
    cr_expect_eq(th_cli("doctor -t hgx-a100 --nccl-tests tests/data/broken/a100x8_wrong_results.txt --fail-below 10", &out, 1),
                 5, "%s", out);
    cr_expect(strstr(out, "verdict: broken: 14 rows returned wrong results (#wrong, line 32)"), "%s", out);
    cr_expect(strstr(out, "the times alone:   healthy"), "%s", out);
    free(out);
    cr_expect_eq(th_cli("doctor -t hgx-a100 --nccl-tests tests/data/broken/a100x8_nccl_failure.txt", &out, 1), 5, "%s", out);
    cr_expect(strstr(out, "verdict: broken: the run failed (line 41"), "%s", out);
    free(out);
    /* the failure line found whole, wherever it is: after a long host name, after another stray line */
    int rc = th_sh("f=$(mktemp) && sed -e 's/inst-ks8ls-comp/dgx-a100-node-017.cluster.example.com/' "
                   "-e '41i srun: warning: step 12.0 got a signal' tests/data/broken/a100x8_nccl_failure.txt > $f && "
                   "${BATON_BIN:-build/baton} doctor -t hgx-a100 --nccl-tests $f; s=$?; rm -f $f; exit $s", &out);
    cr_expect_eq(rc, 5, "%s", out);
    cr_expect(strstr(out, "verdict: broken: the run failed (line 42: \"Test NCCL failure"), "%s", out);
    free(out);
    cr_expect_eq(th_cli("doctor -t hgx-a100 --json --nccl-tests tests/data/broken/a100x8_wrong_results.txt", &out, 1), 5);
    cJSON *j = cJSON_Parse(out);
    cr_assert(j, "%s", out);
    cr_expect_str_eq(str(j, "verdict"), "broken");
    cr_expect_str_eq(str(j, "times_verdict"), "healthy");
    cr_expect(strstr(str(j, "broken"), "14 rows returned wrong results"));
    cJSON_Delete(j);
    free(out);
    cr_expect_eq(th_cli("doctor -t hgx-a100 --nccl-tests validate/logs/nccl-tests/a100x8_nvswitch_oci_bmgpu48_allreduce.txt",
                        &out, 1), 0, "the log as it ran: %s", out);
    free(out);
}

/* A log that is exactly what `predict --format nccl-tests` prints for p5
 * (the simulator's time where it is beyond the formula's band: 4.82 ms at 1
 * GiB where the formula says 4.38) reads below against the formula, which
 * the verdict and the causes are made of; doctor then says that against
 * the simulator it is inside the band, so the shortfall may be the
 * formula's (a new-user sweep found baton calling its own answer sick). A
 * sick log made by the formula gets no such note. */
Test(doctor, a_log_at_the_simulators_time_is_said_to_be_inside_its_band) {
    char *out = NULL;
    int rc = th_sh("f=$(mktemp) && ${BATON_BIN:-build/baton} predict -t p5 -c allreduce -a nccl --sizes 8:8GiB:x2 --format "
                   "nccl-tests > $f 2>/dev/null && ${BATON_BIN:-build/baton} doctor -t p5 --nccl-tests $f; s=$?; rm -f $f; exit $s",
                   &out);
    cr_expect_eq(rc, 0, "%s", out);
    cr_expect(strstr(out, "verdict: below") != NULL, "%s", out);
    cr_expect(strstr(out, "but: at these sizes baton's simulator answers slower than its formula") != NULL, "%s", out);
    cr_expect(strstr(out, "inside the band: the shortfall may be the formula's") != NULL, "%s", out);
    free(out);
    char *log = sick_log(H100, "nics=4");
    char args[512];
    snprintf(args, sizeof args, "doctor %s --nccl-tests %s", H100, log);
    cr_expect_eq(th_cli(args, &out, 1), 0, "%s", out);
    cr_expect(strstr(out, "verdict: below") != NULL && strstr(out, "but: at these sizes") == NULL, "%s", out);
    free(out);
    unlink(log);
    free(log);
}
