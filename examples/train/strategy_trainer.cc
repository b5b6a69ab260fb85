#include "strategy_trainer.h"

#include <cstdio>

#include "blas_core.h"
#include "collective.h"
#include "metrics.h"
#include "strategy.h"
#include "trainer.h"

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
    printf(", %lld training / %lld test images, batch %d, lr %g (%s), momentum %g\n",
           (long long)train_.count, (long long)test_.count, o_.batch, double(o_.lr),
           o_.lrSchedule.c_str(), double(o_.momentum));
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
    CHORUS_RETURN_IF_ERROR(runEpoch(
        o_, rank_, ct_.get(), train_, epoch, &step_, &stepLoss_, &stopped_,
        [&](const uint32_t* batch, int gb, float lr, double* loss) {
          s_->setLearningRate(lr);
          return s_->step(train_, batch, gb, loss);
        },
        [&](uint64_t steps) {
          uint64_t h;
          return s_->checkReplicas(steps, &h);
        },
        rec));
    // Every collective here blocks the training thread: all communication is waiting.
    rec->waitS = rec->commS;
    rec->computeS = rec->wallS - rec->waitS;
    return s_->evaluate(test_, &rec->testAccuracy);
  }

  Status finish() {
    uint64_t hash = 0;
    CHORUS_RETURN_IF_ERROR(s_->checkReplicas(step_, &hash));
    RunInfo info{o_.strategy, size_,         o_.batch,         false,
                 0,           hexHash(hash), s_->paramBytes(), s_->optimizerBytes(),
                 o_.lr,       o_.lrSchedule};
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
