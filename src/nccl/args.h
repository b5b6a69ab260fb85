// Argument checks shared by the collective entry points. Each returns InvalidArgument with a
// message naming the argument; the core checks again, but the face's words match NCCL's names.
#pragma once

#include <cstddef>

#include "chorus/types.h"
#include "nccl.h"
#include "nccl/comm_handle.h"

namespace chorus::nccl {

// Where a call's buffers live and how it completes. Host memory with a NULL stream runs
// synchronously; the CUDA build adds device pointers ordered on the stream, choosing here,
// so the entry points do not change.
enum class Placement { HostSync };

Status checkPlacement(cudaStream_t stream, Placement* out);
// `t` is the raw value the caller passed (see rawValue).
Status checkType(int t, DataType* out);
Status checkRank(const ncclComm& c, int r, const char* name);
// `count * perRank` elements of type t at p; null is fine only when there are none. Also
// refuses counts whose byte size overflows.
Status checkBuffer(const void* p, size_t count, size_t perRank, DataType t, const char* name);

}  // namespace chorus::nccl
