#include "worker.h"

#include <stdexcept>
#include <utility>

#include "chorus/group.h"
#include "worker_cpu.h"

namespace chorus_torch {
namespace {

std::exception_ptr failure(const Op& op, const std::string& message) {
  return std::make_exception_ptr(std::runtime_error("chorus backend, " + op.what + ": " + message));
}

}  // namespace

Worker::Worker(std::unique_ptr<chorus::Communicator> comm)
    : comm_(std::move(comm)), thread_([this] { loop(); }) {}

Worker::~Worker() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queueHeldLocked();
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void Worker::queueHeldLocked() {
  if (held_.empty()) return;
  queue_.push_back(std::move(held_));
  held_.clear();
}

void Worker::post(std::vector<Op> batch) {
  std::vector<c10::intrusive_ptr<ChorusWork>> done;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queueHeldLocked();  // the caller's order
    queue_.push_back(std::move(batch));
    done.swap(retired_);  // let go of below, on the caller's thread (see retired_)
  }
  cv_.notify_one();
}

void Worker::hold(Op op) {
  std::lock_guard<std::mutex> lock(mutex_);
  held_.push_back(std::move(op));
}

void Worker::flush() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (held_.empty()) return;
    queueHeldLocked();
  }
  cv_.notify_one();
}

void Worker::loop() {
  placeWorkerThread();
  for (;;) {
    std::vector<Op> batch;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) break;  // stopping, with nothing left to run
      batch = std::move(queue_.front());
      queue_.pop_front();
    }
    run(batch);
  }
}

void Worker::run(std::vector<Op>& batch) {
  std::vector<chorus::Status> issued(batch.size());
  chorus::Status groupStatus;
  const bool grouped = batch.size() > 1;
  if (grouped) chorus::groupStart();
  for (size_t i = 0; i < batch.size(); ++i) {
    try {
      issued[i] = batch[i].issue(*comm_);
    } catch (const std::exception& e) {
      issued[i] = chorus::Status::Internal(e.what());
    }
  }
  if (grouped) groupStatus = chorus::groupEnd();
  std::vector<std::pair<c10::intrusive_ptr<ChorusWork>, std::exception_ptr>> outcomes;
  for (size_t i = 0; i < batch.size(); ++i) {
    Op& op = batch[i];
    const chorus::Status& st = !issued[i].ok() ? issued[i] : groupStatus;
    std::exception_ptr error;
    if (!st.ok()) {
      error = failure(op, st.toString());
    } else {
      try {
        if (op.finish) op.finish();
      } catch (const std::exception& e) {
        error = failure(op, e.what());
      }
    }
    outcomes.emplace_back(std::move(op.work), error);
  }
  // The ops' tensors go before any caller wakes: once woken, a caller may exit Python, and
  // dropping a tensor Python let go of needs the GIL, which a finalizing interpreter answers by
  // ending this thread (pthread_exit), an unwind that aborts the process.
  batch.clear();
  for (auto& [work, error] : outcomes) work->complete(error);
  // Nor does this thread let go of the works: the caller may have dropped its own reference
  // already, making this one the last (and a work holds the output tensors). Once the
  // interpreter finalizes, that too ended this thread inside a noexcept destructor ("terminate
  // called without an active exception", 1 in ~50 runs of torch_killed_rank1_3ranks).
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& outcome : outcomes) retired_.push_back(std::move(outcome.first));
}

}  // namespace chorus_torch
