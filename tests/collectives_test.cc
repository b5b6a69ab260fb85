// Every collective over real forked ranks on shared memory: rank counts 1..8, every dtype x op
// at small counts (0, 1, 7, 1023 and a count not divisible by the rank count), a selection of
// types and ops at 2^20+3, in-place and out-of-place, each rank checking its own result against
// a sequential reference. Again on 2 and 3 ranks with every output written around the caches.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "harness/collective_cases.h"
#include "harness/multirank.h"

namespace chorus::test {
namespace {

class Collectives : public ::testing::TestWithParam<std::tuple<int, Coll>> {};

std::string caseLabel(const ::testing::TestParamInfo<std::tuple<int, Coll>>& info) {
  return std::string(kCollNames[int(std::get<1>(info.param))]) + "_" +
         std::to_string(std::get<0>(info.param)) + "ranks";
}

// Every case of `coll` on `size` ranks, each rank made with `config` (null: the environment's).
void matchReference(int size, Coll coll, const Config* config) {
  auto results = runRanks(size, [coll, config](RankContext& ctx) {
    auto comm = ctx.connect(config);
    if (!comm) return 1;
    int failures = 0;
    uint64_t seed = 1;
    for (const Case& k : casesFor(coll, ctx.size)) {
      std::string err = runCase(*comm, coll, k, seed++);
      if (!err.empty() && failures++ < 10)
        ctx.report("%s: %s", caseName(coll, k).c_str(), err.c_str());
      if (err.rfind("call failed", 0) == 0) break;  // the communicator is poisoned
    }
    return failures ? 1 : 0;
  });
  EXPECT_EQ(describeFailures(results), "");
}

TEST_P(Collectives, MatchReference) {
  matchReference(std::get<0>(GetParam()), std::get<1>(GetParam()), nullptr);
}

// Outputs written around the caches (non-temporal copies and reduces, CHORUS_STREAM_BYTES),
// here from the first byte so that every odd count, alignment and in-place case takes them.
class StreamedCollectives : public Collectives {};

TEST_P(StreamedCollectives, MatchReference) {
  Config config;
  ASSERT_TRUE(Config::fromEnvironment(&config).ok());
  config.streamBytes = 1;
  matchReference(std::get<0>(GetParam()), std::get<1>(GetParam()), &config);
}

INSTANTIATE_TEST_SUITE_P(Shm, Collectives,
                         ::testing::Combine(::testing::Range(1, 9),
                                            ::testing::Values(Coll::AllReduce, Coll::ReduceScatter,
                                                              Coll::AllGather, Coll::Broadcast,
                                                              Coll::Reduce, Coll::AllToAll,
                                                              Coll::Gather, Coll::Scatter,
                                                              Coll::SendRecv, Coll::Barrier)),
                         caseLabel);

INSTANTIATE_TEST_SUITE_P(Shm, StreamedCollectives,
                         ::testing::Combine(::testing::Values(2, 3),
                                            ::testing::Values(Coll::AllReduce, Coll::ReduceScatter,
                                                              Coll::AllGather, Coll::Broadcast,
                                                              Coll::Reduce, Coll::AllToAll,
                                                              Coll::Gather)),
                         caseLabel);

}  // namespace
}  // namespace chorus::test
