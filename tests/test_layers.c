/* test_layers.c - the sources' arrows run one way (scripts/layers.sh):
 * no file includes a header of a room above its own, and no two modules
 * include each other, however many steps round (docs/DESIGN.md's layout). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

/* The repository as it stands: no arrow breaks a rule. */
Test(layers, the_sources_arrows_run_one_way) {
    char *out = NULL;
    int rc = th_sh("sh scripts/layers.sh . 2>&1", &out);
    cr_assert_eq(rc, 0, "scripts/layers.sh found:\n%s", out ? out : "");
    free(out);
}

/* Write one file of a small tree under dir. */
static void put(const char *dir, const char *path, const char *text) {
    char full[512], cmd[600];
    snprintf(full, sizeof full, "%s/%s", dir, path);
    snprintf(cmd, sizeof cmd, "mkdir -p \"$(dirname '%s')\"", full);
    cr_assert_eq(system(cmd), 0);
    FILE *f = fopen(full, "w");
    cr_assert_not_null(f, "%s", full);
    fputs(text, f);
    fclose(f);
}

/* The checker itself: a tree with a circle (a -> b -> a, a private header
 * folded into its module), an arrow up (models/ including sim/cli/) and a
 * room entered by another door than its own (sim/answer/ including a part
 * of sim/nccl/, not nccl.h) is refused, naming each; the same tree without
 * them passes. */
Test(layers, a_circle_and_an_arrow_up_are_named) {
    char dir[] = "build/layers.XXXXXX", cmd[256];
    cr_assert_not_null(mkdtemp(dir));
    put(dir, "util/a.h", "#include \"b.h\"\n");
    put(dir, "util/a.c", "#include \"a_internal.h\"\n");
    put(dir, "util/a_internal.h", "#include \"a.h\"\n");
    put(dir, "util/b.h", "int b;\n");
    put(dir, "util/b.c", "#include \"b.h\"\n");
    put(dir, "models/m.c", "#include \"../util/b.h\"\n");
    put(dir, "sim/cli/main.c", "#include \"../../models/m.h\"\n");
    put(dir, "models/m.h", "int m;\n");
    put(dir, "sim/nccl/rule.h", "int r;\n");
    put(dir, "sim/nccl/nccl.h", "#include \"rule.h\"\n");
    put(dir, "sim/answer/x.c", "#include \"../nccl/nccl.h\"\n");
    char *out = NULL;
    snprintf(cmd, sizeof cmd, "sh scripts/layers.sh %s 2>&1", dir);
    cr_assert_eq(th_sh(cmd, &out), 0, "one way: %s", out ? out : "");   /* nothing wrong yet */
    free(out);
    put(dir, "util/b.c", "#include \"b.h\"\n#include \"a.h\"\n");               /* b -> a -> b */
    put(dir, "models/m.h", "#include \"../sim/cli/cmd.h\"\n");                  /* up */
    put(dir, "sim/cli/cmd.h", "int c;\n");
    put(dir, "sim/answer/x.c", "#include \"../nccl/rule.h\"\n");               /* not by its door */
    out = NULL;
    cr_assert_neq(th_sh(cmd, &out), 0);
    cr_assert(out && strstr(out, "models/m.h includes sim/cli/cmd.h: sim/cli/ is above models/"), "%s", out);
    cr_assert(strstr(out, "util/a\n") && strstr(out, "util/b\n"), "the circle's members: %s", out);
    cr_assert(strstr(out, "sim/answer/x.c includes sim/nccl/rule.h: outside sim/nccl/ only its door nccl.h"), "%s", out);
    cr_assert(!strstr(out, "a_internal"), "a private header is its module's: %s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}
