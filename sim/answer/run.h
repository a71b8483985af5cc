/* run.h - one collective on one machine: simulate it or predict it.
 *
 * The shared path behind `baton sim` and `baton predict` (and the tests):
 * find the registry row, build the schedule, then either run the engine or
 * evaluate the closed form on the topology's uniform cost model. */
#ifndef BATON_RUN_H
#define BATON_RUN_H

#include "../form/call.h"
#include "../form/form.h"


/* A calibrated band carried to a rank count its logs did not run widens by
 * this much a doubling away from the nearest they did (docs/decisions/
 * scale.md: Polaris's six 2-node fits predicting 8 nodes erred 1.0-3.3x,
 * median 2.1x their cross-validated errors, over two doublings). */
#define RUN_BAND_PER_DOUBLING 0.55

/* Below this many ranks the full simulation is instant: symmetry is only
 * taken unasked from here on (the answer is the same either way). */
#define RUN_AUTO_SYMMETRY 64

/* Data mode is used for verification up to this many elements (ranks x bytes). */
#define RUN_DATA_VERIFY_MAX (1ULL << 20)

int run_collective(topo_t *t, const run_req_t *q, run_out_t *o, baton_err_t *e);






/* Where o's time goes, in parts that add up to o->time_s (total). The
 * links' share: for a closed form the formula's alpha, beta and gamma terms
 * (each with the other two set to zero) and `overlap`, the formula's total
 * less the three (negative where a step is the larger of two terms, as with
 * channels: the terms overlap); for a simulated run (recorded: engine_opts_t
 * record) the critical path's moving, waiting, adding and idle time. Then
 * what every run adds: the protocol's base latency once per call, the
 * reducing switches' synchronisation, the GPU's and host's ceilings on bus
 * bandwidth where they are above the links' time, the proxy thread's
 * network messages and operations one at a time beyond both (sockets; RDMA's operations and software
 * matching), NCCL's proxy scanning LL lines, the further
 * launches of -g. */
typedef struct run_parts {
    double alpha, beta, gamma, overlap;        /* closed form */
    double half_alpha, half_beta;              /* what the formula saves with its latency, its per-byte time halved */
    double transfer, wait, reduce, idle;       /* simulated: the critical path */
    double once, sync, ceiling, socket, proxy, launches;
    double total;
    int socket_tcp;      /* socket's messages are the socket transport's (else RDMA's operations and
                            software tag matching) */
    int matching, operations;   /* which of those two RDMA costs socket holds (topo_match_lat,
                                   proxy_op_latency) */
} run_parts_t;
void run_parts(topo_t *t, const run_out_t *o, run_parts_t *x);

/* Is o's closed form only approximate here: an approximate row, a machine
 * whose rank pairs differ, or shared links the formula does not look at? An
 * exact one equals the simulator to rounding (tests/test_closed.c). */
int run_formula_approx(const run_out_t *o);
/* The band within which predict takes an approximate closed form and the
 * simulator to agree (a fraction of the simulated time); beyond it predict
 * prints the simulator's time beside its own. */
#define RUN_FORMULA_BAND 0.05
/* The simulator's check of a closed form is run where about p x max(k, p)
 * x 8 (p ranks, k pipeline steps) stays within this (a second or so; a
 * 64-node H100 cluster's nvlstree at 1 GiB is 2.1e6). */
#define RUN_CHECK_WORK 4e6
/* Under -a auto and nccl, where the pick's run is this small (a 64th of a
 * check: 16 ranks up to 488 steps, 88 ranks at most), predict also asks
 * what `sim` answers, which simulates every close row under every protocol
 * (and both cuts): several runs, some heavier than the pick's. Beyond it,
 * only where the pick's own check misjudged. An eighth cost 248 Polaris
 * ranks at 4 KiB 36 s more (a review). */
#define RUN_PICK_WORK (RUN_CHECK_WORK / 64)
/* Would checking closed-form result o with the simulator stay cheap? */
int run_check_cheap(const run_out_t *o);
/* A table's rows each checked (expect's and doctor's band, a log's every
 * size): a sixteenth of a check each, 16 ranks up to 1,953 steps, where a
 * row at RUN_CHECK_WORK made doctor on a 512-rank log take a minute. */
#define RUN_TABLE_CHECK_WORK (RUN_CHECK_WORK / 16)
int run_check_table_cheap(const run_out_t *o);
/* The simulator's check of a closed-form answer (run_check). */
enum { RUN_CHECK_EXACT = 0,   /* the formula is exact here: nothing to check */
       RUN_CHECK_DONE,        /* simulated: sim_s */
       RUN_CHECK_LARGE,       /* approximate, but the run is too large to check unasked */
       RUN_CHECK_FAILED };    /* approximate, and the simulator could not run it (why) */
typedef struct run_check {
    int state;
    double sim_s;             /* the simulator's time for the same row (RUN_CHECK_DONE) */
    int beyond;               /* |sim_s - the formula's| > RUN_FORMULA_BAND x sim_s */
    const algo_t *pick;       /* -a auto or nccl: the row `sim` answers with where it is another (it
                                 simulates the rows whose formulas are close), asked where the call is
                                 small (RUN_PICK_WORK) or the pick's check is beyond the band; else NULL */
    int pick_proto;
    double pick_s;
    char why[512];            /* RUN_CHECK_FAILED: the simulator's error */
} run_check_t;
/* Check closed-form answer o to request q with the simulator where the
 * formula is only approximate and the run cheap (run_formula_approx,
 * run_check_cheap): the same row, protocol and sizing (run_same_row), every
 * rank of t (t must not be folded); under -a auto and nccl also what `sim`
 * answers, where the call is small or the check beyond the band (c->pick).
 * BATON_ENOMEM only; the rest is in c. */
int run_check(topo_t *t, const run_req_t *q, const run_out_t *o, run_check_t *c);

/* run_check's first half only: the same row simulated, no pick of -a auto
 * or nccl (expect's band, which reads sim_s and beyond alone). */
int run_check_row(topo_t *t, const run_req_t *q, const run_out_t *o, run_check_t *c);

/* q, asked again for o's answer only: its row and protocol, sized as o was
 * (NCCL's channels and pipeline where -a nccl chose it; where the machine's
 * library rule chose a row of its own, -a nccl again, which follows it),
 * closed form (predict 1) or simulated (0). */
void run_same_row(const run_req_t *q, const run_out_t *o, int predict, run_req_t *out);


/* The interval a calibrated machine's record gives o's time: 90 % of the
 * errors on sizes its fit did not see fell in [lo, hi] % (error = (predicted
 * - measured) / measured), so the measurement lies in time / (1 + hi) ..
 * time / (1 + lo). Nothing when t carries no band, nor (o->band_outside)
 * outside what its logs covered: another collective, rank count or a size
 * beyond the fitted ones (the record's seen:), or a --set its logs did
 * not run (the record's what_if). With another -g than the logs' the band
 * keeps its width in seconds (the launches are known, not errors). Nor
 * (RUN_BAND_OTHER_RULE) where q runs another rule than the fit's
 * (other_rule: the command line's -a, --proto, model or contention differ
 * from the record's, sim/cli cmd_calibrated_rule). */
void run_error_bars(const topo_t *t, const run_req_t *q, int other_rule, run_out_t *o);

#endif
