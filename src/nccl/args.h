// What the face itself checks of a call: only what is NCCL's own. A call's counts, buffers,
// root or peer are checked once, by the core (core/call_args.h), for both faces.
#pragma once

#include "chorus/status.h"
#include "chorus/types.h"
#include "nccl.h"

namespace chorus::nccl {

// Where a call's buffers live and how it completes. Host memory with a NULL stream runs
// synchronously; the CUDA build adds device pointers ordered on the stream, choosing here,
// so the entry points do not change.
enum class Placement { HostSync };

Status checkPlacement(cudaStream_t stream, Placement* out);
// Turns the raw value a C caller passed (see rawValue) into the core's type. C may pass any
// int, and the core's enum cannot hold every int, so the face refuses what is no datatype.
Status checkType(int t, DataType* out);

}  // namespace chorus::nccl
