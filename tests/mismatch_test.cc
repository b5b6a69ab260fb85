// Mismatched collective calls are found in the call itself, by every rank that took part in an
// exchange with a rank that differs: receivers by the headers, ranks that only send by their
// peers' receipts (core/executor_receipts.cc). No such rank returns success, and every error is
// InvalidUsage naming the other rank and what differed. Over shared memory and TCP.
#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include "chorus/communicator.h"
#include "chorus/group.h"
#include "harness/multirank.h"

namespace chorus {
namespace {

using test::RankContext;
using test::RankResult;

// One collective call that rank `differs` makes differently from the others.
struct Variant {
  const char* name;
  int ranks;
  // Makes the call as `rank` does.
  Status (*call)(Communicator& c, int rank, std::vector<float>& a, std::vector<float>& b);
  int differs;
  const char* mustName;  // a fragment every error must contain, besides the rank
};

void PrintTo(const Variant& v, std::ostream* os) {
  *os << v.name;
}

constexpr size_t kElems = 1 << 15;  // 128 KiB of floats: several chunks on every transport

std::vector<Variant> variants() {
  return {
      {"BroadcastRoots", 2,
       [](Communicator& c, int r, std::vector<float>& a, std::vector<float>&) {
         return c.broadcast(a.data(), a.data(), kElems, DataType::Float32, r);  // each its own
       },
       1, "root="},
      {"BroadcastCounts", 2,
       [](Communicator& c, int r, std::vector<float>& a, std::vector<float>&) {
         return c.broadcast(a.data(), a.data(), r ? kElems / 2 : kElems, DataType::Float32, 0);
       },
       1, "count="},
      {"ReduceCountsOnTheLeaf", 2,
       [](Communicator& c, int r, std::vector<float>& a, std::vector<float>& b) {
         return c.reduce(a.data(), b.data(), r ? kElems / 4 : kElems, DataType::Float32, RedOp::Sum,
                         0);
       },
       1, "count="},
      {"ReduceRoots", 2,
       [](Communicator& c, int r, std::vector<float>& a, std::vector<float>& b) {
         return c.reduce(a.data(), b.data(), kElems, DataType::Float32, RedOp::Sum, r);
       },
       0, "root="},
      {"ScatterRoots", 2,
       [](Communicator& c, int r, std::vector<float>& a, std::vector<float>& b) {
         return c.scatter(a.data(), b.data(), kElems / 2, DataType::Float32, r);
       },
       1, "root="},
      {"GatherTypes", 2,
       [](Communicator& c, int r, std::vector<float>& a, std::vector<float>& b) {
         return c.gather(a.data(), b.data(), kElems / 2, r ? DataType::Int32 : DataType::Float32,
                         0);
       },
       1, "int32"},
      {"BroadcastRootOnOneOfFour", 4,
       [](Communicator& c, int r, std::vector<float>& a, std::vector<float>&) {
         return c.broadcast(a.data(), a.data(), kElems, DataType::Float32, r == 3 ? 3 : 0);
       },
       3, "root="},
      {"AllGatherCountOnOneOfFour", 4,
       [](Communicator& c, int r, std::vector<float>& a, std::vector<float>& b) {
         return c.allGather(a.data(), b.data(), r == 2 ? kElems / 8 : kElems / 4,
                            DataType::Float32);
       },
       2, "count="},
  };
}

// The environment's settings with a short deadline (a mismatch must not wait for the default 300
// s).
Config testConfig(const std::string& transport, int checkCalls) {
  Config config;
  EXPECT_TRUE(Config::fromEnvironment(&config).ok());
  config.transport = transport;
  config.checkCalls = checkCalls;
  config.timeoutSec = 20;
  return config;
}

class Mismatch : public ::testing::TestWithParam<std::tuple<Variant, const char*>> {};

// Every rank reports its call's status and, after it, a barrier's: a rank may legitimately
// finish a call whose own exchanges all matched (its partners agreed with it), but then the job
// knows, and its next call fails.
TEST_P(Mismatch, NoRankThatExchangedWithTheOddOneSucceeds) {
  const Variant v = std::get<0>(GetParam());
  const std::string transport = std::get<1>(GetParam());
  auto results = test::runRanks(v.ranks, [&](RankContext& ctx) {
    const Config config = testConfig(transport, 1);
    auto comm = ctx.connect(&config);
    if (!comm) return 1;
    std::vector<float> a(kElems, 1.0f + float(ctx.rank)), b(kElems * size_t(v.ranks), 0.0f);
    Status st = v.call(*comm, ctx.rank, a, b);
    ctx.report("call: %s", st.toString().c_str());
    Status next = comm->barrier();
    ctx.report("next: %s", next.toString().c_str());
    return next.ok() ? 2 : 0;
  });
  for (const RankResult& r : results) {
    SCOPED_TRACE("rank " + std::to_string(r.rank) + ": " + r.report);
    ASSERT_TRUE(r.ok());
    const bool involved = v.ranks == 2 || r.rank == v.differs || r.rank == 0;
    if (r.report.find("call: OK") != std::string::npos) {
      EXPECT_FALSE(involved) << "a rank that exchanged data with the odd rank returned success";
      continue;
    }
    EXPECT_NE(r.report.find("call: InvalidUsage"), std::string::npos);
    // The odd rank names whichever partner found it first; the others name the odd rank.
    if (involved && r.rank != v.differs) {
      EXPECT_NE(r.report.find("rank " + std::to_string(v.differs)), std::string::npos)
          << "the error must name the rank that differs";
    }
    EXPECT_NE(r.report.find(v.mustName), std::string::npos) << "the error must say what differed";
  }
}

std::string variantName(const ::testing::TestParamInfo<Mismatch::ParamType>& info) {
  return std::string(std::get<0>(info.param).name) + "_" + std::get<1>(info.param);
}

INSTANTIATE_TEST_SUITE_P(Calls, Mismatch,
                         ::testing::Combine(::testing::ValuesIn(variants()),
                                            ::testing::Values("shm", "tcp")),
                         variantName);

class MismatchAgreed : public Mismatch {};

// CHORUS_CHECK_CALLS=2: the ranks agree on every collective first, so every rank, bystanders
// included, returns InvalidUsage naming the odd rank and what it called; no data moved, so the
// communicator goes on, and the next (matching) call sums right.
TEST_P(MismatchAgreed, EveryRankRefusesTheCallAndTheCommunicatorGoesOn) {
  const Variant v = std::get<0>(GetParam());
  const std::string transport = std::get<1>(GetParam());
  auto results = test::runRanks(v.ranks, [&](RankContext& ctx) {
    const Config config = testConfig(transport, 2);
    auto comm = ctx.connect(&config);
    if (!comm) return 1;
    std::vector<float> a(kElems, 1.0f + float(ctx.rank)), b(kElems * size_t(v.ranks), 0.0f);
    Status st = v.call(*comm, ctx.rank, a, b);
    ctx.report("call: %s", st.toString().c_str());
    float x = 1.0f;
    Status next = comm->allReduce(&x, &x, 1, DataType::Float32, RedOp::Sum);
    ctx.report("; next: %s, sum %g", next.toString().c_str(), double(x));
    return next.ok() && x == float(v.ranks) ? 0 : 2;
  });
  for (const RankResult& r : results) {
    SCOPED_TRACE("rank " + std::to_string(r.rank) + ": " + r.report);
    EXPECT_TRUE(r.ok()) << "the communicator must stay usable after an agreed refusal";
    EXPECT_NE(r.report.find("call: InvalidUsage"), std::string::npos);
    EXPECT_NE(r.report.find("found by every rank"), std::string::npos);
    EXPECT_NE(r.report.find("rank " + std::to_string(v.differs) + " called"), std::string::npos)
        << "every rank's error must name the rank that differs";
    EXPECT_NE(r.report.find(v.mustName), std::string::npos) << "the error must say what differed";
  }
}

INSTANTIATE_TEST_SUITE_P(Calls, MismatchAgreed,
                         ::testing::Combine(::testing::ValuesIn(variants()),
                                            ::testing::Values("shm", "tcp")),
                         variantName);

TEST(MismatchAgreedGroups, SettingsOtherThanZeroOneTwoAreRefused) {
  Config config;
  config.checkCalls = 3;
  const Status st = config.validate();
  EXPECT_EQ(st.code(), StatusCode::InvalidArgument);
  EXPECT_NE(st.message().find("CHORUS_CHECK_CALLS must be 0 (off), 1"), std::string::npos)
      << st.toString();
  config.checkCalls = 2;
  EXPECT_TRUE(config.validate().ok());
}

// In a group each collective is agreed on as it comes, as outside one: rank 2's second
// allreduce differs, so every rank's groupEnd fails after the first allreduce ran and before
// the second moved anything. A rank may group calls that the others make one by one; and
// point-to-point calls in a group are not agreed on (they pair with one peer).
TEST(MismatchAgreedGroups, ACollectiveThatDiffersInAGroupIsRefusedEverywhere) {
  auto results = test::runRanks(3, [](RankContext& ctx) {
    const Config config = testConfig("auto", 2);
    auto comm = ctx.connect(&config);
    if (!comm) return 1;
    float x = 1.0f, y[2] = {1.0f, 1.0f};
    groupStart();
    (void)comm->allReduce(&x, &x, 1, DataType::Float32, RedOp::Sum);
    (void)comm->allReduce(y, y, ctx.rank == 2 ? 2 : 1, DataType::Float32, RedOp::Sum);
    Status st = groupEnd();
    ctx.report("group: %s", st.toString().c_str());
    if (st.code() != StatusCode::InvalidUsage || x != 3.0f || y[0] != 1.0f ||
        st.message().find("rank 2 called allreduce(count=2") == std::string::npos)
      return 2;
    // Rank 0 groups what ranks 1 and 2 call one by one, with a ring of sends beside them.
    const int to = (ctx.rank + 1) % 3, from = (ctx.rank + 2) % 3;
    float sent = float(ctx.rank), got = -1;
    if (ctx.rank == 0) groupStart();
    Status a = comm->allReduce(&x, &x, 1, DataType::Float32, RedOp::Sum);
    Status b = comm->allReduce(y, y, 2, DataType::Float32, RedOp::Sum);
    if (ctx.rank == 0) a = groupEnd();
    groupStart();
    (void)comm->send(&sent, 1, DataType::Float32, to);
    (void)comm->recv(&got, 1, DataType::Float32, from);
    Status c = groupEnd();
    ctx.report("; next: %s %s %s, x %g, y %g, got %g", a.toString().c_str(), b.toString().c_str(),
               c.toString().c_str(), double(x), double(y[1]), double(got));
    return a.ok() && b.ok() && c.ok() && x == 9.0f && y[1] == 3.0f && got == float(from) ? 0 : 3;
  });
  EXPECT_EQ(test::describeFailures(results), "");
}

// CHORUS_CHECK_CALLS=0 drops the ready notices: two ranks that each broadcast as root return
// success (what the check is for), and the mismatch surfaces at the next call instead.
TEST(MismatchUnchecked, TwoRootsReturnAndTheNextCallFails) {
  auto results = test::runRanks(2, [](RankContext& ctx) {
    const Config config = testConfig("auto", 0);
    auto comm = ctx.connect(&config);
    if (!comm) return 1;
    std::vector<float> a(1024, 1.0f);
    Status st = comm->broadcast(a.data(), a.data(), a.size(), DataType::Float32, ctx.rank);
    Status next = comm->barrier();
    ctx.report("call: %s; next: %s", st.toString().c_str(), next.toString().c_str());
    return st.ok() && next.code() == StatusCode::InvalidUsage ? 0 : 2;
  });
  EXPECT_EQ(test::describeFailures(results), "");
}

// The setting must agree: a rank that sends notices to one that does not read them would break
// the next call, so communicators refuse to form.
TEST(MismatchUnchecked, RanksMustAgreeOnTheSetting) {
  auto results = test::runRanks(2, [](RankContext& ctx) {
    const Config config = testConfig("auto", ctx.rank == 0 ? 1 : 0);
    std::unique_ptr<Communicator> comm;
    Status st = Communicator::create(ctx.id, ctx.rank, ctx.size, config, &comm);
    ctx.report("%s", st.toString().c_str());
    return !st.ok() && st.message().find("CHORUS_CHECK_CALLS") != std::string::npos ? 0 : 2;
  });
  EXPECT_EQ(test::describeFailures(results), "");
}

}  // namespace
}  // namespace chorus
