// The estimate behind ncclGroupSimulateEnd: a plain alpha-beta model of ring-style algorithms
// over host memory, alpha per step and bytes over a copy bandwidth. It is a stand-in: the
// tuner's cost model (per link class, from the topology) will replace it.
#include "nccl/group.h"

namespace chorus::nccl {

namespace {
constexpr double kAlphaMicros = 2.0;           // one shm hand-off between two ranks
constexpr double kBytesPerMicro = 8.0 * 1000;  // 8 GB/s of copy bandwidth per rank
}  // namespace

double estimateMicros(const CostHint& h) {
  const double n = h.nranks, bytes = double(h.bytes);
  if (h.nranks <= 1) return bytes / kBytesPerMicro;
  double steps = n - 1, moved = 0;
  switch (h.kind) {
    case CostKind::AllReduce:
      steps = 2 * (n - 1);
      moved = 2 * (n - 1) / n * bytes;
      break;
    case CostKind::ReduceScatter:
    case CostKind::AllGather:
    case CostKind::AllToAll:
    case CostKind::Gather:
    case CostKind::Scatter: moved = (n - 1) / n * bytes; break;
    case CostKind::Broadcast:
    case CostKind::Reduce: moved = bytes; break;  // pipelined: the whole buffer once
    case CostKind::PointToPoint:
      steps = 1;
      moved = bytes;
      break;
  }
  return steps * kAlphaMicros + moved / kBytesPerMicro;
}

}  // namespace chorus::nccl
