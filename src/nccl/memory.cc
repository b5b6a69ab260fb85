// Memory entry points on host memory: ncclMemAlloc/Free and buffer and window registration.
//
// ncclMemAlloc returns memory the host's ranks map from each other (chorus::allocateShared), so
// that the shared-memory transport copies payloads in it once instead of twice. Registration
// exists in NCCL so the GPU can reach user buffers without copies; Chorus's host path needs
// nothing registered, so these calls check their arguments, hand back a handle and remember it
// (so deregistering a wrong or stale handle is still an error), and do nothing else. Window
// registration is collective in NCCL; here it is local and never waits, so every rank calling
// it, as NCCL requires, is fine.
#include "chorus/memory.h"

#include <cstdlib>

#include "nccl/api.h"
#include "nccl/comm_handle.h"
#include "nccl/errors.h"

using namespace chorus;
using namespace chorus::nccl;

namespace {

constexpr size_t kAlign = NCCL_WIN_REQUIRED_ALIGNMENT;

void* remember(ncclComm& c, void* buff, size_t size, int flags, bool window) {
  auto r = std::make_unique<ncclWindow_vidmem>();
  r->buff = buff;
  r->size = size;
  r->flags = flags;
  r->window = window;
  void* handle = r.get();
  std::lock_guard<std::mutex> g(c.regMu);
  c.registrations.emplace(handle, std::move(r));
  return handle;
}

// Frees `handle` if `c` registered it as this kind; false otherwise.
bool forget(ncclComm& c, void* handle, bool window) {
  std::lock_guard<std::mutex> g(c.regMu);
  auto it = c.registrations.find(handle);
  if (it == c.registrations.end() || it->second->window != window) return false;
  c.registrations.erase(it);
  return true;
}

}  // namespace

extern "C" ncclResult_t pncclMemAlloc(void** ptr, size_t size) {
  return guard("ncclMemAlloc", [&]() -> Status {
    if (!ptr) return Status::InvalidArgument("ptr is NULL");
    // Page-aligned and rounded up, so the result also suits ncclCommWindowRegister.
    size_t bytes = size == 0 ? kAlign : (size + kAlign - 1) / kAlign * kAlign;
    if (bytes < size) return Status::InvalidArgument("size " + std::to_string(size) + " overflows");
    // Memory the local ranks map from each other (include/chorus/memory.h): the shared-memory
    // transport then reads payloads in place instead of copying them through its slots.
    return allocateShared(bytes, ptr);
  });
}
NCCL_WEAK_ALIAS(ncclMemAlloc);

extern "C" ncclResult_t pncclMemFree(void* ptr) {
  return guard("ncclMemFree", [&]() -> Status { return freeShared(ptr); });
}
NCCL_WEAK_ALIAS(ncclMemFree);

extern "C" ncclResult_t pncclCommRegister(const ncclComm_t comm, void* buff, size_t size,
                                          void** handle) {
  return guard("ncclCommRegister", [&]() -> Status {
    CommRef c;
    CHORUS_RETURN_IF_ERROR(acquireReady(comm, &c));
    if (!handle) return Status::InvalidArgument("handle is NULL");
    if (!buff && size) return Status::InvalidArgument("buff is NULL but size is not 0");
    *handle = remember(*c, buff, size, 0, /*window=*/false);
    return Status::Ok();
  });
}
NCCL_WEAK_ALIAS(ncclCommRegister);

extern "C" ncclResult_t pncclCommDeregister(const ncclComm_t comm, void* handle) {
  return guard("ncclCommDeregister", [&]() -> Status {
    CommRef c;
    CHORUS_RETURN_IF_ERROR(acquire(comm, &c));
    if (!handle || !forget(*c, handle, /*window=*/false))
      return Status::InvalidArgument("handle was not registered with this communicator");
    return Status::Ok();
  });
}
NCCL_WEAK_ALIAS(ncclCommDeregister);

extern "C" ncclResult_t pncclCommWindowRegister(ncclComm_t comm, void* buff, size_t size,
                                                ncclWindow_t* win, int winFlags) {
  return guard("ncclCommWindowRegister", [&]() -> Status {
    CommRef c;
    CHORUS_RETURN_IF_ERROR(acquireReady(comm, &c));
    if (!win) return Status::InvalidArgument("win is NULL");
    if (!buff || !size) return Status::InvalidArgument("buff is NULL or size is 0");
    if (winFlags & ~NCCL_WIN_COLL_SYMMETRIC)
      return Status::InvalidArgument("unknown winFlags " + std::to_string(winFlags));
    *win = static_cast<ncclWindow_t>(remember(*c, buff, size, winFlags, /*window=*/true));
    return Status::Ok();
  });
}
NCCL_WEAK_ALIAS(ncclCommWindowRegister);

extern "C" ncclResult_t pncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win) {
  return guard("ncclCommWindowDeregister", [&]() -> Status {
    CommRef c;
    CHORUS_RETURN_IF_ERROR(acquire(comm, &c));
    if (!win || !forget(*c, win, /*window=*/true))
      return Status::InvalidArgument("window was not registered with this communicator");
    return Status::Ok();
  });
}
NCCL_WEAK_ALIAS(ncclCommWindowDeregister);
