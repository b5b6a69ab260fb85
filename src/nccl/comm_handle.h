// What an ncclComm_t points at, and the registry of live handles.
//
// Every entry point reaches a handle through acquire(), which looks it up in the registry: a
// null, foreign or destroyed handle is refused with a message instead of being dereferenced
// (detection is exact unless the allocator hands the same address to a new communicator, in
// which case the call lands on that live one). An acquired handle counts as a user, and
// destroy/abort wait for users to leave before freeing, so a call on another thread never
// touches freed memory.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "chorus/communicator.h"
#include "nccl.h"
#include "nccl/redop_table.h"
#include "nccl/settings.h"

// A registered buffer or window (memory.cc). On host both are bookkeeping only.
struct ncclWindow_vidmem {
  void* buff = nullptr;
  size_t size = 0;
  int flags = 0;
  bool window = false;  // from ncclCommWindowRegister, not ncclCommRegister
};

struct ncclComm {
  int rank = 0;
  int nranks = 1;
  // The device current at ncclCommInitRank (0 where CUDA cannot be used), or ncclCommInitAll's.
  int cudaDev = 0;
  chorus::nccl::CommSettings settings;

  // Set once init succeeds; state is published (release) after it.
  std::unique_ptr<chorus::Communicator> core;
  // ncclInProgress while init runs, then its result.
  std::atomic<int> state{ncclInProgress};
  std::string initError;  // written before state, by the init thread
  std::mutex initMu;      // guards joining initThread
  std::thread initThread;

  std::atomic<bool> finalized{false};
  std::atomic<bool> revoked{false};
  std::atomic<int> users{0};

  chorus::nccl::RedOpTable redops;

  std::mutex regMu;
  // guarded by regMu; freed with the communicator, as NCCL frees what was left registered
  std::unordered_map<void*, std::unique_ptr<ncclWindow_vidmem>> registrations;
};

namespace chorus::nccl {

// A counted use of a live handle; releases on destruction.
class CommRef {
 public:
  CommRef() = default;
  explicit CommRef(ncclComm* c) : c_(c) {}
  CommRef(CommRef&& o) noexcept : c_(o.c_) { o.c_ = nullptr; }
  CommRef& operator=(CommRef&& o) noexcept;
  CommRef(const CommRef&) = delete;
  CommRef& operator=(const CommRef&) = delete;
  ~CommRef() { reset(); }
  void reset();
  ncclComm* get() const { return c_; }
  ncclComm* operator->() const { return c_; }
  ncclComm& operator*() const { return *c_; }

 private:
  ncclComm* c_ = nullptr;
};

void registerComm(ncclComm* c);
// Any live handle, whatever its state (count, rank, async error, destroy).
Status acquire(ncclComm_t c, CommRef* out);
// A handle ready for communication: initialised, not finalized, not revoked.
Status acquireReady(ncclComm_t c, CommRef* out);
// Removes `c` from the registry (later calls see it as destroyed), optionally aborts what it
// is doing, waits for other users and its init thread, and frees it.
Status retire(ncclComm_t c, bool abort);
// Joins a finished init thread; harmless to call at any time.
void reapInit(ncclComm* c);
// Waits for init to finish and joins it (group end, destroy).
void joinInit(ncclComm* c);

}  // namespace chorus::nccl
