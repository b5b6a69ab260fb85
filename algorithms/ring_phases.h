// The two halves of a ring allreduce over any group of ranks and any range, for composing
// (ring allreduce itself, the hierarchical algorithms). The range of n elements is cut into
// G segments (segmentStart); member i of the ring ends the reduce-scatter phase holding
// segment i+1 (mod G) finished, which is where the allgather phase starts from.
#pragma once

#include <vector>

#include "algorithms/algorithms.h"
#include "algorithms/builder.h"

namespace chorus {

struct Group {
  std::vector<int> ranks;  // real ranks, in ring order
  int me = 0;              // my position
  int size() const { return int(ranks.size()); }
  int at(int i) const { return ranks[mod(i, size())]; }
  static Group all(int size, int rank);
};

struct RingPhase {
  int done = -1;            // the step that finished my segment
  std::vector<int> sendOf;  // per segment: the step that last read it (for later writers)
};

// Contributions come from `src` (the input, or `dst` itself); partial sums go to `dst`. Every
// step also waits for `dep` (what produced the range, when it is not the input).
RingPhase ringReduceScatterPhase(Builder& b, const Group& g, BufRef src, BufRef dst, uint64_t n,
                                 int dep);
// Circulates the finished segments of `buf`; with `join`, returns a step that waits for all
// it received (a plain last receive would not: empty segments' steps are elided).
int ringAllGatherPhase(Builder& b, const Group& g, BufRef buf, uint64_t n, int ready,
                       const std::vector<int>& sendOf, bool join);

// An allreduce of n elements by recursive halving, then doubling, over a group whose size is a
// power of two (halving_doubling_phase.cc). The reduce-scatter reads src in its first round,
// leaves its results in dst (src == dst: in place) and waits for `ready`; the allgather
// completes dst and returns a step that waits for all of it.
struct HalvingPhase {
  int done = -1;              // the last reduce
  int lo = 0, hi = 0;         // the segments [lo, hi) this member holds finished
  std::vector<int> gaveAway;  // by round mask: the send of the range given away then
};
HalvingPhase halvingReduceScatterPhase(Builder& b, const Group& g, BufRef src, BufRef dst,
                                       uint64_t n, int ready);
int doublingAllGatherPhase(Builder& b, const Group& g, BufRef dst, uint64_t n,
                           const HalvingPhase& halving);

}  // namespace chorus
