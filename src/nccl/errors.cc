// Result codes, NCCL's error strings, and the last-error message.
#include "nccl/errors.h"

#include <mutex>

#include "common/log.h"
#include "nccl/api.h"
#include "nccl/group.h"

namespace chorus::nccl {

namespace {
// One message for the whole process, as in NCCL (its comm argument is unused): errors of a
// background init thread must be visible to the thread that polls.
std::mutex gLastMu;
std::string gLast;  // guarded by gLastMu
}  // namespace

ncclResult_t toResult(StatusCode code) {
  switch (code) {
    case StatusCode::Ok:
      return ncclSuccess;
    case StatusCode::InvalidArgument:
      return ncclInvalidArgument;
    case StatusCode::InvalidUsage:
      return ncclInvalidUsage;
    case StatusCode::Unsupported:
      return ncclInvalidUsage;
    // A user's abort makes later use of the communicator a usage error, as in NCCL.
    case StatusCode::Aborted:
      return ncclInvalidUsage;
    case StatusCode::SystemError:
      return ncclSystemError;
    // A deadline passes when a peer stopped answering: the peer's fault, not ours.
    case StatusCode::Timeout:
      return ncclRemoteError;
    case StatusCode::RemoteError:
      return ncclRemoteError;
    case StatusCode::Internal:
      return ncclInternalError;
  }
  return ncclInternalError;
}

ncclResult_t recordError(const char* fn, const Status& st) {
  std::string text = std::string(fn) + ": " + st.toString();
  LOG_WARN(kLogInit, "%s", text.c_str());
  noteGroupError(st);
  std::lock_guard<std::mutex> g(gLastMu);
  gLast = std::move(text);
  return toResult(st.code());
}

std::string lastErrorText() {
  std::lock_guard<std::mutex> g(gLastMu);
  return gLast;
}

}  // namespace chorus::nccl

extern "C" const char* pncclGetErrorString(ncclResult_t result) {
  // NCCL's own wording: programs and their tests compare these strings.
  switch (rawValue(result)) {
    case ncclSuccess:
      return "no error";
    case ncclUnhandledCudaError:
      return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case ncclSystemError:
      return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case ncclInternalError:
      return "internal error - please report this issue to the NCCL developers";
    case ncclInvalidArgument:
      return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case ncclInvalidUsage:
      return "invalid usage (run with NCCL_DEBUG=WARN for details)";
    case ncclRemoteError:
      return "remote process exited or there was a network error";
    case ncclInProgress:
      return "NCCL operation in progress";
    default:
      return "unknown result code";
  }
}
NCCL_WEAK_ALIAS(ncclGetErrorString);

extern "C" const char* pncclGetLastError(ncclComm_t) {
  // The returned pointer must outlive this call and survive errors on other threads: each
  // thread keeps its own copy of the text it was last given.
  thread_local std::string copy;
  copy = chorus::nccl::lastErrorText();
  return copy.c_str();
}
NCCL_WEAK_ALIAS(ncclGetLastError);
