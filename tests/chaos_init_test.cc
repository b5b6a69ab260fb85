// A rank that dies or stops while the communicator is being set up must leave nothing in
// /dev/shm, and the others must fail naming it. The host's shm segment is the one file set-up
// makes there, and the worst moment to lose its creator (the host's lowest rank, rank 0 here)
// is just after it created the file: only what it told the others before can get it removed.
//
// To stop rank 0 at exactly that moment this test defines shm_open itself. The library's calls
// bind to it (the executable's symbol comes first); it calls the real one and, in a rank that
// asked for it, raises SIGSTOP after a file was created. The library carries no test hook.
#include <dlfcn.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "common/clock.h"
#include "harness/multirank.h"
#include "harness/shm_files.h"

namespace {
bool stopAfterCreatingSegment = false;  // set in the forked rank that is to stop
}  // namespace

extern "C" int shm_open(const char* name, int oflag, mode_t mode) {
  using Real = int (*)(const char*, int, mode_t);
  static const Real real = reinterpret_cast<Real>(dlsym(RTLD_NEXT, "shm_open"));
  const int fd = real(name, oflag, mode);
  if (fd >= 0 && (oflag & O_CREAT) && stopAfterCreatingSegment) raise(SIGSTOP);
  return fd;
}

namespace chorus::test {
namespace {

constexpr int kRanks = 3;
constexpr double kTimeoutSec = 3;

enum class Fault { KillCreator, StopCreator, KillOther };

// Every rank sets up a communicator over shared memory; rank 0 stops right after creating the
// segment file. Then the fault: rank 0 killed, rank 0 left stopped, or rank 1 killed and rank
// 0 let go on. Afterwards no segment of rank 0's may exist, and every rank still running must
// have failed naming the rank that was lost.
void loseARankDuringSetUp(Fault fault) {
  RankGroup group(kRanks, [](RankContext& ctx) {
    Config c;
    if (Status st = Config::fromEnvironment(&c); !st.ok()) return 1;
    c.timeoutSec = kTimeoutSec;
    c.transport = "shm";
    stopAfterCreatingSegment = ctx.rank == 0;
    auto comm = ctx.connect(&c);  // reports why it failed
    return comm ? 2 : 0;
  });
  const pid_t creator = group.pid(0);
  Deadline stopped = Deadline::after(60);
  while (processState(creator) != 'T' && !stopped.expired()) usleep(1000);
  ASSERT_EQ(processState(creator), 'T') << "rank 0 never created a segment";
  ASSERT_EQ(shmSegmentsOf(creator).size(), 1u) << "the stop did not follow a segment's creation";

  const int lost = fault == Fault::KillOther ? 1 : 0;
  if (fault == Fault::KillCreator) group.kill(0, SIGKILL);
  if (fault == Fault::KillOther) {
    group.kill(1, SIGKILL);
    group.kill(0, SIGCONT);
  }
  // A stopped rank 0 stays stopped until the others have given up on it.
  if (fault == Fault::StopCreator) {
    Deadline gaveUp = Deadline::after(kTimeoutSec + 30);
    while ((processState(group.pid(1)) != 'Z' || processState(group.pid(2)) != 'Z') &&
           !gaveUp.expired())
      usleep(1000);
    group.kill(0, SIGKILL);
  }
  const std::vector<RankResult> results = group.wait(kTimeoutSec + 30);
  for (const RankResult& r : results) {
    if (r.rank == lost) continue;
    EXPECT_TRUE(r.ok()) << "rank " << r.rank << " did not fail cleanly: " << r.report;
    EXPECT_TRUE(namesRank(r.report, lost))
        << "rank " << r.rank << " must name rank " << lost << ": " << r.report;
  }
  const std::vector<std::string> left = shmSegmentsOf(creator);
  EXPECT_TRUE(left.empty()) << "left in /dev/shm: " << (left.empty() ? "" : left[0]);
  removeShmSegments(left);
}

TEST(ChaosInit, CreatorKilledAfterCreatingTheSegmentLeavesNothing) {
  loseARankDuringSetUp(Fault::KillCreator);
}
TEST(ChaosInit, CreatorStoppedAfterCreatingTheSegmentLeavesNothing) {
  loseARankDuringSetUp(Fault::StopCreator);
}
TEST(ChaosInit, OtherRankKilledWhileTheSegmentExistsLeavesNothing) {
  loseARankDuringSetUp(Fault::KillOther);
}

}  // namespace
}  // namespace chorus::test
