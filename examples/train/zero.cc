// --strategy zero: sharded data parallelism, ZeRO stage 1-2 (FSDP's SHARD_GRAD_OP). Every rank
// still runs the whole model on its share of the batch, but the gradient sum is
// reduce-scattered instead of allreduced, so each rank receives only its 1/P shard of it,
// steps only that shard of the parameters with only that shard of the momentum, and an
// allgather puts the updated parameters back together. The optimiser state per rank shrinks
// P-fold; the traffic is that of one allreduce (a ring allreduce is exactly these two halves).
#include "zero.h"

#include <algorithm>
#include <cstdio>

#include "collective.h"
#include "evaluate.h"
#include "mlp.h"
#include "sgd.h"
#include "strategy.h"

namespace train {
namespace {

using chorus::Communicator;
using chorus::DataType;
using chorus::Status;

class Zero : public Strategy {
 public:
  Zero(const Options& o, CommThread* ct, int rank, int size, const std::vector<int>& dims)
      : ct_(ct),
        rank_(rank),
        size_(size),
        mlp_(dims),
        // Shards of equal length: reduce_scatter and allgather take one count per rank.
        shard_((mlp_.paramCount() + size_t(size) - 1) / size_t(size)),
        params_(shard_ * size_t(size), 0.0f),
        grads_(params_.size(), 0.0f),
        sgd_(shard_, o.lr, o.momentum) {
    mlp_.init(params_.data(), o.seed);
  }

  void setLearningRate(float lr) override { sgd_.setLearningRate(lr); }

  Status step(const Dataset& data, const uint32_t* batch, int globalBatch, double* loss) override {
    const Share s = shareOf(globalBatch, rank_, size_);
    x_.resize(size_t(std::max(s.n, 1)) * size_t(data.pixels));
    y_.resize(size_t(std::max(s.n, 1)));
    gatherBatch(data, batch + s.lo, s.n, x_.data(), y_.data());
    mlp_.forward(params_.data(), x_.data(), s.n);
    const float scale = 1.0f / float(globalBatch);
    int64_t correct = 0;
    double stats[2] = {mlp_.lossAndGrad(y_.data(), scale, &correct) * scale, 0};
    mlp_.backward(params_.data(), grads_.data(), SIZE_MAX, [](size_t) {});
    float* mine = grads_.data() + shard_ * size_t(rank_);
    float* myParams = params_.data() + shard_ * size_t(rank_);
    if (ct_) {
      CHORUS_RETURN_IF_ERROR(ct_->run([&](Communicator& c) {
        return c.reduceScatter(grads_.data(), mine, shard_, DataType::Float32, chorus::RedOp::Sum)
            .withContext("gradient reduce-scatter");
      }));
    }
    sgd_.step(myParams, mine, 0, shard_);
    if (ct_) {
      CHORUS_RETURN_IF_ERROR(ct_->run([&](Communicator& c) {
        return c.allGather(myParams, params_.data(), shard_, DataType::Float32)
            .withContext("parameter allgather");
      }));
    }
    CHORUS_RETURN_IF_ERROR(sumDoubles(ct_, stats, 2));
    *loss = stats[0];
    return Status::Ok();
  }

  Status evaluate(const Dataset& test, double* accuracy) override {
    return evaluateReplica(mlp_, params_.data(), test, rank_, size_, ct_, accuracy);
  }

  // The allgather must leave every rank with the same parameters.
  Status checkReplicas(uint64_t step, uint64_t* hash) override {
    return checkReplicasAgree(ct_, size_, params_, step, hash);
  }

  size_t paramBytes() const override { return params_.size() * sizeof(float); }
  size_t optimizerBytes() const override { return shard_ * sizeof(float); }

  std::string layout() const override {
    char buf[160];
    snprintf(buf, sizeof buf,
             "zero: %d replicas for compute, parameters and momentum in %d shards of %zu", size_,
             size_, shard_);
    return buf;
  }

 private:
  CommThread* ct_;
  const int rank_, size_;
  Mlp mlp_;
  const size_t shard_;
  std::vector<float> params_, grads_;  // padded to size x shard; the padding stays 0
  Sgd sgd_;
  std::vector<float> x_;
  std::vector<int> y_;
};

}  // namespace

std::unique_ptr<Strategy> makeZero(const Options& o, CommThread* ct, int rank, int size,
                                   const std::vector<int>& dims) {
  return std::make_unique<Zero>(o, ct, rank, size, dims);
}

}  // namespace train
