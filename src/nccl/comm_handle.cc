#include "nccl/comm_handle.h"

#include <chrono>

namespace chorus::nccl {

namespace {
std::mutex gRegistryMu;
std::unordered_set<ncclComm*>& registry() {
  // Leaked on purpose: handles may be destroyed from atexit handlers after static destructors.
  static auto* r = new std::unordered_set<ncclComm*>;
  return *r;
}

Status notLive() {
  return Status::InvalidArgument(
      "communicator is not valid: it was never created, or was already destroyed or aborted");
}
}  // namespace

CommRef& CommRef::operator=(CommRef&& o) noexcept {
  if (this != &o) {
    reset();
    c_ = o.c_;
    o.c_ = nullptr;
  }
  return *this;
}

void CommRef::reset() {
  if (c_) c_->users.fetch_sub(1, std::memory_order_acq_rel);
  c_ = nullptr;
}

void registerComm(ncclComm* c) {
  std::lock_guard<std::mutex> g(gRegistryMu);
  registry().insert(c);
}

Status acquire(ncclComm_t c, CommRef* out) {
  if (!c) return Status::InvalidArgument("communicator is NULL");
  std::lock_guard<std::mutex> g(gRegistryMu);
  if (!registry().count(c)) return notLive();
  c->users.fetch_add(1, std::memory_order_acq_rel);
  *out = CommRef(c);
  return Status::Ok();
}

Status acquireReady(ncclComm_t c, CommRef* out) {
  CHORUS_RETURN_IF_ERROR(acquire(c, out));
  int st = c->state.load(std::memory_order_acquire);
  std::string who = "rank " + std::to_string(c->rank) + " of " + std::to_string(c->nranks);
  if (st == ncclInProgress)
    return Status::InvalidUsage(who +
                                ": the communicator is still initialising; poll "
                                "ncclCommGetAsyncError until it reports ncclSuccess");
  if (st != ncclSuccess)
    return Status::InvalidUsage(who + ": the communicator failed to initialise: " + c->initError);
  if (c->finalized.load()) return Status::InvalidUsage(who + ": the communicator was finalized");
  if (c->revoked.load()) return Status::InvalidUsage(who + ": the communicator was revoked");
  return Status::Ok();
}

void reapInit(ncclComm* c) {
  if (c->state.load(std::memory_order_acquire) == ncclInProgress) return;
  std::lock_guard<std::mutex> g(c->initMu);
  if (c->initThread.joinable()) c->initThread.join();
}

void joinInit(ncclComm* c) {
  std::lock_guard<std::mutex> g(c->initMu);
  if (c->initThread.joinable()) c->initThread.join();
}

Status retire(ncclComm_t c, bool abort) {
  if (!c) return Status::InvalidArgument("communicator is NULL");
  {
    std::lock_guard<std::mutex> g(gRegistryMu);
    if (!registry().erase(c)) return notLive();
  }
  // An init still running cannot be interrupted; it ends by itself within the timeout.
  joinInit(c);
  if (abort && c->core) c->core->abort();
  // A call on another thread acquired the handle before we unregistered it: let it finish.
  while (c->users.load(std::memory_order_acquire) > 0)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  delete c;
  return Status::Ok();
}

}  // namespace chorus::nccl
