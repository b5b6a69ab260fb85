// The cost model, the selector, CHORUS_ALGO and tuning files: predictions follow alpha-beta
// arithmetic where it is exact, scale the way each algorithm should, every rank picks the same
// algorithm, an override is obeyed or refused with a clear error (in a real job too), and a
// tuning file reaches every rank.
#include "tune/selector.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "chorus/communicator.h"
#include "core/comm_internals.h"
#include "harness/multirank.h"
#include "topo/estimates_json.h"
#include "tune/algo_override.h"
#include "tune/cost_model.h"

namespace chorus {
namespace {

using topo::LinkParams;
using topo::PathClass;
using topo::Topology;

// `hosts` hosts of `perHost` host-memory ranks, with plenty of cores and round numbers.
Topology flatTopology(int hosts, int perHost) {
  std::string text =
      "chorus-topology 1\nreduce host_gbs=10\nexecutor step_us=0\n"
      "link self latency_us=0 bandwidth_gbs=100\n"
      "link host_bridge latency_us=1 bandwidth_gbs=10\n"
      "link network latency_us=10 bandwidth_gbs=1\n"
      "host h count=" +
      std::to_string(hosts) + " sockets=1 cores_per_socket=64\nend\nranks per_host " +
      std::to_string(perHost) + "\n";
  Topology t;
  Status st = topo::parseTopology(text, "test", &t);
  EXPECT_TRUE(st.ok()) << st.toString();
  return t;
}

OpDesc allreduce(uint64_t count) {
  OpDesc d;
  d.coll = Collective::AllReduce;
  d.count = count;
  return d;
}

double predict(const char* algo, const OpDesc& d, const Topology& t, CostParams p = {}) {
  const int size = int(t.ranks.size());
  const Algorithm* a = findAlgorithm(d.coll, algo);
  EXPECT_NE(a, nullptr) << algo;
  RankLayout l = layoutFromTopology(t, size);
  return predictTime(d, buildAllRanks(*a, d, size, l), t, p);
}

TEST(CostModel, OneMessageIsLatencyPlusTwoCopies) {
  // Two ranks, one chunk each way: send copy (1 KB at 10 GB/s = 0.1 us), 1 us latency,
  // receive-reduce (0.1 us at 10 GB/s). Recursive doubling at 2 ranks is exactly that.
  Topology t = flatTopology(1, 2);
  EXPECT_NEAR(predict("recursive_doubling", allreduce(250), t), 1.2, 1e-6);
}

TEST(CostModel, RingApproachesItsBandwidthBound) {
  // A pipelined ring moves 2(n-1)/n of the vector through every rank; each byte is copied in
  // and read out (or reduced) at 10 GB/s on the engines, so per rank ~ 2 * 2(n-1)/n * bytes/bw.
  Topology t = flatTopology(1, 8);
  const uint64_t count = 64 << 20;  // 256 MiB of float32
  const double bytes = count * 4.0;
  const double bound = 2 * 2.0 * 7 / 8 * bytes / 10e3;
  const double got = predict("ring", allreduce(count), t);
  EXPECT_GT(got, bound * 0.95);
  EXPECT_LT(got, bound * 1.25);
}

TEST(CostModel, LatencyAlgorithmsWinSmallAndBandwidthAlgorithmsWinLarge) {
  Topology t = flatTopology(16, 1);  // 16 hosts on the network
  EXPECT_LT(predict("recursive_doubling", allreduce(2), t), predict("ring", allreduce(2), t));
  EXPECT_LT(predict("double_binary_tree", allreduce(2), t), predict("ring", allreduce(2), t));
  const OpDesc big = allreduce(16 << 20);
  EXPECT_LT(predict("ring", big, t), predict("recursive_doubling", big, t));
  EXPECT_LT(predict("rabenseifner", big, t), predict("recursive_doubling", big, t));
}

TEST(CostModel, HierarchicalWinsAcrossHostsWhenTheNetworkIsSlow) {
  Topology t = flatTopology(4, 8);
  const OpDesc big = allreduce(8 << 20);
  EXPECT_LT(predict("hierarchical", big, t), predict("ring", big, t));
}

TEST(CostModel, NeverFasterForMoreBytes) {
  Topology t = flatTopology(2, 3);
  for (const Algorithm* a : algorithmsFor(Collective::AllReduce)) {
    double last = 0;
    for (uint64_t n = 1; n <= (1u << 22); n *= 8) {
      double us = predict(a->name, allreduce(n), t);
      ASSERT_TRUE(std::isfinite(us)) << a->name << " n=" << n;
      EXPECT_GE(us, last * 0.999) << a->name << " n=" << n;
      last = us;
    }
  }
}

TEST(CostModel, EveryAlgorithmFinishesAtOddRankCounts) {
  for (int size : {1, 2, 3, 5, 7, 12}) {
    Topology t = flatTopology(1, size);
    RankLayout l = layoutFromTopology(t, size);
    for (const Algorithm& a : allAlgorithms()) {
      if (a.coll == Collective::Send || a.coll == Collective::Recv) continue;
      OpDesc d;
      d.coll = a.coll;
      d.count = 1000;
      d.root = a.coll == Collective::Broadcast || a.coll == Collective::Reduce ||
                       a.coll == Collective::Gather || a.coll == Collective::Scatter
                   ? size / 2
                   : -1;
      if (a.why(d, size, l)) continue;
      double us = predictTime(d, buildAllRanks(a, d, size, l), t, {});
      EXPECT_TRUE(std::isfinite(us) && us >= 0) << a.name << " " << d.toString() << " " << size;
    }
  }
}

TEST(CostModel, AReceiveNobodySendsNeverFinishes) {
  Topology t = flatTopology(1, 2);
  std::vector<Schedule> s(2);
  s[1].recv(0, output(), 10);
  EXPECT_TRUE(std::isinf(predictTime(allreduce(10), s, t, {})));
}

TEST(CostModel, OversubscriptionStretchesTime) {
  Topology roomy = flatTopology(1, 4), crowded = roomy;
  crowded.hosts[0].coresPerSocket = 2;
  EXPECT_NEAR(predict("ring", allreduce(1 << 20), crowded),
              2 * predict("ring", allreduce(1 << 20), roomy), 1e-6);
}

TEST(CostModel, MissFractionRisesFromTheCacheToAllMiss) {
  Topology t;
  t.cacheMiB = 64, t.allMissMiB = 256, t.missGBs = 10;
  const double mib = 1 << 20;
  EXPECT_EQ(t.missFraction(64 * mib), 0);
  EXPECT_NEAR(t.missFraction(128 * mib), 0.5, 1e-12);  // halfway in log(bytes)
  EXPECT_EQ(t.missFraction(256 * mib), 1);
  EXPECT_EQ(t.missFraction(1e12), 1);
  t.missGBs = 0;
  EXPECT_EQ(t.missFraction(1e12), 0) << "without a memory line nothing misses";
}

// Past the cache the traffic decides between algorithms that move the same bytes (a missed
// write counts twice: read for ownership, write-back). With 4 ranks, per rank, in vectors:
// - ring: 0.25 read by the first send, three reduces that each read input and write output no
//   step has touched (3 x 0.75), five forwarding sends that read a segment finished a whole
//   step earlier (a step's sends follow all of the previous step's on the channel: 5 x 0.25),
//   and three allgather writes (3 x 0.5): 5.25.
// - two_shot: 0.75 of sends, the first reduce (0.75), three allgather writes (1.5); its second
//   and third reduces work on the segment the first just wrote, and its allgather sends read
//   what was just reduced, in cache as far as the walk keeps them a piece apart: 3 to 4.
TEST(CostModel, PastTheCacheTwoShotMissesLessThanRing) {
  Topology t = flatTopology(1, 4);
  const OpDesc big = allreduce(64 << 20);  // 256 MiB per rank
  const double ringHit = predict("ring", big, t), twoShotHit = predict("two_shot", big, t);
  EXPECT_NEAR(twoShotHit / ringHit, 1, 0.01) << "in cache they cost the same";
  ASSERT_TRUE(
      topo::applyEstimates("memory cache_mib=64 all_miss_mib=256 miss_gbs=10\n", "m", &t).ok());
  const double vectorUs = 256.0 * (1 << 20) / 10e3;  // one vector's bytes missed at 10 GB/s
  EXPECT_NEAR((predict("ring", big, t) - ringHit) / vectorUs, 5.25, 0.01);
  const double twoShot = (predict("two_shot", big, t) - twoShotHit) / vectorUs;
  EXPECT_GE(twoShot, 3 - 1e-9);
  EXPECT_LE(twoShot, 4);
  // A call whose buffers fit in the cache costs what it did.
  EXPECT_EQ(predict("ring", allreduce(1 << 16), t),
            predict("ring", allreduce(1 << 16), flatTopology(1, 4)));
}

TEST(Selector, PicksTheMinimumAndRanksTheRest) {
  Topology t = flatTopology(16, 1);
  RankLayout l = layoutFromTopology(t, 16);
  for (uint64_t n : {1ull, 1000ull, 1ull << 24}) {
    Selection sel;
    ASSERT_TRUE(selectAlgorithm(allreduce(n), 16, l, t, {}, {}, &sel).ok());
    EXPECT_FALSE(sel.forced);
    ASSERT_EQ(sel.candidates.size(), algorithmsFor(Collective::AllReduce).size());
    EXPECT_EQ(sel.chosen, sel.candidates[0].algorithm);
    for (size_t i = 1; i < sel.candidates.size(); ++i)
      EXPECT_LE(sel.candidates[i - 1].predictedUs, sel.candidates[i].predictedUs);
    EXPECT_NE(sel.describe().find("(picked)"), std::string::npos);
  }
}

TEST(Selector, UnavailableAlgorithmsAreListedLastWithTheReason) {
  Topology t = flatTopology(1, 3);
  t.ranks[2].host = 0;
  RankLayout l = RankLayout::fromHostIds({0, 0, 1});  // 2 + 1: no hierarchical
  Selection sel;
  ASSERT_TRUE(selectAlgorithm(allreduce(100), 3, l, t, {}, {}, &sel).ok());
  EXPECT_EQ(sel.candidates.back().algorithm->name, std::string("hierarchical"));
  EXPECT_NE(sel.candidates.back().unavailable, nullptr);
  EXPECT_NE(sel.describe().find("n/a (needs the same number"), std::string::npos);
}

TEST(AlgoOverride, ParsesAndRefusesWithTheChoices) {
  AlgoOverride o;
  ASSERT_TRUE(AlgoOverride::parse("allreduce=ring,allgather=bruck", &o).ok());
  EXPECT_EQ(o.forCollective(Collective::AllReduce)->name, std::string("ring"));
  EXPECT_EQ(o.forCollective(Collective::AllGather)->name, std::string("bruck"));
  EXPECT_EQ(o.forCollective(Collective::Broadcast), nullptr);
  ASSERT_TRUE(AlgoOverride::parse("", &o).ok());
  EXPECT_TRUE(o.forced.empty());

  Status st = AlgoOverride::parse("allreduce=warp", &o);
  EXPECT_EQ(st.code(), StatusCode::InvalidArgument);
  EXPECT_NE(st.message().find("no algorithm 'warp'"), std::string::npos) << st.toString();
  EXPECT_NE(st.message().find("rabenseifner"), std::string::npos) << "lists the choices";
  st = AlgoOverride::parse("allsum=ring", &o);
  EXPECT_NE(st.message().find("unknown collective 'allsum'"), std::string::npos);
  st = AlgoOverride::parse("ring", &o);
  EXPECT_NE(st.message().find("collective=algorithm"), std::string::npos);
}

TEST(AlgoOverride, ABadNameFailsConfiguration) {
  setenv("CHORUS_ALGO", "broadcast=ring", 1);
  Config c;
  Status st = Config::fromEnvironment(&c);
  unsetenv("CHORUS_ALGO");
  EXPECT_EQ(st.code(), StatusCode::InvalidArgument);
  EXPECT_NE(st.message().find("binomial_tree"), std::string::npos) << st.toString();
}

// NCCL_* names count only for the NCCL face, and only where Chorus's own name is unset.
TEST(AlgoOverride, NcclNamesAreReadOnlyWhenAskedAndChorusWins) {
  setenv("NCCL_ALGO", "allreduce=ring", 1);
  setenv("NCCL_COMM_BLOCKING", "0", 1);
  Config plain, nccl, both;
  ASSERT_TRUE(Config::fromEnvironment(&plain).ok());
  ASSERT_TRUE(Config::fromEnvironment(&nccl, Config::Names::ChorusThenNccl).ok());
  setenv("CHORUS_ALGO", "allreduce=recursive_doubling", 1);
  ASSERT_TRUE(Config::fromEnvironment(&both, Config::Names::ChorusThenNccl).ok());
  unsetenv("CHORUS_ALGO");
  unsetenv("NCCL_ALGO");
  unsetenv("NCCL_COMM_BLOCKING");
  EXPECT_EQ(plain.algo, "");
  EXPECT_TRUE(plain.ncclCommBlocking);
  EXPECT_EQ(nccl.algo, "allreduce=ring");
  EXPECT_FALSE(nccl.ncclCommBlocking);
  EXPECT_EQ(both.algo, "allreduce=recursive_doubling");
}

TEST(AlgoOverride, ForcedAlgorithmIsReturnedWithoutPredicting) {
  Topology t = flatTopology(1, 4);
  AlgoOverride o;
  ASSERT_TRUE(AlgoOverride::parse("allreduce=two_shot", &o).ok());
  Selection sel;
  ASSERT_TRUE(selectAlgorithm(allreduce(5), 4, layoutFromTopology(t, 4), t, {}, o, &sel).ok());
  EXPECT_TRUE(sel.forced);
  EXPECT_EQ(sel.chosen->name, std::string("two_shot"));
}

TEST(Tuning, EstimatesLayOverATopologyAndRefuseOtherLines) {
  Topology t = flatTopology(1, 2);
  ASSERT_TRUE(topo::applyEstimates("chorus-topology 1\nreduce host_gbs=7.5\nexecutor step_us=0.4\n"
                                   "link host_bridge latency_us=0.6 bandwidth_gbs=9\n",
                                   "tune", &t)
                  .ok());
  EXPECT_EQ(t.hostReduceGBs, 7.5);
  EXPECT_EQ(t.stepOverheadUs, 0.4);
  EXPECT_EQ(t.link(PathClass::HostBridge), (LinkParams{0.6, 9}));
  EXPECT_EQ(t.hosts.size(), 1u) << "the machine itself is untouched";
  ASSERT_TRUE(
      topo::applyEstimates("memory cache_mib=64 all_miss_mib=256 miss_gbs=35\n", "tune", &t).ok());
  EXPECT_EQ(t.cacheMiB, 64);
  EXPECT_EQ(t.allMissMiB, 256);
  EXPECT_EQ(t.missGBs, 35);
  Status bad = topo::applyEstimates("memory cache_mib=64 all_miss_mib=32 miss_gbs=1\n", "m", &t);
  EXPECT_NE(bad.message().find("all_miss_mib must be >= cache_mib"), std::string::npos)
      << bad.toString();
  Topology before = t;
  Status st = topo::applyEstimates("reduce host_gbs=1\nhost x\nend\n", "tune.txt", &t);
  EXPECT_NE(st.message().find("tune.txt:2"), std::string::npos) << st.toString();
  EXPECT_TRUE(t.sameAs(before)) << "a refused file changes nothing";
  // The estimates survive a topology dump and reload.
  Topology back;
  ASSERT_TRUE(topo::parseTopology(topo::formatTopology(t), "dump", &back).ok());
  EXPECT_TRUE(back.sameAs(t));
}

// chorus-tune writes JSON (docs/json.md); it lays over a topology as the lines do, and a
// refusal names the entry at fault and changes nothing.
TEST(Tuning, JsonTuningFilesSayTheSameAsTheLinesAndNameTheEntryAtFault) {
  Topology lines = flatTopology(1, 2);
  ASSERT_TRUE(
      topo::applyEstimates("reduce host_gbs=7.5\nexecutor step_us=0.4 device_message_kib=64\n"
                           "link host_bridge latency_us=0.6 bandwidth_gbs=9\n"
                           "memory cache_mib=64 all_miss_mib=256 miss_gbs=35\n",
                           "tune", &lines)
          .ok());
  Topology json = flatTopology(1, 2);
  const std::string text = topo::formatEstimatesJson(lines, "a test", {"one_way_8B_us=0.5"});
  ASSERT_TRUE(topo::applyEstimates(text, "tune.json", &json).ok()) << text;
  EXPECT_TRUE(json.sameAs(lines)) << text;
  EXPECT_NE(text.find("\"device_message_kib\": 64\n"), std::string::npos)
      << "integers stay" << text;

  const Topology before = json;
  auto refusal = [&](const std::string& file) {
    Status st = topo::applyEstimates(file, "t.json", &json);
    EXPECT_TRUE(json.sameAs(before)) << "a refused file changes nothing: " << file;
    return st.ok() ? std::string("accepted") : st.message();
  };
  const std::string head = "{\"chorus_tuning\": 1, \"estimates\": ";
  EXPECT_EQ(
      refusal(head + "{\"reduce\": {\"host_gbs\": \"fast\"}}}"),
      "t.json: estimates.reduce.host_gbs: expected a number (docs/json.md, \"Tuning files\")");
  EXPECT_EQ(refusal(head + "{\"links\": {\"warp\": {\"latency_us\": 1}}}}"),
            "t.json: estimates.links.warp: 'link' needs a path class");
  EXPECT_EQ(refusal(head + "{\"memory\": {\"cache_mib\": 64, \"all_miss_mib\": 8}}}"),
            "t.json: estimates.memory: all_miss_mib must be >= cache_mib");
  EXPECT_EQ(refusal(head + "{\"host\": {}}}"),
            "t.json: estimates.host: unknown estimate (reduce, executor, efficiency, memory, "
            "links) (docs/json.md, \"Tuning files\")");
  EXPECT_EQ(refusal("{\"chorus_tuning\": 2, \"estimates\": {}}"),
            "t.json: chorus_tuning: expected 1, the version of the format this library reads "
            "(docs/json.md, \"Tuning files\")");
  const std::string truncated =
      refusal("{\"chorus_tuning\": 1, \"estimates\": {\"reduce\": {\"host_gbs\": 3}");
  EXPECT_EQ(truncated.rfind("t.json: not valid JSON: ", 0), 0u) << truncated;
  EXPECT_NE(truncated.find("line 1, column 61"), std::string::npos) << truncated;
  const std::string overflow = refusal(head + "{\"reduce\": {\"host_gbs\": 1e999}}}");
  EXPECT_EQ(overflow.rfind("t.json: not valid JSON: ", 0), 0u) << overflow;
}

std::string writeTemp(const std::string& text) {
  char path[] = "/tmp/chorus-selector-XXXXXX";
  int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  FILE* f = fdopen(fd, "w");
  fputs(text.c_str(), f);
  fclose(f);
  return path;
}

// A real 3-rank job told (by a topology file) that ranks 0, 1 are on one host and 2 on another:
// forcing hierarchical allreduce is refused on every rank with the reason, nothing hangs, and
// the communicator still runs other calls; forcing one_shot runs it.
TEST(SelectorJob, ImpossibleOverrideIsAClearErrorOnEveryRank) {
  const std::string topoFile = writeTemp(
      "chorus-topology 1\nhost a sockets=1 cores_per_socket=8\nend\n"
      "host b sockets=1 cores_per_socket=8\nend\nrank 0 0 -1\nrank 0 0 -1\nrank 1 0 -1\n");
  auto results = test::runRanks(3, [&](test::RankContext& ctx) {
    Config c;
    if (!Config::fromEnvironment(&c).ok()) return 2;
    c.topoFile = topoFile;
    c.algo = "allreduce=hierarchical,allgather=bruck";
    auto comm = ctx.connect(&c);
    if (!comm) return 3;
    std::vector<float> x(64, 1.0f + ctx.rank), y(64);
    Status st = comm->allReduce(x.data(), y.data(), x.size(), DataType::Float32, RedOp::Sum);
    if (st.code() != StatusCode::InvalidArgument ||
        st.message().find("needs the same number of ranks on every host") == std::string::npos ||
        st.message().find("ring") == std::string::npos) {
      ctx.report("expected a refused override, got: %s", st.toString().c_str());
      return 4;
    }
    std::vector<float> all(64 * 3);
    st = comm->allGather(x.data(), all.data(), x.size(), DataType::Float32);
    if (!st.ok() || all[64 * 2] != 3.0f) {
      ctx.report("allgather after the refusal: %s", st.toString().c_str());
      return 5;
    }
    for (const auto& [desc, algorithm] : CommInternals::plannedAlgorithms(*comm))
      if (desc.coll == Collective::AllGather && algorithm != "bruck") {
        ctx.report("allgather ran %s, not the forced bruck", algorithm.c_str());
        return 6;
      }
    return 0;
  });
  unlink(topoFile.c_str());
  EXPECT_EQ(test::describeFailures(results), "");
}

TEST(SelectorJob, TuningFileReachesEveryRankAndAMissingOneIsNamed) {
  const std::string tune = writeTemp(
      "chorus-topology 1\nexecutor step_us=0.125\n"
      "link host_bridge latency_us=0.75 bandwidth_gbs=5\n");
  auto results = test::runRanks(2, [&](test::RankContext& ctx) {
    Config c;
    if (!Config::fromEnvironment(&c).ok()) return 2;
    c.tuneFile = tune;
    auto comm = ctx.connect(&c);
    if (!comm) return 3;
    const Topology& t = CommInternals::topology(*comm);
    if (t.stepOverheadUs != 0.125 || t.link(PathClass::HostBridge) != LinkParams{0.75, 5}) {
      ctx.report("tuning not applied: %s", topo::formatEstimates(t).c_str());
      return 4;
    }
    return 0;
  });
  EXPECT_EQ(test::describeFailures(results), "");
  unlink(tune.c_str());

  results = test::runRanks(2, [&](test::RankContext& ctx) {
    Config c;
    if (!Config::fromEnvironment(&c).ok()) return 2;
    c.tuneFile = "/nonexistent/chorus.tune";
    std::unique_ptr<Communicator> comm;
    Status st = Communicator::create(ctx.id, ctx.rank, ctx.size, c, &comm);
    if (st.ok() || st.message().find("/nonexistent/chorus.tune") == std::string::npos ||
        st.message().find("docs/topology.md") == std::string::npos) {
      ctx.report("expected an error naming the file, got: %s", st.toString().c_str());
      return 4;
    }
    return 0;
  });
  EXPECT_EQ(test::describeFailures(results), "");
}

}  // namespace
}  // namespace chorus
