// The estimate behind ncclGroupSimulateEnd: the library's own cost model (src/tune), on the
// communicator's topology and estimates, for the algorithm that communicator would run — the
// selector's pick, or the one CHORUS_ALGO forces. A point-to-point call is one message: the
// link's latency plus its bytes at the link's bandwidth.
#include <cmath>

#include "core/comm_impl.h"
#include "nccl/group.h"
#include "tune/selector.h"

namespace chorus::nccl {

double estimateMicros(const OpDesc& call, const Communicator& core) {
  const Communicator::Impl& m = *core.impl();
  const double bytes = double(call.count) * double(dataTypeSize(call.dtype));
  if (call.coll == Collective::Send || call.coll == Collective::Recv) {
    const topo::LinkParams l = m.topology.link(m.topology.pathBetweenRanks(m.rank, call.root));
    return l.latencyUs + bytes / (l.bandwidthGBs * 1e3);
  }
  Selection sel;
  // An override that cannot run the call makes the real call fail; it costs nothing then.
  if (!selectAlgorithm(call, m.size, m.layout, m.topology, m.costParams, m.algoOverride, &sel).ok())
    return 0;
  if (sel.forced)
    return predictTime(call, buildAllRanks(*sel.chosen, call, m.size, m.layout), m.topology,
                       m.costParams);
  for (const Candidate& k : sel.candidates)
    if (k.algorithm == sel.chosen && std::isfinite(k.predictedUs)) return k.predictedUs;
  return 0;
}

}  // namespace chorus::nccl
