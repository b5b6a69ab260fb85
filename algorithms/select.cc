// The default algorithm per collective. The cost-model selector will replace this table; until
// then these are the bandwidth-optimal or simplest correct choices.
#include "algorithms/algorithms.h"

namespace chorus {

Schedule buildSchedule(const OpDesc& d, int rank, int size) {
  switch (d.coll) {
    case Collective::AllReduce: return ringAllReduce(d, rank, size);
    case Collective::ReduceScatter: return ringReduceScatter(d, rank, size);
    case Collective::AllGather: return ringAllGather(d, rank, size);
    case Collective::Broadcast: return binomialBroadcast(d, rank, size);
    case Collective::Reduce: return binomialReduce(d, rank, size);
    case Collective::AllToAll: return pairwiseAllToAll(d, rank, size);
    case Collective::Gather: return linearGather(d, rank, size);
    case Collective::Scatter: return linearScatter(d, rank, size);
    case Collective::Send:
    case Collective::Recv: return pointToPoint(d, rank, size);
    case Collective::Barrier: return disseminationBarrier(d, rank, size);
  }
  return {};
}

}  // namespace chorus
