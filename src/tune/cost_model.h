// The cost model: predicts how long a set of schedules (one per rank) takes, by walking them
// with a link model instead of a network. Per message: latency alpha of the link class between
// the two ranks (from the Topology), plus bytes/beta of work on each end; a receive-reduce
// costs bytes/reducer-rate instead on the receiving end. Each rank has one engine that does its
// steps' work one piece at a time (the executor is one thread: a rank's copies, sends and
// reductions on shared memory do not overlap), plus a second one for sends on the network,
// where a NIC moves the bytes. Steps are cut into at most a few pieces so that chunk
// pipelining shows, and a large walk uses fewer pieces to bound its cost.
#pragma once

#include <vector>

#include "algorithms/schedule.h"
#include "core/op_desc.h"
#include "topo/topology.h"

namespace chorus {

struct CostParams {
  const topo::Topology* topo = nullptr;  // link classes and reducer rate
  size_t chunkBytes = 128 << 10;         // the transport's message size
  double stepOverheadUs = 0.05;          // executor bookkeeping per step
  uint64_t pieceBudget = 1 << 20;        // pieces walked at most, all ranks together
  int maxPiecesPerStep = 16;
};

// Predicted microseconds from the first rank starting to the last finishing.
double predictTime(const OpDesc& d, const std::vector<Schedule>& perRank, const CostParams& p);

}  // namespace chorus
