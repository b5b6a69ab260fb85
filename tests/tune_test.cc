// chorus-tune, run for real under chorus-run: a --quick calibration must exit 0 and write a
// tuning file that loads, holds finite positive figures that are not the built-in defaults,
// and that a communicator accepts through Config::tuneFile (what CHORUS_TUNE_FILE sets).
// Nothing here asserts a timing: the figures are this machine's and only their shape is checked.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "core/comm_internals.h"
#include "harness/bin_dir.h"
#include "harness/multirank.h"
#include "tools/tune/memory.h"
#include "tools/tune/receive_reduce.h"
#include "topo/topology.h"

namespace chorus {
namespace {

using topo::LinkParams;
using topo::PathClass;
using topo::Topology;

using chorus::test::binDir;

struct Result {
  int code = -1;
  std::string out;  // stdout and stderr together
};

// Runs a shell command with a time limit, so a hang fails the test instead of stalling it.
Result run(const std::string& cmd) {
  Result r;
  FILE* p = popen(("timeout 60 " + cmd + " 2>&1").c_str(), "r");
  if (!p) return r;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) r.out.append(buf, n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

Result tune(int ranks, const std::string& args) {
  return run(binDir() + "/chorus-run -n " + std::to_string(ranks) + " --no-tag-output -- " +
             binDir() + "/chorus-tune " + args);
}

std::string tempPath() {
  char path[] = "/tmp/chorus-tune-test-XXXXXX";
  const int fd = mkstemp(path);
  if (fd >= 0) close(fd);
  return path;
}

bool finitePositive(double v) {
  return std::isfinite(v) && v > 0;
}

TEST(TuneTool, QuickRunWritesATuningFileACommunicatorLoads) {
  const std::string file = tempPath();
  const Result r = tune(2, "--quick --out " + file);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("estimates (written to " + file), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("measured_us"), std::string::npos) << r.out;  // the fit table

  std::ifstream f(file);
  std::stringstream text;
  text << f.rdbuf();
  // JSON (docs/json.md): the run, the raw figures and the estimates the library loads.
  const nlohmann::json doc = nlohmann::json::parse(text.str(), nullptr, false);
  ASSERT_TRUE(doc.is_object()) << text.str();
  EXPECT_EQ(doc.value("chorus_tuning", 0), 1) << text.str();
  EXPECT_EQ(doc.value("run", "").rfind("chorus-tune on ", 0), 0u) << text.str();
  const std::string measured = doc.value("measured", nlohmann::json::array()).dump();

  Topology t;
  ASSERT_TRUE(topo::loadEstimatesFile(file, &t).ok()) << text.str();
  EXPECT_TRUE(finitePositive(t.stepOverheadUs)) << t.stepOverheadUs;
  EXPECT_TRUE(finitePositive(t.hostReduceGBs)) << t.hostReduceGBs;
  EXPECT_NE(t.stepOverheadUs, Topology().stepOverheadUs);
  EXPECT_NE(t.hostReduceGBs, Topology().hostReduceGBs);
  // One host: the class of ranks 0-1 is host_bridge (cross_socket on a box that spreads them).
  ASSERT_EQ(t.links.size(), 1u) << text.str();
  const auto [cls, link] = *t.links.begin();
  EXPECT_TRUE(cls == PathClass::HostBridge || cls == PathClass::CrossSocket) << text.str();
  EXPECT_TRUE(finitePositive(link.latencyUs)) << link.latencyUs;
  EXPECT_TRUE(finitePositive(link.bandwidthGBs)) << link.bandwidthGBs;
  EXPECT_NE(link, topo::defaultLink(cls));
  // The raw figures behind the reducer and memory estimates are kept beside them.
  EXPECT_NE(measured.find("2-rank allreduce forced to one_shot"), std::string::npos) << measured;
  EXPECT_NE(measured.find("copy on every rank at once"), std::string::npos) << measured;
  if (t.missGBs > 0) {  // a --quick run may stop before the time per byte rises
    EXPECT_TRUE(finitePositive(t.cacheMiB)) << text.str();
    EXPECT_GE(t.allMissMiB, t.cacheMiB) << text.str();
  }

  const double step = t.stepOverheadUs;
  const LinkParams want = link;
  auto results = test::runRanks(
      2,
      [&](test::RankContext& ctx) {
        Config c;
        if (!Config::fromEnvironment(&c).ok()) return 2;
        c.tuneFile = file;
        auto comm = ctx.connect(&c);
        if (!comm) return 3;
        const Topology& got = CommInternals::topology(*comm);
        if (got.stepOverheadUs != step || got.link(cls) != want) {
          ctx.report("tuning not applied: %s", topo::formatEstimates(got).c_str());
          return 4;
        }
        float x = 1, y = 0;
        Status st = comm->allReduce(&x, &y, 1, DataType::Float32, RedOp::Sum);
        if (!st.ok() || y != 2) {
          ctx.report("allreduce with the tuning file: %s, %g", st.toString().c_str(), y);
          return 5;
        }
        return 0;
      },
      30);
  EXPECT_EQ(test::describeFailures(results), "");
  unlink(file.c_str());
}

// Over TCP a one_shot allreduce times the network stack, not the receive-reduce: the reduce line
// then carries the reducer on local arrays, and the file says why.
TEST(TuneTool, OverTcpTheReducerRateIsTheLocalOne) {
  const std::string file = tempPath();
  const Result r =
      run("env CHORUS_TRANSPORT=tcp " + binDir() + "/chorus-run -n 2 --no-tag-output -- " +
          binDir() + "/chorus-tune --quick --out " + file);
  ASSERT_EQ(r.code, 0) << r.out;
  std::ifstream f(file);
  std::stringstream text;
  text << f.rdbuf();
  EXPECT_NE(text.str().find("one_shot (float32 sum): not run (ranks 0-1 do not share memory"),
            std::string::npos)
      << text.str();
  const size_t at = text.str().find("on local arrays, 16 MiB in place: ");
  ASSERT_NE(at, std::string::npos) << text.str();
  const double local = std::stod(text.str().substr(at + 34));
  Topology t;
  ASSERT_TRUE(topo::loadEstimatesFile(file, &t).ok()) << text.str();
  EXPECT_NEAR(t.hostReduceGBs, local, 0.001) << text.str();
  unlink(file.c_str());
}

// The memory fit, on the curve this VM measured: flat to 64 MiB, rising to 256 MiB, flat after.
TEST(MemoryFit, FindsWhereMissesBeginAndWhatTheyCost) {
  const size_t mib = size_t(1) << 20;
  tune::MemoryFit f;
  f.points = {{16 * mib, 0.065},  {32 * mib, 0.066}, {64 * mib, 0.068}, {128 * mib, 0.10},
              {256 * mib, 0.146}, {512 * mib, 0.15}, {1024 * mib, 0.15}};
  tune::fitMemory(&f);
  ASSERT_TRUE(f.knee);
  EXPECT_EQ(f.cacheMiB, 64);
  EXPECT_EQ(f.allMissMiB, 256);
  // A copied byte that misses is three bytes of memory traffic; 0.085 ns more per copied byte.
  EXPECT_NEAR(f.missGBs, 3 / (0.15 - 0.065), 1e-9);
  EXPECT_NE(tune::describeMemory(f).find("128 MiB 0.100 ns/B"), std::string::npos);

  f.points = {{16 * mib, 0.065}, {32 * mib, 0.066}, {64 * mib, 0.07}, {128 * mib, 0.072}};
  tune::fitMemory(&f);
  EXPECT_FALSE(f.knee) << "no rise: the cache may be larger than what was tried";
}

// The reducer's rate is fitted through the model: walk one_shot at a known rate, and the fit
// finds that rate again from the times alone.
TEST(ReceiveReduceFit, RecoversTheRateTheModelWasWalkedWith) {
  Topology t;
  ASSERT_TRUE(topo::parseTopology("chorus-topology 1\nreduce host_gbs=7\n"
                                  "link host_bridge latency_us=0.5 bandwidth_gbs=12\n"
                                  "host h sockets=1 cores_per_socket=2\nend\nranks per_host 2\n",
                                  "test", &t)
                  .ok());
  const CostParams p;
  std::vector<std::pair<size_t, double>> measured;
  for (size_t bytes : tune::receiveReduceSizes())
    measured.push_back({bytes, tune::predictOneShot(t, p, bytes)});
  t.hostReduceGBs = 20;
  EXPECT_NEAR(tune::fitReduceRate(t, p, measured), 7, 0.01);
}

TEST(TuneTool, OneRankIsToldHowToLaunchIt) {
  const Result r = tune(1, "--quick --out /dev/null");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("chorus-run -n 2"), std::string::npos) << r.out;
}

TEST(TuneTool, HelpAndBadOptions) {
  Result r = run(binDir() + "/chorus-tune --help");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("--quick"), std::string::npos) << r.out;
  r = run(binDir() + "/chorus-tune --out");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("usage:"), std::string::npos) << r.out;
}

TEST(TuneTool, UnwritableOutputIsAnErrorNamingTheFile) {
  const Result r = tune(2, "--quick --out /nonexistent-dir/chorus.tune");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("/nonexistent-dir/chorus.tune"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace chorus
