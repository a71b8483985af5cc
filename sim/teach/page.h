/* page.h - the teaching page: one self-contained HTML file (inline CSS, JS
 * and SVG; a content security policy that forbids any fetch) that replays
 * recorded runs (sim/teach/tape.h) step by step.
 *
 * A page holds players. A player shows its runs side by side on one clock
 * (naive, tree and ring: 24 s, 16 s, 6 s seen at once) or, with `pick`, one
 * at a time chosen from a list (any algorithm of the catalogue performing an
 * operation); with `contract` it first shows the operation's contract: every
 * buffer before, and what each must hold after. Controls: step, back,
 * play/pause, speed, start, end, each with a key. Below the players the
 * same story as plain text, for readers without scripts and for print.
 *
 * page_states writes what a browser test checks the page against: for every
 * run, the instants of its steps and the simulator's buffers after each,
 * and each row's load (JSON). */
#ifndef BATON_PAGE_H
#define BATON_PAGE_H

#include "tape.h"

typedef struct page_player {
    const char *title;
    const char *text;             /* a paragraph above the runs, or NULL */
    int pick, chosen;             /* one run at a time, starting with `chosen` */
    int contract;                 /* show the collective's contract first */
    const char *const *cols;      /* place names, or NULL: 0, 1, ... */
    int ncols;
    const tape_t *const *tapes;
    int ntapes;
} page_player_t;

typedef struct page {
    const char *title;
    const char *intro;            /* plain text above the players ... */
    int intro_fixed;              /* ... in a fixed-width font (it holds a table) */
    const char *text;             /* the whole story as plain text */
    const char *const *names;     /* row names (ranks, then switches) */
    int nnames;
    int candy;                    /* the columns are the four candy colours */
    double scale;                 /* the clock shows seconds x scale ... */
    const char *unit;             /* ... in this unit */
    const page_player_t *players;
    int nplayers;
} page_t;

/* The page (malloc'd), or NULL when out of memory. */
char *page_html(const page_t *pg);
/* The simulator's buffers after every step of every run, as JSON (malloc'd). */
char *page_states(const page_t *pg);

#endif
