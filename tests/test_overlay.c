/* test_overlay.c - calibrated machines: a file that `extends:` another keeps
 * the base's graph, parameters and flags and changes only values; a machine
 * written and read back predicts exactly what the one in memory did. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sim/answer/run.h"
#include "../topologies/topo_write.h"
#include "../topologies/topo_yaml.h"
#include "../validate/calibrate.h"
#include "helpers.h"

#define H200_LOG "validate/logs/nccl-tests-extra/h200x16_2node_bf3roce8x400_schmaustech_allreduce.txt"

/* The time of one question under -a/--proto on t, closed forms. */
static double predict(topo_t *t, const char *algo, coll_t coll, uint64_t bytes) {
    run_req_t q = {.coll = coll, .algo = algo, .bytes = bytes, .proto = RUN_PROTO_AUTO, .predict = 1};
    run_out_t o;
    baton_err_t e = {0};
    cr_assert_eq(run_collective(t, &q, &o, &e), 0, "%s %s: %s", topo_name(t), algo, e.msg);
    return o.time_s;
}

/* Every shipped machine, written flat and read back, gives bit-identical
 * predictions (several algorithms, collectives and sizes) and keeps its
 * reducing switches. */
Test(overlay, written_machines_read_back_bit_identical) {
    DIR *d = opendir("topologies");
    cr_assert_not_null(d);
    int machines = 0;
    for (struct dirent *de; (de = readdir(d)) != NULL;) {
        size_t len = strlen(de->d_name);
        if (len < 6 || strcmp(de->d_name + len - 5, ".yaml")) continue;
        char path[512];
        snprintf(path, sizeof path, "topologies/%s", de->d_name);
        topo_t *a = th_load(path, NULL);
        FILE *f = fopen("build/roundtrip.yaml", "w");
        cr_assert_not_null(f);
        cr_assert_eq(topo_write_yaml(a, "round trip", f), 0);
        fclose(f);
        topo_t *b = th_load("build/roundtrip.yaml", NULL);
        cr_expect_eq(topo_nreducers(a), topo_nreducers(b), "%s: reducing switches", path);
        const topo_params_t *pa = topo_params_c(a), *pb = topo_params_c(b);
        cr_expect(pa->has_gpu == pb->has_gpu && (!pa->has_gpu || (gpu_same(&pa->gpu, &pb->gpu) &&
                  !strcmp(pa->gpu.name, pb->gpu.name))), "%s: its GPU", path);
        const char *algos[] = {"auto", "nccl", "ring"};
        const coll_t colls[] = {COLL_ALLREDUCE, COLL_ALLGATHER};
        for (int i = 0; i < 3; i++)
            for (int c = 0; c < 2; c++)
                for (uint64_t n = 8; n <= (1ull << 30); n <<= 11) {
                    if (!strcmp(algos[i], "nccl") && colls[c] != COLL_ALLREDUCE) continue;
                    double ta = predict(a, algos[i], colls[c], n), tb = predict(b, algos[i], colls[c], n);
                    cr_expect_eq(ta, tb, "%s -a %s %s %llu B: %.17g in memory, %.17g read back", path, algos[i],
                                 coll_name(colls[c]), (unsigned long long)n, ta, tb);
                }
        topo_free(a);
        topo_free(b);
        machines++;
    }
    closedir(d);
    cr_expect_geq(machines, 10, "the shipped machines were found");
}

/* Calibrate cluster-h100 on the 2 x 8 H200 log: the written file extends the
 * original; read back it predicts the log exactly as the fit in memory did
 * (the same MAPE to the last digit) and carries its record. */
Test(overlay, calibrated_machine_extends_its_base) {
    char *out, *text;
    cr_assert_eq(th_cli("calibrate -t topologies/cluster-h100.yaml --set nodes=2 --cv 4 --json -o build/h200-cal.yaml "
                        "--nccl-tests " H200_LOG, &out, 1), 0, "%s", out);
    char *m = strstr(out, "\"mape_pct\":");
    double fitted = -1, again = -2;
    cr_assert_not_null(m, "%s", out);
    sscanf(m, "\"mape_pct\":%lf", &fitted);
    cr_expect(strstr(out, "\"cv_mape_pct\":") && strstr(out, "\"parameters\":["), "%s", out);
    free(out);
    text = th_slurp("build/h200-cal.yaml");
    cr_assert_not_null(text);
    cr_expect(strstr(text, "\nextends: \"cluster-h100\"\n") != NULL, "the shipped base by name: %s", text);
    cr_expect(strstr(text, "calibration:") && strstr(text, "algo: nccl") && strstr(text, "band_pct: ["), "%s", text);
    cr_expect(strstr(text, "nodes: \"2\""), "the --set it was fitted with: %s", text);
    cr_expect(strstr(text, "\nnodes:") == NULL && strstr(text, "\nlinks:") == NULL, "no graph of its own");
    free(text);
    cr_assert_eq(th_cli("validate -t build/h200-cal.yaml --json --nccl-tests " H200_LOG, &out, 1), 0, "%s", out);
    m = strstr(out, "\"mape_pct\":");
    cr_assert_not_null(m, "%s", out);
    sscanf(m, "\"mape_pct\":%lf", &again);
    cr_expect_eq(fitted, again, "in memory %.4f, read back %.4f", fitted, again);
    free(out);
    /* under another rule than it was fitted with: a warning */
    cr_assert_eq(th_cli("validate -t build/h200-cal.yaml -a ring --nccl-tests " H200_LOG, &out, 0), 0, "%s", out);
    cr_expect(strstr(out, "was calibrated with -a nccl") != NULL, "%s", out);
    free(out);
    /* `baton topo` shows the record and the classes' efficiencies */
    cr_assert_eq(th_cli("topo build/h200-cal.yaml", &out, 1), 0, "%s", out);
    cr_expect(strstr(out, "calibration    -a nccl --proto auto --model closed: MAPE") != NULL, "%s", out);
    cr_expect(strstr(out, "x gpu-switch") != NULL, "%s", out);
    free(out);
    /* predictions carry the record's error bars */
    cr_assert_eq(th_cli("predict -t build/h200-cal.yaml -c allreduce -s 1GiB --json", &out, 1), 0, "%s", out);
    cr_expect(strstr(out, "\"time_low_s\":") && strstr(out, "\"time_high_s\":"), "%s", out);
    free(out);
}

/* A calibrated machine calibrated again (no -a: its record's rule) records
 * that rule, not an empty one, and validating the result says nothing of a
 * rule it was not fitted for; without cross-validation a prediction has no
 * interval and says why. */
#define RTX2080_LOG "validate/logs/nccl-tests/rtx2080ti_x2_pcie3_nop2p_allreduce.txt"

/* calibrate -t ARGS -o OUT on the RTX 2080 Ti all-reduce log: OUT's text. */
static char *calibrate_2080(const char *args, const char *out_path) {
    char cmd[512], *out, *text;
    snprintf(cmd, sizeof cmd, "calibrate -t %s -o %s --nccl-tests " RTX2080_LOG, args, out_path);
    cr_assert_eq(th_cli(cmd, &out, 0), 0, "%s", out);
    free(out);
    cr_assert_not_null(text = th_slurp(out_path));
    return text;
}

Test(overlay, a_calibration_of_a_calibration_keeps_the_rule) {
    const char *log = RTX2080_LOG;
    char cmd[512], *text;
    free(calibrate_2080("topologies/pcie-2gpu.yaml --set p2p=false --cv 0", "build/twice-1.yaml"));
    text = calibrate_2080("build/twice-1.yaml --cv 0", "build/twice-2.yaml");
    cr_expect(strstr(text, "calibration:\n  algo: nccl\n") != NULL, "%s", text);
    free(text);
    snprintf(cmd, sizeof cmd, "validate -t build/twice-2.yaml --nccl-tests %s", log);
    th_says(cmd, 0, "which it was not fitted for", 0);
    /* fitted without cross-validation: no interval, and the prediction says why */
    th_says("predict -t build/twice-2.yaml -c allreduce -s 1MiB", 0, "no interval: the calibration was not cross-validated", 1);
}

/* A simulator's fit keeps the contention it ran under: the record says
 * `contention: fair`, validate and sim run under it unasked, and a sim or
 * validate under another says it was not fitted for that (the times differ
 * where links are shared). A record's contention is the simulator's only. */
Test(overlay, a_simulators_fit_keeps_its_contention) {
    const char *log = RTX2080_LOG;
    char cmd[512], *text = calibrate_2080("topologies/pcie-2gpu.yaml --set p2p=false --model des --contention fair",
                                          "build/fair.yaml");
    cr_expect(strstr(text, "  model: des\n  contention: fair\n") != NULL, "%s", text);
    free(text);
    snprintf(cmd, sizeof cmd, "validate -t build/fair.yaml --nccl-tests %s", log);
    th_says(cmd, 0, "which it was not fitted for", 0);
    snprintf(cmd, sizeof cmd, "validate -t build/fair.yaml --contention none --nccl-tests %s", log);
    th_says(cmd, 0, "--model des --contention fair; this runs -a nccl --proto auto --model des --contention none", 1);
    th_says("sim -t build/fair.yaml -c allreduce -s 1MiB --json", 0, "\"contention\":\"fair\"", 1);
    th_says("sim -t build/fair.yaml -c allreduce -s 1MiB", 0, "which it was not fitted for", 0);
    th_says("sim -t build/fair.yaml -c allreduce -s 1MiB --contention fifo", 0, "--contention fair; this runs", 1);
    th_says("topo build/fair.yaml", 0, "calibration    -a nccl --proto auto --model des --contention fair", 1);
    th_says("sweep -t build/fair.yaml -c allreduce --sizes 1MiB --set pcie_bw=12.2GB/s", 0, "which it was not fitted for", 0);
    th_says("sweep -t build/fair.yaml -c allreduce --sizes 1MiB --set pcie_bw=12.2GB/s --contention none", 0,
         "--contention fair; this runs -a nccl --proto auto --model des --contention none", 1);
    th_says("sweep -t build/fair.yaml -c allreduce --sizes 1MiB --set pcie_bw=12.2GB/s --model closed --contention fair", 2,
         "--contention is the simulator's", 1);
}

/* calibrate -o onto the machine it reads, or onto a file that machine
 * extends, would leave an overlay extending itself (a loop: both files
 * lost): refused before anything is written, both files as they were. */
Test(overlay, calibrate_does_not_write_over_the_machine_it_reads) {
    const char *log = RTX2080_LOG;
    char cmd[512], *out;
    cr_assert_eq(system("mkdir -p build/own && cp topologies/pcie-2gpu.yaml build/own/base.yaml"), 0);
    snprintf(cmd, sizeof cmd, "calibrate -t build/own/base.yaml --set p2p=false --cv 0 -o build/own/cal.yaml --nccl-tests %s", log);
    cr_assert_eq(th_cli(cmd, &out, 0), 0, "%s", out);
    free(out);
    char *base = th_slurp("build/own/base.yaml"), *cal = th_slurp("build/own/cal.yaml");
    cr_assert(base && cal);
    const char *onto[] = {"build/own/cal.yaml", "build/own/base.yaml", "build/own/./cal.yaml"};
    for (int i = 0; i < 3; i++) {
        snprintf(cmd, sizeof cmd, "calibrate -t build/own/cal.yaml --cv 0 -o %s --nccl-tests %s", onto[i], log);
        th_says(cmd, 1, "is read from it", 1);
    }
    char *base2 = th_slurp("build/own/base.yaml"), *cal2 = th_slurp("build/own/cal.yaml");
    cr_expect(base2 && !strcmp(base, base2), "the base was written over");
    cr_expect(cal2 && !strcmp(cal, cal2), "the calibrated machine was written over");
    free(base), free(cal), free(base2), free(cal2);
}

/* Calibrate cluster-h100 (two nodes) on the 8 x 400G H200 log with ARGS
 * into PATH: the written file's text. */
static char *calibrate_h200(const char *args, const char *path) {
    char cmd[512], *out;
    snprintf(cmd, sizeof cmd, "calibrate -t topologies/cluster-h100.yaml --set nodes=2 %s -o %s --nccl-tests " H200_LOG,
             args, path);
    cr_assert_eq(th_cli(cmd, &out, 1), 0, "%s", out);
    free(out);
    char *text = th_slurp(path);
    cr_assert_not_null(text, "%s", path);
    return text;
}

/* predict -t FILE ARGS --json: is the answer given an interval? */
static int interval_in(const char *file, const char *args) {
    char cmd[256], *out;
    snprintf(cmd, sizeof cmd, "predict -t %s -c allreduce --json %s", file, args);
    cr_assert_eq(th_cli(cmd, &out, 1), 0, "%s", out);
    int band = strstr(out, "\"time_low_s\":") != NULL, outside = strstr(out, "\"outside_calibration\":true") != NULL;
    cr_expect_neq(band, outside, "%s: %s", args, out);
    free(out);
    return band;
}
static int has_interval(const char *args) { return interval_in("build/h200-band.yaml", args); }

/* The band is what cross-validation measured on the logs' own sizes, so a
 * calibrated machine gives it only there: the collective and rank count its
 * logs ran (the record's `seen:`: 16 ranks, 1 KiB-16 GiB, two processes of
 * -g 8 here), with the --set values they ran with; other node counts, sizes
 * beyond the logs', another collective or another NIC get the time alone,
 * as does another rule than the fit's (-a, --proto, the simulator for a
 * closed-form fit), and the text says why. A process per GPU (no -g) keeps the band's width
 * in seconds: the logs' launches are known, not errors. */
Test(overlay, the_band_holds_where_the_logs_ran) {
    char *out, *text = calibrate_h200("--cv 4", "build/h200-band.yaml");
    cr_expect(strstr(text, "  seen:\n    - {coll: allreduce, ranks: 16, min: 1024, max: 17179869184, gpus_per_thread: 8}\n"),
              "%s", text);
    free(text);
    cr_expect(has_interval("-s 1KiB -g 8"));
    cr_expect(has_interval("-s 16GiB -g 8 --set nodes=2"), "the value it was fitted with");
    cr_expect(!has_interval("-s 512 -g 8"), "below the smallest size fitted");
    cr_expect(!has_interval("-s 32GiB -g 8"), "above the largest");
    cr_expect(has_interval("-s 1GiB -g 8 --set nodes=4"), "another scale: the band, widened");
    cr_expect(!has_interval("-s 1GiB -g 8 --set nic_bw=800Gb/s"));
    cr_expect(has_interval("-s 1GiB -g 8 --set nic_bw=400Gb/s"), "the base file's own value: what the logs ran");
    cr_expect(has_interval("-s 1GiB -g 8 --set nvlink_gbps=450 --set nic_bw=400Gb/s"));
    cr_expect(!has_interval("-s 1GiB -g 8 --set nvlink_gbps=450 --set nic_bw=200Gb/s"));
    cr_expect(!has_interval("-s 1GiB -g 8 -c reducescatter"));
    cr_expect(has_interval("-s 1KiB"), "a process per GPU");
    cr_expect(!has_interval("-s 1KiB -g 8 -a ring"), "the band is the fitted rule's errors, not the ring's");
    cr_expect(!has_interval("-s 1KiB -g 8 --proto LL"));
    char *g8, *g1;
    cr_assert_eq(th_cli("predict -t build/h200-band.yaml -c allreduce -s 1KiB -g 8 --json", &g8, 1), 0, "%s", g8);
    cr_assert_eq(th_cli("predict -t build/h200-band.yaml -c allreduce -s 1KiB --json", &g1, 1), 0, "%s", g1);
    const char *keys[3] = {"time_s", "time_low_s", "time_high_s"};
    for (int i = 0; i < 3; i++)
        cr_expect_float_eq(th_json_num(g8, keys[i]) - th_json_num(g1, keys[i]), th_json_num(g8, "launch_s"), 1e-12,
                           "%s: -g 8 %s, -g 1 %s", keys[i], g8, g1);
    free(g8);
    free(g1);
    cr_assert_eq(th_cli("predict -t build/h200-band.yaml -c allreduce -s 1GiB -g 8 --set nodes=4", &out, 1), 0, "%s", out);
    cr_expect(strstr(out, "widened 1.55x: 1 doublings from the rank counts its logs ran") != NULL, "%s", out);
    cr_expect(strstr(out, "held-out errors at sizes >= 64 MiB") == NULL, "%s", out);
    free(out);
    /* the band's ends, widened 1 + 0.55 a doubling: 32 ranks are one from 16,
     * 512 five (this log has 9 sizes from 64 MiB, fewer than a large band
     * needs: 1 GiB takes the band of all sizes; scale/ has one that does) */
    const char *scales[] = {"nodes=2", "nodes=4", "nodes=64"};
    const double widen[] = {1, 1.55, 3.75};
    for (int i = 0; i < 3; i++) {
        char cmd[160];
        snprintf(cmd, sizeof cmd, "predict -t build/h200-band.yaml -c allreduce -s 1GiB -g 8 --json --set %s", scales[i]);
        cr_assert_eq(th_cli(cmd, &out, 1), 0, "%s", out);
        double t = th_json_num(out, "time_s"), lo = th_json_num(out, "time_low_s"), hi = th_json_num(out, "time_high_s");
        topo_t *b = th_load("build/h200-band.yaml", NULL);
        const topo_calib_t *k = &topo_params_c(b)->calib;
        cr_expect(!(k->large_lo_pct < k->large_hi_pct), "9 large sizes: no large band");
        cr_expect_float_eq(lo, t / (1 + k->band_hi_pct * widen[i] / 100), 1e-9 * t, "%s: %s", scales[i], out);
        cr_expect_float_eq(hi, t / (1 + k->band_lo_pct * widen[i] / 100), 1e-9 * t, "%s: %s", scales[i], out);
        topo_free(b);
        free(out);
    }
    cr_assert_eq(th_cli("sim -t build/h200-band.yaml -c allreduce -s 1KiB -g 8", &out, 1), 0, "%s", out);
    cr_expect(strstr(out, "no interval: the calibration's errors are those of -a nccl --proto auto --model closed") != NULL,
              "%s", out);
    free(out);
    cr_assert_eq(th_cli("predict -t build/h200-band.yaml -c allreduce -s 32GiB", &out, 1), 0, "%s", out);
    cr_expect(strstr(out, "no interval: the calibration's logs covered allreduce on 16 ranks, 1 KiB-16 GiB with -g 8 only")
              != NULL, "%s", out);
    free(out);
}

/* The record keeps the NCCL its logs ran; validating a log of another
 * NCCL (major.minor) against it says so: plans and protocols move between
 * versions. */
Test(overlay, the_record_keeps_the_logs_nccl) {
    char *out, *text = calibrate_h200("--cv 0", "build/h200-nccl.yaml");
    cr_expect(strstr(text, "  nccl: \"2.30.4+cuda13.2\"\n") != NULL, "%s", text);
    free(text);
    cr_assert_eq(th_cli("topo build/h200-nccl.yaml", &out, 1), 0, "%s", out);
    cr_expect(strstr(out, "logs of NCCL 2.30.4+cuda13.2") != NULL, "%s", out);
    free(out);
    cr_assert_eq(th_cli("validate -t build/h200-nccl.yaml --set nics=1 --nccl-tests "
                        "validate/logs/nccl-tests-extra/h200x16_2node_singlenic_schmaustech_allreduce.txt", &out, 0), 0, "%s", out);
    cr_expect(strstr(out, "ran NCCL 2.27.3+cuda12.9; h200-nccl was calibrated on logs of NCCL 2.30.4+cuda13.2") != NULL,
              "%s", out);
    free(out);
    cr_assert_eq(th_cli("validate -t build/h200-nccl.yaml --nccl-tests " H200_LOG, &out, 0), 0, "%s", out);
    cr_expect(strstr(out, "calibrated on logs of NCCL") == NULL, "the same NCCL: %s", out);
    free(out);
}

/* Nor across a hole in the fitted sizes: the band is measured between
 * fitted neighbours, so sizes held out from 64 KiB to 64 MiB get the time
 * alone, and the two runs either side keep it; one size left out (a gap of
 * 4 in a -f 2 log, as a cross-validation fold leaves) is no hole. */
Test(overlay, a_hole_in_the_fitted_sizes_has_no_band) {
    char *out, *text = calibrate_h200("--cv 4 --hold-out 64KiB:64MiB", "build/h200-hole.yaml");
    cr_expect(strstr(text, "  seen:\n    - {coll: allreduce, ranks: 16, min: 1024, max: 32768, gpus_per_thread: 8}\n"
                           "    - {coll: allreduce, ranks: 16, min: 134217728, max: 17179869184, gpus_per_thread: 8}\n"),
              "%s", text);
    free(text);
    cr_expect(interval_in("build/h200-hole.yaml", "-s 4KiB -g 8"));
    cr_expect(interval_in("build/h200-hole.yaml", "-s 1GiB -g 8"));
    cr_expect(!interval_in("build/h200-hole.yaml", "-s 1MiB -g 8"), "inside the hole");
    cr_expect(!interval_in("build/h200-hole.yaml", "-s 48KiB -g 8"), "past the first run's last size");
    cr_assert_eq(th_cli("predict -t build/h200-hole.yaml -c allreduce -s 1MiB -g 8", &out, 1), 0, "%s", out);
    cr_expect(strstr(out, "no interval: the calibration's logs covered allreduce on 16 ranks, 1 KiB-32 KiB with -g 8; "
                          "allreduce on 16 ranks, 128 MiB-16 GiB with -g 8 only") != NULL, "%s", out);
    free(out);
    free(calibrate_h200("--cv 4 --hold-out 1MiB:1MiB", "build/h200-gap.yaml"));
    cr_expect(interval_in("build/h200-gap.yaml", "-s 1MiB -g 8"), "one size left out");
}

/* The calibrated file still takes every parameter of its base: with
 * --set nodes=64 it is 64 nodes with their reducing switches (nvlstree runs),
 * and it predicts exactly what the base at 64 nodes with the fitted values
 * put in by hand predicts. */
Test(overlay, calibrated_machine_answers_what_if) {
    char *out;
    cr_assert_eq(th_cli("calibrate -t topologies/cluster-h100.yaml --set nodes=2 --cv 0 -o build/h200-cal2.yaml "
                        "--nccl-tests " H200_LOG, &out, 1), 0, "%s", out);
    free(out);
    topo_t *o2 = th_load("build/h200-cal2.yaml", NULL), *o64 = th_load("build/h200-cal2.yaml", "nodes=64");
    topo_t *b64 = th_load("topologies/cluster-h100.yaml", "nodes=64");
    cr_expect_eq(topo_nranks(o2), 16);
    cr_expect_eq(topo_nranks(o64), 512);
    cr_expect_eq(topo_nreducers(o64), 64, "a reducing switch per node");
    const topo_params_t *p = topo_params_c(o64);
    topo_params_t *q = topo_params(b64);
    baton_err_t e = {0};
    memcpy(q->proto, p->proto, sizeof q->proto);
    q->reduce_bw = p->reduce_bw;
    q->lat_scale = p->lat_scale;
    for (int i = 0; i < p->neff; i++)
        cr_assert_eq(topo_set_class_efficiency(b64, p->class_eff[i].name, p->class_eff[i].eff, &e), 0, "%s", e.msg);
    for (uint64_t n = 1024; n <= (1ull << 32); n <<= 6) {
        double t64 = predict(o64, "nccl", COLL_ALLREDUCE, n);
        cr_expect_eq(t64, predict(b64, "nccl", COLL_ALLREDUCE, n), "%llu B", (unsigned long long)n);
        cr_expect_gt(t64, predict(o2, "nccl", COLL_ALLREDUCE, n), "64 nodes take longer than 2 at %llu B", (unsigned long long)n);
        cr_expect_gt(predict(o64, "nvlstree", COLL_ALLREDUCE, n), 0);
    }
    topo_free(o2);
    topo_free(o64);
    topo_free(b64);
}

/* A file that extends another: errors name the place, and it may not bring
 * a graph of its own. */
Test(overlay, bad_overlays_are_errors_with_places) {
    const char *cases[][2] = {
        {"extends: missing.yaml\n", "cannot open included file"},
        {"extends: ../../topologies/hgx-h100.yaml\nnodes: []\n", "unknown key 'nodes'"},
        {"extends: ../../topologies/hgx-h100.yaml\nlink_efficiency: {gpu-nvlink: 0.5}\n", "not a link class"},
        {"extends: ../../topologies/hgx-h100.yaml\nlink_efficiency: {gpu-switch: 1.5}\n", "(0, 1]"},
        {"extends: ../../topologies/hgx-h100.yaml\ncalibration: {band_pct: [5, -5]}\n", "band_pct"},
        {"extends: ../../topologies/hgx-h100.yaml\ncalibration: {seen: [{coll: allreduce, ranks: 8, min: 1GiB, max: 8}]}\n",
         "'min' is above 'max'"},
        {"extends: ../../topologies/hgx-h100.yaml\ncalibration: {seen: [{coll: alltoall2, ranks: 8, min: 8, max: 8}]}\n",
         "unknown collective"},
        {"extends: ../../topologies/hgx-h100.yaml\nparams: {nodez: 2}\n", "no parameter 'nodez'"},
        {"extends: ../../topologies/hgx-h100.yaml\ncalibration: {nccl: [2.19, 2.27]}\n", "'nccl' is the logs' NCCL versions"},
        {"extends: ../../topologies/hgx-h100.yaml\ncalibration: {model: des, contention: lifo}\n", "fifo, fair or none"},
        {"extends: ../../topologies/hgx-h100.yaml\ncalibration: {model: closed, contention: fair}\n", "the simulator's"},
        {"extends: ../../topologies/hgx-h100.yaml\nlibrary: {rules: [{coll: allreduce, ranks: 8, min: 1, max: 8, "
         "nccl_algo: hypercube, proto: LL}]}\n", "no row of NCCL's algorithm 'hypercube'"},
        {"extends: ../../topologies/hgx-h100.yaml\nlibrary: {rules: [{coll: allreduce, ranks: 8, min: 1, max: 8, "
         "nccl_algo: tree, algo: ring, proto: LL}]}\n", "not both"},
        {"extends: ../../topologies/hgx-h100.yaml\nlibrary: {rules: [{coll: allreduce, ranks: 8, min: 1, max: 8, "
         "nccl_algo: tree, proto: LL, channels: 65}]}\n", "'channels' must be at most 64"},
        {"extends: self.yaml\n", "more than 8 deep"},
        {"extends: ../../topologies/hgx-h100.yaml\npxn: true\n", "'pxn' shapes the machine"},
        {"extends: ../../topologies/hgx-h100.yaml\ngroup_size: 4\n", "'group_size' shapes the machine"},
        {"extends: ../../topologies/hgx-h100.yaml\nlaunch: 3\n", "'launch' must be a time"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *path = strstr(cases[i][0], "self.yaml") ? "build/ov/self.yaml" : "build/ov/bad.yaml";
        cr_assert_eq(system("mkdir -p build/ov"), 0);
        FILE *f = fopen(path, "w");
        cr_assert_not_null(f);
        fputs(cases[i][0], f);
        fclose(f);
        baton_err_t e = {0};
        topo_t *t = topo_yaml_load(path, NULL, 0, &e);
        cr_expect_null(t, "case %zu loaded", i);
        cr_expect(strstr(e.msg, cases[i][1]) != NULL, "case %zu: %s", i, e.msg);
        cr_expect(strstr(e.msg, "build/ov/") != NULL, "case %zu names the file: %s", i, e.msg);
        topo_free(t);
    }
}

/* sweep on a calibrated machine answers under the rule it was fitted with
 * (-a nccl, closed forms) where none is given, as predict does: the same
 * time; under another rule it says so. */
Test(overlay, sweep_answers_under_the_calibrated_rule) {
    free(calibrate_h200("--cv 0", "build/h200-sweep.yaml"));
    char *out;
    cr_assert_eq(th_cli("sweep -t build/h200-sweep.yaml -c allreduce --set nodes=2 --sizes 1GiB", &out, 0), 0, "%s", out);
    char algo[32] = "", model[16] = "";
    double swept = -1;
    const char *row = strstr(out, "\n2,16,");
    cr_assert_not_null(row, "%s", out);
    cr_assert_eq(sscanf(row, "\n2,16,%*[0-9],%31[^,],%*[^,],%15[^,],%lf", algo, model, &swept), 3, "%s", out);
    cr_expect_str_eq(model, "closed", "%s", out);
    cr_expect(strstr(out, "not fitted for") == NULL, "%s", out);
    free(out);
    cr_assert_eq(th_cli("predict -t build/h200-sweep.yaml -c allreduce -s 1GiB --json", &out, 1), 0, "%s", out);
    cr_expect_float_eq(th_json_num(out, "time_s"), swept, 1e-9 * swept, "predict %s; sweep %g (%s)", out, swept, algo);
    free(out);
    th_says("sweep -t build/h200-sweep.yaml -c allreduce -a ring --set nodes=2 --sizes 1GiB", 0, "was calibrated with -a nccl", 1);
    /* select compares every algorithm: the others ride on values fitted for NCCL's */
    th_says("select -t build/h200-sweep.yaml -c allreduce --sizes 1MiB", 0, "was calibrated with -a nccl --proto auto --model "
         "closed; the other algorithms' times use its fitted values", 1);
    th_says("select -t topologies/cluster-h100.yaml -c allreduce --sizes 1MiB", 0, "was calibrated", 0);
    /* tp takes the fitted rule too, and says so and that its simulated times
     * are not what the closed forms were fitted on; uncalibrated, its default
     * is NCCL's algorithms (-a nccl, as step's: issue 52) */
    th_says("tp -t build/h200-sweep.yaml --preset 70b", 0, "(the machine's fitted rule)", 1);
    th_says("tp -t build/h200-sweep.yaml --preset 70b", 0, "this runs -a nccl --proto auto --model des", 1);
    th_says("tp -t topologies/cluster-h100.yaml --preset 70b", 0, "(NCCL's algorithms: -a nccl, the default)", 1);
}

/* A fit run with --channels C is written with channels=C, so the file
 * answers as the fit did: the same MAPE read back, without --channels. */
Test(overlay, a_fit_on_channels_keeps_them) {
    const char *log = "validate/logs/nccl-tests/a100x8_nvswitch_oci_bmgpu48_allreduce.txt";
    char cmd[512], *out;
    snprintf(cmd, sizeof cmd, "calibrate -t topologies/hgx-a100.yaml --channels 4 --cv 0 --json -o build/chan4.yaml "
             "--nccl-tests %s", log);
    cr_assert_eq(th_cli(cmd, &out, 1), 0, "%s", out);
    double fitted = th_json_num(out, "mape_pct");
    free(out);
    snprintf(cmd, sizeof cmd, "validate -t build/chan4.yaml --json --nccl-tests %s", log);
    cr_assert_eq(th_cli(cmd, &out, 1), 0, "%s", out);
    cr_expect_eq(th_json_num(out, "mape_pct"), fitted, "read back %s, fitted %g", out, fitted);
    free(out);
    char *text = th_slurp("build/chan4.yaml");
    cr_assert_not_null(text);
    cr_expect(strstr(text, "channels: \"4\"") != NULL, "%s", text);
    free(text);
}

/* A record's large sizes' band is [low, high] as band_pct is; anything else
 * is named with its line. */
Test(overlay, a_malformed_large_band_is_named) {
    FILE *f = fopen("build/bad-band.yaml", "w");
    cr_assert_not_null(f);
    fputs("name: bad-band\nextends: \"hgx-h100\"\ncalibration:\n  algo: nccl\n  proto: auto\n  model: closed\n"
          "  band_pct: [-5, 5]\n  band_large_pct: [3, -3]\n", f);
    fclose(f);
    th_says("topo build/bad-band.yaml", 1, "bad-band.yaml:8", 1);
    th_says("topo build/bad-band.yaml", 1, "'band_large_pct' is [low, high]", 1);
}
