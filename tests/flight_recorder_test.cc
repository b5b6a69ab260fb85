// The flight recorder: the ring of last calls, whole entries under concurrent dumps, and the
// end-to-end story: a rank that never makes a call, the others time out and dump, it dumps on
// SIGUSR1, and chorus-trace names it.
#include "core/flight_recorder.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/clock.h"
#include "harness/multirank.h"

namespace chorus::test {
namespace {

OpDesc allreduceOf(uint64_t count) {
  OpDesc d;
  d.coll = Collective::AllReduce;
  d.count = count;
  return d;
}

TEST(FlightRecorder, RingKeepsTheLastCallsInOrder) {
  FlightRecorder r(4);
  for (uint64_t i = 0; i < 6; ++i) {
    uint64_t call = r.begin(allreduceOf(100 + i), uint32_t(i), "ring", 1000 + int64_t(i));
    EXPECT_EQ(call, i);
    if (i == 5) {
      r.waiting(call, 2, 3);
      continue;  // the last one is still running
    }
    r.end(call, i != 4, 2000 + int64_t(i));
  }
  auto s = r.snapshot();
  ASSERT_EQ(s.size(), 4u);
  for (size_t k = 0; k < 4; ++k) {
    EXPECT_EQ(s[k].call, k + 2);
    EXPECT_EQ(s[k].desc.count, 102 + k);
    EXPECT_STREQ(s[k].algorithm, "ring");
  }
  EXPECT_EQ(s[2].state, FlightRecorder::State::Failed);
  EXPECT_EQ(s[3].state, FlightRecorder::State::Running);
  EXPECT_EQ(s[3].waitPeer, 2);
  EXPECT_EQ(s[3].waitStep, 3);
  EXPECT_EQ(s[3].endNs, 0);
  EXPECT_TRUE(FlightRecorder(0).snapshot().empty());

  FlightDumpInfo info;
  info.rank = 1;
  info.size = 4;
  info.commId = "abc";
  std::string json = flightRecorderJson(r, info, "test");
  EXPECT_NE(json.find("\"waiting_on\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"reason\": \"test\""), std::string::npos) << json;
}

// A dump from another thread never sees half an entry (and, under TSan, races with nothing).
TEST(FlightRecorder, ConcurrentDumpsSeeWholeEntries) {
  FlightRecorder r(8);
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    for (uint64_t i = 0; !stop.load(); ++i) {
      uint64_t c = r.begin(allreduceOf(i * 3), uint32_t(i), "ring", int64_t(i));
      r.waiting(c, int(i % 7), int(i % 5));
      r.end(c, true, int64_t(i) + 1);
    }
  });
  size_t seen = 0;
  for (Deadline d = Deadline::after(0.3); !d.expired();)
    for (const auto& e : r.snapshot()) {
      ++seen;
      ASSERT_EQ(e.desc.count, e.call * 3);
      ASSERT_EQ(e.opSeq, uint32_t(e.call));
      ASSERT_EQ(e.startNs, int64_t(e.call));
    }
  stop = true;
  writer.join();
  EXPECT_GT(seen, 0u);
}

std::string runAndCapture(const std::string& cmd, int* rc);

bool waitForFile(const std::string& path, double seconds) {
  struct stat st;
  for (Deadline d = Deadline::after(seconds); !d.expired(); usleep(20000))
    if (stat(path.c_str(), &st) == 0) return true;
  return false;
}

std::string runAndCapture(const std::string& cmd, int* rc) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  char buf[1024];
  while (p && fgets(buf, sizeof buf, p)) out += buf;
  *rc = p ? pclose(p) : -1;
  return out;
}

TEST(FlightRecorder, ChorusTraceNamesTheRankThatNeverCame) {
  char tmpl[] = "/tmp/chorus-flight-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  RankGroup group(
      3,
      [](RankContext& ctx) {
        auto comm = ctx.connect();
        if (!comm) return 1;
        int one = 1, sum = 0;
        Status st = comm->allReduce(&one, &sum, 1, DataType::Int32, {});
        if (!st.ok()) return ctx.report("first allreduce: %s", st.toString().c_str()), 2;
        if (ctx.rank == 2) {  // never makes the second call; stays until it dumped on SIGUSR1
          const std::string dir = getenv("CHORUS_TRACE_DIR");
          int rc = 0;
          for (Deadline d = Deadline::after(15); !d.expired(); usleep(50000))
            if (!runAndCapture("ls " + dir + " | grep -- '-rank2.json$'", &rc).empty()) return 0;
          return ctx.report("no dump of rank 2 after 15 s"), 4;
        }
        st = comm->allReduce(&one, &sum, 1, DataType::Int32, {});
        if (st.ok()) return ctx.report("the second allreduce succeeded without rank 2"), 3;
        return 0;
      },
      [dir](int) {
        setenv("CHORUS_TIMEOUT", "2", 1);
        setenv("CHORUS_TRACE_DIR", dir.c_str(), 1);
        return 0;
      });
  // The dumps are named by the communicator's id, the same on every rank: find it.
  auto dumpOf = [&](int rank) -> std::string {
    std::string suffix = "-rank" + std::to_string(rank) + ".json";
    std::string cmd = "ls " + dir + " 2>/dev/null | grep -- '" + suffix + "$'";
    int rc = 0;
    std::string name = runAndCapture(cmd, &rc);
    while (!name.empty() && name.back() == '\n') name.pop_back();
    return name.empty() ? "" : dir + "/" + name;
  };
  std::string d0, d1;
  for (Deadline d = Deadline::after(15); !d.expired() && (d0.empty() || d1.empty()); usleep(50000))
    d0 = dumpOf(0), d1 = dumpOf(1);
  ASSERT_FALSE(d0.empty() || d1.empty()) << "ranks 0 and 1 wrote no dump on their timeout";
  kill(group.pid(2), SIGUSR1);
  std::string d2;
  for (Deadline d = Deadline::after(5); !d.expired() && d2.empty(); usleep(50000)) d2 = dumpOf(2);
  ASSERT_FALSE(d2.empty()) << "rank 2 wrote no dump on SIGUSR1";
  ASSERT_TRUE(waitForFile(d2, 1));
  auto results = group.wait(30);
  EXPECT_EQ(describeFailures(results), "");

  const char* bin = getenv("CHORUS_BIN_DIR");
  ASSERT_NE(bin, nullptr) << "CHORUS_BIN_DIR is set by ctest";
  int rc = 0;
  std::string out = runAndCapture(std::string(bin) + "/chorus-trace -o " + dir + "/trace.json " +
                                      d0 + " " + d1 + " " + d2 + " 2>&1",
                                  &rc);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("Rank 2 is the one the others wait on"), std::string::npos) << out;
  EXPECT_NE(out.find("SIGUSR1"), std::string::npos) << out;
  std::ifstream t(dir + "/trace.json");
  std::stringstream ss;
  ss << t.rdbuf();
  EXPECT_NE(ss.str().find("\"traceEvents\""), std::string::npos);
  EXPECT_NE(ss.str().find("allreduce #1"), std::string::npos) << ss.str().substr(0, 2000);
  (void)!system(("rm -rf " + dir).c_str());
}

}  // namespace
}  // namespace chorus::test
