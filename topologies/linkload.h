/* linkload.h - a traffic pattern's busiest link: the closed form's view of a
 * machine whose flows share links.
 *
 * A uniform alpha-beta model charges every message the slowest rank pair's
 * bandwidth. On a cluster that pair runs through one NIC, so a ring of 16
 * GPUs on two nodes would be charged one NIC's 25 GB/s however many channels
 * it had; but NCCL's channels (and ours, algorithms/ring.c) leave and enter
 * each node through a different NIC each, and eight channels see eight NICs.
 * Here one step of a pattern is given as each rank's peer on each channel;
 * every message carries an equal share (1 / channels) of a block, and every
 * directed link on its route is charged that share. */
#ifndef BATON_LINKLOAD_H
#define BATON_LINKLOAD_H

#include "topo.h"

/* Rank r's peer in slot c of every step (-1: r sends nothing). */
typedef int (*linkload_peer_fn)(const void *ctx, int c, int r);

/* Patterns of more messages than this (ranks x slots) are not looked at:
 * the caller keeps the uniform model (a route per message would be cached). */
#define LOAD_MAX_MESSAGES (1 << 22)

/* One step of the pattern, nslots messages per rank (a ring: one per
 * channel; a pipelined tree: up and to each child, per tree and channel),
 * each carrying 1 / nchannels of a block: alpha = the longest route's latency, beta = the
 * busiest directed link's seconds per byte of a block (its charged shares over
 * its bandwidth), channels, and beta_path = the slowest route's seconds per
 * byte (what one channel's message sees alone; models/cost.h, cost_step). 1 if done, 0 if the pattern is too large (m untouched), < 0
 * on error. */
int linkload_pattern_cost(topo_t *t, linkload_peer_fn peer, const void *ctx, int nslots, int nchannels, cost_model_t *m,
                      baton_err_t *e);

/* The same in two halves, for machines that share routes (topo_share_routes):
 * what the routes alone decide, recorded once (each loaded link and its
 * charged shares, in the order first loaded; the longest route's latency),
 * then costed at each machine's own rates, bit for bit what
 * linkload_pattern_cost gives there. record: 1 if recorded, 0 if the pattern
 * is too large (nothing to free), < 0 on error. cost: as linkload_pattern_cost. */
typedef struct {
    int nused;
    int32_t *used;       /* the loaded directed links */
    double *load;        /* each one's charged shares */
    double lat;          /* the longest route's latency (at the machine's lat_scale) */
} linkload_rec_t;
int linkload_pattern_record(topo_t *t, linkload_peer_fn peer, const void *ctx, int nslots, int nchannels,
                            linkload_rec_t *rec, baton_err_t *e);
int linkload_rec_cost(const topo_t *t, const linkload_rec_t *rec, int nchannels, cost_model_t *m);
void linkload_rec_free(linkload_rec_t *rec);

/* The same pattern on a folded cluster (topo_fold_ranks ranks, of which t
 * built a few nodes): every message's route is a stand-in's between
 * witnesses the same distances apart (topo_fold_stand_in), so alpha and
 * beta_path are the whole cluster's. Node k's links are loaded only by
 * messages that start or end in node k, and their loads are counted per
 * node; the fabric's own links are the whole's, found by the generator's
 * arithmetic from how the stand-in crosses (fold.h, fold_cross_t), so beta
 * is the whole's too, bit for bit. 1 if done, 0 if nobody sends (m
 * untouched), BATON_EWHOLE if a pair of nodes has no stand-in or a
 * stand-in's crossing cannot be read (topo_fold_cross), < 0 on other
 * errors. */
int linkload_folded_cost(topo_t *t, linkload_peer_fn peer, const void *ctx, int nslots, int nchannels, cost_model_t *m,
                         baton_err_t *e);

/* Rows whose steps differ (recursive doubling and halving, pairwise shifts,
 * Bruck): in step k rank r sends *bytes to the rank send(ctx, k, r, &bytes)
 * returns (-1: nothing). Every step is charged its own busiest directed link
 * (its bytes over its bandwidth) and its longest route's latency; the view
 * is alpha = their mean (a formula counts one alpha a step) and beta = the
 * steps' busiest-link seconds over the sum of each step's largest message
 * (what a uniform formula multiplies by beta), so a formula summing
 * alpha + m_k beta over its steps gives the sum of the steps' times.
 * LOAD_MAX_STEP_MESSAGES bounds ranks x steps charged: beyond it, as many
 * steps as it allows, spread evenly over all (their means stand for the
 * whole: 1,200 Polaris ranks' pairwise all-to-all, 218 of 1,199 steps; one
 * rank a NIC read 60 ms where the simulator says 213), so long as that is
 * LOAD_MIN_STEPS or all of them (linkload_steps_charged); else none.
 *
 * In two halves, as linkload_pattern_record: the record, each moving step's
 * loaded links and loads (nentries in all; step[3k..3k+2]: how many of them
 * are step k's, its largest message, its longest latency), then its cost at
 * a machine's rates: 1 if done, 0 if too large or nothing moves (m
 * untouched), < 0 on error. */
typedef int (*linkload_step_fn)(const void *ctx, int k, int r, double *bytes);
#define LOAD_MAX_STEP_MESSAGES (1 << 18)
#define LOAD_MIN_STEPS 64     /* fewer stand for nothing: 4,096 ranks at most */
/* The steps of nsteps a view on p ranks charges (above); 0: no view. */
int linkload_steps_charged(int p, int nsteps);
typedef struct {
    int nsteps, nentries;
    int32_t *link;
    double *load;
    double *step;
} linkload_steps_rec_t;
int linkload_steps_record(topo_t *t, linkload_step_fn send, const void *ctx, int nsteps, linkload_steps_rec_t *rec,
                          baton_err_t *e);
int linkload_steps_rec_cost(const topo_t *t, const linkload_steps_rec_t *rec, cost_model_t *m);
void linkload_steps_rec_free(linkload_steps_rec_t *rec);

#endif
