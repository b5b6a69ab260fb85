#include "comm_thread.h"

#include "common/clock.h"

namespace train {

CommThread::CommThread(chorus::Communicator* comm) : comm_(comm) {
  thread_ = std::thread([this] { loop(); });
}

CommThread::~CommThread() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  queued_.notify_one();
  thread_.join();
}

uint64_t CommThread::submit(Job job) {
  uint64_t ticket;
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(job));
    ticket = ++submitted_;
  }
  queued_.notify_one();
  return ticket;
}

chorus::Status CommThread::wait(uint64_t ticket) {
  std::unique_lock<std::mutex> lock(mu_);
  done_.wait(lock, [&] { return completed_ >= ticket; });
  return error_;
}

chorus::Status CommThread::runHere(Job job) {
  bool here;
  {
    std::lock_guard<std::mutex> lock(mu_);
    here = completed_ == submitted_ && error_.ok();
    if (here) {
      ++submitted_;
      callerRuns_ = true;
    }
  }
  if (!here) return run(std::move(job));
  const int64_t t0 = chorus::nowNs();
  const chorus::Status st = job(*comm_);
  const int64_t spent = chorus::nowNs() - t0;
  chorus::Status first;
  {
    std::lock_guard<std::mutex> lock(mu_);
    busyNs_ += spent;
    if (!st.ok() && error_.ok()) error_ = st;
    ++completed_;
    callerRuns_ = false;
    first = error_;
  }
  queued_.notify_one();  // a job queued meanwhile by another thread may run now
  done_.notify_all();
  return first;
}

double CommThread::takeBusySeconds() {
  std::lock_guard<std::mutex> lock(mu_);
  const double s = double(busyNs_) * 1e-9;
  busyNs_ = 0;
  return s;
}

void CommThread::loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    queued_.wait(lock, [&] { return !callerRuns_ && (stop_ || !queue_.empty()); });
    if (queue_.empty()) return;  // stop_ and nothing left to run
    Job job = std::move(queue_.front());
    queue_.pop_front();
    const bool failed = !error_.ok();
    lock.unlock();
    chorus::Status st;
    const int64_t t0 = chorus::nowNs();
    if (!failed) st = job(*comm_);
    const int64_t spent = chorus::nowNs() - t0;
    lock.lock();
    busyNs_ += spent;
    if (!st.ok() && error_.ok()) error_ = st;
    ++completed_;
    done_.notify_all();
  }
}

}  // namespace train
