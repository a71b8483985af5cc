/* test_small_items.c - issue 52's "output people read": the candy kids'
 * story for any kid count, and the small things a new user hit (help text,
 * unit errors, did-you-mean, sweeps' last point, the plot's labels, an
 * unknown command, machines found beside the binary, gpus' launch). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

static const char *bin(void) {
    const char *b = getenv("BATON_BIN");
    return b ? b : "build/baton";
}

/* Every hand-off line of `kids --kids n --method ring` names what it moved:
 * none ends in "now holds " with nothing after it. */
static int empty_handoffs(const char *out) {
    int n = 0;
    for (const char *s = strstr(out, "now holds "); s; s = strstr(s + 1, "now holds "))
        n += s[10] == '\n' || s[10] == '\0';
    return n;
}

Test(kidsstory, ring_any_count_no_empty_handoffs) {
    for (int n = 2; n <= 7; n++) {
        char args[64], *out;
        snprintf(args, sizeof args, "kids --kids %d --method ring", n);
        cr_assert_eq(th_cli(args, &out, 0), 0, "%s: %s", args, out);
        cr_expect_eq(empty_handoffs(out), 0, "%s lists empty hand-offs:\n%s", args, out);
        /* Uneven loads come with their reason whenever 4 numbers do not
         * split into n equal shares (3, 5, 6, 7 kids). */
        int uneven = 4 % n != 0;
        cr_expect_eq(strstr(out, "do not split evenly") != NULL, uneven, "%s: the shares' note:\n%s", args, out);
        free(out);
    }
}

Test(kidsstory, ring_five_names_the_shares_and_loads) {
    char *out;
    cr_assert_eq(th_cli("kids --kids 5 --method ring", &out, 0), 0);
    cr_expect(strstr(out, "RED | BLUE | GREEN | YELLOW | none") != NULL, "%s", out);
    /* The loads the note gives are the table's: said 6..7, heard 6..7. */
    cr_expect(strstr(out, "says 6 to 7 and hears 6 to 7") != NULL, "%s", out);
    cr_expect(strstr(out, "Cara  said  7") != NULL, "%s", out);
    /* A partial hand-off names its colour. */
    cr_expect(strstr(out, "Anna  -> Ben   adds RED, Ben now holds 11\n") != NULL, "%s", out);
    free(out);
}

Test(kidsstory, premise_counts_every_kid_ones) {
    char *out;
    cr_assert_eq(th_cli("kids --kids 5 --method ring", &out, 0), 0);
    cr_expect(strstr(out, "11111: everyone has") != NULL, "%s", out);
    free(out);
}

/* The page records no move of an empty share: 5 kids' ring on the page has
 * no message that writes no place ([] places, [] values). */
Test(kidsstory, page_has_no_empty_moves) {
    char cmd[512], *out;
    snprintf(cmd, sizeof cmd, "d=$(mktemp -d) && %s kids --kids 5 --html $d/k.html >/dev/null && "
             "grep -c '\\[\\],\\[\\]' $d/k.html; rm -rf $d", bin());
    th_sh(cmd, &out);
    cr_expect_str_eq(out, "0\n", "moves of empty shares on the page: %s", out);
    free(out);
}
