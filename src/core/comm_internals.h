// What Chorus's own tools, tests and benchmarks may read below the public API: the state a
// communicator chose at init (topology, rank layout, cost model, config) and the plans it has
// cached. The Communicator keeps its Impl private and names this class its friend, so these
// few read-only views are the whole of what leaves it. Read them only between calls.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "algorithms/registry.h"
#include "chorus/communicator.h"
#include "core/op_desc.h"
#include "topo/topology.h"
#include "tune/cost_model.h"

namespace chorus {

class CommInternals {
 public:
  // The settings the communicator was made with (a split child may start from them).
  static const Config& config(const Communicator& c);
  // The job's machines and link estimates, as the selector sees them.
  static const topo::Topology& topology(const Communicator& c);
  // The ranks grouped by host, for hierarchical algorithms.
  static const RankLayout& layout(const Communicator& c);
  static const CostParams& costParams(const Communicator& c);
  // The transport the executor sleeps on ("shm", "tcp", ...), or "?" before there is one.
  static std::string transportName(const Communicator& c);
  // Every call planned so far, with the algorithm its plan runs.
  static std::vector<std::pair<OpDesc, std::string>> plannedAlgorithms(const Communicator& c);
};

}  // namespace chorus
