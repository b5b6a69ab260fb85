// A communicator's life after init: queries, async errors, finalize, revoke, destroy, abort.
//
// Every Chorus call on host memory completes before it returns, so there is never work in
// flight that finalize would have to flush: it only marks the communicator, and reports
// ncclSuccess (quiescent) straight away.
#include "nccl/api.h"
#include "nccl/comm_handle.h"
#include "nccl/errors.h"

using namespace chorus;
using namespace chorus::nccl;

namespace {

// The state NCCL reports through ncclCommGetAsyncError.
ncclResult_t asyncState(ncclComm& c) {
  reapInit(&c);
  int st = c.state.load(std::memory_order_acquire);
  if (st != ncclSuccess) return ncclResult_t(st);
  Status err = c.core->asyncError();
  if (!err.ok()) {
    recordError("ncclCommGetAsyncError", err);
    return toResult(err.code());
  }
  return ncclSuccess;
}

template <class Fn>
ncclResult_t query(const char* fn, ncclComm_t comm, void* out, Fn&& read) {
  return guard(fn, [&]() -> Status {
    CommRef c;
    CHORUS_RETURN_IF_ERROR(acquire(comm, &c));
    if (!out) return Status::InvalidArgument("the output pointer is NULL");
    read(*c);
    return Status::Ok();
  });
}

}  // namespace

extern "C" ncclResult_t pncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError) {
  return query("ncclCommGetAsyncError", comm, asyncError,
               [&](ncclComm& c) { *asyncError = asyncState(c); });
}
NCCL_WEAK_ALIAS(ncclCommGetAsyncError);

extern "C" ncclResult_t pncclCommCount(const ncclComm_t comm, int* count) {
  return query("ncclCommCount", comm, count, [&](ncclComm& c) { *count = c.nranks; });
}
NCCL_WEAK_ALIAS(ncclCommCount);

extern "C" ncclResult_t pncclCommUserRank(const ncclComm_t comm, int* rank) {
  return query("ncclCommUserRank", comm, rank, [&](ncclComm& c) { *rank = c.rank; });
}
NCCL_WEAK_ALIAS(ncclCommUserRank);

extern "C" ncclResult_t pncclCommCuDevice(const ncclComm_t comm, int* device) {
  return query("ncclCommCuDevice", comm, device, [&](ncclComm& c) { *device = c.cudaDev; });
}
NCCL_WEAK_ALIAS(ncclCommCuDevice);

extern "C" ncclResult_t pncclCommFinalize(ncclComm_t comm) {
  return guard("ncclCommFinalize", [&]() -> Status {
    CommRef c;
    CHORUS_RETURN_IF_ERROR(acquireReady(comm, &c));
    c->finalized.store(true);
    return Status::Ok();
  });
}
NCCL_WEAK_ALIAS(ncclCommFinalize);

// Revoke stops in-flight work so that destroy, split and shrink can proceed. Our calls run to
// completion on their caller's thread, so only a call on another thread can be in flight; the
// core has no way to stop one call alone, so in that case the communicator is aborted (its
// split and shrink then fail; destroy still works).
extern "C" ncclResult_t pncclCommRevoke(ncclComm_t comm, int revokeFlags) {
  return guard("ncclCommRevoke", [&]() -> Status {
    CommRef c;
    CHORUS_RETURN_IF_ERROR(acquireReady(comm, &c));
    if (revokeFlags != NCCL_REVOKE_DEFAULT)
      return Status::InvalidArgument("revokeFlags must be NCCL_REVOKE_DEFAULT (0), not " +
                                     std::to_string(revokeFlags));
    c->revoked.store(true);
    if (c->users.load() > 1) c->core->abort();
    return Status::Ok();
  });
}
NCCL_WEAK_ALIAS(ncclCommRevoke);

extern "C" ncclResult_t pncclCommDestroy(ncclComm_t comm) {
  return guard("ncclCommDestroy", [&]() -> Status {
    if (!comm) return Status::Ok();  // as NCCL: destroying NULL is a no-op
    return retire(comm, /*abort=*/false);
  });
}
NCCL_WEAK_ALIAS(ncclCommDestroy);

// Abort may come from another thread while a call hangs on a dead peer: the core's abort
// wakes that call, which returns an error, and then the handle is freed.
extern "C" ncclResult_t pncclCommAbort(ncclComm_t comm) {
  return guard("ncclCommAbort", [&]() -> Status {
    if (!comm) return Status::Ok();  // NCCL accepts aborting NULL
    return retire(comm, /*abort=*/true);
  });
}
NCCL_WEAK_ALIAS(ncclCommAbort);
