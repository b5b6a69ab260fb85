#include "strategy_trainer.h"

#include <algorithm>
#include <cstdio>

#include "blas_core.h"
#include "collective.h"
#include "common/clock.h"
#include "metrics.h"
#include "rng.h"
#include "strategy.h"

namespace train {
namespace {

using chorus::Status;

class StrategyTrainer {
 public:
  StrategyTrainer(const Options& o, chorus::Communicator* comm, const Dataset& train,
                  const Dataset& test)
      : o_(o),
        rank_(comm ? comm->rank() : 0),
        size_(comm ? comm->size() : 1),
        train_(train),
        test_(test),
        ct_(size_ > 1 ? std::make_unique<CommThread>(comm) : nullptr) {}

  Status run() {
    if (!o_.checkpoint.empty() || !o_.resume.empty())
      return Status::InvalidArgument("--checkpoint and --resume work with --strategy ddp only (" +
                                     o_.strategy + " was asked for); drop them or train with ddp");
    std::vector<int> dims = {train_.pixels};
    dims.insert(dims.end(), o_.hidden.begin(), o_.hidden.end());
    dims.push_back(10);
    CHORUS_RETURN_IF_ERROR(makeStrategy(o_, ct_.get(), rank_, size_, dims, &s_));
    CHORUS_RETURN_IF_ERROR(printHeader(dims));
    for (int epoch = 1; epoch <= o_.epochs && !stopped_; ++epoch) {
      EpochRecord rec;
      CHORUS_RETURN_IF_ERROR(trainEpoch(epoch, &rec));
      history_.push_back(rec);
      if (rank_ == 0) {
        printf("%s %s\n", o_.strategy.c_str(), formatEpoch(rec, o_.epochs).c_str());
        fflush(stdout);
      }
    }
    return finish();
  }

 private:
  // The layout, and every rank's parameter and optimiser bytes (they differ per stage).
  Status printHeader(const std::vector<int>& dims) {
    std::vector<double> bytes(2 * size_t(size_));
    bytes[2 * size_t(rank_)] = double(s_->paramBytes());
    bytes[2 * size_t(rank_) + 1] = double(s_->optimizerBytes());
    CHORUS_RETURN_IF_ERROR(sumDoubles(ct_.get(), bytes.data(), bytes.size()));
    if (rank_ != 0) return Status::Ok();
    printf("chorus-train: %d rank(s), model", size_);
    for (int d : dims) printf(" %d", d);
    printf(", %lld training / %lld test images, batch %d, lr %g, momentum %g\n",
           (long long)train_.count, (long long)test_.count, o_.batch, double(o_.lr),
           double(o_.momentum));
    printf("BLAS kernels: %s\n", blasKernels().c_str());
    printf("strategy %s\nparameters + optimiser state per rank:", s_->layout().c_str());
    for (int r = 0; r < size_; ++r)
      printf(" r%d %.2f+%.2f MB", r, bytes[2 * size_t(r)] / 1e6, bytes[2 * size_t(r) + 1] / 1e6);
    printf("\n");
    if (s_->bubbleFraction() > 0)
      printf("pipeline bubble: %.1f%% of each step's schedule is idle per stage\n",
             100 * s_->bubbleFraction());
    fflush(stdout);
    return Status::Ok();
  }

  Status trainEpoch(int epoch, EpochRecord* rec) {
    const std::vector<uint32_t> order = epochOrder(o_.seed, epoch, train_.count);
    const int64_t steps = (train_.count + o_.batch - 1) / o_.batch;
    Progress bar(rank_ == 0 && !o_.quiet, o_.strategy, epoch, steps);
    const int64_t t0 = chorus::nowNs();
    if (ct_) ct_->takeBusySeconds();
    double lossSum = 0;
    int64_t seen = 0;
    for (int64_t s = 0; s < steps; ++s) {
      if (o_.maxSteps > 0 && int64_t(step_) >= o_.maxSteps) {
        stopped_ = true;
        break;
      }
      const int64_t first = s * o_.batch;
      const int gb = int(std::min<int64_t>(o_.batch, train_.count - first));
      double loss = 0;
      CHORUS_RETURN_IF_ERROR(
          s_->step(train_, order.data() + first, gb, &loss)
              .withContext("epoch " + std::to_string(epoch) + " step " + std::to_string(s + 1)));
      ++step_;
      stepLoss_.push_back(float(loss));
      lossSum += loss * gb;
      seen += gb;
      if (o_.checkEvery > 0 && step_ % uint64_t(o_.checkEvery) == 0) {
        uint64_t h;
        CHORUS_RETURN_IF_ERROR(s_->checkReplicas(step_, &h));
      }
      bar.update(s + 1, loss, double(seen) / double(chorus::nowNs() - t0) * 1e9);
    }
    bar.done();
    rec->epoch = epoch;
    rec->wallS = double(chorus::nowNs() - t0) * 1e-9;
    rec->trainLoss = seen ? lossSum / double(seen) : 0;
    rec->samplesPerS = double(seen) / rec->wallS;
    // Every collective here blocks the training thread: all communication is waiting.
    rec->commS = rec->waitS = ct_ ? ct_->takeBusySeconds() : 0;
    rec->computeS = rec->wallS - rec->waitS;
    return s_->evaluate(test_, &rec->testAccuracy);
  }

  Status finish() {
    uint64_t hash = 0;
    CHORUS_RETURN_IF_ERROR(s_->checkReplicas(step_, &hash));
    RunInfo info{o_.strategy, size_,         o_.batch,         false,
                 0,           hexHash(hash), s_->paramBytes(), s_->optimizerBytes()};
    CHORUS_RETURN_IF_ERROR(writeRunFiles(o_.metrics, o_.plot, rank_, info, history_, stepLoss_,
                                         (train_.count + o_.batch - 1) / o_.batch));
    if (rank_ != 0) return Status::Ok();
    const double acc = history_.empty() ? 0 : history_.back().testAccuracy;
    printf(
        "chorus-train: %s, %d rank(s), %d epoch(s), %llu steps, test_accuracy %.2f%%, %.0f "
        "samples/s, param_hash %s (rank 0's part)\n",
        o_.strategy.c_str(), size_, int(history_.size()), (unsigned long long)step_, 100 * acc,
        samplesPerSecond(history_), info.paramHash.c_str());
    return Status::Ok();
  }

  const Options& o_;
  const int rank_, size_;
  const Dataset& train_;
  const Dataset& test_;
  std::unique_ptr<CommThread> ct_;
  std::unique_ptr<Strategy> s_;
  std::vector<EpochRecord> history_;
  std::vector<float> stepLoss_;
  uint64_t step_ = 0;
  bool stopped_ = false;
};

}  // namespace

Status runStrategyTraining(const Options& o, chorus::Communicator* comm, const Dataset& trainSet,
                           const Dataset& testSet) {
  StrategyTrainer t(o, comm, trainSet, testSet);
  return t.run();
}

}  // namespace train
