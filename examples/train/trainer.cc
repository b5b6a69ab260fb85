#include "trainer.h"

#include <algorithm>
#include <cstdio>

#include "blas_core.h"
#include "checkpoint.h"
#include "collective.h"
#include "common/clock.h"
#include "evaluate.h"
#include "grad_sync.h"
#include "mlp.h"
#include "overlap_policy.h"
#include "rng.h"
#include "sgd.h"

namespace train {
namespace {

using chorus::Status;

std::vector<int> modelDims(const Options& o, const Dataset& d) {
  std::vector<int> dims = {d.pixels};
  dims.insert(dims.end(), o.hidden.begin(), o.hidden.end());
  dims.push_back(10);
  return dims;
}

class Trainer {
 public:
  // overlapWhy: why o.overlap was chosen, when the command line left it open.
  Trainer(const Options& o, std::string overlapWhy, chorus::Communicator* comm,
          const Dataset& train, const Dataset& test)
      : o_(o),
        overlap_(o.overlap.value_or(true)),
        overlapWhy_(std::move(overlapWhy)),
        rank_(comm ? comm->rank() : 0),
        size_(comm ? comm->size() : 1),
        train_(train),
        test_(test),
        mlp_(modelDims(o, train)),
        ct_(size_ > 1 ? std::make_unique<CommThread>(comm) : nullptr),
        sync_(ct_.get(), mlp_.paramCount(), size_t(o.bucketMb * (1 << 20) / 4), overlap_, rank_,
              size_, o.shardOptimizer),
        sgd_(mlp_.paramCount(), o.lr, o.momentum) {}

  Status run();

 private:
  Status start();
  Status trainEpoch(int epoch, EpochRecord* rec, bool* stopped);
  Status step(const uint32_t* batch, int globalBatch, double* loss, double* waitSec);
  Status evaluate(double* accuracy);
  Status saveIfAsked();
  Status finishRun();
  bool lead() const { return rank_ == 0; }
  std::string overlapNote() const;

  const Options& o_;
  const bool overlap_;
  const std::string overlapWhy_;
  const int rank_, size_;
  const Dataset& train_;
  const Dataset& test_;
  Mlp mlp_;
  std::unique_ptr<CommThread> ct_;
  GradSync sync_;
  Sgd sgd_;
  TrainState state_;
  std::vector<float> x_;
  std::vector<int> y_;
};

// Parameters come from rank 0 (a fresh init or its checkpoint), as DDP broadcasts them.
Status Trainer::start() {
  state_.dims = mlp_.dims();
  state_.seed = o_.seed;
  state_.batch = o_.batch;
  state_.params.assign(mlp_.paramCount(), 0.0f);
  mlp_.init(state_.params.data(), o_.seed);
  double meta[4] = {1, 0, 0, 0};  // ok, epochs done, step, history length
  Status loaded;
  if (!o_.resume.empty() && lead()) {
    TrainState s;
    loaded = loadCheckpoint(o_.resume, &s);
    if (loaded.ok() && s.dims != state_.dims)
      loaded = Status::InvalidArgument(o_.resume + " holds a model of other layer sizes");
    if (loaded.ok()) {
      if (s.seed != o_.seed || s.batch != o_.batch)
        printf("note: %s was written with --seed %llu --batch %d; continuing with this run's\n",
               o_.resume.c_str(), (unsigned long long)s.seed, s.batch);
      state_.epochsDone = s.epochsDone;
      state_.step = s.step;
      state_.params = std::move(s.params);
      sgd_.velocity() = std::move(s.velocity);
      state_.history = std::move(s.history);
      state_.stepLoss = std::move(s.stepLoss);
    }
    meta[0] = loaded.ok();
    meta[1] = state_.epochsDone;
    meta[2] = double(state_.step);
    meta[3] = double(state_.history.size());
  }
  if (!o_.resume.empty()) {
    CHORUS_RETURN_IF_ERROR(ct_ ? ct_->run([&](chorus::Communicator& c) {
      return c.broadcast(meta, meta, 4, chorus::DataType::Float64, 0);
    })
                               : Status::Ok());
    if (!meta[0]) {
      // Every rank says why: the launcher keeps only the first rank's exit, whichever it is.
      char why[512] = {};
      snprintf(why, sizeof why, "%s", loaded.message().c_str());
      Status sent = ct_ ? ct_->run([&](chorus::Communicator& c) {
        return c.broadcast(why, why, sizeof why, chorus::DataType::Uint8, 0);
      })
                        : Status::Ok();
      if (lead()) return loaded;
      if (!sent.ok()) return sent;
      return Status::InvalidArgument("rank 0 could not load " + o_.resume + ": " + why);
    }
    state_.epochsDone = int(meta[1]);
    state_.step = uint64_t(meta[2]);
    CHORUS_RETURN_IF_ERROR(broadcastFloats(ct_.get(), &sgd_.velocity()));
    // Every rank keeps the history so that each can write complete metrics.
    std::vector<double> hist = packRecords(state_.history);
    hist.resize(size_t(meta[3]) * 8);
    CHORUS_RETURN_IF_ERROR(broadcastDoubles(ct_.get(), &hist));
    state_.history = unpackRecords(hist);
    std::vector<float> losses(static_cast<size_t>(state_.step));
    if (lead()) losses = state_.stepLoss;
    CHORUS_RETURN_IF_ERROR(broadcastFloats(ct_.get(), &losses));
    state_.stepLoss = std::move(losses);
  }
  return broadcastFloats(ct_.get(), &state_.params);
}

Status Trainer::step(const uint32_t* batch, int globalBatch, double* loss, double* waitSec) {
  // This rank's contiguous share of the global batch (shares differ by at most one item).
  const int lo = int(int64_t(globalBatch) * rank_ / size_);
  const int hi = int(int64_t(globalBatch) * (rank_ + 1) / size_);
  const int n = hi - lo;
  x_.resize(size_t(std::max(n, 1)) * size_t(train_.pixels));
  y_.resize(size_t(std::max(n, 1)));
  gatherBatch(train_, batch + lo, n, x_.data(), y_.data());

  float* params = state_.params.data();
  mlp_.forward(params, x_.data(), n);
  // Scaled by the global batch, so the sum over ranks is the mean over the whole batch.
  const float scale = 1.0f / float(globalBatch);
  int64_t correct = 0;
  const double lossSum = mlp_.lossAndGrad(y_.data(), scale, &correct);
  sync_.begin();
  float* header = sync_.header();
  header[0] = float(lossSum * scale);
  header[1] = float(double(correct) * scale);
  const size_t slice = size_ > 1 && overlap_ ? size_t(o_.bucketMb * (1 << 20) / 4) : SIZE_MAX;
  mlp_.backward(params, sync_.grads(), slice, [&](size_t f) { sync_.ready(f); });
  const float* grads = sync_.grads();
  CHORUS_RETURN_IF_ERROR(
      sync_.finish([&](size_t b, size_t e) { sgd_.step(params, grads, b, e); }, waitSec, params));
  *loss = header[0];
  return Status::Ok();
}

Status Trainer::trainEpoch(int epoch, EpochRecord* rec, bool* stopped) {
  double waitSec = 0;
  CHORUS_RETURN_IF_ERROR(runEpoch(
      o_, rank_, ct_.get(), train_, epoch, &state_.step, &state_.stepLoss, stopped,
      [&](const uint32_t* batch, int gb, float lr, double* loss) {
        sgd_.setLearningRate(lr);
        CHORUS_RETURN_IF_ERROR(step(batch, gb, loss, &waitSec));
        if (state_.step == 0 && rank_ == o_.debugPerturbRank) state_.params[0] += 1e-3f;
        return Status::Ok();
      },
      [&](uint64_t steps) {
        uint64_t h;
        return checkReplicasAgree(ct_.get(), size_, state_.params, steps, &h);
      },
      rec));
  rec->waitS = waitSec;
  rec->computeS = rec->wallS - waitSec;
  return evaluate(&rec->testAccuracy);
}

Status Trainer::evaluate(double* accuracy) {
  return evaluateReplica(mlp_, state_.params.data(), test_, rank_, size_, ct_.get(), accuracy);
}

// Rank 0 writes (the replicas are identical); the others learn whether it worked.
Status Trainer::saveIfAsked() {
  if (o_.checkpoint.empty()) return Status::Ok();
  Status st;
  if (lead()) {
    state_.velocity = sgd_.velocity();
    st = saveCheckpoint(o_.checkpoint, state_);
    state_.velocity.clear();
  }
  double ok = st.ok();
  CHORUS_RETURN_IF_ERROR(sumDoubles(ct_.get(), &ok, 1));
  if (!st.ok()) return st;
  if (ok < size_) return Status::RemoteError("rank 0 could not write " + o_.checkpoint);
  return Status::Ok();
}

Status Trainer::finishRun() {
  uint64_t hash;
  CHORUS_RETURN_IF_ERROR(checkReplicasAgree(ct_.get(), size_, state_.params, state_.step, &hash));
  const size_t bytes = mlp_.paramCount() * sizeof(float);  // parameters, and as much momentum
  RunInfo info{"ddp",         size_, o_.batch, overlap_, sync_.bucketCount(),
               hexHash(hash), bytes, bytes,    o_.lr,    o_.lrSchedule};
  CHORUS_RETURN_IF_ERROR(writeRunFiles(o_.metrics, o_.plot, rank_, info, state_.history,
                                       state_.stepLoss, (train_.count + o_.batch - 1) / o_.batch));
  if (!lead()) return Status::Ok();
  const EpochRecord last = state_.history.empty() ? EpochRecord{} : state_.history.back();
  printf(
      "chorus-train: %d rank(s), %d epoch(s), %llu steps, test_accuracy %.2f%%, %.0f "
      "samples/s, %zu bucket(s)%s, param_hash %s, replicas identical\n",
      size_, int(state_.history.size()), (unsigned long long)state_.step, 100 * last.testAccuracy,
      samplesPerSecond(state_.history), sync_.bucketCount(),
      size_ > 1 ? (overlap_ ? " overlapped" : " not overlapped") : "", info.paramHash.c_str());
  return Status::Ok();
}

// ", overlapped: 2 rank(s) on this machine, 2 CPUs each" for the run's first line.
std::string Trainer::overlapNote() const {
  if (size_ == 1) return "";
  std::string note = overlap_ ? ", overlapped" : ", not overlapped";
  return overlapWhy_.empty() ? note : note + ": " + overlapWhy_;
}

Status Trainer::run() {
  // Each rank then holds only its shard of the momentum current: a checkpoint would need all.
  if (o_.shardOptimizer && (!o_.checkpoint.empty() || !o_.resume.empty()))
    return Status::InvalidArgument(
        "--shard-optimizer keeps each rank's share of the momentum only; --checkpoint and "
        "--resume need all of it: drop one or the other");
  CHORUS_RETURN_IF_ERROR(start().withContext("start"));
  if (lead()) {
    printf("chorus-train: %d rank(s), model", size_);
    for (int d : mlp_.dims()) printf(" %d", d);
    printf(
        " (%zu parameters, %zu bucket(s)%s), %lld training / %lld test images, batch %d, "
        "lr %g (%s), momentum %g\n",
        mlp_.paramCount(), sync_.bucketCount(), overlapNote().c_str(), (long long)train_.count,
        (long long)test_.count, o_.batch, double(o_.lr), o_.lrSchedule.c_str(),
        double(o_.momentum));
    printf("BLAS kernels: %s\n", blasKernels().c_str());
    fflush(stdout);
  }
  bool stopped = false;
  for (int epoch = state_.epochsDone + 1; epoch <= o_.epochs && !stopped; ++epoch) {
    EpochRecord rec;
    CHORUS_RETURN_IF_ERROR(trainEpoch(epoch, &rec, &stopped));
    state_.history.push_back(rec);
    state_.epochsDone = epoch;
    if (lead()) {
      printf("%s\n", formatEpoch(rec, o_.epochs).c_str());
      fflush(stdout);
    }
    if (!stopped) CHORUS_RETURN_IF_ERROR(saveIfAsked());
  }
  return finishRun();
}

}  // namespace

Status runEpoch(const Options& o, int rank, CommThread* ct, const Dataset& train, int epoch,
                uint64_t* steps, std::vector<float>* stepLoss, bool* stopped,
                const std::function<Status(const uint32_t*, int, float, double*)>& step,
                const std::function<Status(uint64_t)>& check, EpochRecord* rec) {
  const std::vector<uint32_t> order = epochOrder(o.seed, epoch, train.count);
  const int64_t batches = (train.count + o.batch - 1) / o.batch;
  // The schedule spans every epoch asked for, a resumed run's included; --max-steps only stops.
  const uint64_t runSteps = uint64_t(o.epochs) * uint64_t(batches);
  Progress bar(rank == 0 && !o.quiet, o.strategy, epoch, batches);
  const int64_t t0 = chorus::nowNs();
  if (ct) ct->takeBusySeconds();
  double lossSum = 0;
  int64_t seen = 0;
  for (int64_t s = 0; s < batches; ++s) {
    if (o.maxSteps > 0 && int64_t(*steps) >= o.maxSteps) {
      *stopped = true;
      break;
    }
    const int64_t first = s * o.batch;
    const int gb = int(std::min<int64_t>(o.batch, train.count - first));
    const float lr = scheduledLearningRate(o.lrSchedule, o.lr, *steps, runSteps);
    double loss = 0;
    CHORUS_RETURN_IF_ERROR(
        step(order.data() + first, gb, lr, &loss)
            .withContext("epoch " + std::to_string(epoch) + " step " + std::to_string(s + 1)));
    ++*steps;
    stepLoss->push_back(float(loss));
    lossSum += loss * gb;
    seen += gb;
    if (o.checkEvery > 0 && *steps % uint64_t(o.checkEvery) == 0)
      CHORUS_RETURN_IF_ERROR(check(*steps));
    bar.update(s + 1, loss, double(seen) / (double(chorus::nowNs() - t0) * 1e-9));
  }
  bar.done();
  rec->epoch = epoch;
  rec->wallS = double(chorus::nowNs() - t0) * 1e-9;
  rec->trainLoss = seen ? lossSum / double(seen) : 0;
  rec->samplesPerS = double(seen) / rec->wallS;
  rec->commS = ct ? ct->takeBusySeconds() : 0;
  return Status::Ok();
}

Status runTraining(const Options& o, chorus::Communicator* comm, const Dataset& trainSet,
                   const Dataset& testSet) {
  Options chosen = o;
  std::string why;
  if (!chosen.overlap && comm && comm->size() > 1) {
    HostShare share;
    CHORUS_RETURN_IF_ERROR(measureHostShare(*comm, &share));
    chosen.overlap = overlapPays(share);
    why = describe(share);
  }
  Trainer t(chosen, std::move(why), comm, trainSet, testSet);
  return t.run();
}

}  // namespace train
