// NCCL-style grouping on the calling thread. Between groupStart() and the matching groupEnd(),
// communicator calls are checked and queued (returning Ok, or an argument error at once); the
// outermost groupEnd() runs them together and returns the first error:
// - point-to-point calls of one communicator run concurrently, so any matched set of sends
//   and receives completes, whatever order each rank queued them in;
// - collectives of one communicator run in the order they were queued;
// - different communicators progress side by side on this thread, so one thread can drive
//   every rank of a single-process job (ncclCommInitAll).
// Buffers must stay valid until groupEnd() returns. Nested groups only count depth.
#pragma once

#include "chorus/status.h"

namespace chorus {

void groupStart();
Status groupEnd();
int groupDepth();

}  // namespace chorus
