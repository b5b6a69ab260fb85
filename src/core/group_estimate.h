// What a call would cost: the estimate behind ncclGroupSimulateEnd.
#pragma once

#include "core/comm_impl.h"

namespace chorus {

// Microseconds `call` would take on `comm`, as the library's cost model predicts it for the
// algorithm the selector (or CHORUS_ALGO) would run.
double estimateMicros(const Communicator::Impl& comm, const OpDesc& call);

}  // namespace chorus
