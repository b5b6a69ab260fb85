// Every algorithm is a pure function (OpDesc, rank, size) -> Schedule. Buffers are addressed
// by BufferId and element offsets; the executor binds them to real memory at run time, so a
// schedule is built once per distinct call and cached. registry.h lists them all by name.
#pragma once

#include "algorithms/schedule.h"
#include "core/op_desc.h"

namespace chorus {

struct RankLayout;

// allreduce
Schedule ringAllReduce(const OpDesc& d, int rank, int size);
Schedule recursiveDoublingAllReduce(const OpDesc& d, int rank, int size);
Schedule rabenseifnerAllReduce(const OpDesc& d, int rank, int size);
Schedule directOneShotAllReduce(const OpDesc& d, int rank, int size);
Schedule directTwoShotAllReduce(const OpDesc& d, int rank, int size);
Schedule doubleBinaryTreeAllReduce(const OpDesc& d, int rank, int size);
Schedule hierarchicalAllReduce(const OpDesc& d, int rank, int size, const RankLayout& layout);
Schedule hierarchicalSlicedAllReduce(const OpDesc& d, int rank, int size, const RankLayout& layout);
// reduce_scatter / allgather
Schedule ringReduceScatter(const OpDesc& d, int rank, int size);
Schedule recursiveHalvingReduceScatter(const OpDesc& d, int rank, int size);
Schedule directReduceScatter(const OpDesc& d, int rank, int size);
Schedule ringAllGather(const OpDesc& d, int rank, int size);
Schedule recursiveDoublingAllGather(const OpDesc& d, int rank, int size);
Schedule bruckAllGather(const OpDesc& d, int rank, int size);
Schedule directAllGather(const OpDesc& d, int rank, int size);
Schedule hierarchicalReduceScatter(const OpDesc& d, int rank, int size, const RankLayout& layout);
Schedule hierarchicalAllGather(const OpDesc& d, int rank, int size, const RankLayout& layout);
// broadcast / reduce
Schedule binomialBroadcast(const OpDesc& d, int rank, int size);
Schedule chainBroadcast(const OpDesc& d, int rank, int size);
Schedule scatterAllGatherBroadcast(const OpDesc& d, int rank, int size);
Schedule binomialReduce(const OpDesc& d, int rank, int size);
Schedule chainReduce(const OpDesc& d, int rank, int size);
// alltoall, gather, scatter
Schedule pairwiseAllToAll(const OpDesc& d, int rank, int size);
Schedule bruckAllToAll(const OpDesc& d, int rank, int size);
Schedule linearGather(const OpDesc& d, int rank, int size);
Schedule binomialGather(const OpDesc& d, int rank, int size);
Schedule linearScatter(const OpDesc& d, int rank, int size);
Schedule binomialScatter(const OpDesc& d, int rank, int size);
// others
Schedule pointToPoint(const OpDesc& d, int rank, int size);
Schedule disseminationBarrier(const OpDesc& d, int rank, int size);

// Segment k of n elements split into `parts` nearly equal pieces (the first n % parts pieces
// one element longer), as [segmentStart(k), segmentStart(k+1)).
inline uint64_t segmentStart(uint64_t n, int parts, int k) {
  uint64_t base = n / parts, extra = n % parts;
  return base * k + (uint64_t(k) < extra ? k : extra);
}
inline uint64_t segmentLen(uint64_t n, int parts, int k) {
  return segmentStart(n, parts, k + 1) - segmentStart(n, parts, k);
}

inline int mod(int a, int m) {
  return ((a % m) + m) % m;
}

// Folding a non-power-of-two rank count onto the largest power of two p2 <= size: the first
// 2*rem ranks pair up (even r with r+1); the even one hands its data to the odd one and sits
// out, the odd one stands for both. Ranks from 2*rem on keep going alone.
struct Fold {
  int p2 = 1, rem = 0;
  int virt = -1;     // my rank among the p2, or -1 if I sit out
  int partner = -1;  // my pair partner, or -1
  int real(int v) const { return v < rem ? 2 * v + 1 : v + rem; }
  static Fold of(int rank, int size);
};

}  // namespace chorus
