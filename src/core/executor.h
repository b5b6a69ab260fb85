// The one executor: runs any rank's Schedule over its connections, chunk by chunk, with every
// wait bounded by a deadline and cut short by a communicator-wide failure.
#pragma once

#include <atomic>
#include <functional>
#include <vector>

#include "algorithms/schedule.h"
#include "chorus/status.h"
#include "common/clock.h"
#include "core/op_desc.h"
#include "reduce/reducer.h"
#include "transport/transport.h"

namespace chorus {

// A Schedule plus the per-channel step order, worked out once when the schedule is cached.
struct Plan {
  Schedule schedule;
  std::vector<int> nextOnChannel;  // per step: next step on the same (peer, direction), or -1
  std::vector<int> peers;          // peers this schedule talks to
  std::vector<int> firstSend, firstRecv;  // per peer in `peers`: first step on that channel

  static Plan make(Schedule s);
};

struct ExecBuffers {
  const void* input = nullptr;
  void* output = nullptr;
  void* scratch = nullptr;
};

struct ExecEnv {
  int rank = 0;
  std::vector<Connection*> conns;  // by peer rank
  Transport* sleeper = nullptr;    // whose sleep() to use when idle
  const CpuReducer* reducer = nullptr;
  const std::atomic<bool>* failed = nullptr;  // set when the communicator has an error
  std::function<Status()> failure;            // the recorded error, once `failed` is set
  int64_t spinNs = 50000;
  bool yieldWhileSpinning = false;  // more local ranks than cores: let the others run
};

class Executor {
 public:
  explicit Executor(ExecEnv env) : env_(std::move(env)) {}

  // Runs `plan` for the call `desc` (the opSeq-th collective). Avg and PreMulSum arrive here
  // already lowered to Sum. Returns when every step is done, or with the first error.
  Status run(const Plan& plan, const OpDesc& desc, uint32_t opSeq, RedOp reduceOp,
             const ExecBuffers& bufs, Deadline deadline);

 private:
  struct StepState {
    uint64_t done = 0;
    uint64_t chunks = 0;
  };
  class Run;

  ExecEnv env_;
  std::vector<StepState> state_;  // reused across calls
  std::vector<int> sendHead_, recvHead_;
};

}  // namespace chorus
