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
    /* with no machines on the search path, the error names the file, the line and the name it looked for */
    char args[512];
    snprintf(args, sizeof args, "predict -t '%s' -c allreduce -s 1GiB", copy);
    cr_expect_neq(run_in(cwd, "", args, &out), 0);
    cr_expect(strstr(out, "mine.yaml:") && strstr(out, "extends 'hgx-a100': no machine of that name"), "%s", out);
    free(out);
    gone(dir);
    gone(cwd);
}

/* A base of the user's own (not a shipped machine) is written by its
 * absolute path: the calibration copied elsewhere still finds it with no
 * search path at all. */
Test(user_files, a_calibration_of_an_own_file_names_its_absolute_path) {
    char *out, dir[64], cwd[64], copy[256], own[256], args[1024], here[2048];
    elsewhere(dir, sizeof dir);
    elsewhere(cwd, sizeof cwd);
    copy_to("topologies/pcie-2gpu.yaml", dir, "mybox.yaml", own, sizeof own);
    snprintf(args, sizeof args, "calibrate -t %s --set p2p=false --cv 0 -o build/uf-own.yaml --nccl-tests " RTX2080_LOG, own);
    cr_assert_eq(th_cli(args, &out, 0), 0, "%s", out);
    free(out);
    char *text = th_slurp("build/uf-own.yaml"), want[512];
    cr_assert_not_null(text);
    snprintf(want, sizeof want, "\nextends: \"%s\"\n", own);
    cr_expect(strstr(text, want) != NULL, "want %s in %s", want, text);
    free(text);
    copy_to("build/uf-own.yaml", dir, "cal.yaml", copy, sizeof copy);
    cr_assert_not_null(getcwd(here, sizeof here));
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
