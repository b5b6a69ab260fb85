// NCCL's group semantics on the core's group (chorus/group.h, core/group_queue.h).
//
// ncclGroupStart/ncclGroupEnd open and close the core's group, so calls made through either
// face wait in the same per-thread queue and run together: the point-to-point calls of a
// communicator concurrently (matched sends and receives never deadlock), different
// communicators side by side (one thread may drive every rank of ncclCommInitAll). What NCCL
// adds is kept here: any failed call inside the group fails the whole group, which then runs
// nothing; inits issued inside the group finish before its calls run; ncclGroupSimulateEnd
// ends a group with an estimate instead of running it.
#pragma once

#include "chorus/status.h"
#include "nccl/comm_handle.h"

namespace chorus::nccl {

// Remembers an init started inside a group; ncclGroupEnd waits for it.
void deferInit(ncclComm* c);
// Remembers that a call queued in the open group uses `c`: ncclGroupEnd holds it while the
// group runs, and runs nothing if it was destroyed, finalized or revoked meanwhile.
void noteGroupComm(ncclComm* c);
// Called for every failed entry point: inside a group, the group fails with the first error.
void noteGroupError(const Status& st);

}  // namespace chorus::nccl
