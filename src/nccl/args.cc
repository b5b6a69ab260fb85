#include "nccl/args.h"

#include <string>

#include "engine/cuda_runtime.h"

namespace chorus::nccl {

Status checkPlacement(cudaStream_t stream, Placement* out) {
  if (stream) {
    const CudaRuntime& cuda = CudaRuntime::get();
    return Status::InvalidArgument(
        "stream is not NULL, but " +
        (cuda.usable() ? std::string("stream-ordered collectives on device memory are not built "
                                     "yet (docs/gpu.md)")
                       : "CUDA cannot be used here (" + cuda.whyNot() + ")") +
        ": pass stream NULL with host buffers (the call then completes before it returns)");
  }
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
