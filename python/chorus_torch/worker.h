// The thread that owns a process group's Chorus communicator (a Communicator is driven by one
// thread at a time) and runs the queued operations in the order torch issued them, so that a
// call returns at once and DDP's bucket allreduces overlap the rest of backward.
//
// An operation is two steps run on this thread: `issue` makes the Chorus call(s), `finish`
// copies results into torch's output tensors once they are complete. Consecutive
// point-to-point operations are issued inside one Chorus group, so sends and receives that
// match across ranks complete whatever order each rank posted them in (isend then irecv on
// both sides included) - as do the batches of torch's batch_isend_irecv, queued as one.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "chorus/communicator.h"
#include "work.h"

namespace chorus_torch {

struct Op {
  std::string what;  // "rank 1 of 4, allreduce" - prefixed to Chorus's error text
  bool p2p = false;  // send/recv: may share a Chorus group with its neighbours in the queue
  std::function<chorus::Status(chorus::Communicator&)> issue;
  std::function<void()> finish;  // optional; runs only when issue succeeded
  c10::intrusive_ptr<ChorusWork> work;
};

class Worker {
 public:
  explicit Worker(std::unique_ptr<chorus::Communicator> comm);
  // Runs what is still queued, as gloo does, then joins the thread: each operation ends within
  // Chorus's deadline, and at once on a communicator a failed peer has poisoned.
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Queues a batch that runs as one Chorus group when it holds several point-to-point ops.
  void post(std::vector<Op> batch);

 private:
  void loop();
  void run(std::vector<Op>& batch);

  std::unique_ptr<chorus::Communicator> comm_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::vector<Op>> queue_;  // guarded by mutex_
  bool stopping_ = false;              // guarded by mutex_
  std::thread thread_;
};

}  // namespace chorus_torch
