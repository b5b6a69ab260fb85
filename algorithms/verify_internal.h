// Shared pieces of the verifier: symbolic values and where each BufferId lives on a rank.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "algorithms/schedule.h"
#include "algorithms/schedule_index.h"
#include "core/op_desc.h"

namespace chorus::verify {

// A symbolic element: the sum of hashes of the (rank, index) inputs it combines and how many.
// Two different multisets collide with probability ~2^-64.
struct Sym {
  uint64_t h = 0;
  uint32_t n = 0;
  bool def = false;
  bool operator==(const Sym&) const = default;
};
Sym inputSym(int rank, uint64_t index);
inline Sym combine(Sym a, Sym b) {
  return {a.h + b.h, a.n + b.n, a.def && b.def};
}

// Memory of one rank: spaces 0 (input), 1 (output), 2 (scratch). In place, the input region
// lives inside the output space (or the output inside the input's, for reduce_scatter).
struct Region {
  int space = 0;
  uint64_t base = 0, size = 0;
  bool readable = false, writable = false;
};
struct RankMem {
  Region regions[3];  // by BufferId
  uint64_t spaceSize[3] = {0, 0, 0};
};
RankMem layoutFor(const OpDesc& d, int size, int rank, uint64_t scratchElems);

// Resolves [ref, ref+count) to (space, start); returns "" or why it is out of bounds/illegal.
std::string resolve(const RankMem& m, BufRef ref, uint64_t count, bool write, int* space,
                    uint64_t* start);
std::string refName(BufRef r);
// Where a reference points, ignoring bounds and permissions.
void physical(const RankMem& m, BufRef ref, int* space, uint64_t* start);
// A copy onto the same memory (the executor skips it; also what joins are made of).
bool selfCopy(const RankMem& m, const Step& s);

// What rank `rank`'s output must hold at element i; `ok` false where nothing is expected.
class Expected {
 public:
  Expected(const OpDesc& d, int size);
  bool wants(int rank) const;  // does this rank's output carry a result?
  uint64_t outputElems() const;
  Sym at(int rank, uint64_t i) const;

 private:
  Sym sumOver(uint64_t index) const;
  OpDesc d_;
  int size_;
  mutable std::vector<Sym> sums_;  // cached sum over ranks, by input index
  mutable std::vector<bool> have_;
};

}  // namespace chorus::verify

namespace chorus::verify {
// Per-rank checks that need no other rank: step fields, dependencies, bounds, legality.
std::string checkStatic(const Schedule& s, const RankMem& m, int rank, int size);
// The hazard proof for one rank (see verify.h) over the chunks and orders of `ix`, its
// schedule's index; *checked is false when it was too large.
std::string checkHazards(const Schedule& s, const ScheduleIndex& ix, const RankMem& m,
                         uint64_t maxEvents, bool* checked);
}  // namespace chorus::verify
