// VerbsNic's data path: posting writes, turning completions into events, sleeping on the
// completion channel.
#if defined(CHORUS_HAVE_IBVERBS)
#include <arpa/inet.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "common/log.h"
#include "transport/rdma/verbs_nic.h"
#include "transport/rdma/verbs_params.h"

namespace chorus {

namespace {

// What a failed write's status most likely means, for the person reading the error.
const char* hintFor(ibv_wc_status status) {
  switch (status) {
    case IBV_WC_RETRY_EXC_ERR:
      return "; the peer's NIC stopped acknowledging (peer dead, link cut, or a wrong address: "
             "check CHORUS_IB_GID_INDEX on RoCE)";
    case IBV_WC_RNR_RETRY_EXC_ERR:
      return "; the peer posted no receive in time";
    case IBV_WC_REM_ACCESS_ERR:
      return "; the target range is not registered at the peer, or the key is stale";
    case IBV_WC_LOC_PROT_ERR:
    case IBV_WC_LOC_LEN_ERR:
      return "; a gather entry lies outside its registered region";
    default:
      return "";
  }
}

}  // namespace

VerbsLane* VerbsNic::findLane(int peer, int lane) const {
  auto it = firstLane_.find(peer);
  if (it == firstLane_.end() || lane < 0 || lane >= lanesPerPeer_) return nullptr;
  return lanes_[it->second + lane].get();
}

PostResult VerbsNic::write(int peer, int laneIndex, const RdmaGather* gather, int n,
                           RdmaTarget target, uint32_t imm, void* context, std::string* error) {
  auto failed = [&](const std::string& why) {
    if (error)
      *error = "verbs write to rank " + std::to_string(peer) + " lane " +
               std::to_string(laneIndex) + " on " + describe() + ": " + why;
    return PostResult::kFailed;
  };
  VerbsLane* lane = findLane(peer, laneIndex);
  if (!lane) return failed("no such lane (was the peer given to prepare()?)");
  if (!lane->connected.load(std::memory_order_acquire)) return failed("not connected yet");
  if (lane->broken.load(std::memory_order_acquire))
    return failed("the queue pair failed earlier: " + lane->firstError());
  if (n < 0 || n > maxGather_)
    return failed(std::to_string(n) + " gather entries, at most " + std::to_string(maxGather_));
  ibv_sge sges[kVerbsGatherCap];
  uint64_t total = 0;
  for (int i = 0; i < n; ++i) {
    if (!gather[i].desc) return failed("gather entry " + std::to_string(i) + " has no region");
    total += gather[i].bytes;
    sges[i].addr = reinterpret_cast<uintptr_t>(gather[i].addr);
    sges[i].length = uint32_t(gather[i].bytes);
    sges[i].lkey = static_cast<const ibv_mr*>(gather[i].desc)->lkey;
  }
  if (total > port_.portAttr.max_msg_sz)
    return failed(std::to_string(total) + " bytes, more than the port's largest message (" +
                  std::to_string(port_.portAttr.max_msg_sz) + ")");
  ibv_send_wr wr{};
  wr.sg_list = n ? sges : nullptr;
  wr.num_sge = n;
  wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.imm_data = htonl(imm);
  wr.wr.rdma.remote_addr = target.addr;
  wr.wr.rdma.rkey = uint32_t(target.key);
  std::lock_guard<std::mutex> lock(lane->postMutex);
  // Every write is signalled, so those outstanding bound what sits in the send queue: at the
  // depth it was created with, ibv_post_send would fail with ENOMEM.
  if (lane->outstanding.load(std::memory_order_acquire) >= lane->depth) return PostResult::kBusy;
  uint32_t slot = uint32_t(lane->posted % uint64_t(lane->depth));
  lane->contexts[slot].store(context, std::memory_order_relaxed);
  wr.wr_id = verbsWriteId(lane->index, slot);
  // Counted before posting: the completion may be polled before ibv_post_send returns.
  lane->outstanding.fetch_add(1, std::memory_order_acq_rel);
  ibv_send_wr* bad = nullptr;
  if (int err = ibv_post_send(lane->qp, &wr, &bad)) {
    lane->outstanding.fetch_sub(1, std::memory_order_acq_rel);
    return failed(std::string("ibv_post_send: ") + strerror(err) + " (errno " +
                  std::to_string(err) + ")");
  }
  ++lane->posted;
  return PostResult::kPosted;
}

std::string VerbsNic::writeFailure(const VerbsLane& lane, const ibv_wc& wc) const {
  char vendor[32];
  snprintf(vendor, sizeof vendor, ", vendor error 0x%x", wc.vendor_err);
  return "verbs write to rank " + std::to_string(lane.peer) + " lane " + std::to_string(lane.lane) +
         " on " + describe() + " failed: " + lib_.wcStatusText(wc.status) + vendor +
         hintFor(wc.status);
}

bool VerbsNic::toEvent(const ibv_wc& wc, RdmaEvent* event) {
  uint32_t index = verbsIdLane(wc.wr_id);
  if (index >= lanes_.size()) {
    LOG_WARN(kLogNet, "verbs: completion with unknown id %#llx on %s",
             static_cast<unsigned long long>(wc.wr_id), describe().c_str());
    return false;
  }
  VerbsLane& lane = *lanes_[index];
  if (verbsIsRecv(wc.wr_id)) {
    if (wc.status != IBV_WC_SUCCESS) {
      // A receive has no write of this rank to report against: the lane remembers the
      // failure, and the next write to the peer (or the transport's deadline) reports it.
      // Flushed receives only echo an error the queue pair already had.
      if (wc.status == IBV_WC_WR_FLUSH_ERR) return false;
      std::string why = "a receive from rank " + std::to_string(lane.peer) + " lane " +
                        std::to_string(lane.lane) + " failed: " + lib_.wcStatusText(wc.status);
      LOG_WARN(kLogNet, "verbs: %s on %s", why.c_str(), describe().c_str());
      lane.fail(why);
      return false;
    }
    if (int err = postLaneReceives(&lane, 1))
      lane.fail("re-posting a receive from rank " + std::to_string(lane.peer) +
                " failed: " + strerror(err));
    event->kind = RdmaEvent::kArrived;
    event->imm = ntohl(wc.imm_data);
    event->context = nullptr;
    event->error.clear();
    return true;
  }
  // Read before the slot is given back: the next write on the lane may reuse it at once.
  event->context = lane.contexts[verbsIdSlot(wc.wr_id)].load(std::memory_order_relaxed);
  lane.outstanding.fetch_sub(1, std::memory_order_acq_rel);
  event->imm = 0;
  if (wc.status == IBV_WC_SUCCESS) {
    event->kind = RdmaEvent::kWritten;
    event->error.clear();
    return true;
  }
  event->kind = RdmaEvent::kFailed;
  if (wc.status == IBV_WC_WR_FLUSH_ERR && lane.broken.load(std::memory_order_acquire)) {
    event->error = writeFailure(lane, wc) + " (after: " + lane.firstError() + ")";
  } else {
    event->error = writeFailure(lane, wc);
    lane.fail(event->error);
  }
  return true;
}

int VerbsNic::drainCq(RdmaEvent* events, int max) {
  int n = 0;
  while (cq_ && n < max) {
    ibv_wc wcs[32];
    int want = max - n < 32 ? max - n : 32;
    int got = ibv_poll_cq(cq_, want, wcs);
    if (got < 0) {
      LOG_WARN(kLogNet, "verbs: ibv_poll_cq on %s failed (%d)", describe().c_str(), got);
      break;
    }
    for (int i = 0; i < got; ++i)
      if (toEvent(wcs[i], &events[n])) ++n;
    if (got < want) break;
  }
  return n;
}

int VerbsNic::poll(RdmaEvent* events, int max) {
  std::lock_guard<std::mutex> lock(cqMutex_);
  int n = 0;
  for (; n < max && !pending_.empty(); ++n) {
    events[n] = std::move(pending_.front());
    pending_.pop_front();
  }
  return n + drainCq(events + n, max - n);
}

void VerbsNic::waitForEvents(int timeoutMs) {
  {
    std::lock_guard<std::mutex> lock(cqMutex_);
    if (!pending_.empty()) return;
    if (cq_) {
      if (int err = ibv_req_notify_cq(cq_, 0)) {
        LOG_WARN(kLogNet, "verbs: ibv_req_notify_cq on %s failed: %s", describe().c_str(),
                 strerror(err));
      }
      // What completed before arming raises no event: take it now, or sleep over it.
      RdmaEvent got[16];
      int n = drainCq(got, 16);
      for (int i = 0; i < n; ++i) pending_.push_back(std::move(got[i]));
      if (n) return;
    }
  }
  pollfd fds[2] = {{wakeFd_, POLLIN, 0}, {channel_->fd, POLLIN, 0}};
  if (::poll(fds, 2, timeoutMs) <= 0) return;
  if (fds[0].revents & POLLIN) {
    uint64_t count;
    if (read(wakeFd_, &count, sizeof count) < 0 && errno != EAGAIN)
      LOG_WARN(kLogNet, "verbs: reading the wake-up eventfd: %s", strerror(errno));
  }
  if (fds[1].revents & POLLIN) {
    // Every event is acknowledged at once: ibv_destroy_cq waits for all to be.
    ibv_cq* cq = nullptr;
    void* cqContext = nullptr;
    while (lib_.getCqEvent(channel_, &cq, &cqContext) == 0) lib_.ackCqEvents(cq, 1);
  }
}

void VerbsNic::interruptWait() {
  uint64_t one = 1;
  if (::write(wakeFd_, &one, sizeof one) < 0 && errno != EAGAIN)
    LOG_WARN(kLogNet, "verbs: writing the wake-up eventfd: %s", strerror(errno));
}

}  // namespace chorus
#endif
