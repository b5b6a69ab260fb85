// The ways chorus-train spreads one model and one global batch over the ranks, besides the
// replicated data parallelism of trainer.cc (--strategy ddp):
//   zero      every rank a replica for compute, but gradients reduce-scattered, each rank
//             updating only its shard of parameters and momentum, parameters allgathered
//   tensor    Megatron-style: hidden layers in (column-parallel, row-parallel) pairs
//   pipeline  consecutive layers per rank, micro-batches through send/recv in a 1F1B schedule
//   hybrid    a data x model grid of communicator splits, the model dimension tensor or pipeline
// Every strategy trains the same model from the same initial parameters on the same batches
// as a single process, so only the order of float additions differs (see docs/trainer.md).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "comm_thread.h"
#include "idx.h"
#include "options.h"
#include "sgd.h"

namespace train {

class Strategy {
 public:
  virtual ~Strategy() = default;
  // Trains on one global batch (`batch` holds its item indices into `data`); `loss` is the
  // batch's mean loss, the same on every rank.
  virtual chorus::Status step(const Dataset& data, const uint32_t* batch, int globalBatch,
                              double* loss) = 0;
  // The optimiser's rate for the steps that follow.
  virtual void setLearningRate(float lr) = 0;
  // Accuracy over the whole test set, the same on every rank.
  virtual chorus::Status evaluate(const Dataset& test, double* accuracy) = 0;
  // Hash of the parameters this rank holds; checks that ranks holding the same ones agree.
  virtual chorus::Status checkReplicas(uint64_t step, uint64_t* hash) = 0;
  // What this rank holds, in bytes: parameters and optimiser state (momentum).
  virtual size_t paramBytes() const = 0;
  virtual size_t optimizerBytes() const = 0;
  // One line on how the model and batch are laid out over the ranks.
  virtual std::string layout() const = 0;
  // Pipeline only: the schedule's idle share, (stages - 1) / (micro-batches + stages - 1).
  virtual double bubbleFraction() const { return 0; }
};

// The contiguous share [lo, lo + n) of `total` items that part `i` of `parts` takes (shares
// differ by at most one), as ddp splits a batch.
struct Share {
  int lo = 0, n = 0;
};
inline Share shareOf(int64_t total, int i, int parts) {
  const int lo = int(total * i / parts), hi = int(total * (i + 1) / parts);
  return {lo, hi - lo};
}

// What tensor and pipeline share: each rank of a model group holds a slice of the parameters
// (and as much momentum), and the ranks holding the same slice form the data group (null when
// it would hold one rank), which sums their gradients.
class ModelSlice : public Strategy {
 public:
  // Ranks along the data dimension hold the same slices and must agree.
  chorus::Status checkReplicas(uint64_t step, uint64_t* hash) override;
  void setLearningRate(float lr) override { sgd_->setLearningRate(lr); }
  size_t paramBytes() const override { return params_.size() * sizeof(float); }
  size_t optimizerBytes() const override { return params_.size() * sizeof(float); }

 protected:
  ModelSlice(CommThread* ct, std::unique_ptr<chorus::Communicator> data, int dRank, int dSize)
      : ct_(ct), data_(std::move(data)), dRank_(dRank), dSize_(dSize) {}
  // Zeroed gradients and momentum for params_, once it holds this rank's slice.
  void initOptimizer(const Options& o);
  // Sums the gradients over the data group, steps the optimiser, and sums each rank's share of
  // the batch loss (`lossPart`) over the world into *loss.
  chorus::Status update(double lossPart, double* loss);

  CommThread* ct_;
  std::unique_ptr<chorus::Communicator> data_;
  const int dRank_, dSize_;
  std::vector<float> params_, grads_;
  std::unique_ptr<Sgd> sgd_;
};

// Builds the strategy named by o.strategy for this rank. The communication thread owns the
// world communicator (null on one rank) and every split of it.
chorus::Status makeStrategy(const Options& o, CommThread* ct, int rank, int size,
                            const std::vector<int>& dims, std::unique_ptr<Strategy>* out);

}  // namespace train
