#include "grad_sync.h"

#include <algorithm>

#include "common/clock.h"

namespace train {

GradSync::GradSync(CommThread* comm, size_t paramCount, size_t bucketElems, bool overlap, int rank,
                   int size, bool shard)
    : comm_(comm),
      overlap_(overlap),
      rank_(rank),
      size_(size),
      shard_(shard && comm && size > 1),
      paramCount_(paramCount),
      buf_(kHeader + paramCount, 0.0f) {
  // Without overlap, buckets would only cut one call into several, each paying a call's
  // latency, with nothing to run beside them.
  if (!overlap_) bucketElems = buf_.size();
  bucketElems = std::max<size_t>(bucketElems, 1024);
  size_t first = 0;
  if (shard_) {
    bucketElems = (bucketElems + size_t(size) - 1) / size_t(size) * size_t(size);
    first = kHeader;
  }
  for (size_t at = first; at < buf_.size(); at += bucketElems) bounds_.push_back(at);
  // A tiny tail bucket would cost a whole allreduce latency: fold it into the one before.
  if (bounds_.size() > 1 && buf_.size() - bounds_.back() < bucketElems / 4) bounds_.pop_back();
  // Sharded, the last bucket's (length mod P) elements go in an allreduce of their own, so that
  // the rest of it is sharded too.
  const size_t odd = shard_ ? (buf_.size() - bounds_.back()) % size_t(size) : 0;
  if (odd && buf_.size() - odd > bounds_.back()) bounds_.push_back(buf_.size() - odd);
  bounds_.push_back(buf_.size());
  tickets_.assign(bucketCount(), 0);
  gathers_.assign(bucketCount(), 0);
}

bool GradSync::sharded(size_t b) const {
  return shard_ && (bounds_[b + 1] - bounds_[b]) % size_t(size_) == 0;
}

chorus::Status GradSync::waitFor(uint64_t ticket, double* waitSec) {
  const int64_t t0 = chorus::nowNs();
  chorus::Status st = comm_->wait(ticket);
  *waitSec += double(chorus::nowNs() - t0) * 1e-9;
  return st;
}

void GradSync::begin() {
  launched_ = 0;
}

CommThread::Job GradSync::job(size_t b) {
  float* p = buf_.data() + bounds_[b];
  const size_t n = bounds_[b + 1] - bounds_[b];
  if (sharded(b)) {
    const size_t part = n / size_t(size_);
    float* mine = p + part * size_t(rank_);
    return [p, mine, part](chorus::Communicator& c) {
      return c.reduceScatter(p, mine, part, chorus::DataType::Float32, chorus::RedOp::Sum)
          .withContext("gradient bucket reduce-scatter");
    };
  }
  return [p, n](chorus::Communicator& c) {
    return c.allReduce(p, p, n, chorus::DataType::Float32, chorus::RedOp::Sum)
        .withContext("gradient bucket allreduce");
  };
}

void GradSync::launch(size_t b) {
  tickets_[b] = comm_->submit(job(b));
}

chorus::Status GradSync::call(CommThread::Job j, uint64_t* ticket, double* waitSec) {
  if (overlap_) {
    *ticket = comm_->submit(std::move(j));
    return chorus::Status::Ok();
  }
  *ticket = 0;  // done: waiting for it returns at once
  const int64_t t0 = chorus::nowNs();
  chorus::Status st = comm_->runHere(std::move(j));
  *waitSec += double(chorus::nowNs() - t0) * 1e-9;
  return st;
}

void GradSync::ready(size_t frontier) {
  if (!comm_ || !overlap_) return;
  while (launched_ < bucketCount() && bounds_[launched_ + 1] <= kHeader + frontier)
    launch(launched_++);
}

chorus::Status GradSync::finish(const std::function<void(size_t, size_t)>& step, double* waitSec,
                                float* params) {
  // What backward did not launch goes now: without overlap, everything (the naive way, all
  // reduced before one optimiser pass).
  for (; comm_ && launched_ < bucketCount(); ++launched_)
    CHORUS_RETURN_IF_ERROR(call(job(launched_), &tickets_[launched_], waitSec));
  if (shard_) return finishSharded(step, waitSec, params);
  for (size_t b = 0; b < bucketCount(); ++b) {
    if (comm_) CHORUS_RETURN_IF_ERROR(waitFor(tickets_[b], waitSec));
    const size_t lo = std::max(bounds_[b], kHeader), hi = bounds_[b + 1];
    if (hi > lo) step(lo - kHeader, hi - kHeader);
  }
  return chorus::Status::Ok();
}

chorus::Status GradSync::finishSharded(const std::function<void(size_t, size_t)>& step,
                                       double* waitSec, float* params) {
  float* header = buf_.data();
  uint64_t headerTicket;
  CHORUS_RETURN_IF_ERROR(call(
      [header](chorus::Communicator& c) {
        return c.allReduce(header, header, kHeader, chorus::DataType::Float32, chorus::RedOp::Sum)
            .withContext("loss header allreduce");
      },
      &headerTicket, waitSec));
  for (size_t b = 0; b < bucketCount(); ++b) {
    CHORUS_RETURN_IF_ERROR(waitFor(tickets_[b], waitSec));
    const size_t lo = bounds_[b] - kHeader, n = bounds_[b + 1] - bounds_[b];
    if (!sharded(b)) {
      step(lo, lo + n);
      continue;
    }
    // Step this rank's shard, then let the others have it; overlapped, the next bucket's shard
    // is stepped while this allgather is in flight.
    const size_t part = n / size_t(size_), mine = lo + part * size_t(rank_);
    step(mine, mine + part);
    float* all = params + lo;
    float* own = params + mine;
    CHORUS_RETURN_IF_ERROR(call(
        [all, own, part](chorus::Communicator& c) {
          return c.allGather(own, all, part, chorus::DataType::Float32)
              .withContext("parameter bucket allgather");
        },
        &gathers_[b], waitSec));
  }
  CHORUS_RETURN_IF_ERROR(waitFor(headerTicket, waitSec));
  for (size_t b = 0; b < bucketCount(); ++b)
    if (sharded(b)) CHORUS_RETURN_IF_ERROR(waitFor(gathers_[b], waitSec));
  return chorus::Status::Ok();
}

}  // namespace train
