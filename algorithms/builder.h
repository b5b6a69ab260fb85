// Builder: a Schedule under construction, with dependencies given as lists. It keeps the two
// invariants the execution model needs but that are easy to break by hand:
//  - a step of count 0 is done from the start, so it would silently cut a chain of
//    dependencies; the builder emits a join in its place instead;
//  - a step has at most Step::kMaxDeps dependencies; more are folded into joins.
// A join is a one-element copy of a location onto itself: the executor skips the memory work,
// so it costs one poll, and whoever depends on it waits for all of its dependencies. The first
// dependency of a list is kept direct, so it stays chunkwise (pipelined) when counts match.
#pragma once

#include <vector>

#include "algorithms/schedule.h"
#include "core/op_desc.h"

namespace chorus {

class Builder {
 public:
  Builder(const char* name, const OpDesc& d, int rank);
  using Deps = std::vector<int>;
  int send(int peer, BufRef src, uint64_t n, Deps deps = {});
  int recv(int peer, BufRef dst, uint64_t n, Deps deps = {});
  int recvReduce(int peer, BufRef local, BufRef dst, uint64_t n, Deps deps = {});
  int copy(BufRef src, BufRef dst, uint64_t n, Deps deps = {});
  // One step that is done once all of `deps` are (-1 when there is nothing to wait for).
  int join(Deps deps);
  void needScratch(uint64_t elems) {
    if (elems > s_.scratchElems) s_.scratchElems = elems;
  }
  Schedule take() { return std::move(s_); }

 private:
  int add(StepKind k, int peer, BufRef src, BufRef dst, uint64_t n, Deps deps);
  static Deps clean(const Deps& d);
  Schedule s_;
  BufRef anchor_;
  bool anchorOk_;
};

// BufRef arithmetic: the same buffer, `k` elements further.
inline BufRef operator+(BufRef r, uint64_t k) {
  return {r.buf, r.offset + k};
}

}  // namespace chorus
