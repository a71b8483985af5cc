/* test_kids.c - the seed story's numbers come out of the simulator. */
#include <criterion/criterion.h>
#include <string.h>

#include "../sim/teach/kids.h"
#include "../topologies/topo_yaml.h"

static topo_t *kids_topo(void) {
    baton_err_t e = {0};
    topo_t *t = topo_yaml_load("topologies/candy-kids.yaml", NULL, 0, &e);
    cr_assert_not_null(t, "%s", e.msg);
    return t;
}

static void expect_everyone_has_the_totals(const kids_run_t *k) {
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 4; c++)
            cr_expect_eq(k->hold[r][c], 1111u * (c + 1), "%s: kid %d colour %d", k->method, r, c);
}

Test(kids, counts_have_one_digit_place_per_kid) {
    cr_expect_eq(kids_count(0, 0, 4), 1u);
    cr_expect_eq(kids_count(1, 1, 4), 20u);
    cr_expect_eq(kids_count(2, 2, 4), 300u);
    cr_expect_eq(kids_count(3, 3, 4), 4000u);
}

Test(kids, naive_24s_anna_handles_24_numbers) {
    topo_t *t = kids_topo();
    kids_run_t k;
    cr_assert_eq(kids_run(t, "naive", &k, NULL), 0);
    cr_expect_eq(k.time_s, 24.0);
    cr_expect_eq(k.said[0] + k.heard[0], 24u, "Anna listens to 12 and says 12");
    expect_everyone_has_the_totals(&k);
    kids_run_free(&k);
    topo_free(t);
}

Test(kids, tree_16s_four_rounds) {
    topo_t *t = kids_topo();
    kids_run_t k;
    cr_assert_eq(kids_run(t, "tree", &k, NULL), 0);
    cr_expect_eq(k.time_s, 16.0);
    /* Ben tells Anna while Dan tells Cara: two hand-offs finish at 4 s */
    cr_expect_eq(k.msgs[0].t, 4.0);
    cr_expect_eq(k.msgs[1].t, 4.0);
    for (int i = 0; i < k.nmsgs; i++) cr_expect_eq(k.msgs[i].nvalues, 4, "every hand-off is all four numbers");
    expect_everyone_has_the_totals(&k);
    kids_run_free(&k);
    topo_free(t);
}

/* The relay-baton table of the story, pass by pass. */
Test(kids, ring_6s_and_the_baton_table) {
    static const char *holder[4][4] = {       /* [pass-1][colour] */
        {"Ben", "Cara", "Dan", "Anna"},
        {"Cara", "Dan", "Anna", "Ben"},
        {"Dan", "Anna", "Ben", "Cara"},
        {"Anna", "Ben", "Cara", "Dan"}};
    static const uint64_t value[3][4] = {{11, 220, 3300, 4004}, {111, 2220, 3303, 4044}, {1111, 2222, 3333, 4444}};
    topo_t *t = kids_topo();
    kids_run_t k;
    cr_assert_eq(kids_run(t, "ring", &k, NULL), 0);
    cr_expect_eq(k.time_s, 6.0);
    cr_assert_eq(k.nmsgs, 24);
    for (int i = 0; i < k.nmsgs; i++) {
        const kids_msg_t *m = &k.msgs[i];
        int pass = (int)m->t, c = m->colour;
        cr_assert_eq(m->t, (double)pass, "hand-offs end on whole seconds");
        cr_assert_eq(m->nvalues, 1, "one number per pass");
        if (pass <= 4)
            cr_expect_str_eq(topo_rank_name(t, m->dst), holder[pass - 1][c], "pass %d colour %d", pass, c);
        if (pass <= 3) cr_expect_eq(m->value[0], value[pass - 1][c], "pass %d colour %d", pass, c);
        else cr_expect_eq(m->value[0], 1111u * (c + 1), "after pass 3 only finished totals move");
    }
    for (int r = 0; r < 4; r++) cr_expect_eq(k.said[r], 6u, "one number per pass, six passes");
    expect_everyone_has_the_totals(&k);
    char *text = kids_format(&k, t);
    cr_assert_not_null(text);
    cr_expect(strstr(text, "pass 3  Dan 1111      Anna 2222     Ben 3333      Cara 4444") != NULL, "%s", text);
    free(text);
    kids_run_free(&k);
    topo_free(t);
}

/* The story grows: 20 kids make Anna hear 76 numbers and say 76 (naive
 * 152 s); 64 kids pair up in 12 rounds of four numbers (tree 48 s); every
 * kid ends with the totals (four colours, each kid counted 1 2 3 4). */
Test(kids, twenty_and_sixty_four_kids) {
    baton_err_t e = {0};
    const struct { int kids; const char *method; double s; uint64_t anna; } cases[] = {
        {20, "naive", 152, 76}, {64, "tree", 48, 24}, {9, "ring", 2 * 8 * 1, 0}};
    for (int i = 0; i < 3; i++) {
        topo_t *t = kids_machine(cases[i].kids, &e);
        cr_assert_not_null(t, "%s", e.msg);
        kids_run_t k;
        cr_assert_eq(kids_run(t, cases[i].method, &k, &e), 0, "%s", e.msg);
        if (i < 2) {
            cr_expect_eq(k.time_s, cases[i].s, "%d kids %s: %g s", cases[i].kids, cases[i].method, k.time_s);
            cr_expect_eq(k.heard[0], cases[i].anna, "Anna hears %llu", (unsigned long long)k.heard[0]);
        }
        int digits = cases[i].kids <= KIDS_DIGITS;
        for (int r = 0; r < cases[i].kids; r++)
            for (int c = 0; c < KIDS_COLOURS; c++) {
                uint64_t want = digits ? (c + 1) * 111111111ull : (uint64_t)cases[i].kids * (c + 1);
                cr_expect_eq(k.hold[r][c], want, "%d kids: kid %d colour %d holds %llu", cases[i].kids, r, c,
                             (unsigned long long)k.hold[r][c]);
            }
        kids_run_free(&k);
        topo_free(t);
    }
    cr_expect_null(kids_machine(65, &e));
}
