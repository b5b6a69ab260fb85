#include "harness/train_job.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

namespace chorus::test {
namespace {

const char kData[] = "/usr/share/datasets/fashion-mnist";

}  // namespace

JobResult execute(const std::vector<std::string>& args, double deadlineSec) {
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

JobResult train(int ranks, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {
      binDir() + "/chorus-run",   "-n",     std::to_string(ranks), "--timeout", "100", "--",
      binDir() + "/chorus-train", "--quiet"};
  argv.insert(argv.end(), args.begin(), args.end());
  return execute(argv);
}

// Through nlohmann-json, as chorus-train writes it (docs/json.md); a missing or unreadable
// file gives empty metrics, which the comparisons then fail on.
Metrics readMetrics(const std::string& path) {
  std::ifstream in(path);
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  Metrics m;
  if (!j.is_object()) return m;
  m.stepLoss = j.value("step_loss", std::vector<double>{});
  for (const auto& e : j.value("epochs", nlohmann::json::array()))
    m.accuracy.push_back(e.value("test_accuracy", 0.0));
  m.hash = j.value("param_hash", "");
  m.paramBytes = j.value("param_bytes", 0.0);
  m.optimizerBytes = j.value("optimizer_bytes", 0.0);
  m.lrSchedule = j.value("lr_schedule", "");
  return m;
}

double maxLossGap(const Metrics& a, const Metrics& b) {
  double gap = 0;
  for (size_t i = 0; i < std::min(a.stepLoss.size(), b.stepLoss.size()); ++i)
    gap = std::max(gap, std::fabs(a.stepLoss[i] - b.stepLoss[i]));
  return gap;
}

std::vector<std::string> smallJob(const std::string& metrics) {
  return {"--train-limit", "1600", "--test-limit",  "500", "--batch",   "32",   "--epochs", "1",
          "--bucket-mb",   "0.1",  "--check-every", "10",  "--metrics", metrics};
}

void TrainTest::SetUp() {
  struct stat st;
  if (stat((std::string(kData) + "/train-images-idx3-ubyte.gz").c_str(), &st) != 0)
    GTEST_SKIP() << "Fashion-MNIST is not installed (Debian package dataset-fashion-mnist)";
  char tmpl[] = "/tmp/train_test_XXXXXX";
  dir_ = mkdtemp(tmpl);
}

void TrainTest::TearDown() {
  if (!dir_.empty()) std::system(("rm -rf '" + dir_ + "'").c_str());
}

}  // namespace chorus::test
