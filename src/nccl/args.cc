#include "nccl/args.h"

#include <cstdint>
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

Status checkRank(const ncclComm& c, int r, const char* name) {
  if (r < 0 || r >= c.nranks)
    return Status::InvalidArgument(std::string(name) + " " + std::to_string(r) +
                                   " is outside [0, " + std::to_string(c.nranks) + ")");
  return Status::Ok();
}

Status checkBuffer(const void* p, size_t count, size_t perRank, DataType t, const char* name) {
  // Byte sizes past 2^48 cannot be real buffers; testing that also rules out overflow below.
  constexpr uint64_t kMaxBytes = uint64_t(1) << 48;
  const uint64_t elemSize = dataTypeSize(t);
  if (perRank && count > kMaxBytes / elemSize / perRank)
    return Status::InvalidArgument("count " + std::to_string(count) + " is too large for " + name +
                                   " (the byte size overflows)");
  if (count && perRank && !p)
    return Status::InvalidArgument(std::string(name) + " is NULL but count is " +
                                   std::to_string(count));
  return Status::Ok();
}

}  // namespace chorus::nccl
