// The libfabric provider of the RDMA protocol (rdma_nic.h); see ofi_nic.cc.
#pragma once
#if defined(CHORUS_HAVE_LIBFABRIC)

#include <rdma/fabric.h>
#include <rdma/fi_eq.h>

#include <atomic>
#include <deque>
#include <vector>

#include "transport/rdma/rdma_nic.h"

namespace chorus {

struct OfiLibrary;

class OfiRegion final : public RdmaRegion {
 public:
  OfiRegion(fid_mr* mr, const char* base, bool virtualAddresses)
      : mr_(mr), base_(base), virtual_(virtualAddresses) {}
  ~OfiRegion() override;
  void* desc() const override;
  uint64_t key() const override;
  uint64_t remoteAddress(const void* p) const override {
    return virtual_ ? uint64_t(reinterpret_cast<uintptr_t>(p))
                    : uint64_t(static_cast<const char*>(p) - base_);
  }

 private:
  fid_mr* mr_;
  const char* base_;
  bool virtual_;
};

class OfiNic final : public RdmaNic {
 public:
  ~OfiNic() override;
  Status open(const RdmaNicOptions& options);

  std::string describe() const override;
  bool registrationPins() const override { return !softwareOnly(); }
  int maxGather() const override;
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
  // Contexts of the zero-byte receives FI_RX_CQ_DATA providers consume; the lane in the low bits.
  static constexpr uint64_t kReceiveTag = uint64_t(1) << 63;
  static constexpr int kPostedReceives = 256;

  bool softwareOnly() const;
  Status postReceive(int lane);
  Status fail(const char* call, int ret) const;

  const OfiLibrary* lib_ = nullptr;
  fi_info* info_ = nullptr;
  fid_fabric* fabric_ = nullptr;
  fid_domain* domain_ = nullptr;
  fid_av* av_ = nullptr;
  fid_cq* cq_ = nullptr;
  std::vector<fid_ep*> eps_;      // by lane
  std::vector<fi_addr_t> addrs_;  // by peer * lanes + lane
  int lanes_ = 0;
  bool rxCqData_ = false;               // remote CQ data consumes a posted receive
  bool canSleep_ = true;                // the CQ has a wait object (fi_cq_sread)
  std::deque<fi_cq_data_entry> ready_;  // read while waiting or posting, not yet polled
  std::atomic<uint64_t> nextKey_{1};
};

}  // namespace chorus
#endif
