// The calling thread's open group: where communicator calls wait until groupEnd().
#pragma once

#include "chorus/group.h"
#include "core/comm_impl.h"

namespace chorus {

Status enqueueInGroup(Communicator::Impl* comm, const OpDesc& d, const void* in, void* out,
                      const void* premulScalar);

}  // namespace chorus
