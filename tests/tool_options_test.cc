// Every tool's command line, run for real: --version prints the same text everywhere, and each
// tool's usage errors exit 2 with one shape (the tool, the option, the value, what is accepted,
// then the usage line), whatever the tool.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "harness/bin_dir.h"

namespace {

using chorus::test::binDir;

struct Result {
  int code = -1;
  std::string text;
};

// Runs `tool args` with a time limit; `text` is its stdout, or its stderr when `errors`.
Result run(const std::string& tool, const std::string& args, bool errors = true) {
  const std::string redirect = errors ? " 2>&1 >/dev/null" : " 2>/dev/null";
  Result r;
  FILE* p = popen(("timeout 60 " + binDir() + "/" + tool + " " + args + redirect).c_str(), "r");
  if (!p) return r;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) r.text.append(buf, n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

bool built(const std::string& tool) {
  return access((binDir() + "/" + tool).c_str(), X_OK) == 0;
}

// Exit status 2, and stderr opening with "tool: message" and naming the usage.
void expectUsageError(const std::string& tool, const std::string& args,
                      const std::string& message) {
  if (!built(tool)) GTEST_SKIP() << tool << " is not built here";
  const Result r = run(tool, args);
  EXPECT_EQ(r.code, 2) << tool << " " << args << "\n" << r.text;
  EXPECT_EQ(r.text.rfind(tool + ": " + message + "\n", 0), 0u) << tool << " " << args << "\n"
                                                               << r.text;
  EXPECT_NE(r.text.find("\nusage: " + tool + " "), std::string::npos) << r.text;
}

class EveryTool : public testing::TestWithParam<const char*> {};

TEST_P(EveryTool, VersionIsTheSameEverywhere) {
  if (!built(GetParam())) GTEST_SKIP() << GetParam() << " is not built here";
  const Result mine = run(GetParam(), "--version", false);
  const Result reference = run("chorus-sim", "--version", false);
  EXPECT_EQ(mine.code, 0);
  EXPECT_EQ(mine.text, reference.text);
  EXPECT_EQ(mine.text.rfind("Chorus ", 0), 0u) << mine.text;
  EXPECT_NE(mine.text.find("\nbackends: hwloc "), std::string::npos) << mine.text;
}

TEST_P(EveryTool, UnknownOptionsAreNamed) {
  expectUsageError(GetParam(), "--no-such-option", "unknown option '--no-such-option'");
}

TEST_P(EveryTool, HelpOpensWithTheUsageAndExitsZero) {
  if (!built(GetParam())) GTEST_SKIP() << GetParam() << " is not built here";
  const Result r = run(GetParam(), "--help", false);
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.text.rfind(std::string("usage: ") + GetParam() + " ", 0), 0u) << r.text;
  EXPECT_NE(r.text.find("--version"), std::string::npos) << r.text;
}

INSTANTIATE_TEST_SUITE_P(Tools, EveryTool,
                         testing::Values("chorus-run", "chorus-bench", "chorus-sim", "chorus-topo",
                                         "chorus-trace", "chorus-tune", "chorus-train"),
                         [](const auto& info) {
                           std::string n = info.param;
                           return n.substr(n.find('-') + 1);
                         });

TEST(RunOptions, BadValues) {
  expectUsageError("chorus-run", "echo hi", "--np is required");
  expectUsageError("chorus-run", "-n 0 echo",
                   "bad value '0' for --np: wants a whole number in 1..1024");
  expectUsageError("chorus-run", "--np=2 --bind-to socket echo",
                   "bad value 'socket' for --bind-to: wants core or none");
  expectUsageError("chorus-run", "-n 2 -x NOVALUE echo",
                   "bad value 'NOVALUE' for -x: wants NAME=VALUE");
  expectUsageError("chorus-run", "-n 2", "no program given");
}

// -v raises the library's log level (CHORUS_DEBUG) unless the user set it; the ranks inherit it.
TEST(RunOptions, VerboseSetsTheLogLevelOfTheRanks) {
  const std::string show = "-n 1 --no-tag-output sh -c 'echo debug=$CHORUS_DEBUG'";
  unsetenv("CHORUS_DEBUG");
  EXPECT_EQ(run("chorus-run", "-v " + show, false).text, "debug=INFO\n");
  EXPECT_EQ(run("chorus-run", "-vv " + show, false).text, "debug=TRACE\n");
  EXPECT_EQ(run("chorus-run", show, false).text, "debug=\n");
  setenv("CHORUS_DEBUG", "WARN", 1);
  EXPECT_EQ(run("chorus-run", "-v " + show, false).text, "debug=WARN\n");
  unsetenv("CHORUS_DEBUG");
}

TEST(BenchOptions, BadValues) {
  expectUsageError("chorus-bench", "", "a command is required");
  expectUsageError("chorus-bench", "nosuchcommand", "unknown command 'nosuchcommand'");
  expectUsageError("chorus-bench", "allreduce -b 1X",
                   "bad value '1X' for -b: wants a size in bytes: 8, 64K, 1M, 1G");
  expectUsageError("chorus-bench", "allreduce --impl=nccl",
                   "bad value 'nccl' for --impl: wants chorus, mpi or gloo");
  expectUsageError("chorus-bench", "latency -m 4K:1K",
                   "bad value '4K:1K' for -m: wants MIN:MAX sizes with 0 < MIN <= MAX, e.g. 8:1G");
  expectUsageError("chorus-bench", "allreduce -b 1M -e 1K",
                   "the sweep needs 0 < min <= max, not 1M .. 1K");
  expectUsageError("chorus-bench", "compare -n 2",
                   "compare wants a collective: compare -n 2 allreduce [options]");
  expectUsageError("chorus-bench", "latency --placement oop", "unknown option '--placement'");
}

TEST(SimOptions, BadValues) {
  expectUsageError(
      "chorus-sim", "--topo x --sizes 1M:1K",
      "bad value '1M:1K' for --sizes: wants MIN:MAX sizes with 0 < MIN <= MAX, e.g. 8:1G");
  expectUsageError("chorus-sim", "--topo x --factor=1",
                   "bad value '1' for --factor: wants a whole number in 2..2147483647");
  expectUsageError("chorus-sim", "--sizes 8:64", "--topo is required");
}

TEST(TopoOptions, BadValues) {
  expectUsageError("chorus-topo", "--max-hosts many",
                   "bad value 'many' for --max-hosts: wants a whole number in 0..2147483647");
  expectUsageError("chorus-topo", "--svg", "--svg needs a value");
}

TEST(TopoOptions, QuietLeavesOutTheDiscoveryNotes) {
  const Result r = run("chorus-topo", "-q", false);
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.text.find("topology from discovered"), std::string::npos) << r.text;
  EXPECT_EQ(r.text.find("discovery notes"), std::string::npos) << r.text;
}

TEST(TraceOptions, BadValues) {
  expectUsageError("chorus-trace", "-o", "--output needs a value");
  expectUsageError("chorus-trace", "", "dumps is required");
}

TEST(TuneOptions, BadValues) {
  expectUsageError("chorus-tune", "--out", "--out needs a value");
  expectUsageError("chorus-tune", "--quick=maybe",
                   "bad value 'maybe' for --quick: a flag takes no value (or true/false)");
}

TEST(TrainOptions, BadValues) {
  expectUsageError("chorus-train", "--strategy fsdp",
                   "bad value 'fsdp' for --strategy: wants ddp, zero, tensor, pipeline or hybrid");
  expectUsageError("chorus-train", "--hidden=512,0",
                   "bad value '512,0' for --hidden: wants widths of 1..65536 separated by commas, "
                   "e.g. 512,256");
  expectUsageError("chorus-train", "--epochs 0",
                   "bad value '0' for --epochs: wants a whole number in 1..2147483647");
  expectUsageError("chorus-train", "--lr", "--lr needs a value");
}

}  // namespace
