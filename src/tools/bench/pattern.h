// Data that makes every result checkable: each rank's element i is a small integer of (rank, i)
// so sums, products, max and min are exact in every type (low-precision floats get a rounding
// bound), and moved data is recognisable by where it came from.
#pragma once

#include <cstddef>

#include "chorus/types.h"

namespace chorus::bench {

class Pattern {
 public:
  Pattern(DataType t, RedOp op, int ranks) : t_(t), op_(op), ranks_(ranks) {}

  // Rank `rank`'s input for a reducing collective, at global element index i.
  double reduceInput(int rank, size_t i) const;
  // The reduction of all ranks' reduceInput at i.
  double reduced(size_t i) const;
  // Rank `rank`'s input for a data-moving collective (broadcast, gathers, alltoall, p2p).
  static double moveInput(int rank, size_t i);

  // buf[k] = value of global index first + k.
  void fillReduce(void* buf, size_t n, size_t first, int rank) const;
  void fillMove(void* buf, size_t n, size_t first, int rank) const;
  // Elements of buf (global indices first..first+n) that are not what they should be.
  size_t wrongReduced(const void* buf, size_t n, size_t first) const;
  size_t wrongMoved(const void* buf, size_t n, size_t first, int fromRank) const;

 private:
  DataType t_;
  RedOp op_;
  int ranks_;
};

}  // namespace chorus::bench
