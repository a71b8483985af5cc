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

/* docs/guide/machines.md's prose numbers (no console block runs them) are
 * what the commands it names print: each command below prints `says`, and
 * the page shows `doc` (its claim, the same number where it quotes one).
 * Before, it said NVLS algbw 254 (272.5 now), CollNet 1.150 / 1.153 ms
 * (1.10725), 70.5 ms at 16 GiB (67.3147), collnet_ring from 32 MiB (4 GiB)
 * and 1.66 ms on 16 x 8 A100 (2.00739). */
Test(docs, the_machines_page_quotes_what_the_tool_prints) {
    static const struct { const char *args, *says, *doc; } c[] = {
        {"sim -t hgx-h100 -c allreduce -a nvls -s 1GiB --proto simple", "algbw    272.5 GB/s", "at algbw 272.5"},
        {"sim -t hgx-h100 -c allreduce -a ring -s 1GiB --proto simple", "algbw    210.8 GB/s", "the ring's 210.8"},
        {"validate -t cluster-h100 --set nodes=2 --nccl-tests "
         "validate/logs/nccl-tests-extra/h200x16_2node_bf3roce8x400_schmaustech_allreduce.txt",
         "16 GiB   66.3362 ms   67.3147 ms", "67.3147 ms predicted, 66.3362 ms measured"},
        {"sim -t cluster-h100 --set sharp=true --set nodes=2 -c allreduce -a collnet -s 256MiB --proto simple",
         "time     1.10725 ms", "1.10725 ms on 2 nodes and on 16"},
        {"sim -t cluster-h100 --set sharp=true --set nodes=16 -c allreduce -a collnet -s 256MiB --proto simple",
         "time     1.10725 ms", "1.10725 ms on 2 nodes and on 16"},
        {"sim -t cluster-h100 --set sharp=true --set nodes=2 -c allreduce -a ring -s 256MiB --proto simple",
         "time     1.58599 ms", "takes 1.58599 and 2.96941 ms"},
        {"sim -t cluster-h100 --set sharp=true --set nodes=16 -c allreduce -a ring -s 256MiB --proto simple",
         "time     2.96941 ms", "takes 1.58599 and 2.96941 ms"},
        {"plan -t topologies/cluster-h100.yaml --set sharp=true --sizes 1MiB,2MiB", "  1 MiB  nvlstree ",
         "collnet from 2 MiB to 2 GiB"},
        {"plan -t topologies/cluster-h100.yaml --set sharp=true --sizes 1MiB,2MiB", "  2 MiB  collnet ",
         "collnet from 2 MiB to 2 GiB"},
        {"plan -t topologies/cluster-h100.yaml --set sharp=true --sizes 2GiB,4GiB", "  2 GiB  collnet ",
         "collnet from 2 MiB to 2 GiB, then collnet_ring"},
        {"plan -t topologies/cluster-h100.yaml --set sharp=true --sizes 2GiB,4GiB", "  4 GiB  collnet_ring ",
         "collnet from 2 MiB to 2 GiB, then collnet_ring"},
        {"predict -t cluster-h100 --set sharp=true -c allreduce -a collnet_ring -s 4GiB --proto simple",
         "time     16.8036 ms", "say 16.8036 and 16.7797 ms"},
        {"sim -t cluster-h100 --set sharp=true -c allreduce -a collnet_ring -s 4GiB --proto simple",
         "time     16.7797 ms", "say 16.8036 and 16.7797 ms"},
        {"plan -t cluster-a100 --set sharp=true --set nodes=16 --sizes 256MiB", "collnet_ring Simple         8   2.00739 ms",
         "256 MiB in 2.00739 ms on 16 x 8 A100"},
        {"plan -t cluster-a100 --set nodes=16 --sizes 256MiB", "ring/LL128 3.88883 ms", "takes 3.88883 ms by NCCL's own"},
    };
    char *page = th_slurp("docs/guide/machines.md"), *out;
    cr_assert_not_null(page);
    for (char *p = page; *p; p++)                       /* the page's line breaks are the prose's spaces */
        if (*p == '\n') *p = ' ';
    for (char *p = page, *q = page; ; p++) {           /* and its indent one space too */
        if (*p == ' ' && q > page && q[-1] == ' ') continue;
        if ((*q++ = *p) == '\0') break;
    }
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        cr_assert_eq(th_cli(c[i].args, &out, 1), 0, "%s: %s", c[i].args, out);
        cr_expect(strstr(out, c[i].says) != NULL, "baton %s does not print '%s':\n%s", c[i].args, c[i].says, out);
        cr_expect(strstr(page, c[i].doc) != NULL, "docs/guide/machines.md does not say '%s'", c[i].doc);
        free(out);
    }
    free(page);
}
