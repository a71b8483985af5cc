/* mfile_calib.h - a machine file's calibration: record (mfile_calib.c). */
#ifndef BATON_MFILE_CALIB_H
#define BATON_MFILE_CALIB_H

#include "mfile.h"

/* calibration: {algo:, proto:, model:, contention:, mape_pct:, cv_mape_pct:,
 * band_pct:, seen:, logs:, date:, nccl:}: into the topology's params; it
 * replaces a base's record. 0 when absent. */
int mf_read_calibration(mfile_t *c, ynode_t *root);

/* fidelity: {logs: TEXT, bands: [{coll:, socket:, large:, all:}, ...]}:
 * baton's measured error (%) on the machine's own logs, per collective (and
 * transport, where `socket:` says), at a log's largest sizes and over all
 * sizes. 0 when absent. */
int mf_read_fidelity(mfile_t *c, ynode_t *root);

#endif
