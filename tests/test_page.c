/* test_page.c - the teaching pages: recorded runs (sim/teach/tape.h) replay to the
 * simulator's own buffers, the kids' page tells the story's numbers, pages
 * are self-contained and small, and runs too big to draw are refused. The
 * page in a real browser: tests/browser/ (make test-browser). */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "../sim/teach/kids.h"
#include "../sim/teach/lesson.h"
#include "../sim/teach/tape.h"
#include "helpers.h"

/* Replaying the moves over the start gives every snapshot, and the last one
 * keeps the collective's contract: the data the page gets is enough to show
 * exactly what the simulator held. */
static void check_replay(const tape_t *tp, const char *what) {
    size_t cells = (size_t)tp->rows * tp->width;
    uint64_t *buf = malloc(cells * sizeof *buf);
    memcpy(buf, tp->start, cells * sizeof *buf);
    cr_assert(memcmp(buf, tape_row(tp, 0, 0), cells * sizeof *buf) == 0, "%s: snapshot 0 is the start", what);
    for (int k = 0; k < tp->nsteps; k++) {
        const tape_step_t *s = &tp->steps[k];
        cr_assert(k == 0 || s->t > tp->steps[k - 1].t, "%s: steps in time order", what);
        cr_assert(s->n >= 1 && s->first == (k ? tp->steps[k - 1].first + tp->steps[k - 1].n : 0), "%s: step %d", what, k);
        for (int i = s->first; i < s->first + s->n; i++) {
            const tape_move_t *m = &tp->moves[i];
            cr_assert(m->t1 <= s->t * (1 + 1e-12) && m->t0 <= m->t1, "%s: move %d at %g..%g in step %d at %g", what, i,
                      m->t0, m->t1, k, s->t);
            for (uint32_t j = 0; j < m->n; j++) buf[(size_t)m->dst * tp->width + tp->place[m->first + j]] = tp->value[m->first + j];
        }
        cr_assert(memcmp(buf, tape_row(tp, k + 1, 0), cells * sizeof *buf) == 0, "%s: replay differs after step %d", what, k + 1);
    }
    for (size_t i = 0; i < (size_t)tp->p * tp->width; i++)
        cr_assert(!tp->fixed[i] || buf[i] == tp->want[i], "%s: rank %zu place %zu holds %llu, the contract %llu", what,
                  i / tp->width, i % tp->width, (unsigned long long)buf[i], (unsigned long long)tp->want[i]);
    free(buf);
}

Test(page, every_algorithm_replays_to_the_simulator) {
    static const int ps[] = {1, 2, 3, 5, 7, 8, 16};
    int recorded = 0;
    for (size_t pi = 0; pi < sizeof ps / sizeof ps[0]; pi++) {
        topo_t *t = th_full(ps[pi], 1e9, 1e-6, 1, 0);
        for (const algo_t *const *a = algo_all(); *a; a++) {
            /* remainders: 2p + 1 bytes where the layout allows (all-to-all needs p | bytes) */
            uint64_t n = (*a)->coll == COLL_ALLTOALL ? (uint64_t)ps[pi] : 2 * (uint64_t)ps[pi] + 1;
            run_req_t q = {.coll = (*a)->coll, .algo = (*a)->name, .bytes = n, .proto = PROTO_NONE};
            tape_t tp;
            baton_err_t e = {0};
            if (tape_record(t, &q, &tp, &e) == 0) {
                char what[96];
                snprintf(what, sizeof what, "%s %s p=%d", coll_name((*a)->coll), (*a)->name, ps[pi]);
                check_replay(&tp, what);
                recorded++;
            } else {
                cr_assert(e.code == BATON_EUNSUP || e.code == BATON_EINVAL || e.code == BATON_ESCHED, "%s p=%d: %s",
                          (*a)->name, ps[pi], e.msg);
            }
            tape_free(&tp);
        }
        topo_free(t);
    }
    cr_assert_geq(recorded, 180, "only %d (algorithm, rank count) runs recorded", recorded);
}

/* The story's numbers from the page's runs, against kids_run's own count. */
Test(page, kids_tapes_tell_the_story) {
    baton_err_t e = {0};
    topo_t *t = kids_machine(4, &e);
    static const char *const methods[] = {"naive", "tree", "ring"};
    static const double secs[] = {24, 16, 6};
    static const int steps[] = {6, 4, 6};
    for (int i = 0; i < 3; i++) {
        run_req_t q = {.coll = COLL_ALLREDUCE, .algo = methods[i], .bytes = KIDS_COLOURS};
        tape_t tp;
        kids_run_t k;
        cr_assert_eq(tape_record(t, &q, &tp, &e), 0, "%s", e.msg);
        cr_assert_eq(kids_run(t, methods[i], &k, &e), 0, "%s", e.msg);
        cr_assert_float_eq(tp.time_s, secs[i], 1e-9, "%s", methods[i]);
        cr_assert_eq(tp.nsteps, steps[i], "%s: %d steps", methods[i], tp.nsteps);
        for (int r = 0; r < 4; r++) {
            uint64_t said, heard;
            tape_load(&tp, r, &said, &heard);
            cr_assert(said == k.said[r] && heard == k.heard[r], "%s kid %d", methods[i], r);
            for (int c = 0; c < 4; c++)
                cr_assert_eq(tape_row(&tp, tp.nsteps, r)[c], 1111ull * (uint64_t)(c + 1), "%s kid %d colour %d", methods[i], r, c);
        }
        if (i == 2)      /* the ring: after the first pass Ben holds Anna's RED plus his: 11 */
            cr_assert_eq(tape_row(&tp, 1, 1)[0], 11, "Ben's RED after pass 1: %llu", (unsigned long long)tape_row(&tp, 1, 1)[0]);
        kids_run_free(&k);
        tape_free(&tp);
    }
    topo_free(t);
}

/* The page's data block, parsed. */
static cJSON *page_data(const char *html) {
    const char *a = strstr(html, "id=\"baton-data\">");
    cr_assert(a != NULL);
    a = strchr(a, '>') + 1;
    const char *b = strstr(a, "</script>");
    cr_assert(b != NULL);
    char *json = strndup(a, (size_t)(b - a));
    cJSON *d = cJSON_Parse(json);
    free(json);
    cr_assert(d != NULL, "the page's data is not JSON");
    return d;
}

Test(page, kids_page_is_small_self_contained_and_deterministic) {
    baton_err_t e = {0};
    topo_t *t = kids_machine(4, &e);
    static const char *const methods[] = {"naive", "tree", "ring"};
    lesson_out_t a, b;
    cr_assert_eq(lesson_kids(t, methods, 3, &a, &e), 0, "%s", e.msg);
    cr_assert_eq(lesson_kids(t, methods, 3, &b, &e), 0, "%s", e.msg);
    cr_assert_str_eq(a.html, b.html, "the same run gives the same page");
    cr_assert_lt(strlen(a.html), 100 * 1024, "a 4-kid page of %zu bytes", strlen(a.html));
    cr_assert(strstr(a.html, "default-src 'none'") != NULL, "a policy that forbids fetching");
    static const char *const fetches[] = {"src=", "href=", "<link", "@import", "url(http", "fetch(", "XMLHttpRequest"};
    for (size_t i = 0; i < sizeof fetches / sizeof fetches[0]; i++)
        cr_assert(strstr(a.html, fetches[i]) == NULL, "the page has '%s'", fetches[i]);
    cr_assert(strstr(a.html, "Method naive: 24 s") != NULL && strstr(a.html, "Method ring: 6 s") != NULL, "the text fallback");
    cJSON *d = page_data(a.html);
    cJSON *tapes = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(d, "players"), 0), "tapes");
    cr_assert_eq(cJSON_GetArraySize(tapes), 3);
    cr_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(tapes, 1), "title")->valuestring, "tree (binomial)");
    cJSON_Delete(d);
    lesson_free(&a);
    lesson_free(&b);
    topo_free(t);
}

Test(page, ops_page_has_every_operation_and_its_first_choice) {
    baton_err_t e = {0};
    topo_t *t = kids_machine(4, &e);
    lesson_out_t l;
    cr_assert_eq(lesson_ops(t, &l, &e), 0, "%s", e.msg);
    cJSON *d = page_data(l.html);
    cJSON *players = cJSON_GetObjectItem(d, "players");
    static const char *const first[] = {"binomial", "binomial", "ring", "ring", "ring", "pairwise"};
    static const char *const coll[] = {"broadcast", "reduce", "reducescatter", "allgather", "allreduce", "alltoall"};
    cr_assert_eq(cJSON_GetArraySize(players), 6);
    int runs = 0;
    for (int i = 0; i < 6; i++) {
        cJSON *p = cJSON_GetArrayItem(players, i), *tapes = cJSON_GetObjectItem(p, "tapes");
        cJSON *chosen = cJSON_GetArrayItem(tapes, cJSON_GetObjectItem(p, "chosen")->valueint);
        cr_assert_str_eq(cJSON_GetObjectItem(chosen, "title")->valuestring, first[i]);
        cr_assert_str_eq(cJSON_GetObjectItem(chosen, "coll")->valuestring, coll[i]);
        runs += cJSON_GetArraySize(tapes);
    }
    cr_assert_eq(runs, l.runs);
    cr_assert_geq(runs, 30, "the catalogue's algorithms on 4 GPUs: %d", runs);
    cJSON_Delete(d);
    lesson_free(&l);
    topo_free(t);
}

Test(page, too_big_to_draw_is_refused) {
    baton_err_t e = {0};
    topo_t *t = th_full(4, 1e9, 1e-6, 1, 0);
    lesson_out_t l;
    run_req_t q = {.coll = COLL_ALLREDUCE, .algo = "ring", .bytes = 1 << 20};
    cr_assert_lt(lesson_run(t, &q, &l, &e), 0);
    cr_assert(strstr(e.msg, "1 to 64 bytes") != NULL, "%s", e.msg);
    topo_free(t);
    t = th_full(17, 1e9, 1e-6, 1, 0);
    e = (baton_err_t){0};
    q.bytes = 17;
    cr_assert_lt(lesson_run(t, &q, &l, &e), 0);
    cr_assert(strstr(e.msg, "1 to 16 ranks") != NULL, "%s", e.msg);
    topo_free(t);
}

Test(page, cli_writes_whole_pages_or_none) {
    char *out = NULL;
    const char *f = "build/test-page.html";
    remove(f);
    cr_assert_eq(th_cli("sim -t topologies/hgx-h100.yaml -c allreduce -a ring -s 1MiB --html build/test-page.html", &out, 0), 1);
    cr_assert(strstr(out, "a page shows every byte") != NULL, "%s", out);
    cr_assert(th_slurp(f) == NULL, "no page written for a refused run");
    free(out);
    cr_assert_eq(th_cli("kids --ops", &out, 0), 2, "--ops without --html");
    free(out);
    cr_assert_eq(th_cli("sim -t topologies/hgx-h100.yaml -c allreduce -s 16 --states x.json", &out, 0), 2);
    free(out);
    cr_assert_eq(th_cli("kids --html build/test-page.html", &out, 0), 0, "%s", out);
    cr_assert(strstr(out, "wrote build/test-page.html: 3 runs") != NULL, "%s", out);
    free(out);
    char *page = th_slurp(f);
    cr_assert(page != NULL && strstr(page, "</html>\n") != NULL);
    free(page);
    remove(f);
}

/* The pages shipped in docs/teaching/ are what baton writes today. */
Test(page, shipped_pages_are_current) {
    static const char *const cases[][2] = {{"kids --html build/test-kids.html", "kids"},
                                           {"kids --ops --html build/test-ops.html", "ops"}};
    for (int i = 0; i < 2; i++) {
        char *out = NULL, fresh[64], shipped[64];
        snprintf(fresh, sizeof fresh, "build/test-%s.html", cases[i][1]);
        snprintf(shipped, sizeof shipped, "docs/teaching/%s.html", cases[i][1]);
        cr_assert_eq(th_cli(cases[i][0], &out, 0), 0, "%s", out);
        free(out);
        char *a = th_slurp(fresh), *b = th_slurp(shipped);
        cr_assert(a && b && strcmp(a, b) == 0, "%s differs from `baton %s` (rewrite it)", shipped, cases[i][0]);
        free(a);
        free(b);
        remove(fresh);
    }
}

/* A page steps through messages as their receives take them: one that
 * landed early (a reducing switch's, or any with eager) is drawn when it is
 * delivered, so time goes forward (drawn at its landing, the tape took it
 * for a second run: "messages arrived out of time order"). */
Test(page, eager_messages_step_forward) {
    static const char *const runs[] = {
        "sim -t gb200-nvl72 --set racks=2 --set trays=2 -c allreduce -a nvlstree -s 64 --pipeline 4 --html build/test-eager.html",
        "sim -t cluster-h100 --set nodes=2 --set eager=true -c allgather -a pairwise -s 64 --html build/test-eager.html"};
    for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) th_says(runs[i], 0, "wrote build/test-eager.html: 1 run", 1);
    remove("build/test-eager.html");
}
