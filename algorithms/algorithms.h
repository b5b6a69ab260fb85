// Every algorithm is a pure function (OpDesc, rank, size) -> Schedule. Buffers are addressed
// by BufferId and element offsets; the executor binds them to real memory at run time, so a
// schedule is built once per distinct call and cached.
#pragma once

#include "algorithms/schedule.h"
#include "core/op_desc.h"

namespace chorus {

Schedule ringAllReduce(const OpDesc& d, int rank, int size);
Schedule ringReduceScatter(const OpDesc& d, int rank, int size);
Schedule ringAllGather(const OpDesc& d, int rank, int size);
Schedule binomialBroadcast(const OpDesc& d, int rank, int size);
Schedule binomialReduce(const OpDesc& d, int rank, int size);
Schedule pairwiseAllToAll(const OpDesc& d, int rank, int size);
Schedule linearGather(const OpDesc& d, int rank, int size);
Schedule linearScatter(const OpDesc& d, int rank, int size);
Schedule pointToPoint(const OpDesc& d, int rank, int size);
Schedule disseminationBarrier(const OpDesc& d, int rank, int size);

// The algorithm Chorus uses for `d` today (the cost-model selector replaces this).
Schedule buildSchedule(const OpDesc& d, int rank, int size);

// Segment k of n elements split into `parts` nearly equal pieces (the first n % parts pieces
// one element longer), as [segmentStart(k), segmentStart(k+1)).
inline uint64_t segmentStart(uint64_t n, int parts, int k) {
  uint64_t base = n / parts, extra = n % parts;
  return base * k + (uint64_t(k) < extra ? k : extra);
}

inline int mod(int a, int m) { return ((a % m) + m) % m; }

}  // namespace chorus
