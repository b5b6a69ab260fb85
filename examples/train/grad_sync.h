// Gradient synchronisation the way PyTorch DDP does it: the gradient array is cut into
// buckets of about --bucket-mb; backward reports how far the gradients are final, and each
// bucket's allreduce (a sum of gradients already scaled by 1 / global batch) is queued on the
// communication thread the moment backward has passed its end, overlapping the rest of
// backward. finish() then hands each bucket to the optimiser as soon as that bucket is back.
//
// The buffer starts with a small header (per-rank loss sum and correct count) that rides in
// the first bucket, so the batch loss costs no collective of its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "comm_thread.h"

namespace train {

class GradSync {
 public:
  static constexpr size_t kHeader = 16;  // floats; 64 bytes keep the gradients aligned

  // comm may be null (one rank): then nothing is sent and buckets are final at once.
  GradSync(CommThread* comm, size_t paramCount, size_t bucketElems, bool overlap);

  float* header() { return buf_.data(); }
  float* grads() { return buf_.data() + kHeader; }
  size_t bucketCount() const { return bounds_.size() - 1; }

  void begin();
  // Gradients [0, frontier) (parameter offsets) are final.
  void ready(size_t frontier);
  // Queues what is left, then calls step(begin, end) in parameter offsets for every bucket as
  // it completes. Returns the first communication error; `waitSec` grows by the time spent
  // blocked on the network.
  chorus::Status finish(const std::function<void(size_t, size_t)>& step, double* waitSec);

 private:
  void launch(size_t b);

  CommThread* comm_;
  bool overlap_;
  std::vector<float> buf_;
  std::vector<size_t> bounds_;  // bucket b is buf_[bounds_[b], bounds_[b+1])
  std::vector<uint64_t> tickets_;
  size_t launched_ = 0;
};

}  // namespace train
