/* test_docs.c - the documents cannot rot: every command README.md and
 * docs/guide/ show runs and prints what they show (scripts/doctest.sh), and
 * docs/reference/commands/ is the binary's own help text
 * (scripts/gen-reference.sh). A failure prints the difference and the
 * command that rewrites the document. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

static const char *bin(void) {
    const char *b = getenv("BATON_BIN");
    return b ? b : "build/baton";
}

/* sh scripts/doctest.sh BIN FILES: exit 0 and its summary line. */
static void doc_runs(const char *files) {
    char cmd[1024], *out;
    snprintf(cmd, sizeof cmd, "sh scripts/doctest.sh %s %s 2>&1", bin(), files);
    int rc = th_sh(cmd, &out);
    cr_expect_eq(rc, 0, "%s", out);
    cr_expect(strstr(out, "commands print what their documents show") != NULL, "%s", out);
    free(out);
}

Test(docs, readme_commands_print_what_the_readme_shows) { doc_runs("README.md"); }

Test(docs, guide_commands_print_what_the_guide_shows) { doc_runs("docs/guide/*.md"); }

/* The runner itself: a page whose output is wrong fails, naming the line. */
Test(docs, a_wrong_output_fails_and_names_its_line) {
    char dir[] = "/tmp/baton-doc-XXXXXX", cmd[1024], *out;
    cr_assert_not_null(mkdtemp(dir));
    snprintf(cmd, sizeof cmd,
             "printf '# t\\n\\n```console\\n$ build/baton kids --method ring | head -1\\nfive kids\\n```\\n' > %s/t.md && "
             "sh scripts/doctest.sh %s %s/t.md 2>&1", dir, bin(), dir);
    cr_expect_neq(th_sh(cmd, &out), 0, "%s", out);
    cr_expect(strstr(out, "t.md:4:") != NULL && strstr(out, "+4 kids each counted") != NULL, "%s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_expect_eq(th_sh(cmd, &out), 0);
    free(out);
}

Test(docs, the_command_reference_is_the_help_text) {
    char cmd[512], *out;
    snprintf(cmd, sizeof cmd, "sh scripts/gen-reference.sh %s --check 2>&1", bin());
    cr_expect_eq(th_sh(cmd, &out), 0, "%s", out);
    free(out);
}

/* Every relative link in the documents names a file that is there. */
Test(docs, relative_links_name_files_that_exist) {
    char *out;
    cr_assert_eq(th_sh("for f in README.md docs/*.md docs/guide/*.md docs/decisions/*.md docs/reference/*.md "
                       "docs/reference/commands/*.md; do d=$(dirname $f); "
                       "grep -o '](\\([^)#: ]*\\)' $f | sed 's/^](//' | while read -r l; do "
                       "[ -z \"$l\" ] || [ -e \"$d/$l\" ] || echo \"$f: $l\"; done; done", &out), 0);
    cr_expect_str_eq(out, "", "links to nothing:\n%s", out);
    free(out);
}

/* NOTES.md was folded into docs/decisions/: nothing points at it. */
Test(docs, nothing_points_at_the_old_notes) {
    char *out;
    cr_assert_eq(th_sh("git grep -n 'NOTES\\.md' -- . ':!tests/test_docs.c' 2>/dev/null; true", &out), 0);
    cr_expect_str_eq(out, "", "still pointing at docs/NOTES.md:\n%s", out);
    free(out);
}

/* The front door stays a front door. */
Test(docs, the_readme_fits_in_250_lines) {
    char *out;
    cr_assert_eq(th_sh("wc -l < README.md", &out), 0);
    cr_expect_leq(atoi(out), 250, "README.md has %d lines", atoi(out));
    free(out);
}

/* The index pages name what ships: README's "Commands at a glance" a row
 * for every command `baton --help` lists, topologies/README.md's "Shipped
 * machines" a row for every machine file in topologies/. Before, README left out
 * expect, doctor, export and replay, and the machines' table polaris, p5,
 * p5en, p6-b200, host and gpu-virtual. */
Test(docs, the_indexes_name_every_command_and_machine) {
    char cmd[1024], *out;
    snprintf(cmd, sizeof cmd, "%s --help | awk '/^commands:/ { on = 1; next } on && /^$/ { exit } on && /^  [a-z]/ "
             "{ print $1 }' | { n=0; while read -r c; do n=$((n+1)); grep -q \"^| \\`$c\\` | \" README.md || "
             "echo \"README.md lacks $c\"; done; [ $n -ge 18 ] || echo \"only $n commands in --help\"; }; "
             "for f in topologies/*.yaml; do b=$(basename $f); grep -q \"^| $b | \" topologies/README.md || "
             "echo \"topologies/README.md lacks $b\"; done", bin());
    cr_assert_eq(th_sh(cmd, &out), 0);
    cr_expect_str_eq(out, "", "%s", out);
    free(out);
}
