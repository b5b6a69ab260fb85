// The one thread that makes this rank's communicator calls. A Communicator is used by one
// thread at a time, so everything collective (gradient buckets, broadcasts, hash checks,
// metrics) is queued here and runs in submission order - the same order on every rank, which
// is what matching collectives requires. The training thread only enqueues and waits.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "chorus/communicator.h"

namespace train {

class CommThread {
 public:
  using Job = std::function<chorus::Status(chorus::Communicator&)>;
  explicit CommThread(chorus::Communicator* comm);
  ~CommThread();
  CommThread(const CommThread&) = delete;
  CommThread& operator=(const CommThread&) = delete;

  // Queues a job and returns its ticket. After a failure later jobs are skipped.
  uint64_t submit(Job job);
  // Blocks until job `ticket` (and all before it) ran; returns the first error so far.
  chorus::Status wait(uint64_t ticket);
  // Runs a job and waits for it.
  chorus::Status run(Job job) { return wait(submit(std::move(job))); }
  // Runs a job on the calling thread when nothing is queued or running (the communicator is
  // idle then, and still used by one thread at a time), which saves waking this thread and
  // being woken by it; queues it like run() otherwise.
  chorus::Status runHere(Job job);
  // Seconds this thread spent inside jobs since the last call (then resets the count).
  double takeBusySeconds();

 private:
  void loop();

  chorus::Communicator* comm_;
  std::mutex mu_;
  std::condition_variable queued_, done_;
  std::deque<Job> queue_;    // guarded by mu_
  uint64_t submitted_ = 0;   // guarded by mu_
  uint64_t completed_ = 0;   // guarded by mu_
  chorus::Status error_;     // guarded by mu_: the first failure
  int64_t busyNs_ = 0;       // guarded by mu_
  bool stop_ = false;        // guarded by mu_
  bool callerRuns_ = false;  // guarded by mu_: runHere has the communicator
  std::thread thread_;
};

}  // namespace train
