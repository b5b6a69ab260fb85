// The state behind a Communicator. Split from communicator.h so that internal faces (the NCCL
// ABI, tests) can reach it without widening the public API.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "bootstrap/bootstrap.h"
#include "chorus/communicator.h"
#include "core/executor.h"
#include "core/op_desc.h"
#include "transport/shm/shm_transport.h"

namespace chorus {

// A growable, 64-byte aligned byte buffer for scratch space that lives across calls.
class ScratchBuffer {
 public:
  ~ScratchBuffer() { free(data_); }
  void* get(size_t bytes);

 private:
  void* data_ = nullptr;
  size_t capacity_ = 0;
};

struct Communicator::Impl {
  int rank = 0;
  int size = 1;
  Config config;
  std::unique_ptr<Bootstrap> bootstrap;
  std::unique_ptr<ShmTransport> shm;
  std::unique_ptr<Executor> executor;
  std::unordered_map<OpDesc, Plan, OpDescHash> plans;
  uint32_t opSeq = 0;  // collectives issued so far; travels in every message header
  ScratchBuffer scratch, staging;

  std::atomic<bool> failed{false};
  mutable std::mutex errorMu;
  Status error;  // guarded by errorMu; the first failure wins

  ~Impl();
  Status init(const UniqueId& id, int rank, int size, const Config& config);
  // Records the first failure and wakes a call that may be sleeping on a peer.
  void fail(const Status& st);
  Status currentError() const;
  // Validates nothing: the entry points have. Runs `d` to completion.
  Status run(const OpDesc& d, const void* in, void* out, const void* premulScalar);

 private:
  Status discoverHosts(std::vector<int>* hostOf, bool* oversubscribed);
  const Plan& planFor(const OpDesc& d);
};

}  // namespace chorus
