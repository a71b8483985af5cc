/* tape.h - a small run recorded for replay: what every buffer held at the
 * start, every message with the places it wrote and what they held after,
 * and the simulator's own buffers after each step.
 *
 * A step is one instant of the clock at which messages arrive (the kids'
 * ring: four hand-offs each second). The teaching page (sim/teach/page.h) replays
 * the moves; the snapshots are the simulator's buffers taken from its
 * verifier, so a test can hold the page to them step by step. Runs are in
 * data mode with readable numbers: with at most TAPE_DIGITS ranks, rank r's
 * place i holds d 10^r (d = i mod 9 + 1), so a sum's digits say who has
 * added (1111: four ranks); past that every rank holds d. */
#ifndef BATON_TAPE_H
#define BATON_TAPE_H

#include <stdint.h>

#include "../answer/run.h"

#define TAPE_MAX_RANKS 16     /* rows that fit on a screen */
#define TAPE_MAX_PLACES 64    /* places (bytes) per rank that fit on a screen */
#define TAPE_MAX_MOVES 4096
#define TAPE_DIGITS 9

typedef struct tape_move {
    double t0, t1;            /* sent, arrived */
    int src, dst, reduce;
    uint32_t first, n;        /* its places: tape.place[first .. first + n) */
} tape_move_t;

typedef struct tape_step {
    double t;                 /* the instant its messages arrived */
    int first, n;             /* its moves: tape.moves[first .. first + n) */
} tape_step_t;

typedef struct tape {
    char title[64];           /* the algorithm's name */
    coll_t coll;
    int root;
    int p, rows;              /* ranks; rows = ranks + reducing switches */
    uint64_t width;           /* places per rank */
    double time_s;
    uint64_t *start;          /* [rows][width] */
    uint64_t *want;           /* [p][width]: the collective's contract ... */
    uint8_t *fixed;           /* ... where it fixes the place (else anything) */
    tape_move_t *moves;
    int nmoves, cap;
    uint32_t *place;          /* the moves' places, and the receiver's values after */
    uint64_t *value;
    uint32_t nplace, pcap;
    tape_step_t *steps;
    int nsteps;
    uint64_t *snap;           /* [nsteps + 1][rows][width]: the start, then after each step */
    int err;                  /* a failed allocation while recording */
} tape_t;

/* The readable start value of rank's place among p ranks (above). */
uint64_t tape_fill(int rank, uint64_t place, int p);

/* Simulate q (its verify and engine fields are set here) on t and record it.
 * Refuses runs that do not fit on a screen, naming the limit. */
int tape_record(topo_t *t, const run_req_t *q, tape_t *out, baton_err_t *e);
void tape_free(tape_t *tp);

/* The simulator's buffer of row r after step k (0: the start). */
const uint64_t *tape_row(const tape_t *tp, int k, int r);

/* Numbers rank r said (sent) and heard (received) by the end. */
void tape_load(const tape_t *tp, int r, uint64_t *said, uint64_t *heard);

#endif
