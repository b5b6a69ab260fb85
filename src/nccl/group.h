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
#include "nccl/comm_handle.h"

namespace chorus::nccl {

enum class CostKind { AllReduce, ReduceScatter, AllGather, Broadcast, Reduce, AllToAll, Gather,
                      Scatter, PointToPoint };

// What the estimate of ncclGroupSimulateEnd needs to know about one call.
struct CostHint {
  CostKind kind = CostKind::AllReduce;
  size_t bytes = 0;  // bytes of the call's largest buffer on this rank
  int nranks = 1;
};

using CoreCall = std::function<Status(Communicator&)>;

// Runs `run` on the communicator now, or queues it when the thread is inside a group.
Status issue(CommRef& c, CostHint cost, CoreCall run);
// Remembers an init started inside a group; ncclGroupEnd waits for it.
void deferInit(ncclComm* c);
int faceGroupDepth();
// Called for every failed entry point: inside a group, the group remembers the first error.
void noteGroupError(const Status& st);

// Microseconds the calls would take by a plain alpha-beta model (group_estimate.cc).
double estimateMicros(const CostHint& h);

}  // namespace chorus::nccl
