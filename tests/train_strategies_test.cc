// chorus-train's model- and optimiser-sharding strategies (--strategy zero, tensor, pipeline,
// hybrid) against single-process training: every one must train the same model from the same
// parameters on the same batches, so its per-step loss matches a plain process up to the order
// of float additions (kLossTolerance, justified in harness/train_job.h; measured gaps here are
// at most 2.4e-7). The model has four layers (784-256-128-64-10) so that a 4-stage pipeline
// has a layer per stage and tensor parallelism has two column/row pairs: the second pair's
// input gradient needs the backward allreduce.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness/train_job.h"

namespace chorus::test {
namespace {

class TrainStrategiesTest : public TrainTest {
 protected:
  std::vector<std::string> job(const std::string& metrics, std::vector<std::string> extra) {
    std::vector<std::string> a = smallJob(metrics);
    a.insert(a.end(), {"--hidden", "256,128,64"});
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }
};

TEST_F(TrainStrategiesTest, EachStrategyReproducesSingleProcessLoss) {
  JobResult one = train(1, job(path("one.json"), {}));
  ASSERT_EQ(one.code, 0) << one.output;
  const Metrics ref = readMetrics(path("one.json"));
  ASSERT_EQ(ref.stepLoss.size(), 50u);
  struct Run {
    int ranks;
    std::vector<std::string> args;
  };
  const std::vector<Run> runs = {
      {4, {"--strategy", "zero"}},
      {4, {"--strategy", "tensor"}},
      {3, {"--strategy", "tensor"}},  // slices of 256, 128, 64 that do not divide evenly
      {4, {"--strategy", "pipeline"}},
      {4, {"--strategy", "pipeline", "--micro-batches", "3"}},  // 32 rows as 10 + 11 + 11
      {4, {"--strategy", "hybrid", "--hybrid", "tensor"}},
      {4, {"--strategy", "hybrid", "--hybrid", "pipeline"}},
  };
  for (size_t i = 0; i < runs.size(); ++i) {
    const std::string m = path("run" + std::to_string(i) + ".json");
    std::string what = std::to_string(runs[i].ranks) + " ranks:";
    for (const std::string& a : runs[i].args) what += " " + a;
    JobResult r = train(runs[i].ranks, job(m, runs[i].args));
    ASSERT_EQ(r.code, 0) << what << "\n" << r.output;
    const Metrics got = readMetrics(m);
    ASSERT_EQ(got.stepLoss.size(), 50u) << what;
    EXPECT_LE(maxLossGap(ref, got), kLossTolerance) << what;
    EXPECT_NEAR(got.accuracy.at(0), ref.accuracy.at(0), 0.01) << what;
  }
}

// Ranks along the data dimension of a grid hold the same slice and must end bitwise equal
// (checked every 10 steps by the trainer too); ranks along the model dimension hold different
// slices. Rank r sits at data index r / 2, model index r % 2.
TEST_F(TrainStrategiesTest, HybridGridReplicatesSlicesAlongTheDataDimension) {
  for (const char* kind : {"tensor", "pipeline"}) {
    JobResult r = train(
        4, job(path(std::string(kind) + ".%r.json"), {"--strategy", "hybrid", "--hybrid", kind}));
    ASSERT_EQ(r.code, 0) << r.output;
    Metrics m[4];
    for (int rank = 0; rank < 4; ++rank)
      m[rank] = readMetrics(path(std::string(kind) + "." + std::to_string(rank) + ".json"));
    EXPECT_EQ(m[0].hash, m[2].hash) << kind;
    EXPECT_EQ(m[1].hash, m[3].hash) << kind;
    EXPECT_NE(m[0].hash, m[1].hash) << kind;
  }
}

// ZeRO keeps a whole replica of the parameters but only a quarter of the momentum on 4 ranks;
// tensor parallelism splits both.
TEST_F(TrainStrategiesTest, ShardingShrinksTheStatePerRank) {
  ASSERT_EQ(train(1, job(path("one.json"), {})).code, 0);
  const Metrics one = readMetrics(path("one.json"));
  const double whole = 4.0 * (784 * 256 + 256 + 256 * 128 + 128 + 128 * 64 + 64 + 64 * 10 + 10);
  EXPECT_EQ(one.paramBytes, whole);
  EXPECT_EQ(one.optimizerBytes, whole);
  JobResult z = train(4, job(path("z.json"), {"--strategy", "zero"}));
  ASSERT_EQ(z.code, 0) << z.output;
  const Metrics zero = readMetrics(path("z.json"));
  EXPECT_GE(zero.paramBytes, whole);  // padded to 4 equal shards
  EXPECT_LE(zero.optimizerBytes, whole / 4 + 4);
  EXPECT_GE(zero.optimizerBytes, whole / 4);
  EXPECT_NE(z.output.find("parameters + optimiser state per rank"), std::string::npos);
  JobResult t = train(4, job(path("t.json"), {"--strategy", "tensor"}));
  ASSERT_EQ(t.code, 0) << t.output;
  EXPECT_LT(readMetrics(path("t.json")).paramBytes, whole / 3);
}

TEST_F(TrainStrategiesTest, LayoutsThatCannotWorkAreRefusedWithTheFix) {
  // The default model has three layers: too few for four pipeline stages.
  JobResult p = train(4, {"--train-limit", "64", "--strategy", "pipeline"});
  EXPECT_NE(p.code, 0);
  EXPECT_NE(p.output.find("needs at least as many layers"), std::string::npos) << p.output;
  EXPECT_NE(p.output.find("--hidden"), std::string::npos) << p.output;
  JobResult h = train(3, {"--train-limit", "64", "--strategy", "hybrid"});
  EXPECT_NE(h.code, 0);
  EXPECT_NE(h.output.find("--data-parallel"), std::string::npos) << h.output;
  JobResult c = train(2, {"--train-limit", "64", "--strategy", "zero", "--checkpoint", path("c")});
  EXPECT_NE(c.code, 0);
  EXPECT_NE(c.output.find("--strategy ddp only"), std::string::npos) << c.output;
  JobResult u = execute({binDir() + "/chorus-train", "--strategy", "fsdp"});
  EXPECT_EQ(u.code, 2);
  EXPECT_NE(u.output.find("bad value 'fsdp' for --strategy"), std::string::npos) << u.output;
}

// The progress line names the strategy, so interleaved logs of several runs stay readable.
TEST_F(TrainStrategiesTest, ProgressLineNamesTheStrategy) {
  JobResult r = execute({binDir() + "/chorus-run", "-n", "2", "--", binDir() + "/chorus-train",
                         "--train-limit", "320", "--test-limit", "100", "--batch", "32", "--epochs",
                         "1", "--strategy", "pipeline"});
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("pipeline epoch 1 100% step 10/10"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("pipeline bubble: 20.0%"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace chorus::test
