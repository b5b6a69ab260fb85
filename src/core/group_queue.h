// The calling thread's open group: where communicator calls wait until groupEnd(). There is
// one such queue per thread, shared by both faces; besides groupStart/groupEnd the NCCL face
// needs the three controls below to give ncclGroupEnd and ncclGroupSimulateEnd NCCL's meaning.
#pragma once

#include "chorus/communicator.h"
#include "chorus/group.h"
#include "core/op_desc.h"

namespace chorus {

Status enqueueInGroup(Communicator::Impl* comm, const OpDesc& d, const void* in, void* out,
                      const void* premulScalar);

// Marks the open group failed (the first failure is kept): its outermost groupEnd() then runs
// none of its calls and returns that failure. NCCL fails a whole group for one bad call.
void failOpenGroup(const Status& st);
// Leaves one level like groupEnd(), but the outermost level drops the queued calls instead of
// running them (ncclGroupSimulateEnd; a group whose communicators went away meanwhile).
Status groupEndWithoutRunning();
// Microseconds the calls queued so far would take one after another, by the cost model.
double estimateOpenGroupMicros();

}  // namespace chorus
