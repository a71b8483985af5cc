/* choice.h - the one choice of a collective that workload commands make.
 *
 * `baton tp` and `baton step` both time the collectives of a model's pass;
 * both ask this one function which algorithm and protocol run a collective
 * and how long it takes, so the same all-reduce gets the same answer from
 * either (issue 52). The default is what -a nccl means in every command:
 * NCCL's algorithms under NCCL's protocol rules, the fastest simulated
 * (sim/answer/run.h). Oneshot and the other rows NCCL does not have are not the
 * default: a user who wants them says -a oneshot (or -a auto, baton's
 * lowest closed form of any row). */
#ifndef BATON_CHOICE_H
#define BATON_CHOICE_H

#include "run.h"

#define CHOICE_DEFAULT "nccl"

/* One collective of `bytes` over all of t's ranks under `algo` (NULL: the
 * default): "nccl" as `baton sim -a nccl`; "auto" the row with the lowest
 * closed form, then simulated; a row's name simulated with its fastest
 * protocol (or proto). o as run_collective fills it (o->eng to free). */
int choice_run(topo_t *t, coll_t coll, uint64_t bytes, const char *algo, int proto, contention_t contention, run_out_t *o,
               baton_err_t *e);

/* May algorithm name `algo` (NULL: the default) run coll? "nccl" and "auto"
 * always; a row's name where the registry has it for coll. */
int choice_covers(const char *algo, coll_t coll);

#endif
