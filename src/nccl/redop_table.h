// The custom reduction operators of one communicator (ncclRedOpCreatePreMulSum). A handle is
// ncclNumOps + slot; destroyed slots are reused. Each remembers the datatype it was made for,
// since NCCL allows its use only with that type on that communicator.
#pragma once

#include <cstdint>
#include <cstring>
#include <mutex>
#include <vector>

#include "chorus/communicator.h"
#include "nccl.h"

namespace chorus::nccl {

// A reduction ready to run: the op plus its scalar, copied so that the caller may destroy the
// custom op (or reuse its scalar) as soon as the collective call returns.
struct ResolvedOp {
  RedOp op = RedOp::Sum;
  bool hasScalar = false;
  alignas(8) unsigned char scalar[8] = {};
  // Valid as long as this object is: point at the copy, never at the caller's memory.
  Reduction reduction() const { return Reduction(op, hasScalar ? scalar : nullptr); }
};

class RedOpTable {
 public:
  // `scalar` is copied (host-immediate) or, for ncclScalarDevice, remembered and read each time
  // a collective uses the op (host memory in this build; a CUDA build reads device memory).
  Status create(const void* scalar, DataType type, bool deferred, ncclRedOp_t* out);
  // `op` is the caller's raw value (see rawValue in api.h).
  Status destroy(int op);
  // Built-in ops and live custom ones; checks the type a custom op was made for.
  Status resolve(int op, DataType type, ResolvedOp* out) const;

 private:
  struct Slot {
    bool live = false;
    DataType type = DataType::Float32;
    const void* deferred = nullptr;  // ncclScalarDevice: read at use
    alignas(8) unsigned char scalar[8] = {};
  };
  mutable std::mutex mu_;
  std::vector<Slot> slots_;  // guarded by mu_
};

}  // namespace chorus::nccl
