// A Schedule is what one rank does for one collective, as plain data: a list of steps, each
// moving or combining a contiguous range of elements. Algorithms build schedules and do no
// I/O; the Executor runs them over whatever connections the communicator has.
//
// Execution model (algorithms/schedule_index.h writes it down once; the executor, the verifier
// and the cost model all read it from there):
// - Steps run concurrently, limited only by their dependencies and by channel order.
// - Channel order: messages between two ranks arrive in the order they were sent, so a rank's
//   Send steps to peer q are served in list order, and so are its Recv steps from peer p. The
//   peer lists the matching steps in the same order.
// - Data moves in chunks of a fixed number of elements per step: the schedule's chunkBytes when
//   it sets one, never more than the transport of the step's channel carries in one message.
//   Both ends derive it alike, so a step of `count` elements is the same messages on both.
// - A dependency on a step of the same count is chunkwise: a chunk may start once the
//   dependency has done the elements up to the chunk's end, which is what pipelines a ring. A
//   dependency on a step of another count waits for all of it. A step of count 0 is done from
//   the start.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace chorus {

// Input, Output and Scratch are the call's buffers; ids from kFirstUserBuffer on name extra
// caller buffers, which a group of point-to-point calls uses (one per queued call).
enum class BufferId : uint8_t { Input, Output, Scratch };
inline constexpr int kFirstUserBuffer = 3;

struct BufRef {
  BufferId buf = BufferId::Input;
  uint64_t offset = 0;  // in elements
};

enum class StepKind : uint8_t {
  Send,        // send src[0, count) to peer
  Recv,        // receive count elements from peer into dst
  RecvReduce,  // dst = src (op) received, elementwise
  Copy,        // dst = src (skipped when they are the same memory)
};

struct Step {
  static constexpr int kMaxDeps = 2;
  StepKind kind = StepKind::Copy;
  int peer = -1;
  BufRef src;
  BufRef dst;
  uint64_t count = 0;
  int deps[kMaxDeps] = {-1, -1};  // indices of earlier steps of the same schedule
};

struct Schedule {
  std::vector<Step> steps;
  uint64_t scratchElems = 0;  // the Scratch buffer this schedule needs, in elements
  const char* algorithm = "";
  // Bytes per message this schedule asks for (0: the transports' message size). It must be the
  // same on every rank of a call, as both ends of a channel cut its steps by it.
  size_t chunkBytes = 0;

  int send(int peer, BufRef src, uint64_t count, int dep0 = -1, int dep1 = -1);
  int recv(int peer, BufRef dst, uint64_t count, int dep0 = -1, int dep1 = -1);
  int recvReduce(int peer, BufRef local, BufRef dst, uint64_t count, int dep0 = -1, int dep1 = -1);
  int copy(BufRef src, BufRef dst, uint64_t count, int dep0 = -1, int dep1 = -1);
  std::string toString() const;  // one line per step, for traces and test failures
};

inline BufRef input(uint64_t off = 0) {
  return {BufferId::Input, off};
}
inline BufRef output(uint64_t off = 0) {
  return {BufferId::Output, off};
}
inline BufRef scratch(uint64_t off = 0) {
  return {BufferId::Scratch, off};
}
inline BufRef userBuffer(int k, uint64_t off = 0) {
  return {BufferId(kFirstUserBuffer + k), off};
}

}  // namespace chorus
