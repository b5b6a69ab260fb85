// Shrink: after a rank is SIGKILLed the survivors make a communicator of their own, without the
// dead rank taking part, and run every collective on it; a planned shrink leaves the excluded
// (live) rank out with a null result.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdarg>
#include <cstdlib>

#include "common/clock.h"
#include "harness/collective_cases.h"
#include "harness/multirank.h"

namespace chorus::test {
namespace {

void reportTo(void* ctx, const char* line) {
  static_cast<RankContext*>(ctx)->report("%s", line);
}

RankSetup shortTimeout() {
  return [](int) {
    setenv("CHORUS_TIMEOUT", "10", 1);
    return 0;
  };
}

void shrinkAfterKilling(int victim) {
  // Ranks past the first allreduce, shared by the forked ranks: the victim dies only once every
  // rank has finished it, since a death fails every call still running anywhere.
  auto* done =
      static_cast<std::atomic<int>*>(mmap(nullptr, sizeof(std::atomic<int>), PROT_READ | PROT_WRITE,
                                          MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(static_cast<void*>(done), MAP_FAILED);
  new (done) std::atomic<int>(0);
  auto results = runRanks(
      4,
      [victim, done](RankContext& ctx) {
        auto comm = ctx.connect();
        if (!comm) return 1;
        float x = 1, sum = 0;
        Status st = comm->allReduce(&x, &sum, 1, DataType::Float32, {});
        if (!st.ok() || sum != 4)
          return ctx.report("first allreduce: %s", st.toString().c_str()), 2;
        done->fetch_add(1);
        if (ctx.rank == victim) {
          while (done->load() < 4) usleep(1000);
          raise(SIGKILL);
        }
        st = comm->allReduce(&x, &sum, 1, DataType::Float32, {});
        if (st.ok()) return ctx.report("an allreduce without rank %d succeeded", victim), 3;
        if (st.message().find("rank " + std::to_string(victim)) == std::string::npos)
          return ctx.report("the error does not name rank %d: %s", victim, st.toString().c_str()),
                 4;
        const int64_t start = nowNs();
        std::unique_ptr<Communicator> sub;
        Config config;
        config.timeoutSec = 10;
        st = comm->shrink({victim}, config, &sub);
        if (!st.ok() || !sub) return ctx.report("shrink: %s", st.toString().c_str()), 5;
        const int expectRank = ctx.rank < victim ? ctx.rank : ctx.rank - 1;
        if (sub->size() != 3 || sub->rank() != expectRank)
          return ctx.report("shrunk to rank %d of %d", sub->rank(), sub->size()), 6;
        ctx.report("shrink took %.3f s", double(nowNs() - start) / 1e9);
        int failed = 0;
        for (int c = 0; c <= int(Coll::Barrier); ++c)
          failed += runAllCases(*sub, Coll(c), reportTo, &ctx);
        return failed ? 7 : 0;
      },
      120, shortTimeout());
  ASSERT_EQ(results.size(), 4u);
  for (const RankResult& r : results) {
    if (r.rank == victim) {
      EXPECT_EQ(r.signal, SIGKILL);
      continue;
    }
    EXPECT_TRUE(r.ok()) << "rank " << r.rank << ": " << r.report;
    printf("[ measured ] rank %d: %s", r.rank, r.report.c_str());
  }
  munmap(done, sizeof(std::atomic<int>));
}

TEST(Shrink, SurvivorsOfAKilledRankRunEveryCollective) {
  shrinkAfterKilling(2);
}

// Rank 0 is the hub of the parent's bootstrap: the survivors meet without it.
TEST(Shrink, SurvivorsOfAKilledRankZeroRunEveryCollective) {
  shrinkAfterKilling(0);
}

TEST(Shrink, PlannedShrinkLeavesTheExcludedRankOut) {
  auto results = runRanks(
      3,
      [](RankContext& ctx) {
        auto comm = ctx.connect();
        if (!comm) return 1;
        std::unique_ptr<Communicator> sub;
        Status st = comm->shrink({0}, Config{}, &sub);
        if (!st.ok()) return ctx.report("shrink: %s", st.toString().c_str()), 2;
        if (ctx.rank == 0) return sub ? (ctx.report("the excluded rank got a communicator"), 3) : 0;
        if (!sub || sub->size() != 2 || sub->rank() != ctx.rank - 1)
          return ctx.report("wrong shrunk communicator"), 4;
        int x = ctx.rank, sum = 0;
        st = sub->allReduce(&x, &sum, 1, DataType::Int32, {});
        if (!st.ok() || sum != 3)
          return ctx.report("allreduce: %s sum %d", st.toString().c_str(), sum), 5;
        st = comm->shrink({0, 0}, Config{}, &sub);
        if (st.ok() || st.message().find("excluded twice") == std::string::npos)
          return ctx.report("a bad list was not refused: %s", st.toString().c_str()), 6;
        return 0;
      },
      60, shortTimeout());
  EXPECT_EQ(describeFailures(results), "");
}

}  // namespace
}  // namespace chorus::test
