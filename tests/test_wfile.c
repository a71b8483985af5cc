/* test_wfile.c - files written whole or not at all (util/wfile.h): through
 * a symlink the link stays and its target changes; a file keeps its
 * permissions; a FIFO is written in place, not swapped for a file; a set of
 * files with one that cannot be written leaves none. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/wfile.h"

static char dir[64];

static void setup(void) {
    snprintf(dir, sizeof dir, "/tmp/baton-wfile-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void) {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

static const char *at(const char *name) {
    static char buf[4][128];
    static int k;
    char *b = buf[k++ & 3];
    snprintf(b, 128, "%s/%s", dir, name);
    return b;
}

static void says(const char *path, const char *want) {
    char got[64] = {0};
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    cr_assert(fgets(got, sizeof got, f) || want[0] == 0);
    fclose(f);
    cr_expect_str_eq(got, want, "%s", path);
}

TestSuite(wfile, .init = setup, .fini = teardown);

Test(wfile, a_symlink_stays_and_its_target_changes) {
    cr_assert_eq(wfile_write(at("target"), "old", 3), 0);
    cr_assert_eq(symlink("target", at("link")), 0);
    cr_assert_eq(wfile_write(at("link"), "new", 3), 0, "%s", strerror(errno));
    struct stat st;
    cr_assert_eq(lstat(at("link"), &st), 0);
    cr_expect(S_ISLNK(st.st_mode), "the link was replaced by a file");
    says(at("target"), "new");
}

Test(wfile, a_file_keeps_its_permissions) {
    cr_assert_eq(wfile_write(at("f"), "old", 3), 0);
    cr_assert_eq(chmod(at("f"), 0600), 0);
    cr_assert_eq(wfile_write(at("f"), "new", 3), 0);
    struct stat st;
    cr_assert_eq(stat(at("f"), &st), 0);
    cr_expect_eq(st.st_mode & 07777, 0600, "mode %o", st.st_mode & 07777);
    says(at("f"), "new");
}

Test(wfile, a_fifo_is_written_in_place) {
    cr_assert_eq(mkfifo(at("pipe"), 0600), 0);
    int rd = open(at("pipe"), O_RDONLY | O_NONBLOCK);   /* a reader, so the write does not block */
    cr_assert_geq(rd, 0);
    cr_assert_eq(wfile_write(at("pipe"), "through", 7), 0, "%s", strerror(errno));
    char got[16] = {0};
    cr_expect_eq(read(rd, got, sizeof got - 1), 7);
    cr_expect_str_eq(got, "through");
    close(rd);
    struct stat st;
    cr_assert_eq(lstat(at("pipe"), &st), 0);
    cr_expect(S_ISFIFO(st.st_mode), "the FIFO was replaced by a file");
}

Test(wfile, a_set_with_one_unwritable_leaves_none) {
    cr_assert_eq(mkdir(at("t.2"), 0700), 0);                 /* a directory where file 2 goes */
    wfile_set_t s = {0};
    cr_expect_eq(wfile_set_add(&s, at("t.0"), "a", 1), 0);
    cr_expect_eq(wfile_set_add(&s, at("t.1"), "b", 1), 0);
    cr_expect_eq(wfile_set_add(&s, at("t.2"), "c", 1), -1);
    cr_expect_eq(errno, EISDIR);
    wfile_set_free(&s);
    cr_expect_neq(access(at("t.0"), F_OK), 0, "t.0 was written");
    cr_expect_neq(access(at("t.1"), F_OK), 0, "t.1 was written");
    char cmd[160], *line = NULL;
    size_t n = 0;
    snprintf(cmd, sizeof cmd, "ls '%s' | grep -c tmp", dir);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    cr_expect(getline(&line, &n, p) > 0 && atoi(line) == 0, "temporaries left: %s", line);
    free(line);
    pclose(p);
    wfile_set_t ok = {0};
    cr_expect_eq(wfile_set_add(&ok, at("u.0"), "a", 1), 0);
    cr_expect_eq(wfile_set_add(&ok, at("u.1"), "b", 1), 0);
    cr_expect_eq(wfile_set_commit(&ok), 0);
    wfile_set_free(&ok);
    says(at("u.0"), "a");
    says(at("u.1"), "b");
}
