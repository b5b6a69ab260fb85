#include "collective.h"

#include <cstdio>
#include <cstring>

namespace train {

using chorus::Communicator;
using chorus::DataType;
using chorus::Status;

Status broadcastFloats(CommThread* ct, std::vector<float>* v) {
  if (!ct) return Status::Ok();
  return ct->run([v](Communicator& c) {
    return c.broadcast(v->data(), v->data(), v->size(), DataType::Float32, 0);
  });
}

Status broadcastDoubles(CommThread* ct, std::vector<double>* v) {
  if (!ct) return Status::Ok();
  return ct->run([v](Communicator& c) {
    return c.broadcast(v->data(), v->data(), v->size(), DataType::Float64, 0);
  });
}

Status sumDoubles(CommThread* ct, double* v, size_t n) {
  if (!ct) return Status::Ok();
  return ct->run([v, n](Communicator& c) {
    return c.allReduce(v, v, n, DataType::Float64, chorus::RedOp::Sum);
  });
}

uint64_t hashParams(const std::vector<float>& p) {
  uint64_t h = 0x243f6a8885a308d3ull ^ p.size();
  for (float f : p) {
    uint32_t bits;
    memcpy(&bits, &f, 4);
    h = (h ^ bits) * 0x100000001b3ull;
    h ^= h >> 29;
  }
  return h;
}

std::string hexHash(uint64_t h) {
  char buf[20];
  snprintf(buf, sizeof buf, "%016llx", (unsigned long long)h);
  return buf;
}

Status checkReplicasAgree(CommThread* ct, int size, const std::vector<float>& params, uint64_t step,
                          uint64_t* hash, Communicator* group) {
  *hash = hashParams(params);
  if (!ct) return Status::Ok();
  std::vector<uint64_t> all(static_cast<size_t>(size));
  const uint64_t mine = *hash;
  CHORUS_RETURN_IF_ERROR(ct->run([&](Communicator& c) {
    return (group ? *group : c).allGather(&mine, all.data(), 1, DataType::Uint64);
  }));
  std::string differ;
  for (int r = 1; r < size; ++r)
    if (all[size_t(r)] != all[0]) differ += (differ.empty() ? "" : ", ") + std::to_string(r);
  if (differ.empty()) return Status::Ok();
  return Status::Internal(
      "replicas diverged at step " + std::to_string(step) + ": the parameter hash of rank(s) " +
      differ + (group ? " of the group" : "") + " differs from rank 0's " + hexHash(all[0]) +
      "; gradients were not reduced identically on every rank");
}

}  // namespace train
