// The one door between C callers and Chorus's C++: every entry point runs its body through
// guard(), which turns a Status, or any exception, into an ncclResult_t and keeps the full
// message for ncclGetLastError. Nothing thrown inside ever reaches the caller.
#pragma once

#include <exception>
#include <new>
#include <string>
#include <utility>

#include "chorus/status.h"
#include "nccl.h"

namespace chorus::nccl {

ncclResult_t toResult(StatusCode code);
// Remembers "fn: message" as the process's last error, logs it, returns toResult(code).
ncclResult_t recordError(const char* fn, const Status& st);
// The text of the last recorded error ("" if none).
std::string lastErrorText();

// Maps the NCCL_* variables onto Chorus's once, on the first call into the library (env.cc).
void ensureEnvironment();

// Runs `body` (returning Status) as entry point `fn`.
template <class Body>
ncclResult_t guard(const char* fn, Body&& body) noexcept {
  try {
    ensureEnvironment();
    Status st = std::forward<Body>(body)();
    return st.ok() ? ncclSuccess : recordError(fn, st);
  } catch (const std::bad_alloc&) {
    return recordError(fn, Status::SystemError("out of host memory"));
  } catch (const std::exception& e) {
    return recordError(fn, Status::Internal(std::string("unexpected exception: ") + e.what()));
  } catch (...) {
    return recordError(fn, Status::Internal("unexpected non-standard exception"));
  }
}

// Entry points that can answer ncclInProgress (non-blocking init) note it in a local flag and
// turn a successful guard() into ncclInProgress themselves: it is a state, not an error.
inline ncclResult_t progressOr(ncclResult_t r, bool pending) {
  return r == ncclSuccess && pending ? ncclInProgress : r;
}

}  // namespace chorus::nccl
