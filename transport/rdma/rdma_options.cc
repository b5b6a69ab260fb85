#include "transport/rdma/rdma_options.h"

#include <algorithm>

namespace chorus {

RdmaOptions RdmaOptions::fromConfig(const Config& c) {
  RdmaOptions o;
  o.net = c.net;
  o.ofiProvider = c.ofiProvider;
  o.ibHca = c.ibHca;
  o.ibGidIndex = c.ibGidIndex;
  o.ibTrafficClass = c.ibTrafficClass;
  o.ifname = c.socketIfname;
  o.lanes = c.rdmaLanes;
  o.chunkBytes = c.rdmaChunkBytes;
  o.slots = c.rdmaSlots;
  o.zeroCopyBytes = c.rdmaZeroCopyBytes;
  o.timeoutSec = c.timeoutSec;
  return o;
}

int RdmaOptions::slotsFor(size_t peers, size_t slotBytes) const {
  if (slots) return slots;
  constexpr size_t kBudget = size_t(64) << 20, kFewest = 16, kMost = 64;
  const size_t fit = kBudget / (std::max<size_t>(peers, 1) * slotBytes);
  return int(std::clamp(fit, kFewest, kMost));
}

Status RdmaOptions::validate() const {
  if (net != "auto" && net != "ib" && net != "ofi" && net != "socket")
    return Status::InvalidArgument("CHORUS_NET='" + net +
                                   "': expected auto, ib (verbs), ofi (libfabric) or socket (TCP)");
  if (lanes < 1 || lanes > 16)
    return Status::InvalidArgument("CHORUS_RDMA_LANES must be 1..16, not " + std::to_string(lanes));
  if (chunkBytes < 4096 || chunkBytes % 64 || chunkBytes > (size_t(1) << 30))
    return Status::InvalidArgument(
        "CHORUS_RDMA_CHUNK_BYTES must be a multiple of 64 between 4 KiB and 1 GiB, not " +
        std::to_string(chunkBytes));
  if (slots != 0 && (slots < 2 || slots > kMaxSlots))
    return Status::InvalidArgument("CHORUS_RDMA_SLOTS must be 0 (sized by peer count) or 2.." +
                                   std::to_string(kMaxSlots) + ", not " + std::to_string(slots));
  if (ibGidIndex < -1 || ibGidIndex > 255)
    return Status::InvalidArgument("CHORUS_IB_GID_INDEX must be -1 (pick) or 0..255, not " +
                                   std::to_string(ibGidIndex));
  if (ibTrafficClass < 0 || ibTrafficClass > 255)
    return Status::InvalidArgument("CHORUS_IB_TC must be 0..255, not " +
                                   std::to_string(ibTrafficClass));
  return Status::Ok();
}

RdmaNicOptions RdmaOptions::nicOptions(bool loopbackOk, bool forced) const {
  RdmaNicOptions n;
  n.ofiProvider = ofiProvider;
  n.ofiSoftwareOk = forced;
  n.ifname = ifname;
  n.loopbackOk = loopbackOk;
  n.ibHca = ibHca;
  n.ibGidIndex = ibGidIndex;
  n.ibTrafficClass = ibTrafficClass;
  n.timeoutSec = timeoutSec;
  return n;
}

}  // namespace chorus
