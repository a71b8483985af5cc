/* test_user_files.c - files a user keeps: a calibrated machine copied out of
 * the clone still loads (shipped bases by name, others by absolute path, or
 * written whole), and what the import and validate outputs tell a reader. */
#define _XOPEN_SOURCE 700           /* mkdtemp */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"

#define A100_LOG "validate/logs/nccl-tests/a100x8_nvswitch_oci_bmgpu48_allreduce.txt"
#define RTX2080_LOG "validate/logs/nccl-tests/rtx2080ti_x2_pcie3_nop2p_allreduce.txt"

/* The binary as an absolute path, for commands run from another folder. */
static void bin_path(char *buf, size_t n) {
    const char *bin = getenv("BATON_BIN") ? getenv("BATON_BIN") : "build/baton";
    char here[2048];
    cr_assert_not_null(getcwd(here, sizeof here));
    if (bin[0] == '/') snprintf(buf, n, "%s", bin);
    else snprintf(buf, n, "%s/%s", here, bin);
}

/* A fresh folder outside the clone (another depth, another tree). */
static void elsewhere(char *dir, size_t n) {
    snprintf(dir, n, "/tmp/baton-userfile-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

/* Remove a folder elsewhere() made. */
static void gone(const char *dir) {
    char cmd[128], *out;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    th_sh(cmd, &out);
    free(out);
}

/* Copy file `from` into folder `dir` as `name`; the copy's path in out. */
static void copy_to(const char *from, const char *dir, const char *name, char *out, size_t n) {
    char *text = th_slurp(from);
    cr_assert_not_null(text, "%s", from);
    snprintf(out, n, "%s/%s", dir, name);
    FILE *f = fopen(out, "w");
    cr_assert_not_null(f, "%s", out);
    fputs(text, f);
    fclose(f);
    free(text);
}

/* `baton ARGS` run in folder `cwd` (env: extra VAR=value or ""): exit
 * status, stdout and stderr in *out. */
static int run_in(const char *cwd, const char *env, const char *args, char **out) {
    char bin[4096], cmd[16384];
    bin_path(bin, sizeof bin);
    snprintf(cmd, sizeof cmd, "cd '%s' && env -u BATON_PATH %s '%s' %s 2>&1", cwd, env, bin, args);
    return th_sh(cmd, out);
}

/* predict's time for an all-reduce of `size` on machine `path`, run in cwd. */
static double predict_in(const char *cwd, const char *env, const char *path, const char *size) {
    char args[4096], *out;
    snprintf(args, sizeof args, "predict -t '%s' -c allreduce -s %s --json", path, size);
    int rc = run_in(cwd, env, args, &out);
    cr_assert_eq(rc, 0, "%s: %s", args, out);
    double t = th_json_num(out, "time_s");
    free(out);
    return t;
}

/* Calibrated on a shipped machine, the file names it (`extends: "hgx-a100"`,
 * not a path into the clone): copied out of the clone and read from a third
 * folder, it loads wherever the machines are on the search path (here
 * $BATON_PATH, as an install's share folder) and predicts what it did in
 * place. Before, `extends: "../topologies/hgx-a100.yaml"` failed so. */
Test(user_files, a_calibration_of_a_shipped_machine_names_it) {
    char *out, dir[64], cwd[64], copy[256], env[4200], here[2048];
    cr_assert_eq(th_cli("calibrate -t topologies/hgx-a100.yaml --cv 0 -o build/uf-named.yaml --nccl-tests " A100_LOG, &out, 0),
                 0, "%s", out);
    free(out);
    char *text = th_slurp("build/uf-named.yaml");
    cr_assert_not_null(text);
    cr_expect(strstr(text, "\nextends: \"hgx-a100\"\n") != NULL, "%s", text);
    free(text);
    elsewhere(dir, sizeof dir);
    elsewhere(cwd, sizeof cwd);
    copy_to("build/uf-named.yaml", dir, "mine.yaml", copy, sizeof copy);
    cr_assert_not_null(getcwd(here, sizeof here));
    snprintf(env, sizeof env, "BATON_PATH=%s/topologies", here);
    double kept = predict_in(cwd, env, copy, "1GiB"), there = predict_in(here, "", "build/uf-named.yaml", "1GiB");
    cr_expect_eq(kept, there, "copied %.17g, in place %.17g", kept, there);
    /* with no $BATON_PATH the uninstalled binary still finds the clone's machines beside it */
    cr_expect_eq(predict_in(cwd, "", copy, "1GiB"), there);
    /* a name on no search path: the error names the file, the line and the name it looked for */
    char args[512], lost[256];
    text = th_slurp(copy);
    cr_assert_not_null(text);
    char *at = strstr(text, "extends: \"hgx-a100\"");
    cr_assert_not_null(at);
    snprintf(lost, sizeof lost, "%s/lost.yaml", dir);
    FILE *f = fopen(lost, "w");
    cr_assert_not_null(f);
    fprintf(f, "%.*sextends: \"hgx-a1000\"%s", (int)(at - text), text, at + strlen("extends: \"hgx-a100\""));
    fclose(f);
    free(text);
    snprintf(args, sizeof args, "predict -t '%s' -c allreduce -s 1GiB", lost);
    cr_expect_neq(run_in(cwd, "", args, &out), 0);
    cr_expect(strstr(out, "lost.yaml:") && strstr(out, "extends 'hgx-a1000': no machine of that name"), "%s", out);
    free(out);
    gone(dir);
    gone(cwd);
}

/* A base of the user's own (not a shipped machine; here beside the
 * calibration, in the clone) is written by its absolute path: the
 * calibration copied elsewhere still finds it with no search path at all
 * (a path relative to the calibration's folder did not). */
Test(user_files, a_calibration_of_an_own_file_names_its_absolute_path) {
    char *out, dir[64], cwd[64], copy[256], own[256], args[1024], here[2048];
    elsewhere(dir, sizeof dir);
    elsewhere(cwd, sizeof cwd);
    cr_assert_eq(th_sh("mkdir -p build/uf-own", &out), 0);
    free(out);
    copy_to("topologies/pcie-2gpu.yaml", "build/uf-own", "mybox.yaml", own, sizeof own);
    snprintf(args, sizeof args, "calibrate -t %s --set p2p=false --cv 0 -o build/uf-own.yaml --nccl-tests " RTX2080_LOG, own);
    cr_assert_eq(th_cli(args, &out, 0), 0, "%s", out);
    free(out);
    char *text = th_slurp("build/uf-own.yaml"), want[4096];
    cr_assert_not_null(text);
    cr_assert_not_null(getcwd(here, sizeof here));
    snprintf(want, sizeof want, "\nextends: \"%s/%s\"\n", here, own);
    cr_expect(strstr(text, want) != NULL, "want %s in %s", want, text);
    free(text);
    copy_to("build/uf-own.yaml", dir, "cal.yaml", copy, sizeof copy);
    double kept = predict_in(cwd, "", copy, "64MiB"), there = predict_in(here, "", "build/uf-own.yaml", "64MiB");
    cr_expect_eq(kept, there, "copied %.17g, in place %.17g", kept, there);
    gone(dir);
    gone(cwd);
}

/* calibrate --self-contained writes the machine whole (no extends:): copied
 * anywhere it needs no other file, validates the log to the MAPE the fit
 * reported, and predicts as the calibration that extends its base. */
Test(user_files, a_self_contained_calibration_needs_no_other_file) {
    char *out, dir[64], cwd[64], copy[256], args[4096], here[2048];
    cr_assert_eq(th_cli("calibrate -t topologies/hgx-a100.yaml --cv 3 --json --self-contained -o build/uf-whole.yaml "
                        "--nccl-tests " A100_LOG, &out, 1), 0, "%s", out);
    double fitted = th_json_num(out, "mape_pct");
    free(out);
    cr_assert_eq(th_cli("calibrate -t topologies/hgx-a100.yaml --cv 3 -o build/uf-over.yaml --nccl-tests " A100_LOG, &out, 0),
                 0, "%s", out);
    free(out);
    char *text = th_slurp("build/uf-whole.yaml");
    cr_assert_not_null(text);
    cr_expect(strstr(text, "extends:") == NULL && strstr(text, "\nlinks:\n") && strstr(text, "\ncalibration:\n") &&
              strstr(text, "\nlink_efficiency:\n"), "%s", text);
    free(text);
    elsewhere(dir, sizeof dir);
    elsewhere(cwd, sizeof cwd);
    copy_to("build/uf-whole.yaml", dir, "whole.yaml", copy, sizeof copy);
    cr_assert_not_null(getcwd(here, sizeof here));
    snprintf(args, sizeof args, "validate -t '%s' --json --nccl-tests '%s/" A100_LOG "'", copy, here);
    cr_assert_eq(run_in(cwd, "", args, &out), 0, "%s", out);
    double again = th_json_num(out, "mape_pct");
    cr_expect(fabs(again - fitted) < 1e-3, "fitted %.4f, read back whole %.4f", fitted, again);
    free(out);
    const char *sizes[] = {"8KiB", "1MiB", "64MiB", "1GiB"};
    for (int i = 0; i < 4; i++) {
        double whole = predict_in(cwd, "", copy, sizes[i]), over = predict_in(here, "", "build/uf-over.yaml", sizes[i]);
        cr_expect(fabs(whole / over - 1) < 1e-9, "%s: whole %.17g, extending %.17g", sizes[i], whole, over);
    }
    cr_expect_neq(th_cli("calibrate -t topologies/hgx-a100.yaml --self-contained --nccl-tests " A100_LOG, &out, 0), 0);
    free(out);
    gone(dir);
    gone(cwd);
}

/* `extends:` takes a machine's name, found as -t NAME is; a name that is
 * no machine is an error at its place in the file. */
Test(user_files, extends_takes_a_machine_name) {
    FILE *f = fopen("build/uf-byname.yaml", "w");
    cr_assert_not_null(f);
    fputs("name: byname\nextends: hgx-h100\nlat_scale: 2\n", f);
    fclose(f);
    char *out;
    cr_assert_eq(th_cli("topo build/uf-byname.yaml", &out, 1), 0, "%s", out);
    cr_expect(strstr(out, "byname") && strstr(out, "8 ranks"), "%s", out);
    free(out);
    f = fopen("build/uf-noname.yaml", "w");
    cr_assert_not_null(f);
    fputs("name: noname\nextends: hgx-h1000\n", f);
    fclose(f);
    cr_expect_neq(th_cli("topo build/uf-noname.yaml", &out, 0), 0);
    cr_expect(strstr(out, "uf-noname.yaml:2:10: extends 'hgx-h1000': no machine of that name") != NULL, "%s", out);
    free(out);
}

#define DGX1_MATRIX "tests/data/import/dgx1-v100-topo-m.txt"
#define DGX1_SMI_L "tests/data/import/dgx1-v100-smi-L.txt"

/* The machine file `out` loads, named `want`. */
static void named_back(const char *out, const char *want) {
    topo_t *t = th_load(out, NULL);
    cr_expect_str_eq(topo_name(t), want, "%s", out);
    topo_free(t);
}

/* What baton writes, baton reads: a name (--name, or a calibration's from
 * its -o file name) holding ": ", " #", a quote or a backslash is quoted in
 * the file as its logs: are. Before, `name: rack: 3` was a YAML syntax
 * error and `name: lab box #2` read back as "lab box". */
Test(user_files, a_written_machine_keeps_a_name_yaml_would_cut) {
    static const char *const names[] = {"rack: 3", "lab box #2", "say \"hi\" \\ back"};
    char args[1024], path[256], *out;
    for (int i = 0; i < 3; i++) {
        snprintf(args, sizeof args, "topo import nvsmi " DGX1_MATRIX " --name '%s' -o build/uf-nm.yaml", names[i]);
        cr_assert_eq(th_cli(args, &out, 0), 0, "%s", out);
        free(out);
        named_back("build/uf-nm.yaml", names[i]);
        snprintf(args, sizeof args, "topo import nccl-xml tests/data/import/ncv4-topo.xml --name '%s' -o build/uf-nm.yaml",
                 names[i]);
        cr_assert_eq(th_cli(args, &out, 0), 0, "%s", out);
        free(out);
        named_back("build/uf-nm.yaml", names[i]);
        for (int whole = 0; whole < 2; whole++) {
            snprintf(path, sizeof path, "build/%s.yaml", names[i]);
            snprintf(args, sizeof args, "calibrate -t hgx-a100 --cv 0%s -o '%s' --nccl-tests " A100_LOG,
                     whole ? " --self-contained" : "", path);
            cr_assert_eq(th_cli(args, &out, 0), 0, "%s", out);
            free(out);
            named_back(path, names[i]);
            remove(path);
        }
    }
}

/* How many times needle occurs in s. */
static int count(const char *s, const char *needle) {
    int n = 0;
    for (const char *p = strstr(s, needle); p; p = strstr(p + 1, needle)) n++;
    return n;
}

/* A plain `nvidia-smi topo -m` (a DGX-1's: NV1/NV2, two sockets, no GPU
 * names) imports with a warning on stderr for each thing the machine
 * assumes (NVLink at line rate, the sockets' link, a free reduction, PCIe
 * Gen3, NCCL's Ampere tables), and the file's header says the same.
 * Before, it said nothing. */
Test(user_files, import_of_a_plain_matrix_names_each_assumption) {
    char *out;
    cr_assert_eq(th_cli("topo import nvsmi " DGX1_MATRIX " -o build/uf-plain.yaml", &out, 0), 0, "%s", out);
    cr_expect_eq(count(out, "baton topo import: warning: " DGX1_MATRIX ": assumed "), 5, "%s", out);
    cr_expect(strstr(out, "assumed NVLink at its line rate, 25 GB/s a link each way") && strstr(out, "assumed the sockets") &&
              strstr(out, "assumed a reduction costs nothing") && strstr(out, "assumed PCIe Gen3") &&
              strstr(out, "assumed NCCL's Ampere tables"), "%s", out);
    free(out);
    char *y = th_slurp("build/uf-plain.yaml");
    cr_assert_not_null(y);
    cr_expect_eq(count(y, "\n# assumed: "), 5, "%s", y);
    cr_expect(strstr(y, "\nreduce_bw:") == NULL, "no GPU named, no reduction rate: %s", y);
    free(y);
}

/* nvidia-smi -L's lines in a file beside the matrix (--gpus FILE, or a
 * second FILE) name the GPUs: V100, Volta's tables, a reduction rate, and
 * only the links' assumptions are left; -q's "Product Name" lines do the
 * same; a file that names no GPU is an error naming it. */
Test(user_files, import_reads_gpu_names_beside_the_matrix) {
    char *out, *y[2];
    cr_assert_eq(th_cli("topo import nvsmi " DGX1_MATRIX " --gpus " DGX1_SMI_L " -o build/uf-named.yaml", &out, 0), 0,
                 "%s", out);
    cr_expect_eq(count(out, ": assumed "), 2, "%s", out);
    cr_expect(strstr(out, "assumed NVLink at its line rate") && strstr(out, "assumed the sockets"), "%s", out);
    free(out);
    cr_assert_eq(th_cli("topo import nvsmi " DGX1_MATRIX " " DGX1_SMI_L " -o build/uf-named2.yaml", &out, 0), 0, "%s", out);
    free(out);
    y[0] = th_slurp("build/uf-named.yaml");
    y[1] = th_slurp("build/uf-named2.yaml");
    cr_assert(y[0] && y[1]);
    cr_expect(strstr(y[0], "\ngpu: v100-sxm2\narch: volta\nreduce_bw: 300GB/s\n") != NULL, "%s", y[0]);
    cr_expect_str_eq(y[0], y[1]);
    free(y[0]), free(y[1]);
    /* the reduction now costs: a 1 GiB all-reduce takes longer than on the plain import */
    char *p;
    cr_assert_eq(th_cli("topo import nvsmi " DGX1_MATRIX " -o build/uf-plain2.yaml", &out, 0), 0, "%s", out);
    free(out);
    cr_assert_eq(th_cli("predict -t build/uf-named.yaml -c allreduce -a ring -s 1GiB --json", &out, 1), 0, "%s", out);
    cr_assert_eq(th_cli("predict -t build/uf-plain2.yaml -c allreduce -a ring -s 1GiB --json", &p, 1), 0, "%s", p);
    cr_expect_gt(th_json_num(out, "time_s"), th_json_num(p, "time_s"));
    free(out), free(p);
    FILE *f = fopen("build/uf-smi-q.txt", "w");
    cr_assert_not_null(f);
    fputs("==============NVSMI LOG==============\n\nAttached GPUs                             : 8\n"
          "GPU 00000000:06:00.0\n    Product Name                          : Tesla V100-SXM2-16GB\n"
          "    Product Brand                         : Tesla\n", f);
    fclose(f);
    cr_assert_eq(th_cli("topo import nvsmi " DGX1_MATRIX " --gpus build/uf-smi-q.txt", &out, 1), 0, "%s", out);
    cr_expect(strstr(out, "\ngpu: v100-sxm2\narch: volta\n") != NULL, "%s", out);
    free(out);
    cr_expect_eq(th_cli("topo import nvsmi " DGX1_MATRIX " --gpus " DGX1_MATRIX, &out, 0), 1);
    cr_expect(strstr(out, DGX1_MATRIX ": names no GPU") != NULL, "%s", out);
    free(out);
}

/* validate states what its error means, and each row's bus bandwidth,
 * measured and predicted, as nccl-tests computes it: the 1 GiB row's
 * measured busbw is the mean of the log's own two busbw columns there. */
Test(user_files, validate_states_the_sign_of_error_and_busbw) {
    char *out;
    cr_assert_eq(th_cli("validate -t topologies/hgx-a100.yaml --nccl-tests " A100_LOG, &out, 1), 0, "%s", out);
    cr_expect(strstr(out, "error = (predicted - measured) / measured: + means the model is slower than measured") != NULL,
              "%s", out);
    cr_expect(strstr(out, "busbw measured") && strstr(out, "busbw predicted"), "%s", out);
    free(out);
    cr_assert_eq(th_cli("validate -t topologies/hgx-a100.yaml --json --nccl-tests " A100_LOG, &out, 1), 0, "%s", out);
    cr_expect(strstr(out, "\"error\":\"(predicted - measured) / measured: + means the model is slower\"") != NULL, "%s", out);
    char *row = strstr(out, "\"bytes\":1073741824,");
    cr_assert_not_null(row, "%s", out);
    double meas = th_json_num(row, "measured_s"), pred = th_json_num(row, "predicted_s");
    double mbus = th_json_num(row, "measured_busbw_GBps"), pbus = th_json_num(row, "predicted_busbw_GBps");
    cr_expect_eq(th_json_num(row, "ranks"), 8);
    /* the log's own busbw columns at 1 GiB (out of place, in place) */
    FILE *f = fopen(A100_LOG, "r");
    cr_assert_not_null(f);
    char line[512];
    double oop = -1, ip = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, " 1073741824 %*s %*s %*s %*s %*s %*s %lf %*s %*s %*s %lf", &oop, &ip) == 2) break;
    fclose(f);
    cr_assert(oop > 0 && ip > 0, "the log's 1 GiB row");
    cr_expect(fabs(mbus / ((oop + ip) / 2) - 1) < 1e-3, "measured busbw %g, the log's %g and %g", mbus, oop, ip);
    cr_expect(fabs(pbus / (mbus * meas / pred) - 1) < 1e-4, "predicted busbw %g at %g s (measured %g at %g s)", pbus, pred,
              mbus, meas);
    free(out);
}

/* With two logs, each log's name heads its rows once, in full, and no
 * row repeats it (it was cut to 44 characters on every row). */
Test(user_files, validate_names_each_log_once_as_a_heading) {
    const char *logs[2] = {"validate/logs/nccl-tests/rtx2080ti_x2_pcie3_nop2p_allreduce.txt",
                           "validate/logs/nccl-tests/rtx2080ti_x2_pcie3_nop2p_allgather.txt"};
    char cmd[512], *out;
    snprintf(cmd, sizeof cmd, "validate -t topologies/pcie-2gpu.yaml --set p2p=false --nccl-tests %s %s", logs[0], logs[1]);
    cr_assert_eq(th_cli(cmd, &out, 1), 0, "%s", out);
    cr_expect_eq(count(out, "rtx2080ti_x2_pcie3_nop2p_allreduce.txt"), 2, "a heading and its MAPE line: %s", out);
    cr_expect_eq(count(out, "rtx2080ti_x2_pcie3_nop2p_allgather.txt"), 2, "a heading and its MAPE line: %s", out);
    char head[256];
    snprintf(head, sizeof head, "\n%s (allreduce on 2 ranks)\n", logs[0]);
    cr_expect(strstr(out, head) != NULL, "%s", out);
    snprintf(head, sizeof head, "\n%s (allgather on 2 ranks)\n", logs[1]);
    cr_expect(strstr(out, head) != NULL, "%s", out);
    free(out);
}

/* Where the fit moved NCCL's plan (the p4d EFA log, fitted free: the file's
 * values plan trees where it ran rings), calibrate names the sizes, from
 * the file's plan to the fit's: the from side is what validate gives on
 * the file, the to side the calibrated table's row. */
Test(user_files, calibrate_names_the_sizes_whose_plan_the_fit_moved) {
    const char *base = "-t topologies/cluster-a100.yaml --set nodes=2 --set nic_bw=50Gb/s --nccl-tests "
                       "validate/logs/nccl-tests-extra/a100x16_2node_p4d_efa_awsefaeks_allreduce.txt";
    char cmd[1024], *fit, *file, *text;
    snprintf(cmd, sizeof cmd, "calibrate --cv 0 --json -o build/uf-efa.yaml %s", base);
    cr_assert_eq(th_cli(cmd, &fit, 1), 0, "%s", fit);
    snprintf(cmd, sizeof cmd, "validate --json %s", base);
    cr_assert_eq(th_cli(cmd, &file, 1), 0, "%s", file);
    snprintf(cmd, sizeof cmd, "calibrate --cv 0 -o build/uf-efa2.yaml %s", base);
    cr_assert_eq(th_cli(cmd, &text, 1), 0, "%s", text);
    cr_assert(strstr(fit, "\"replanned\":true"), "%s", fit);
    char *moved = strstr(fit, "\"replanned_sizes\":[");
    cr_assert_not_null(moved, "%s", fit);
    int n = 0;
    for (char *m = strstr(moved, "{\"log\""); m; m = strstr(m + 1, "{\"log\"")) {
        int line = (int)th_json_num(m, "line");
        char from[32] = "", to[32] = "", pat[64], got[32] = "", was[32] = "";
        sscanf(strstr(m, "\"from_algorithm\":\""), "\"from_algorithm\":\"%31[^\"]", from);
        sscanf(strstr(m, "\"algorithm\":\""), "\"algorithm\":\"%31[^\"]", to);
        snprintf(pat, sizeof pat, "\"line\":%d,", line);
        char *row = strstr(strstr(fit, "\"rows\":["), pat), *frow = strstr(file, pat);
        cr_assert(row && frow, "line %d", line);
        sscanf(strstr(row, "\"algorithm\":\""), "\"algorithm\":\"%31[^\"]", got);
        sscanf(strstr(frow, "\"algorithm\":\""), "\"algorithm\":\"%31[^\"]", was);
        cr_expect_str_eq(to, got, "line %d: the fit's row", line);
        cr_expect_str_eq(from, was, "line %d: the file's row", line);
        n++;
    }
    cr_expect_gt(n, 0, "%s", moved);
    char want[128];
    snprintf(want, sizeof want, "plan: the fit moved NCCL's algorithm or protocol at %d size%s", n, n > 1 ? "s" : "");
    cr_expect(strstr(text, want) != NULL, "%s in %s", want, text);
    cr_expect(strstr(text, " -> ") != NULL, "%s", text);
    free(fit), free(file), free(text);
}

/* What an import of 2026's GPUs and of NCCL's own dumps gets right (a
 * new-user sweep): an 8-GPU NV18 matrix named B200 takes NVLink 5's 50 GB/s
 * a link (it took NVLink 4's 25, so a 1 GiB all-reduce read 43 % slow
 * against the shipped hgx-b200), while the same matrix named H100 keeps
 * 25; an NCCL XML whose <nvlink target> writes a bus id in capitals is the
 * same GPU as its lower-case <pci busid> (it had made an NVSwitch with NVLS
 * between two bridged H100s). */
Test(user_files, import_takes_the_nvlink_generation_and_bus_ids_as_nccl) {
    char *out = NULL;
    cr_assert_eq(th_cli("topo import nvsmi tests/data/import/hgx8-nv18-topo-m.txt --gpus tests/data/import/b200x8-L.txt",
                        &out, 1), 0, "%s", out);
    cr_expect(strstr(out, "\n  nvlink_gbps: 50\n") && strstr(out, "arch: blackwell"), "%s", out);
    free(out);
    cr_assert_eq(th_cli("topo import nvsmi tests/data/import/hgx8-nv18-topo-m.txt", &out, 1), 0, "%s", out);
    cr_expect(strstr(out, "\n  nvlink_gbps: 25\n"), "no GPU named: NVLink 4's rate: %s", out);
    free(out);
    cr_assert_eq(th_cli("topo import nccl-xml tests/data/import/h100x2-bridge-upper-busid.xml -o build/uf-bridge.yaml", &out, 0),
                 0, "%s", out);
    free(out);
    char *y = th_slurp("build/uf-bridge.yaml");
    cr_assert(y);
    cr_expect(strstr(y, "nvswitch") == NULL, "a switch made of a bus id's case: %s", y);
    cr_expect(strstr(y, "${nvlink_gbps*12}") != NULL, "the bridge's 12 links: %s", y);
    free(y);
}

/* A GPU list that does not fit the matrix is said: 8 names for a matrix
 * of 8 but two products among them, or a list of another length. */
Test(user_files, import_says_a_gpu_list_that_does_not_fit) {
    char *out = NULL;
    cr_assert_eq(th_cli("topo import nvsmi tests/data/import/hgx8-nv18-topo-m.txt --gpus tests/data/import/mixed4-L.txt"
                        " -o build/uf-mixed.yaml", &out, 0), 0, "%s", out);
    cr_expect(strstr(out, "though it names 4 GPUs for the matrix's 8") != NULL, "%s", out);
    cr_expect(strstr(out, "assumed every GPU is the first baton knows, \"NVIDIA L40S\"; the names also say "
                          "\"NVIDIA A100-PCIE-40GB\"") != NULL, "%s", out);
    free(out);
    cr_assert_eq(th_cli("topo import nvsmi tests/data/import/hgx8-nv18-topo-m.txt --gpus tests/data/import/b200x8-L.txt"
                        " -o build/uf-fits.yaml", &out, 0), 0, "%s", out);
    cr_expect(strstr(out, "though it names") == NULL && strstr(out, "also say") == NULL, "a list that fits: %s", out);
    free(out);
    /* names in the matrix's own file beside a --gpus list: the list alone is counted */
    int rc = th_sh("f=$(mktemp) && cat tests/data/import/dgx1-v100-smi-L.txt tests/data/import/dgx1-v100-topo-m.txt > $f && "
                   "${BATON_BIN:-build/baton} topo import nvsmi $f --gpus tests/data/import/dgx1-v100-smi-L.txt 2>&1 >/dev/null;"
                   " s=$?; rm -f $f; exit $s", &out);
    cr_expect_eq(rc, 0, "%s", out);
    cr_expect(strstr(out, "though it names") == NULL, "%s", out);
    free(out);
}
