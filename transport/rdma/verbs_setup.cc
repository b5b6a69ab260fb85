// VerbsNic::prepare and connect: queue pairs made, described, and joined to the peers'.
#if defined(CHORUS_HAVE_IBVERBS)
#include <cstring>
#include <set>

#include "common/log.h"
#include "transport/rdma/verbs_blob.h"
#include "transport/rdma/verbs_nic.h"
#include "transport/rdma/verbs_params.h"

namespace chorus {

Status VerbsNic::checkPrepare(int rank, int size, const std::vector<int>& peers, int lanes) const {
  std::string what = "verbs prepare on " + describe() + ": ";
  if (rank_ >= 0) return Status::InvalidUsage(what + "called a second time");
  if (size < 1 || rank < 0 || rank >= size)
    return Status::InvalidArgument(what + "rank " + std::to_string(rank) + " of " +
                                   std::to_string(size));
  if (lanes < 1 || lanes > kVerbsMaxLanes)
    return Status::InvalidArgument(what + std::to_string(lanes) + " lanes (1.." +
                                   std::to_string(kVerbsMaxLanes) + ")");
  std::set<int> seen;
  for (int p : peers)
    if (p < 0 || p >= size || !seen.insert(p).second)
      return Status::InvalidArgument(what + "peer " + std::to_string(p) +
                                     " is out of range or given twice");
  return Status::Ok();
}

Status VerbsNic::prepare(int rank, int size, const std::vector<int>& peers, int lanes,
                         std::vector<uint8_t>* description) {
  CHORUS_RETURN_IF_ERROR(checkPrepare(rank, size, peers, lanes));
  rank_ = rank;
  size_ = size;
  lanesPerPeer_ = lanes;
  int qps = int(peers.size()) * lanes;
  int depth = verbsQueueDepth(port_.deviceAttr.max_qp_wr, port_.deviceAttr.max_cqe, qps);
  if (depth == 0)
    return Status::Unsupported("verbs: " + describe() + " cannot hold " + std::to_string(qps) +
                               " queue pairs on one completion queue (max_cqe " +
                               std::to_string(port_.deviceAttr.max_cqe) +
                               "); lower CHORUS_RDMA_LANES");
  if (qps > 0) {
    std::lock_guard<std::mutex> lock(cqMutex_);
    cq_ = lib_.createCq(port_.context, 2 * depth * qps, nullptr, channel_, 0);
    if (!cq_)
      return Status::SystemError("verbs: ibv_create_cq of " + std::to_string(2 * depth * qps) +
                                 " entries on " + describe() + " failed: " + strerror(errno));
  }
  VerbsEndpointInfo info;
  info.linkLayer = port_.roce ? VerbsEndpointInfo::kEthernet : VerbsEndpointInfo::kInfiniBand;
  info.mtu = uint8_t(port_.portAttr.active_mtu);
  info.lid = port_.portAttr.lid;
  std::memcpy(info.gid, port_.gid.raw, 16);
  info.rank = rank;
  info.size = size;
  info.lanes = lanes;
  for (int peer : peers) {
    firstLane_[peer] = lanes_.size();
    for (int l = 0; l < lanes; ++l) {
      lanes_.push_back(std::make_unique<VerbsLane>(peer, l, uint32_t(lanes_.size()), depth));
      CHORUS_RETURN_IF_ERROR(createLaneQp(lib_, port_, pd_, cq_, maxGather_, lanes_.back().get()));
      info.qpns[peer].push_back(lanes_.back()->qp->qp_num);
    }
  }
  *description = encodeVerbsInfo(info);
  LOG_TRACE(kLogNet, "verbs: rank %d made %d queue pairs of depth %d on %s", rank, qps, depth,
            describe().c_str());
  return Status::Ok();
}

Status VerbsNic::connect(int peer, const uint8_t* description, size_t bytes) {
  std::string what = "verbs connect of rank " + std::to_string(rank_) + " to rank " +
                     std::to_string(peer) + " on " + describe() + ": ";
  auto lane0 = firstLane_.find(peer);
  if (lane0 == firstLane_.end())
    return Status::InvalidUsage(what + "the peer was not among those prepare() was given");
  if (lanes_[lane0->second]->connected.load())
    return Status::InvalidUsage(what + "already connected");
  VerbsEndpointInfo info;
  Status st = decodeVerbsInfo(description, bytes, &info);
  if (!st.ok()) return st.withContext(what + "its description");
  if (info.rank != peer || info.size != size_ || info.lanes != lanesPerPeer_)
    return Status::InvalidArgument(what + "its description is rank " + std::to_string(info.rank) +
                                   "'s of " + std::to_string(info.size) + " with " +
                                   std::to_string(info.lanes) + " lanes, not rank " +
                                   std::to_string(peer) + "'s of " + std::to_string(size_) +
                                   " with " + std::to_string(lanesPerPeer_) +
                                   " (descriptions swapped wrongly, or ranks configured "
                                   "differently: CHORUS_RDMA_LANES)");
  bool peerRoce = info.linkLayer == VerbsEndpointInfo::kEthernet;
  if (peerRoce != port_.roce)
    return Status::Unsupported(what + "the peer's port is " + (peerRoce ? "RoCE" : "InfiniBand") +
                               " and this one is not; " +
                               "choose ports of one fabric with CHORUS_IB_HCA");
  std::vector<uint32_t> qpns;
  st = findQpnsFor(info, rank_, &qpns);
  if (!st.ok()) return st.withContext(what.substr(0, what.size() - 2));
  for (int l = 0; l < lanesPerPeer_; ++l) {
    VerbsLane* lane = lanes_[lane0->second + l].get();
    CHORUS_RETURN_IF_ERROR(connectLaneQp(lib_, port_, info, qpns[l], options_.ibTrafficClass,
                                         options_.timeoutSec, lane));
    lane->connected.store(true, std::memory_order_release);
  }
  return Status::Ok();
}

}  // namespace chorus
#endif
