// OpDesc: what one call asks for, independent of buffers. It is the key of the schedule cache
// and travels in every message header, so ranks that disagree about a call are caught.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "chorus/types.h"

namespace chorus {

enum class Collective : uint8_t {
  AllReduce,
  ReduceScatter,
  AllGather,
  Broadcast,
  Reduce,
  AllToAll,
  Gather,
  Scatter,
  Send,
  Recv,
  Barrier,
};

const char* collectiveName(Collective c);

struct OpDesc {
  Collective coll = Collective::AllReduce;
  DataType dtype = DataType::Float32;
  RedOp op = RedOp::Sum;
  int root = -1;       // broadcast/reduce/gather/scatter root; send/recv peer
  uint64_t count = 0;  // in the unit the API takes (per-rank count for allgather, recvcount for
                       // reduce_scatter, per-peer count for alltoall)
  bool inPlace = false;

  bool operator==(const OpDesc&) const = default;
  // "allreduce(count=1024, float32, sum)"; root shown where it matters.
  std::string toString() const;
};

inline bool isP2p(const OpDesc& d) {
  return d.coll == Collective::Send || d.coll == Collective::Recv;
}

struct OpDescHash {
  size_t operator()(const OpDesc& d) const {
    uint64_t h = d.count * 0x9E3779B97F4A7C15ull;
    h ^= (uint64_t(d.coll) << 0) | (uint64_t(d.dtype) << 8) | (uint64_t(d.op) << 16) |
         (uint64_t(uint32_t(d.root)) << 24) | (uint64_t(d.inPlace) << 56);
    return size_t(h * 0xBF58476D1CE4E5B9ull);
  }
};

// Elements of the send buffer a call reads, and of the receive buffer it writes, on a job of
// `size` ranks (the per-rank collectives count `size` blocks).
uint64_t inputElems(const OpDesc& d, int size);
uint64_t outputElems(const OpDesc& d, int size);

}  // namespace chorus
