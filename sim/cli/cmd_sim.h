/* cmd_sim.h - what `baton sim` and `baton predict` (cmd_sim.c) share with
 * the file beside it: --explain (cmd_sim_explain.c). */
#ifndef BATON_CMD_SIM_H
#define BATON_CMD_SIM_H

#include "../answer/run.h"
#include "cmd.h"

/* --explain: run r (asked as q) on t in parts that add up to its time, the
 * closed form's beside a simulated one, and what would move it, on stdout;
 * 0, or EXIT_INPUT (after printing why) where r's row has no closed form
 * on this machine. */
int cmd_sim_explain(const char *cmd, topo_t *t, const run_req_t *q, const run_out_t *r);

#endif
