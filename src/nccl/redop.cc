// Custom reduction operators: ncclRedOpCreatePreMulSum and ncclRedOpDestroy.
#include "chorus/types.h"
#include "nccl/api.h"
#include "nccl/args.h"
#include "nccl/comm_handle.h"
#include "nccl/errors.h"

namespace chorus::nccl {

Status RedOpTable::create(const void* scalar, DataType type, bool deferred, ncclRedOp_t* out) {
  Slot s;
  s.live = true;
  s.type = type;
  if (deferred)
    s.deferred = scalar;
  else
    memcpy(s.scalar, scalar, dataTypeSize(type));
  std::lock_guard<std::mutex> g(mu_);
  size_t i = 0;
  while (i < slots_.size() && slots_[i].live) ++i;
  if (i >= size_t(ncclMaxRedOp) - ncclNumOps)
    return Status::InvalidUsage("too many custom reduction operators on this communicator");
  if (i == slots_.size())
    slots_.push_back(s);
  else
    slots_[i] = s;
  *out = ncclRedOp_t(ncclNumOps + int(i));
  return Status::Ok();
}

Status RedOpTable::destroy(int op) {
  if (op < ncclNumOps)
    return Status::InvalidArgument("op " + std::to_string(op) +
                                   " is a built-in operator; only ops from "
                                   "ncclRedOpCreatePreMulSum can be destroyed");
  std::lock_guard<std::mutex> g(mu_);
  size_t i = size_t(op) - ncclNumOps;
  if (i >= slots_.size() || !slots_[i].live)
    return Status::InvalidArgument("op " + std::to_string(op) +
                                   " was not created on this communicator, or was destroyed");
  slots_[i].live = false;
  return Status::Ok();
}

Status RedOpTable::resolve(int v, DataType type, ResolvedOp* out) const {
  if (v >= 0 && v < ncclNumOps) {
    out->op = RedOp(v);
    out->hasScalar = false;
    return Status::Ok();
  }
  std::lock_guard<std::mutex> g(mu_);
  size_t i = size_t(unsigned(v)) - ncclNumOps;
  if (v < 0 || i >= slots_.size() || !slots_[i].live)
    return Status::InvalidArgument("unknown reduction op " + std::to_string(v) +
                                   " (built-in ops are 0..4; others must come from "
                                   "ncclRedOpCreatePreMulSum on this communicator)");
  const Slot& s = slots_[i];
  if (s.type != type)
    return Status::InvalidArgument("custom op " + std::to_string(v) + " was created for " +
                                   dataTypeName(s.type) + ", not " + dataTypeName(type));
  out->op = RedOp::PreMulSum;
  out->hasScalar = true;
  memcpy(out->scalar, s.deferred ? s.deferred : s.scalar, dataTypeSize(type));
  return Status::Ok();
}

}  // namespace chorus::nccl

using namespace chorus;
using namespace chorus::nccl;

extern "C" ncclResult_t pncclRedOpCreatePreMulSum(ncclRedOp_t* op, void* scalar,
                                                  ncclDataType_t datatype,
                                                  ncclScalarResidence_t residence,
                                                  ncclComm_t comm) {
  return guard("ncclRedOpCreatePreMulSum", [&]() -> Status {
    CommRef c;
    CHORUS_RETURN_IF_ERROR(acquire(comm, &c));
    if (!op) return Status::InvalidArgument("op is NULL");
    if (!scalar) return Status::InvalidArgument("scalar is NULL");
    DataType t;
    CHORUS_RETURN_IF_ERROR(checkType(rawValue(datatype), &t));
    int where = rawValue(residence);
    if (where != ncclScalarDevice && where != ncclScalarHostImmediate)
      return Status::InvalidArgument("unknown scalar residence " + std::to_string(where));
    return c->redops.create(scalar, t, where == ncclScalarDevice, op);
  });
}
NCCL_WEAK_ALIAS(ncclRedOpCreatePreMulSum);

extern "C" ncclResult_t pncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm) {
  return guard("ncclRedOpDestroy", [&]() -> Status {
    CommRef c;
    CHORUS_RETURN_IF_ERROR(acquire(comm, &c));
    return c->redops.destroy(rawValue(op));
  });
}
NCCL_WEAK_ALIAS(ncclRedOpDestroy);
