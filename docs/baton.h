/* baton.h - libbaton's public interface, for programs that link -lbaton
 * (pkg-config baton): machines (topologies/), schedules and the registry
 * (algorithms/), one collective simulated or predicted (sim/run.h), NCCL's
 * plan and cost model (topologies/graph.h, sim/plan.h), selection tables,
 * nccl-tests logs and calibration (validate/). Installed with the headers
 * it includes under PREFIX/include/baton. */
#ifndef BATON_H
#define BATON_H

#include "algorithms/algo.h"
#include "sim/plan.h"
#include "sim/run.h"
#include "sim/select.h"
#include "topologies/graph.h"
#include "topologies/topo_write.h"
#include "topologies/topo_yaml.h"
#include "validate/calibrate.h"
#include "validate/nccltests.h"

#endif
