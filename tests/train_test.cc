// End-to-end checks of chorus-train, the reference data-parallel trainer: real ranks started by
// chorus-run on a small slice of Fashion-MNIST. They compare runs through the --metrics JSON
// (per-step loss at full float precision, per-epoch accuracy, the final parameter hash).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

const char kData[] = "/usr/share/datasets/fashion-mnist";

std::string binDir() {
  if (const char* dir = getenv("CHORUS_BIN_DIR")) return dir;
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  std::string path(self, n > 0 ? size_t(n) : 0);
  return path.substr(0, path.rfind('/'));
}

struct JobResult {
  int code = -1;
  std::string output;
};

// Runs argv with stdout and stderr into one file; SIGKILLs it after deadlineSec.
JobResult execute(const std::vector<std::string>& args, double deadlineSec = 120) {
  char outPath[] = "/tmp/train_test_out_XXXXXX";
  int fd = mkstemp(outPath);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fd, 1);
    dup2(fd, 2);
    setpgid(0, 0);
    std::vector<char*> argv;
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(fd);
  JobResult r;
  int status = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(deadlineSec);
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      r.output = "(killed after the deadline)\n";
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::ifstream in(outPath);
  std::stringstream ss;
  ss << in.rdbuf();
  r.output += ss.str();
  unlink(outPath);
  return r;
}

// chorus-run -n ranks -- chorus-train --quiet <args>
JobResult train(int ranks, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {
      binDir() + "/chorus-run",   "-n",     std::to_string(ranks), "--timeout", "100", "--",
      binDir() + "/chorus-train", "--quiet"};
  argv.insert(argv.end(), args.begin(), args.end());
  return execute(argv);
}

struct Metrics {
  std::vector<double> stepLoss, accuracy;
  std::string hash;
};

std::vector<double> numbersAfter(const std::string& text, const std::string& key) {
  std::vector<double> out;
  for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + 1)) {
    const char* p = text.c_str() + at + key.size();
    while (*p == ' ' || *p == ':' || *p == '[' || *p == '"') ++p;
    for (;;) {
      char* end = nullptr;
      double v = strtod(p, &end);
      if (end == p) break;
      out.push_back(v);
      p = end;
      if (key != "\"step_loss\"") break;
      while (*p == ',' || *p == ' ') ++p;
    }
  }
  return out;
}

Metrics readMetrics(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  Metrics m;
  m.stepLoss = numbersAfter(text, "\"step_loss\"");
  m.accuracy = numbersAfter(text, "\"test_accuracy\"");
  size_t at = text.find("\"param_hash\": \"");
  if (at != std::string::npos) m.hash = text.substr(at + 15, 16);
  return m;
}

class TrainTest : public ::testing::Test {
 protected:
  void SetUp() override {
    struct stat st;
    if (stat((std::string(kData) + "/train-images-idx3-ubyte.gz").c_str(), &st) != 0)
      GTEST_SKIP() << "Fashion-MNIST is not installed (Debian package dataset-fashion-mnist)";
    char tmpl[] = "/tmp/train_test_XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  void TearDown() override {
    if (!dir_.empty()) std::system(("rm -rf '" + dir_ + "'").c_str());
  }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  std::string dir_;
};

// 50 steps of global batch 32 on the first 1600 images; 500 test images for the accuracy.
std::vector<std::string> smallJob(const std::string& metrics) {
  return {"--train-limit", "1600", "--test-limit",  "500", "--batch",   "32",   "--epochs", "1",
          "--bucket-mb",   "0.1",  "--check-every", "10",  "--metrics", metrics};
}

// Loss tolerance. Between a run on 1 rank and one on N ranks only the order of floating-point
// additions differs: a gradient element is a sum of 32 per-sample terms that BLAS adds in one
// order on one rank, while N ranks add their shares and the allreduce then adds the N partial
// sums. Each such float32 sum moves by a few ulps (~1e-7 relative), and 50 steps of SGD with
// momentum 0.9 carry that forward. Measured on this slice: at most 4.8e-7 (2-4 ulps of a loss
// between 0.6 and 2.3; most steps agree exactly) for 2, 3 and 4 ranks. 2e-5 leaves a 40x margin
// for other BLAS kernels and CPUs, yet is 1000x below the 2e-2 that a 1% change of the learning
// rate makes (checked below), so a wrong reduction cannot hide under it.
constexpr double kLossTolerance = 2e-5;

double maxLossGap(const Metrics& a, const Metrics& b) {
  double gap = 0;
  for (size_t i = 0; i < std::min(a.stepLoss.size(), b.stepLoss.size()); ++i)
    gap = std::max(gap, std::fabs(a.stepLoss[i] - b.stepLoss[i]));
  return gap;
}

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

TEST_F(TrainTest, ParametersAreBitwiseIdenticalOnEveryRank) {
  JobResult r = train(3, smallJob(path("m.%r.json")));
  ASSERT_EQ(r.code, 0) << r.output;
  const std::string h0 = readMetrics(path("m.0.json")).hash;
  ASSERT_EQ(h0.size(), 16u);
  for (int rank = 1; rank < 3; ++rank)
    EXPECT_EQ(readMetrics(path("m." + std::to_string(rank) + ".json")).hash, h0) << rank;
  EXPECT_NE(r.output.find("replicas identical"), std::string::npos) << r.output;
}

TEST_F(TrainTest, OverlapDoesNotChangeTheResult) {
  JobResult a = train(2, smallJob(path("a.json")));
  std::vector<std::string> job = smallJob(path("b.json"));
  job.push_back("--no-overlap");
  JobResult b = train(2, job);
  ASSERT_EQ(a.code, 0) << a.output;
  ASSERT_EQ(b.code, 0) << b.output;
  EXPECT_EQ(readMetrics(path("a.json")).hash, readMetrics(path("b.json")).hash);
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
  std::vector<std::string> first = job("1", path("first.json"));
  first.insert(first.end(), {"--checkpoint", path("ck")});
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

TEST_F(TrainTest, MissingDataNamesThePackage) {
  JobResult r = execute({binDir() + "/chorus-train", "--quiet", "--data", path("nowhere")});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.output.find("dataset-fashion-mnist"), std::string::npos) << r.output;
}

}  // namespace
