#include "core/transport_plan.h"

#include <algorithm>

#include "common/env.h"

namespace chorus {

TransportPlan planTransports(const std::vector<int>& hostOf, int rank, bool forceTcp,
                             size_t shmSlotBytes, const TcpOptions& tcp) {
  const int size = int(hostOf.size());
  TransportPlan p;
  p.tcpPeer.assign(size, false);
  p.shmHostOf = hostOf;
  bool shmUsed = false;
  p.oneHost = true;
  for (int q = 0; q < size; ++q) {
    p.oneHost &= hostOf[q] == hostOf[0];
    for (int r = 0; r < q; ++r) shmUsed |= hostOf[r] == hostOf[q];
  }
  if (forceTcp) {
    for (int q = 0; q < size; ++q) p.shmHostOf[q] = q;
    shmUsed = false;
  }
  for (int q = 0; q < size; ++q) {
    if (q == rank) continue;
    bool sameHost = p.shmHostOf[q] == p.shmHostOf[rank];
    p.tcpPeer[q] = !sameHost;
    p.tcpUsed |= !sameHost;
    p.shmActive |= sameHost;
  }
  // tcpUsed must be job-wide: some pair anywhere, not just this rank's.
  if (forceTcp)
    p.tcpUsed = size > 1;
  else
    p.tcpUsed = !p.oneHost;
  if (p.tcpUsed && shmUsed)
    p.payload = std::min(shmSlotBytes, tcp.chunkBytes);
  else
    p.payload = p.tcpUsed ? tcp.chunkBytes : shmSlotBytes;
  return p;
}

Status transportMode(bool* forceTcp) {
  *forceTcp = false;
  auto v = envString("CHORUS_TRANSPORT");
  if (!v || v->empty() || *v == "auto") return Status::Ok();
  if (*v == "tcp") {
    *forceTcp = true;
    return Status::Ok();
  }
  return Status::InvalidArgument("CHORUS_TRANSPORT='" + *v +
                                 "': expected auto (shm within a host, tcp between hosts) or "
                                 "tcp (tcp between every pair, for testing)");
}

}  // namespace chorus
