// The selector: for one call on one job, predicts every algorithm of the collective with the
// cost model and picks the fastest, unless the override forces one. The library (per new
// collective and size class), chorus-sim and the benchmarks all call selectAlgorithm, so what
// they report is what the library runs.
#pragma once

#include <string>
#include <vector>

#include "algorithms/registry.h"
#include "tune/algo_override.h"
#include "tune/cost_model.h"

namespace chorus {

struct Candidate {
  const Algorithm* algorithm = nullptr;
  double predictedUs = 0;             // +infinity when unavailable
  const char* unavailable = nullptr;  // why it cannot run this call, or nullptr
};

struct Selection {
  const Algorithm* chosen = nullptr;
  bool forced = false;                // by the override; no predictions were made then
  std::vector<Candidate> candidates;  // fastest predicted first, unavailable ones last
  // "ring 12.3 us (picked); one_shot 14.0 us; ..." for the INFO log.
  std::string describe() const;
};

// Every rank's schedule of `a` for `d` (what the verifier and the cost model walk).
std::vector<Schedule> buildAllRanks(const Algorithm& a, const OpDesc& d, int size,
                                    const RankLayout& layout);
// Which host each rank is on, as the topology says (one host when it places fewer ranks).
RankLayout layoutFromTopology(const topo::Topology& t, int size);

// Fails only when the override names an algorithm that cannot run `d` on this job; the error
// says why and which algorithms can.
Status selectAlgorithm(const OpDesc& d, int size, const RankLayout& layout,
                       const topo::Topology& topo, const CostParams& params,
                       const AlgoOverride& override, Selection* out);

}  // namespace chorus
