#include "bootstrap/mailbox.h"

namespace chorus::boot {

void Mailbox::put(Message m) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto key = std::make_pair(int(m.header.src), m.header.seq);
    box_[key] = std::move(m);
  }
  cv_.notify_all();
}

Status Mailbox::take(int src, uint64_t seq, Deadline deadline, Message* out) {
  std::unique_lock<std::mutex> lock(mu_);
  auto key = std::make_pair(src, seq);
  for (;;) {
    auto it = box_.find(key);
    if (it != box_.end()) {
      *out = std::move(it->second);
      box_.erase(it);
      return Status::Ok();
    }
    if (!poison_.ok()) return poison_;
    if (src >= 0 && src < int(gone_.size()) && gone_[src])
      return Status::InvalidUsage("rank " + std::to_string(src) +
                                  " has already left the job (it destroyed its bootstrap)");
    if (deadline.expired()) return Status::Timeout("timed out");
    // Bounded slices, so a deadline far away cannot overflow the clock arithmetic.
    int64_t ns = std::min<int64_t>(deadline.remainingNs(), 1'000'000'000);
    cv_.wait_for(lock, std::chrono::nanoseconds(ns));
  }
}

void Mailbox::poison(const Status& failure) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (poison_.ok()) poison_ = failure;
  }
  cv_.notify_all();
}

void Mailbox::peerLeft(int rank) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (rank >= 0 && rank < int(gone_.size())) gone_[rank] = true;
  }
  cv_.notify_all();
}

Status Mailbox::poisoned() const {
  std::lock_guard<std::mutex> lock(mu_);
  return poison_;
}

}  // namespace chorus::boot
