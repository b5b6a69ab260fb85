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
  double predictedUs = 0;             // +infinity when unavailable or skipped
  const char* unavailable = nullptr;  // why it cannot run this call, or nullptr
  // lowerBoundTime from a sample of ranks; when it exceeded the best prediction so far the walk
  // was skipped (it could not have been picked) and the candidate only says "> boundUs".
  double boundUs = 0;
  bool skipped = false;
};

struct Selection {
  const Algorithm* chosen = nullptr;
  // The message size its schedules carry (Schedule::chunkBytes; 0: the transports').
  size_t chunkBytes = 0;
  bool forced = false;  // by the override; no predictions were made then
  // Fastest predicted first, then the skipped ones by bound, unavailable ones last.
  std::vector<Candidate> candidates;
  // "ring 12.3 us (picked); two_shot > 1228.0 us (bound); ..." for the INFO log.
  std::string describe() const;
};

// Every rank's schedule of `a` for `d` (what the verifier and the cost model walk), each cut
// into messages of `chunkBytes` (0: the transports' size).
std::vector<Schedule> buildAllRanks(const Algorithm& a, const OpDesc& d, int size,
                                    const RankLayout& layout, size_t chunkBytes = 0);
// What a selection runs on `rank`: its algorithm's schedule, with its chunk size.
Schedule buildSelected(const Selection& sel, const OpDesc& d, int rank, int size,
                       const RankLayout& layout);
// Which host each rank is on, as the topology says (one host when it places fewer ranks).
RankLayout layoutFromTopology(const topo::Topology& t, int size);

// The ranks whose schedules bound an algorithm before its walk: a few that differ in role
// (first and last, the first's neighbour, the middle, the root), sorted and distinct.
std::vector<int> boundSample(const OpDesc& d, int size);

// Branch and bound: candidates are walked in increasing order of their lower bound, and one
// whose bound exceeds the best prediction so far is skipped (params.skipLosers). The bound is
// true, so the pick is the one walking every candidate would make; what is skipped is what a
// large job cannot afford (a quadratic algorithm's million steps on 1024 ranks).
// Fails only when the override names an algorithm that cannot run `d` on this job; the error
// says why and which algorithms can.
Status selectAlgorithm(const OpDesc& d, int size, const RankLayout& layout,
                       const topo::Topology& topo, const CostParams& params,
                       const AlgoOverride& override, Selection* out);

}  // namespace chorus
