// The estimate behind ncclGroupSimulateEnd: the library's own cost model (src/tune), on the
// communicator's topology and estimates, for the algorithm that communicator would run — the
// selector's pick, or the one CHORUS_ALGO forces. A point-to-point call is one message: the
// link's latency plus its bytes at the link's bandwidth.
#include "core/group_estimate.h"

#include <cmath>

#include "tune/selector.h"

namespace chorus {

double estimateMicros(const Communicator::Impl& m, const OpDesc& queued) {
  // Priced out of place, whatever the buffers: the estimate is of the call's data movement,
  // which an in-place call on one rank would otherwise price at nothing.
  OpDesc call = queued;
  call.inPlace = false;
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

}  // namespace chorus
