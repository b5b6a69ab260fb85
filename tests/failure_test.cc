// Failures must turn into clear errors on every surviving rank, fast, and never into a hang:
// a SIGKILLed rank, a SIGSTOPped one, a rank that never shows up (timeout), abort() from another
// thread, mismatched calls, bad arguments. What a death leaves in /dev/shm is checked where it can
// happen, during set-up (chaos_init_test.cc): by the time these ranks die the segment's name
// has long been unlinked.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "harness/multirank.h"

namespace chorus::test {
namespace {

// Counters shared between the test and its forked ranks.
struct Shared {
  std::atomic<int> ready;
  std::atomic<int64_t> errorAtNs[16];
};

Shared* mapShared() {
  void* p =
      mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  return new (p) Shared{};
}

// Every rank loops over large allreduces until one fails; the test sends `sig` to `victim`
// mid-loop. Survivors report the error of the pending call and of the call after it, which
// must name the victim: a killed one within seconds; a stopped one (SIGSTOP: its sockets stay
// open) once the deadline has passed, though in a ring most survivors wait for a live peer.
void loseRankMidCollective(int size, int victim, int sig) {
  constexpr double kStopTimeoutSec = 2;
  Shared* sh = mapShared();
  RankGroup group(size, [sh, sig](RankContext& ctx) {
    Config c;
    if (!Config::fromEnvironment(&c).ok()) return 1;
    if (sig == SIGSTOP) {
      c.timeoutSec = kStopTimeoutSec;
      c.algo = "allreduce=ring";
    }
    auto comm = ctx.connect(&c);
    if (!comm) return 1;
    std::vector<float> buf(1 << 20, 1.0f);
    for (int iter = 0;; ++iter) {
      Status st =
          comm->allReduce(buf.data(), buf.data(), buf.size(), DataType::Float32, RedOp::Max);
      if (iter == 0) sh->ready.fetch_add(1);
      if (!st.ok()) {
        sh->errorAtNs[ctx.rank] = nowNs();
        ctx.report("pending: %s", st.toString().c_str());
        Status later = comm->allReduce(buf.data(), buf.data(), 1, DataType::Float32, RedOp::Sum);
        ctx.report("later: %s", later.toString().c_str());
        return later.ok() ? 2 : 0;
      }
    }
  });
  Deadline ready = Deadline::after(60);
  while (sh->ready.load() < size && !ready.expired()) usleep(1000);
  ASSERT_EQ(sh->ready.load(), size) << "ranks did not start";
  usleep(20000);  // let them get well into the next calls
  const int64_t lostAt = nowNs();
  group.kill(victim, sig);
  if (sig == SIGSTOP) {  // kept stopped until the others are done
    Deadline done = Deadline::after(60);
    for (int r = 0; r < size; ++r)
      while (r != victim && processState(group.pid(r)) != 'Z' && !done.expired()) usleep(1000);
    group.kill(victim, SIGKILL);
  }
  auto results = group.wait(60);
  const std::string name = "rank " + std::to_string(victim);
  const double limitSec = sig == SIGSTOP ? kStopTimeoutSec + 3 : 5;
  double worst = 0;
  for (const RankResult& r : results) {
    if (r.rank == victim) {
      EXPECT_EQ(r.signal, SIGKILL);
      continue;
    }
    EXPECT_TRUE(r.ok()) << "rank " << r.rank << ": " << r.report;
    EXPECT_NE(r.report.find("pending: RemoteError"), std::string::npos) << r.report;
    EXPECT_NE(r.report.find("later: RemoteError"), std::string::npos) << r.report;
    EXPECT_NE(r.report.find(name + " "), std::string::npos)
        << "the error must name the lost rank: " << r.report;
    double secs = double(sh->errorAtNs[r.rank] - lostAt) / 1e9;
    worst = std::max(worst, secs);
    EXPECT_LT(secs, limitSec) << "rank " << r.rank << " took " << secs << " s to report";
  }
  printf("[ measured ] %s %s of %d: slowest survivor reported after %.3f s\n",
         sig == SIGSTOP ? "stopped" : "killed", name.c_str(), size, worst);
  munmap(sh, sizeof(Shared));
}

TEST(Failure, KilledRankIsNamedBySurvivorsWithinFiveSeconds) {
  loseRankMidCollective(4, 2, SIGKILL);
}
TEST(Failure, KilledRankZeroIsNamedBySurvivors) {
  loseRankMidCollective(3, 0, SIGKILL);
}
TEST(Failure, StoppedRankIsNamedBySurvivorsAfterTheDeadline) {
  loseRankMidCollective(4, 2, SIGSTOP);
}
TEST(Failure, StoppedRankZeroIsNamedBySurvivorsAfterTheDeadline) {
  loseRankMidCollective(4, 0, SIGSTOP);
}

TEST(Failure, AbsentPeerTimesOutWithClearError) {
  auto results = runRanks(2, [](RankContext& ctx) {
    Config c;
    c.timeoutSec = 1;
    auto comm = ctx.connect(&c);
    if (!comm) return 1;
    float x = 1;
    if (ctx.rank == 1) {
      usleep(1500000);  // miss the collective entirely
      Status st = comm->allReduce(&x, &x, 1, DataType::Float32, RedOp::Sum);
      ctx.report("late: %s", st.toString().c_str());
      return st.ok() ? 2 : 0;
    }
    int64_t t0 = nowNs();
    Status st = comm->allReduce(&x, &x, 1, DataType::Float32, RedOp::Sum);
    ctx.report("first: %s after %.2f s", st.toString().c_str(), (nowNs() - t0) / 1e9);
    return st.code() == StatusCode::Timeout ? 0 : 3;
  });
  EXPECT_EQ(describeFailures(results), "");
  EXPECT_NE(results[0].report.find("rank 1"), std::string::npos) << results[0].report;
  EXPECT_NE(results[0].report.find("CHORUS_TIMEOUT"), std::string::npos) << results[0].report;
  // The rank that came late learns why the other gave up.
  EXPECT_NE(results[1].report.find("rank 0"), std::string::npos) << results[1].report;
}

TEST(Failure, AbortFromAnotherThreadUnblocksAPendingCall) {
  auto results = runRanks(2, [](RankContext& ctx) {
    auto comm = ctx.connect();
    if (!comm) return 1;
    if (ctx.rank == 1) {
      usleep(2000000);  // never joins the allreduce; leaves after rank 0 aborted
      return 0;
    }
    std::thread aborter([&] {
      usleep(200000);
      comm->abort();
    });
    float x = 1;
    Status st = comm->allReduce(&x, &x, 1, DataType::Float32, RedOp::Sum);
    aborter.join();
    ctx.report("%s", st.toString().c_str());
    Status again = comm->barrier();
    return st.code() == StatusCode::Aborted && again.code() == StatusCode::Aborted ? 0 : 2;
  });
  EXPECT_EQ(describeFailures(results), "");
}

TEST(Failure, MismatchedCountsAreReportedNotExecuted) {
  auto results = runRanks(2, [](RankContext& ctx) {
    auto comm = ctx.connect();
    if (!comm) return 1;
    std::vector<float> buf(4096, 1.0f);
    size_t n = ctx.rank == 0 ? 1000 : 2000;
    Status st = comm->allReduce(buf.data(), buf.data(), n, DataType::Float32, RedOp::Sum);
    ctx.report("%s", st.toString().c_str());
    return st.ok() ? 2 : 0;
  });
  EXPECT_EQ(describeFailures(results), "");
  std::string all = results[0].report + results[1].report;
  EXPECT_NE(all.find("mismatched calls"), std::string::npos) << all;
  EXPECT_NE(all.find("count=1000"), std::string::npos) << all;
  EXPECT_NE(all.find("count=2000"), std::string::npos) << all;
}

TEST(Failure, MismatchedOpsAndTypesAreReported) {
  auto results = runRanks(3, [](RankContext& ctx) {
    auto comm = ctx.connect();
    if (!comm) return 1;
    std::vector<double> buf(64, 1.0);
    RedOp op = ctx.rank == 2 ? RedOp::Max : RedOp::Sum;
    Status st = comm->allReduce(buf.data(), buf.data(), 16, DataType::Float32, op);
    ctx.report("%s", st.toString().c_str());
    return st.ok() ? 2 : 0;
  });
  EXPECT_EQ(describeFailures(results), "");
  std::string all = results[0].report + results[1].report + results[2].report;
  EXPECT_NE(all.find("mismatched calls"), std::string::npos) << all;
}

TEST(Failure, BadArgumentsAreRejectedWithoutPoisoning) {
  auto results = runRanks(2, [](RankContext& ctx) {
    auto comm = ctx.connect();
    if (!comm) return 1;
    float x[4] = {1, 2, 3, 4};
    int bad = 0;
    auto expectInvalid = [&](Status st, const char* what) {
      if (st.code() != StatusCode::InvalidArgument) {
        ctx.report("%s: expected InvalidArgument, got %s", what, st.toString().c_str());
        ++bad;
      }
    };
    expectInvalid(comm->allReduce(nullptr, x, 4, DataType::Float32, RedOp::Sum), "null send");
    expectInvalid(comm->broadcast(x, x, 4, DataType::Float32, 7), "root out of range");
    expectInvalid(comm->allReduce(x, x, 4, DataType(42), RedOp::Sum), "bad dtype");
    expectInvalid(comm->allReduce(x, x, 4, DataType::Float32, RedOp(9)), "bad op");
    expectInvalid(comm->allReduce(x, x, 4, DataType::Float32, RedOp::PreMulSum), "no scalar");
    expectInvalid(comm->send(x, 4, DataType::Float32, ctx.rank), "send to self");
    // Byte counts past 2^48, and counts whose bytes overflow 64 bits, are no real buffers.
    expectInvalid(comm->allReduce(x, x, (size_t(1) << 46) + 1, DataType::Float32, RedOp::Sum),
                  "count past 2^48 bytes");
    expectInvalid(comm->allGather(x, x, (size_t(1) << 47) + 1, DataType::Uint8),
                  "output past 2^48");
    expectInvalid(comm->allReduce(x, x, ~size_t(0) / 2, DataType::Float64, RedOp::Sum),
                  "bytes overflowing");
    Status st = comm->allReduce(x, x, 4, DataType::Float32, RedOp::Sum);
    if (!st.ok() || x[3] != 8) {
      ctx.report("valid call after bad ones: %s, x[3]=%g", st.toString().c_str(), x[3]);
      ++bad;
    }
    return bad;
  });
  EXPECT_EQ(describeFailures(results), "");
}

}  // namespace
}  // namespace chorus::test
