/* test_fuzz.c - replays what the fuzzers found (tests/fuzz/regressions/):
 * every input that once crashed, hung or misled the tool must now give a
 * result or an error naming its place, quickly. `make fuzz` runs the
 * fuzzers themselves; this runs without clang. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../algorithms/msccl.h"
#include "../topologies/import.h"
#include "../topologies/topo_yaml.h"
#include "../topologies/units.h"
#include "../validate/nccltests.h"

/* Call check(path) for every file in dir; returns how many. */
static int each_file(const char *dir, void (*check)(const char *path)) {
    DIR *d = opendir(dir);
    int n = 0;
    cr_assert_not_null(d, "%s", dir);
    for (struct dirent *de; (de = readdir(d)) != NULL;) {
        char path[512];
        if (de->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        check(path);
        n++;
    }
    closedir(d);
    return n;
}

static void topo_case(const char *path) {
    baton_err_t e = {0};
    topo_t *t = topo_yaml_load(path, NULL, 0, &e);
    if (t == NULL) cr_expect(strncmp(e.msg, path, strlen(path)) == 0, "%s: error without its place: %s", path, e.msg);
    topo_free(t);
}

static void nccltests_case(const char *path) {
    baton_err_t e = {0};
    nt_log_t log;
    if (nt_parse(path, 0, &log, &e) == 0) nt_free(&log);
    else cr_expect(e.msg[0] != 0, "%s: an error must say what", path);
}

/* An nvidia-smi matrix or NCCL topology XML imports to a machine the loader
 * takes, or fails with an error naming the file, both ways. */
static void import_one(const char *path, int (*import)(const char *, const char *, char **, baton_err_t *)) {
    baton_err_t e = {0};
    char *yaml = NULL;
    if (import(path, "replayed", &yaml, &e) < 0) {
        cr_expect(strncmp(e.msg, path, strlen(path)) == 0, "%s: error without its place: %s", path, e.msg);
        return;
    }
    FILE *f = fopen("build/import-replay.yaml", "w");
    cr_assert_not_null(f);
    fputs(yaml, f);
    fclose(f);
    free(yaml);
    topo_t *t = topo_yaml_load("build/import-replay.yaml", NULL, 0, &e);
    cr_expect_not_null(t, "%s: imported, then refused: %s", path, e.msg);
    topo_free(t);
}

static void import_case(const char *path) {
    import_one(path, import_nvsmi);
    import_one(path, import_nccl_xml);
}

/* Unit regressions are values that were accepted and must not be. */
static void units_case(const char *path) {
    char s[256] = "";
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    size_t n = fread(s, 1, sizeof s - 1, f);
    fclose(f);
    s[n] = 0;
    double d;
    const char *why = NULL;
    cr_expect_neq(units_bandwidth(s, &d, &why), 0, "%s: '%s' accepted as %g B/s", path, s, d);
}

/* An MSCCL file reads and compiles, or says what is wrong. */
static void msccl_case(const char *path) {
    baton_err_t e = {0};
    if (msccl_check_file(path, &e) < 0) cr_expect(e.msg[0] != 0, "%s: an error must say what", path);
}

Test(fuzz, regressions_replay) {
    int n = each_file("tests/fuzz/regressions/topo", topo_case);
    n += each_file("tests/fuzz/regressions/nccltests", nccltests_case);
    n += each_file("tests/fuzz/regressions/units", units_case);
    n += each_file("tests/fuzz/regressions/import", import_case);
    n += each_file("tests/fuzz/regressions/msccl", msccl_case);
    cr_expect_geq(each_file("tests/data/msccl/bad", msccl_case), 7, "the MSCCL bad files");
    cr_expect_geq(each_file("tests/fuzz/seeds/import", import_case), 5, "the import seeds");
    cr_expect_geq(n, 2, "the regression corpus is not empty");
}
