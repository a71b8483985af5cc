/* tuninglines.h - NCCL's TUNING lines in a log: what each call ran on.
 *
 * With NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING, NCCL prints on rank 0 one
 * line per call: "AllReduce: 8388608 Bytes -> Algo RING proto LL128
 * channel{Lo..Hi}={0..15}", or from 2.20 until that form "8388608 Bytes ->
 * Algo 1 proto 1 time 41.2" (nccl_common.h's numbers; no collective: the
 * log's; no channels). nccltests.c finds them (inside rows too) and hands
 * them here; validate/tuningplan.h makes them a plan. */
#ifndef BATON_TUNINGLINES_H
#define BATON_TUNINGLINES_H

#include "ntlog.h"

/* The TUNING line at s ("NCCL INFO ..."), if it is one, into log's plan (one
 * entry per call; *cap its room): 1 if it was one (kept, or counted in
 * log->tuning_skipped where baton cannot follow it: a newer NCCL's algorithm
 * or form), 0 if not, -1 on error. */
int tuninglines_read(nt_log_t *log, int *cap, const char *s, int line, baton_err_t *e);

/* NCCL_ALGO and NCCL_PROTO as the log's "set by environment" lines gave
 * them (read by tuninglines_read) into masks for the log's collective:
 * algorithms by algo_nccl_index, protocols by proto_t; unread where a name
 * is not one baton knows (then no mask). Call once the collective is known. */
void tuninglines_env(nt_log_t *log);

#endif
