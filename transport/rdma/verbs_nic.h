// The rdma-core libibverbs provider of RdmaNic: one port, one protection domain, one
// completion queue (with a completion channel, so waitForEvents can sleep), and `lanes` RC
// queue pairs per peer. Set-up (prepare, connect) runs once, before the lanes it makes carry
// writes; write, poll and waitForEvents may then run on different threads.
#pragma once

#include <deque>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "transport/rdma/rdma_nic.h"
#include "transport/rdma/verbs_device.h"
#include "transport/rdma/verbs_library.h"
#include "transport/rdma/verbs_qp.h"

namespace chorus {

class VerbsNic final : public RdmaNic {
 public:
  static Status open(const RdmaNicOptions& options, std::unique_ptr<RdmaNic>* out);
  // The same over the given entry points (tests pass a pretend device's); `lib` must outlive
  // the NIC.
  static Status openWith(const VerbsLibrary& lib, const RdmaNicOptions& options,
                         std::unique_ptr<RdmaNic>* out);
  ~VerbsNic() override;
  VerbsNic(const VerbsNic&) = delete;
  VerbsNic& operator=(const VerbsNic&) = delete;

  std::string describe() const override;
  bool registrationPins() const override { return true; }
  int maxGather() const override { return maxGather_; }
  Status registerMemory(void* p, size_t bytes, std::unique_ptr<RdmaRegion>* out) override;
  Status prepare(int rank, int size, const std::vector<int>& peers, int lanes,
                 std::vector<uint8_t>* description) override;
  Status connect(int peer, const uint8_t* description, size_t bytes) override;
  PostResult write(int peer, int lane, const RdmaGather* gather, int n, RdmaTarget target,
                   uint32_t imm, void* context, std::string* error) override;
  int poll(RdmaEvent* events, int max) override;
  void waitForEvents(int timeoutMs) override;
  void interruptWait() override;
  void disconnect(bool broken) override;

 private:
  VerbsNic(const VerbsLibrary& lib, const VerbsPort& port, const RdmaNicOptions& options);
  Status setUp();
  Status checkPrepare(int rank, int size, const std::vector<int>& peers, int lanes) const;
  VerbsLane* findLane(int peer, int lane) const;
  // verbs_poll.cc: turns completions into events. Requires cqMutex_.
  int drainCq(RdmaEvent* events, int max);
  bool toEvent(const ibv_wc& wc, RdmaEvent* event);
  std::string writeFailure(const VerbsLane& lane, const ibv_wc& wc) const;

  const VerbsLibrary& lib_;
  VerbsPort port_;
  RdmaNicOptions options_;
  int maxGather_ = 0;
  ibv_pd* pd_ = nullptr;
  ibv_comp_channel* channel_ = nullptr;
  int wakeFd_ = -1;  // eventfd: interruptWait()

  // Made by prepare(), fixed afterwards.
  int rank_ = -1;
  int size_ = 0;
  int lanesPerPeer_ = 0;
  std::vector<std::unique_ptr<VerbsLane>> lanes_;
  std::unordered_map<int, size_t> firstLane_;  // peer -> index of its lane 0 in lanes_

  std::mutex cqMutex_;
  ibv_cq* cq_ = nullptr;  // made by prepare(), under cqMutex_
  // Events taken off the CQ by waitForEvents (which must look after arming the CQ, or miss
  // what completed just before), handed out by the next poll().
  std::deque<RdmaEvent> pending_;
};

}  // namespace chorus
