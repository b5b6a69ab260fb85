#include "nccl/args.h"

#include <string>

namespace chorus::nccl {

Status checkPlacement(cudaStream_t stream, Placement* out) {
  if (stream)
    return Status::InvalidArgument(
        "stream is not NULL, but this Chorus was built without CUDA: pass stream NULL with "
        "host buffers (the call then completes before it returns)");
  *out = Placement::HostSync;
  return Status::Ok();
}

Status checkType(int t, DataType* out) {
  if (!isValidDataType(t))
    return Status::InvalidArgument("unknown datatype " + std::to_string(t) +
                                   " (valid: 0..ncclNumTypes-1)");
  *out = DataType(t);
  return Status::Ok();
}

}  // namespace chorus::nccl
