#if defined(CHORUS_HAVE_IBVERBS)
#include "transport/rdma/verbs_qp.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "transport/rdma/verbs_params.h"

namespace chorus {

namespace {

std::string where(const VerbsPort& port, const VerbsLane& lane) {
  return port.device + ":" + std::to_string(port.port) + " towards rank " +
         std::to_string(lane.peer) + " lane " + std::to_string(lane.lane);
}

Status modifyFailed(const VerbsPort& port, const VerbsLane& lane, const char* state, int err,
                    const std::string& hint) {
  return Status::SystemError("verbs: moving the queue pair on " + where(port, lane) + " to " +
                             state + " failed: " + strerror(err) + " (errno " +
                             std::to_string(err) + ")" + hint);
}

}  // namespace

void VerbsLane::fail(const std::string& why) {
  std::lock_guard<std::mutex> lock(errorMutex);
  if (error.empty()) error = why;
  broken.store(true, std::memory_order_release);
}

std::string VerbsLane::firstError() {
  std::lock_guard<std::mutex> lock(errorMutex);
  return error;
}

Status createLaneQp(const VerbsLibrary& lib, const VerbsPort& port, ibv_pd* pd, ibv_cq* cq,
                    int maxGather, VerbsLane* lane) {
  ibv_qp_init_attr init{};
  init.send_cq = cq;
  init.recv_cq = cq;
  init.qp_type = IBV_QPT_RC;
  init.sq_sig_all = 0;  // every write asks for its completion itself (IBV_SEND_SIGNALED)
  init.cap.max_send_wr = lane->depth;
  init.cap.max_recv_wr = lane->depth;
  init.cap.max_send_sge = maxGather;
  init.cap.max_recv_sge = 1;  // receives carry none, but some providers reject 0 here
  lane->qp = lib.createQp(pd, &init);
  if (!lane->qp)
    return Status::SystemError(
        "verbs: ibv_create_qp on " + where(port, *lane) + " failed: " + strerror(errno) +
        "; the device may be out of queue pairs " +
        "(lower CHORUS_RDMA_LANES) or the locked-memory limit too low " + "(ulimit -l)");
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_INIT;
  attr.pkey_index = 0;
  attr.port_num = uint8_t(port.port);
  attr.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  int err = lib.modifyQp(lane->qp, &attr,
                         IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
  if (err) return modifyFailed(port, *lane, "INIT", err, "");
  // Receives may be posted from INIT on; posting them now means none is missing when the
  // peer's first write arrives, however early.
  err = postLaneReceives(lane, lane->depth);
  if (err)
    return Status::SystemError("verbs: posting receives on " + where(port, *lane) +
                               " failed: " + strerror(err));
  return Status::Ok();
}

int postLaneReceives(VerbsLane* lane, int count) {
  std::vector<ibv_recv_wr> wrs(count);
  for (int i = 0; i < count; ++i) {
    wrs[i].wr_id = verbsRecvId(lane->index);
    wrs[i].sg_list = nullptr;
    wrs[i].num_sge = 0;
    wrs[i].next = i + 1 < count ? &wrs[i + 1] : nullptr;
  }
  ibv_recv_wr* bad = nullptr;
  return count ? ibv_post_recv(lane->qp, wrs.data(), &bad) : 0;
}

Status connectLaneQp(const VerbsLibrary& lib, const VerbsPort& port, const VerbsEndpointInfo& peer,
                     uint32_t remoteQpn, int trafficClass, double timeoutSec, VerbsLane* lane) {
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_RTR;
  attr.path_mtu = ibv_mtu(std::min<int>(port.portAttr.active_mtu, peer.mtu));
  attr.dest_qp_num = remoteQpn;
  attr.rq_psn = 0;
  attr.max_dest_rd_atomic = 1;
  attr.min_rnr_timer = kVerbsMinRnrTimer;
  attr.ah_attr.port_num = uint8_t(port.port);
  attr.ah_attr.sl = 0;
  if (port.roce) {
    // RoCE has no LIDs: the path is the peer's GID, sent from ours, routed as IP.
    attr.ah_attr.is_global = 1;
    std::memcpy(attr.ah_attr.grh.dgid.raw, peer.gid, 16);
    attr.ah_attr.grh.sgid_index = uint8_t(port.gidIndex);
    attr.ah_attr.grh.hop_limit = 255;
    attr.ah_attr.grh.traffic_class = uint8_t(trafficClass);
  } else {
    attr.ah_attr.is_global = 0;
    attr.ah_attr.dlid = peer.lid;
  }
  int err = lib.modifyQp(lane->qp, &attr,
                         IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                             IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
  if (err)
    return modifyFailed(port, *lane, "RTR", err,
                        port.roce ? "; check CHORUS_IB_GID_INDEX (both ranks need a GID of "
                                    "the same RoCE version and address family)"
                                  : "");
  std::memset(&attr, 0, sizeof attr);
  attr.qp_state = IBV_QPS_RTS;
  attr.timeout = uint8_t(verbsAckTimeout(timeoutSec));
  attr.retry_cnt = kVerbsRetryCount;
  attr.rnr_retry = kVerbsRnrRetry;
  attr.sq_psn = 0;
  attr.max_rd_atomic = 1;
  err = lib.modifyQp(lane->qp, &attr,
                     IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                         IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
  if (err) return modifyFailed(port, *lane, "RTS", err, "");
  return Status::Ok();
}

}  // namespace chorus
#endif
