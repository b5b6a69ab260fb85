// End-to-end checks of chorus-train, the reference data-parallel trainer: real ranks started by
// chorus-run on a small slice of Fashion-MNIST. They compare runs through the --metrics JSON
// (per-step loss at full float precision, per-epoch accuracy, the final parameter hash).
#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "harness/train_job.h"
#include "sgd.h"

namespace chorus::test {
namespace {

TEST_F(TrainTest, RanksReproduceSingleProcessLossForFiftySteps) {
  JobResult one = train(1, smallJob(path("one.json")));
  ASSERT_EQ(one.code, 0) << one.output;
  const Metrics ref = readMetrics(path("one.json"));
  ASSERT_EQ(ref.stepLoss.size(), 50u);
  for (int ranks : {2, 3, 4}) {  // 3 ranks split 32 as 10 + 11 + 11
    const std::string m = path("r" + std::to_string(ranks) + ".%r.json");
    JobResult r = train(ranks, smallJob(m));
    ASSERT_EQ(r.code, 0) << r.output;
    const Metrics got = readMetrics(path("r" + std::to_string(ranks) + ".0.json"));
    ASSERT_EQ(got.stepLoss.size(), 50u);
    EXPECT_LE(maxLossGap(ref, got), kLossTolerance) << ranks << " ranks";
    EXPECT_NEAR(got.accuracy.at(0), ref.accuracy.at(0), 0.01) << ranks << " ranks";
  }
  // The tolerance is tight enough to see a small real difference.
  std::vector<std::string> job = smallJob(path("lr.json"));
  job.insert(job.end(), {"--lr", "0.0505"});
  ASSERT_EQ(train(1, job).code, 0);
  EXPECT_GT(maxLossGap(ref, readMetrics(path("lr.json"))), 100 * kLossTolerance);
}

// The default schedule starts at --lr, halves it midway and ends near 0; "constant" keeps it.
TEST(TrainSchedule, CosineDecaysFromTheRateToZeroOverTheRun) {
  EXPECT_FLOAT_EQ(train::scheduledLearningRate("cosine", 0.05f, 0, 1000), 0.05f);
  EXPECT_FLOAT_EQ(train::scheduledLearningRate("cosine", 0.05f, 500, 1000), 0.025f);
  // The last step: 0.025 (1 - cos(pi / 1000)) = 1.2e-7.
  EXPECT_NEAR(train::scheduledLearningRate("cosine", 0.05f, 999, 1000), 0.0f, 2e-7);
  EXPECT_FLOAT_EQ(train::scheduledLearningRate("cosine", 0.05f, 5000, 1000), 0.0f);
  float previous = 1;
  for (uint64_t s = 0; s < 1000; ++s) {
    const float lr = train::scheduledLearningRate("cosine", 0.05f, s, 1000);
    EXPECT_LE(lr, previous) << "step " << s;
    previous = lr;
  }
  EXPECT_FLOAT_EQ(train::scheduledLearningRate("constant", 0.05f, 999, 1000), 0.05f);
}

// The schedule changes training (the loss after the first steps), not its first step.
TEST_F(TrainTest, ConstantScheduleTrainsDifferentlyFromTheDefault) {
  std::vector<std::string> cosine = smallJob(path("cosine.json"));
  std::vector<std::string> constant = smallJob(path("constant.json"));
  constant.insert(constant.end(), {"--lr-schedule", "constant"});
  ASSERT_EQ(train(1, cosine).code, 0);
  ASSERT_EQ(train(1, constant).code, 0);
  const Metrics a = readMetrics(path("cosine.json")), b = readMetrics(path("constant.json"));
  ASSERT_EQ(a.stepLoss.size(), b.stepLoss.size());
  EXPECT_EQ(a.stepLoss.at(0), b.stepLoss.at(0));
  EXPECT_EQ(a.stepLoss.at(1), b.stepLoss.at(1));
  EXPECT_GT(maxLossGap(a, b), 100 * kLossTolerance);
  // The metrics say which schedule ran.
  EXPECT_EQ(a.lrSchedule, "cosine");
  EXPECT_EQ(b.lrSchedule, "constant");
}

// --shard-optimizer: buckets reduce-scattered, each rank steps its shard, parameters allgathered.
// The result is the same training (within the tolerance) and the replicas stay identical (the
// hash is compared every 10 steps). On 4 ranks the last bucket (not a multiple of 4 long) takes
// the whole-bucket allreduce path, on 2 ranks every bucket is sharded.
TEST_F(TrainTest, ShardedOptimizerReproducesSingleProcessLoss) {
  ASSERT_EQ(train(1, smallJob(path("one.json"))).code, 0);
  const Metrics ref = readMetrics(path("one.json"));
  for (int ranks : {2, 4}) {
    std::vector<std::string> job = smallJob(path("s" + std::to_string(ranks) + ".%r.json"));
    job.push_back("--shard-optimizer");
    JobResult r = train(ranks, job);
    ASSERT_EQ(r.code, 0) << r.output;
    EXPECT_NE(r.output.find("replicas identical"), std::string::npos) << r.output;
    const std::string prefix = path("s" + std::to_string(ranks) + ".");
    const Metrics got = readMetrics(prefix + "0.json");
    ASSERT_EQ(got.stepLoss.size(), 50u);
    EXPECT_LE(maxLossGap(ref, got), kLossTolerance) << ranks << " ranks";
    EXPECT_EQ(readMetrics(prefix + std::to_string(ranks - 1) + ".json").hash, got.hash);
  }
  std::vector<std::string> job = smallJob(path("c.json"));
  job.insert(job.end(), {"--shard-optimizer", "--checkpoint", path("ck")});
  JobResult refused = train(2, job);
  EXPECT_NE(refused.code, 0);
  EXPECT_NE(refused.output.find("--shard-optimizer keeps each rank's share"), std::string::npos)
      << refused.output;
}

TEST_F(TrainTest, ParametersAreBitwiseIdenticalOnEveryRank) {
  JobResult r = train(3, smallJob(path("m.%r.json")));
  ASSERT_EQ(r.code, 0) << r.output;
  const std::string h0 = readMetrics(path("m.0.json")).hash;
  ASSERT_EQ(h0.size(), 16u);
  for (int rank = 1; rank < 3; ++rank)
    EXPECT_EQ(readMetrics(path("m." + std::to_string(rank) + ".json")).hash, h0) << rank;
  EXPECT_NE(r.output.find("replicas identical"), std::string::npos) << r.output;
}

// Overlapped, backward computes the weight gradients in bucket-sized row slices, which BLAS
// blocks (and so rounds) differently from the whole matrix: the losses agree within the
// tolerance instead of bit for bit. Each run's replicas stay identical.
TEST_F(TrainTest, OverlapDoesNotChangeTheResult) {
  std::vector<std::string> overlapped = smallJob(path("a.json"));
  overlapped.push_back("--overlap");
  JobResult a = train(2, overlapped);
  std::vector<std::string> job = smallJob(path("b.json"));
  job.push_back("--no-overlap");
  JobResult b = train(2, job);
  ASSERT_EQ(a.code, 0) << a.output;
  ASSERT_EQ(b.code, 0) << b.output;
  EXPECT_NE(a.output.find(" bucket(s), overlapped)"), std::string::npos) << a.output;
  EXPECT_NE(b.output.find("1 bucket(s), not overlapped)"), std::string::npos) << b.output;
  for (const JobResult* r : {&a, &b})
    EXPECT_NE(r->output.find("replicas identical"), std::string::npos) << r->output;
  const Metrics ma = readMetrics(path("a.json")), mb = readMetrics(path("b.json"));
  ASSERT_EQ(ma.stepLoss.size(), 50u);
  ASSERT_EQ(mb.stepLoss.size(), 50u);
  EXPECT_LE(maxLossGap(ma, mb), kLossTolerance);
  printf("largest loss gap, overlapped against not: %.3g\n", maxLossGap(ma, mb));
}

// Left open, overlap is chosen from the CPUs a rank has: it pays only with a second CPU for the
// communication thread (examples/train/overlap_policy.h). chorus-run binds each rank to one CPU;
// unbound, two ranks share what this test may run on.
TEST_F(TrainTest, OverlapIsChosenFromTheCpusEachRankHas) {
  JobResult bound = train(2, smallJob(path("bound.json")));
  ASSERT_EQ(bound.code, 0) << bound.output;
  EXPECT_NE(bound.output.find("1 bucket(s), not overlapped: 2 rank(s) on this machine, 1 CPU each"),
            std::string::npos)
      << bound.output;

  std::vector<std::string> argv = {
      binDir() + "/chorus-run",   "-n",     "2", "--bind-to", "none", "--timeout", "100", "--",
      binDir() + "/chorus-train", "--quiet"};
  for (const std::string& a : smallJob(path("unbound.json"))) argv.push_back(a);
  JobResult unbound = execute(argv);
  ASSERT_EQ(unbound.code, 0) << unbound.output;
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  const int each = std::max(1, std::min(CPU_COUNT(&set), int(sysconf(_SC_NPROCESSORS_ONLN) / 2)));
  std::string want = ", not overlapped: 2 rank(s) on this machine, 1 CPU each)";
  if (each >= 2) {
    want = ", overlapped: 2 rank(s) on this machine, ";
    want += std::to_string(each);
    want += " CPUs each)";
  }
  EXPECT_NE(unbound.output.find(want), std::string::npos) << unbound.output;
}

TEST_F(TrainTest, DivergedReplicaStopsTheJob) {
  std::vector<std::string> job = smallJob(path("d.json"));
  job.insert(job.end(), {"--debug-perturb-rank", "1"});
  JobResult r = train(2, job);
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.output.find("replicas diverged at step 10"), std::string::npos) << r.output;
}

TEST_F(TrainTest, ResumeMatchesUninterruptedTraining) {
  auto job = [&](const char* epochs, const std::string& metrics) {
    return std::vector<std::string>{"--train-limit", "640",  "--test-limit", "500",
                                    "--batch",       "32",   "--epochs",     epochs,
                                    "--metrics",     metrics};
  };
  JobResult straight = train(2, job("2", path("straight.json")));
  ASSERT_EQ(straight.code, 0) << straight.output;
  // The same job interrupted after its first epoch (20 steps of 32 of 640 images), so that it
  // has followed the same learning-rate schedule, which spans both epochs.
  std::vector<std::string> first = job("2", path("first.json"));
  first.insert(first.end(), {"--checkpoint", path("ck"), "--max-steps", "20"});
  ASSERT_EQ(train(2, first).code, 0);
  std::vector<std::string> second = job("2", path("resumed.json"));
  second.insert(second.end(), {"--resume", path("ck")});
  JobResult resumed = train(2, second);
  ASSERT_EQ(resumed.code, 0) << resumed.output;
  const Metrics a = readMetrics(path("straight.json")), b = readMetrics(path("resumed.json"));
  EXPECT_EQ(a.hash, b.hash);
  EXPECT_EQ(a.stepLoss, b.stepLoss);
  EXPECT_EQ(a.accuracy, b.accuracy);
  ASSERT_EQ(a.accuracy.size(), 2u);

  // A damaged checkpoint is refused, not half-loaded.
  {
    std::fstream f(path("ck"), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(100);
    f.put('\x5a');
  }
  JobResult bad = train(2, second);
  EXPECT_NE(bad.code, 0);
  EXPECT_NE(bad.output.find("checksum mismatch"), std::string::npos) << bad.output;
}

// Debian 12's OpenBLAS (0.3.21) runs its generic Prescott kernels on CPU models it does not know,
// such as Emerald Rapids, about 6x slower; chorus-train then restarts itself with kernels that fit
// (examples/train/blas_core.h). Where the user has not chosen and the CPU has AVX2, the kernels it
// reports must not be the generic ones.
TEST_F(TrainTest, MultipliesWithKernelsThatFitTheCpu) {
  if (getenv("OPENBLAS_CORETYPE") != nullptr) GTEST_SKIP() << "OPENBLAS_CORETYPE is set";
  std::vector<std::string> job = smallJob(path("blas.json"));
  job.insert(job.end(), {"--max-steps", "1"});
  JobResult r = train(1, job);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("BLAS kernels: "), std::string::npos) << r.output;
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    EXPECT_EQ(r.output.find("BLAS kernels: Prescott"), std::string::npos) << r.output;
  }
}

TEST_F(TrainTest, MissingDataNamesThePackage) {
  JobResult r = execute({binDir() + "/chorus-train", "--quiet", "--data", path("nowhere")});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.output.find("dataset-fashion-mnist"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace chorus::test
