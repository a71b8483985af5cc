/* kids.h - the candy kids: the story's all-reduce, run by the simulator.
 *
 * Four kids (ranks) each counted four colours; kid r's count of colour c is
 * (c+1) * 10^r, so a running total shows who has contributed by its digits
 * (11 = Anna and Ben). One number per second, one listener at a time: that is
 * topologies/candy-kids.yaml (1 B/s links, ports: 1) with one byte per number.
 * kids_run simulates a method in data mode and records every hand-off. The
 * story grows (20 kids: naive 152 s; 64 kids: the tree in 12 rounds): the
 * colours stay four; past 9 kids a digit place per kid no longer fits, so
 * every kid's count of colour c is c + 1 (kids_digits says which). */
#ifndef BATON_KIDS_H
#define BATON_KIDS_H

#include <stdint.h>

#include "../../topologies/topo.h"

#define KIDS_MAX 64           /* kids; a digit place each up to KIDS_DIGITS */
#define KIDS_DIGITS 9
#define KIDS_COLOURS 4

typedef struct kids_msg {
    double t;                 /* when the hand-off finished */
    int src, dst;
    uint32_t chunk;
    int colour;               /* the first colour (byte) the hand-off carries */
    int reduce;
    uint64_t value[KIDS_COLOURS]; /* the receiver's numbers for that chunk afterwards */
    int nvalues;
} kids_msg_t;

typedef struct kids_run {
    int p;
    const char *method;
    double time_s;
    kids_msg_t *msgs;
    int nmsgs, cap;
    uint64_t hold[KIDS_MAX][KIDS_COLOURS];  /* what each kid holds at the end */
    uint64_t said[KIDS_MAX], heard[KIDS_MAX];   /* numbers spoken / listened to */
} kids_run_t;

/* A kid's starting count of colour c among p kids: (c+1) 10^kid while every
 * kid has a digit place (p <= KIDS_DIGITS), else c + 1. */
uint64_t kids_count(int kid, int colour, int p);

/* The machine of n kids (2..KIDS_MAX): the story's names first, everyone
 * within earshot of everyone (1 B/s, one listener at a time), no protocols. */
topo_t *kids_machine(int n, baton_err_t *e);

/* The story's premise as text (malloc'd): who counted what, the rule, and
 * the digit-place trick. */
char *kids_premise(const topo_t *t);

/* Simulate all-reduce `method` (naive, tree, ring) on t; data verification
 * must pass. kids_run_free releases out. */
int kids_run(topo_t *t, const char *method, kids_run_t *out, baton_err_t *e);
void kids_run_free(kids_run_t *k);

/* The story's tables as text (malloc'd): for the ring the relay-baton table
 * (one column per colour, who holds it and its running total after each
 * pass), for other methods one line per hand-off; then each kid's load. */
char *kids_format(const kids_run_t *k, const topo_t *t);

#endif
