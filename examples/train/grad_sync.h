// Gradient synchronisation the way PyTorch DDP does it: the gradient array is cut into
// buckets of about --bucket-mb; backward reports how far the gradients are final, and each
// bucket's allreduce (a sum of gradients already scaled by 1 / global batch) is queued on the
// communication thread the moment backward has passed its end, overlapping the rest of
// backward. finish() then hands each bucket to the optimiser as soon as that bucket is back.
//
// The buffer starts with a small header (per-rank loss sum and correct count) that rides in
// the first bucket, so the batch loss costs no collective of its own.
//
// Without overlap (--no-overlap, or where a rank has no CPU to spare: overlap_policy.h) the
// gradients go in one allreduce after backward, made by the training thread itself.
//
// With a sharded optimiser (--shard-optimizer, ZeRO stage 1 inside ddp) a bucket is
// reduce-scattered instead, the optimiser steps only this rank's 1/P of it, and an allgather of
// the updated parameters rebuilds the replica: the same bytes on the wire as the allreduce (its
// two halves), but each rank runs 1/P of the optimiser instead of all of it. Buckets then cover
// parameters only (lengths a multiple of P, so that every rank's shard is the same size; the
// fewer than P elements left over at the end are allreduced on their own) and the header travels
// in an allreduce of its own. Without overlap, one bucket: one reduce-scatter and one allgather.
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
  // rank/size place this rank for a sharded optimiser (shard; ignored on one rank).
  GradSync(CommThread* comm, size_t paramCount, size_t bucketElems, bool overlap, int rank = 0,
           int size = 1, bool shard = false);

  float* header() { return buf_.data(); }
  float* grads() { return buf_.data() + kHeader; }
  size_t bucketCount() const { return bounds_.size() - 1; }

  void begin();
  // Gradients [0, frontier) (parameter offsets) are final.
  void ready(size_t frontier);
  // Queues what is left, then calls step(begin, end) in parameter offsets for every bucket as
  // it completes (sharded: for this rank's shard of it, then allgathers `params`). Returns the
  // first communication error; `waitSec` grows by the time spent blocked on the network.
  chorus::Status finish(const std::function<void(size_t, size_t)>& step, double* waitSec,
                        float* params = nullptr);

 private:
  CommThread::Job job(size_t b);  // bucket b's allreduce or reduce-scatter
  void launch(size_t b);
  // Overlapped, queues j on the communication thread; otherwise the training thread runs it
  // (it would only wait for that thread) and `waitSec` grows by its time.
  chorus::Status call(CommThread::Job j, uint64_t* ticket, double* waitSec);
  bool sharded(size_t b) const;
  chorus::Status waitFor(uint64_t ticket, double* waitSec);
  chorus::Status finishSharded(const std::function<void(size_t, size_t)>& step, double* waitSec,
                               float* params);

  CommThread* comm_;
  bool overlap_;
  int rank_, size_;
  bool shard_;
  size_t paramCount_;
  std::vector<float> buf_;
  std::vector<size_t> bounds_;  // bucket b is buf_[bounds_[b], bounds_[b+1])
  std::vector<uint64_t> tickets_;
  std::vector<uint64_t> gathers_;  // sharded: the parameter allgather of each bucket
  size_t launched_ = 0;
};

}  // namespace train
