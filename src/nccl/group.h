// NCCL's group semantics, kept per thread by the face.
//
// Inside ncclGroupStart/ncclGroupEnd every call is checked at once (an error is returned by
// the call and again by ncclGroupEnd, which then runs nothing) and queued here. The outermost
// ncclGroupEnd first waits for communicators whose init was issued in the group, then replays
// the queue inside one chorus::groupStart()/groupEnd(), which runs the point-to-point calls
// of a communicator concurrently (matched sends and receives never deadlock) and different
// communicators side by side (one thread may drive every rank of ncclCommInitAll).
//
// The face queues for itself rather than handing calls straight to chorus' group because
// ncclGroupSimulateEnd must end a group without running it, and init-in-group must finish
// before anything else in the group runs.
#pragma once

#include <cstddef>
#include <functional>

#include "chorus/communicator.h"
#include "core/op_desc.h"
#include "nccl/comm_handle.h"

namespace chorus::nccl {

using CoreCall = std::function<Status(Communicator&)>;

// Runs `run` on the communicator now, or queues it when the thread is inside a group; `call`
// describes it for ncclGroupSimulateEnd.
Status issue(CommRef& c, const OpDesc& call, CoreCall run);
// Remembers an init started inside a group; ncclGroupEnd waits for it.
void deferInit(ncclComm* c);
int faceGroupDepth();
// Called for every failed entry point: inside a group, the group remembers the first error.
void noteGroupError(const Status& st);

// Microseconds `call` would take on `core`, as the library's cost model predicts it for the
// algorithm the selector (or CHORUS_ALGO) would run (group_estimate.cc).
double estimateMicros(const OpDesc& call, const Communicator& core);

}  // namespace chorus::nccl
