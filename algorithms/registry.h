// The catalogue of algorithms: every (collective, name) Chorus can run, how to build its
// schedule, and when it cannot run. The selector, CHORUS_ALGO, the verifier test, chorus-sim
// and the benchmarks all enumerate this one table.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "algorithms/schedule.h"
#include "core/op_desc.h"

namespace chorus {

// Which host each rank is on, for hierarchical algorithms; flat() is one host.
struct RankLayout {
  std::vector<int> hostOf;              // by rank
  std::vector<std::vector<int>> hosts;  // ranks of each host, in rank order
  static RankLayout flat(int size);
  static RankLayout uniform(int size, int perHost);  // ranks [0,k) on host 0, ...
  static RankLayout fromHostIds(const std::vector<int>& hostOf);
  bool uniformHosts() const;  // every host has the same number of ranks
};

using BuildFn = Schedule (*)(const OpDesc& d, int rank, int size, const RankLayout& layout);
// Why an algorithm cannot run a call (nullptr when it can).
using LimitFn = const char* (*)(const OpDesc& d, int size, const RankLayout& layout);

struct Algorithm {
  Collective coll;
  const char* name;
  BuildFn build;
  LimitFn limit = nullptr;
  const char* why(const OpDesc& d, int size, const RankLayout& l) const {
    return limit ? limit(d, size, l) : nullptr;
  }
};

const std::vector<Algorithm>& allAlgorithms();
std::vector<const Algorithm*> algorithmsFor(Collective c);
const Algorithm* findAlgorithm(Collective c, std::string_view name);
// Parses collectiveName()'s spelling ("allreduce", "reduce_scatter", ...), as in CHORUS_ALGO.
bool parseCollectiveKey(std::string_view s, Collective* out);

}  // namespace chorus
