// The thread that owns a process group's Chorus communicator (a Communicator is driven by one
// thread at a time) and runs the queued operations in the order torch issued them, so that a
// call returns at once and DDP's bucket allreduces overlap the rest of backward.
//
// An operation is two steps run on this thread: `issue` makes the Chorus call(s), `finish`
// copies results into torch's output tensors once they are complete.
//
// Point-to-point operations are held back, not run one by one: a Chorus send larger than the
// transport's buffering waits for the peer's receive, so two ranks that each isend() and then
// irecv() would each block in its send. Held operations are queued together, as one Chorus
// group (in which matched sends and receives complete in any posting order), when the caller
// waits for or polls any of them, makes any other call, or ends a batch_isend_irecv.
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
  bool p2p = false;  // send/recv: held, then run in one Chorus group with the other held ones
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

  // Queues a batch (after whatever is held); several point-to-point ops run as one group.
  void post(std::vector<Op> batch);
  // Holds a point-to-point op until flush() or the next post().
  void hold(Op op);
  // Queues the held ops as one batch. Any thread.
  void flush();

 private:
  void loop();
  void queueHeldLocked();
  void run(std::vector<Op>& batch);

  std::unique_ptr<chorus::Communicator> comm_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::vector<Op>> queue_;  // guarded by mutex_
  std::vector<Op> held_;               // guarded by mutex_
  bool stopping_ = false;              // guarded by mutex_
  // Works this thread has completed, released by the next post() on the caller's thread or by
  // the destructor, never by this thread (see run()). Guarded by mutex_.
  std::vector<c10::intrusive_ptr<ChorusWork>> retired_;
  std::thread thread_;
};

}  // namespace chorus_torch
