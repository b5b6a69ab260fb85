#include "grad_sync.h"

#include <algorithm>

#include "common/clock.h"

namespace train {

GradSync::GradSync(CommThread* comm, size_t paramCount, size_t bucketElems, bool overlap)
    : comm_(comm), overlap_(overlap), buf_(kHeader + paramCount, 0.0f) {
  bucketElems = std::max<size_t>(bucketElems, 1024);
  for (size_t at = 0; at < buf_.size(); at += bucketElems) bounds_.push_back(at);
  // A tiny tail bucket would cost a whole allreduce latency: fold it into the one before.
  if (bounds_.size() > 1 && buf_.size() - bounds_.back() < bucketElems / 4) bounds_.pop_back();
  bounds_.push_back(buf_.size());
  tickets_.assign(bucketCount(), 0);
}

void GradSync::begin() {
  launched_ = 0;
}

void GradSync::launch(size_t b) {
  float* p = buf_.data() + bounds_[b];
  const size_t n = bounds_[b + 1] - bounds_[b];
  tickets_[b] = comm_->submit([p, n](chorus::Communicator& c) {
    return c.allReduce(p, p, n, chorus::DataType::Float32, chorus::RedOp::Sum)
        .withContext("gradient bucket allreduce");
  });
}

void GradSync::ready(size_t frontier) {
  if (!comm_ || !overlap_) return;
  while (launched_ < bucketCount() && bounds_[launched_ + 1] <= kHeader + frontier)
    launch(launched_++);
}

chorus::Status GradSync::finish(const std::function<void(size_t, size_t)>& step, double* waitSec) {
  if (comm_) {
    while (launched_ < bucketCount()) launch(launched_++);
  }
  // Without overlap the naive way: everything reduced first, then one optimiser pass.
  if (comm_ && !overlap_) {
    const int64_t t0 = chorus::nowNs();
    chorus::Status st = comm_->wait(tickets_.back());
    *waitSec += double(chorus::nowNs() - t0) * 1e-9;
    if (!st.ok()) return st;
  }
  for (size_t b = 0; b < bucketCount(); ++b) {
    if (comm_ && overlap_) {
      const int64_t t0 = chorus::nowNs();
      chorus::Status st = comm_->wait(tickets_[b]);
      *waitSec += double(chorus::nowNs() - t0) * 1e-9;
      if (!st.ok()) return st;
    }
    const size_t lo = std::max(bounds_[b], kHeader), hi = bounds_[b + 1];
    if (hi > lo) step(lo - kHeader, hi - kHeader);
  }
  return chorus::Status::Ok();
}

}  // namespace train
