/* logplan.h - the plan a log shows: where NCCL ran another algorithm.
 *
 * `-a nccl` plans each size on the algorithm and protocol NCCL has that the
 * model times fastest. NCCL's tuner decides by its own model, of its own
 * version, and a log can show it ran something else: the 8 x A100 log's
 * 1-16 MiB match NCCL's tree (two chains) within 0-8 %, where the ring that
 * -a nccl plans is 17-48 % fast. A fit that keeps that plan bends the
 * machine to explain it (LL128's latency x 2.5), and the bent values then
 * travel to every what-if.
 *
 * So: a fitted size whose planned time on the file's values is more than
 * LOGPLAN_OFF off, where another algorithm NCCL runs (sized as NCCL runs
 * it, on the plan's protocol there or at a size beside it: a switch point
 * a size off) is within LOGPLAN_NEAR and at most half as far off, ran that
 * row. Only the plan's protocols: NCCL's protocol follows the size more
 * closely than its algorithm follows the machine, and with every protocol
 * open a dozen rows stand near any time (MI300X's 64-128 MiB read as ring
 * on LL). Two or more consecutive sizes of one log (collective and rank
 * count) read as one row become a library rule {coll, ranks, the sizes'
 * range, algo, proto}, added to the machine (and to every machine of a
 * joint fit), so the fit, the written calibrated machine and all asked of
 * it afterwards follow the log's plan there and only there: a single size
 * never moves the plan (one disturbed row is not a switch), nor does a
 * size no rule covers. */
#ifndef BATON_LOGPLAN_H
#define BATON_LOGPLAN_H

#include "calsample.h"

#define LOGPLAN_OFF 0.15
#define LOGPLAN_NEAR 0.10

/* Read the plan from the samples not held out (and not on a rule the
 * machine has already), on the machines' current values, and add the rules
 * found to each of m[0..nm-1]'s library (as room allows: TOPO_MAX_LIB_RULES
 * in all); also copied to out[0..*nout). Only for -a nccl with any protocol
 * and the closed forms (q). The caller judges the rules by a fit on them
 * (calibrate.c: kept if a point better in sample). */
int logplan_read(topo_t *const *m, int nm, const cal_req_t *q, const cal_sample_t *s, int n, topo_lib_rule_t *out,
                 int *nout, baton_err_t *e);

/* "nccltree/LL128 at 2 MiB-32 MiB (8 ranks)", one rule ("NCCL's tree/Simple at
 * 1 GiB on 8 channels (16 ranks)" in NCCL's names). */
void logplan_rule_text(const topo_lib_rule_t *r, char *buf, size_t n);

#endif
