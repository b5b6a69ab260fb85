// Shared-memory transport: ranks on one host talk through per-pair rings in one segment that
// the host's lowest rank creates (0600) and every local rank maps. Every local rank knows the
// name before the file exists and unlinks it when set-up ends, successful or not, so nothing
// is left in /dev/shm even when a rank dies during set-up (tests/chaos_init_test.cc).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "bootstrap/bootstrap.h"
#include "transport/doorbell.h"
#include "transport/transport.h"

namespace chorus {

struct ShmOptions {
  size_t slotBytes = 128 << 10;
  int slots = 8;
  size_t lendBytes = 512 << 10;  // CHORUS_SHM_LEND_BYTES: allgather blocks lent, not copied
};

class ShmTransport final : public Transport {
 public:
  // `hostOf[r]` identifies rank r's host; ranks with this rank's value share the segment.
  // Collective over all ranks of `bs` (every rank calls it, also those alone on their host).
  // With local peers, `doorbell` moves into the segment for them to ring until destruction.
  static Status create(Bootstrap* bs, const std::vector<int>& hostOf, const ShmOptions& opts,
                       Doorbell* doorbell, Deadline deadline, std::unique_ptr<ShmTransport>* out);
  ~ShmTransport() override;
  ShmTransport(const ShmTransport&) = delete;
  ShmTransport& operator=(const ShmTransport&) = delete;

  const char* name() const override { return "shm"; }
  Connection* connection(int peer) override;
  size_t maxPayloadBytes() const override { return opts_.slotBytes; }
  Status registerMemory(MemRef local, size_t bytes, MemRef* remote) override;

 private:
  class ShmConnection;
  ShmTransport() = default;
  Status attach(Bootstrap* bs, const std::vector<int>& hostOf, Deadline deadline);

  ShmOptions opts_;
  Doorbell* doorbell_ = nullptr;  // placed in the segment, while we have one
  uint64_t probeWord_ = 0;        // kShmMagic, read by peers to test cross-memory access
  void* probeBlock_ = nullptr;    // a memory file holding it, mapped by peers to test that
  int rank_ = 0;
  int localIndex_ = 0;
  std::vector<int> localOf_;  // global rank -> local index, -1 if on another host
  void* base_ = nullptr;
  size_t bytes_ = 0;
  std::vector<std::unique_ptr<ShmConnection>> conns_;  // by global rank
};

}  // namespace chorus
