/* kids.h - the candy kids: the story's all-reduce, run by the simulator.
 *
 * Four kids (ranks) each counted four colours; kid r's count of colour c is
 * (c+1) * 10^r, so a running total shows who has contributed by its digits
 * (11 = Anna and Ben). One number per second, one listener at a time: that is
 * topologies/candy-kids.yaml (1 B/s links, ports: 1) with one byte per number.
 * kids_run simulates a method in data mode and records every hand-off. */
#ifndef BATON_KIDS_H
#define BATON_KIDS_H

#include <stdint.h>

#include "../topologies/topo.h"

#define KIDS_MAX 9            /* 10^r must stay readable */

typedef struct kids_msg {
    double t;                 /* when the hand-off finished */
    int src, dst;
    uint32_t chunk;
    int reduce;
    uint64_t value[KIDS_MAX]; /* the receiver's numbers for that chunk afterwards */
    int nvalues;
} kids_msg_t;

typedef struct kids_run {
    int p;
    const char *method;
    double time_s;
    kids_msg_t *msgs;
    int nmsgs, cap;
    uint64_t hold[KIDS_MAX][KIDS_MAX];  /* what each kid holds at the end */
    uint64_t said[KIDS_MAX], heard[KIDS_MAX];   /* numbers spoken / listened to */
} kids_run_t;

/* A kid's starting count of colour c. */
uint64_t kids_count(int kid, int colour);

/* Simulate all-reduce `method` (naive, tree, ring) on t; data verification
 * must pass. kids_run_free releases out. */
int kids_run(topo_t *t, const char *method, kids_run_t *out, baton_err_t *e);
void kids_run_free(kids_run_t *k);

/* The story's tables as text (malloc'd): for the ring the relay-baton table
 * (one column per colour, who holds it and its running total after each
 * pass), for other methods one line per hand-off; then each kid's load. */
char *kids_format(const kids_run_t *k, const topo_t *t);

#endif
