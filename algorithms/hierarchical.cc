// Hierarchical allreduce over hosts of L ranks each: a ring reduce-scatter inside each host
// (local rank i ends with segment i+1 of n/L elements), a ring allreduce of that segment among
// the ranks with the same local index on every host, then a ring allgather inside each host.
// Only n/L elements per rank cross the network, and the slow links see 2(H-1) message times
// instead of 2(P-1): latency 2(L-1) local + 2(H-1) remote message times, bandwidth 2n(L-1)/L
// locally and 2n(H-1)/(HL) remotely per rank.
#include "algorithms/registry.h"
#include "algorithms/ring_phases.h"

namespace chorus {

Schedule hierarchicalAllReduce(const OpDesc& d, int rank, int size, const RankLayout& layout) {
  Builder b("hierarchical", d, rank);
  const uint64_t n = d.count;
  (void)size;
  const int host = layout.hostOf[rank];
  Group local, cross;
  local.ranks = layout.hosts[host];
  while (local.ranks[local.me] != rank) ++local.me;
  for (const auto& h : layout.hosts) cross.ranks.push_back(h[local.me]);
  cross.me = host;

  RingPhase rs = ringReduceScatterPhase(b, local, input(), output(), n, -1);
  const int seg = mod(local.me + 1, local.size());
  const uint64_t off = segmentStart(n, local.size(), seg), len = segmentLen(n, local.size(), seg);
  int ready = rs.done;
  if (cross.size() > 1) {
    RingPhase x = ringReduceScatterPhase(b, cross, output(off), output(off), len, rs.done);
    ready = ringAllGatherPhase(b, cross, output(off), len, x.done, x.sendOf, true);
  }
  ringAllGatherPhase(b, local, output(), n, ready, rs.sendOf, false);
  return b.take();
}

}  // namespace chorus
