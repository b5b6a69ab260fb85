// Running one chaos trial (chaos_trial.h): the ranks, the fault, and the checks.
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>

#include "common/clock.h"
#include "harness/chaos_trial.h"
#include "harness/multirank.h"
#include "harness/shm_files.h"
#include "netns/netns_hosts.h"

namespace chorus::test {
namespace {

constexpr int kMaxRanks = 16;
// A failure may come this long after the deadline: a rank that timed out first asks who still
// answers (up to about a second, Bootstrap::findUnresponsive; in set-up half a second more for
// rank 0's verdict), the deadline is counted from the start of the call, and a loaded machine
// is slow to schedule the ranks that notice (4.7 s was the worst seen with a 3 s deadline).
constexpr double kSlackSec = 4;

// How far a rank got; a rank that hangs at a stage is stuck in what follows it (kStuckIn).
enum Stage : int { kSettingUp, kLooping, kFailed, kAborted, kDestroyed };
const char* const kStuckIn[] = {"set-up", "the loop", "abort()", "destruction", "exit"};

// Written by the ranks, read by the test, in memory both share.
struct Shared {
  std::atomic<int> settingUp;
  std::atomic<int> stage[kMaxRanks];
  std::atomic<int> calls[kMaxRanks];
  std::atomic<int64_t> failedAtNs[kMaxRanks];
};

// One rank: set up, run the case until it fails, then abort and destroy the communicator.
// Exit 0 after a failed call; 3 for a wrong result, which no fault excuses.
int chaosRank(RankContext& ctx, const TrialPlan& plan, Shared* sh) {
  const int r = ctx.rank;
  sh->settingUp.fetch_add(1);
  auto comm = ctx.connect();  // reports why not
  if (!comm) {
    sh->failedAtNs[r] = nowNs();
    sh->stage[r] = kDestroyed;
    return 0;
  }
  sh->stage[r] = kLooping;
  const Case k{DataType::Float32, RedOp::Max, plan.count, false, plan.root};
  for (;;) {
    const std::string err = runCase(*comm, plan.coll, k, plan.seed);
    if (err.empty()) {
      sh->calls[r].fetch_add(1);
      continue;
    }
    sh->failedAtNs[r] = nowNs();
    sh->stage[r] = kFailed;
    ctx.report("after %d calls: %s", sh->calls[r].load(), err.c_str());
    if (err.rfind("call failed", 0) != 0) return 3;
    comm->abort();
    sh->stage[r] = kAborted;
    comm.reset();
    sh->stage[r] = kDestroyed;
    return 0;
  }
}

// Waits for the moment the plan strikes at; false if the ranks never got there.
bool awaitFaultPoint(const TrialPlan& plan, Shared* sh) {
  Deadline limit = Deadline::after(60);
  auto reached = [&] {
    if (plan.duringSetUp) return sh->settingUp.load() == plan.ranks;
    for (int r = 0; r < plan.ranks; ++r)
      if (sh->calls[r].load() < plan.afterCalls || sh->stage[r].load() < kLooping) return false;
    return true;
  };
  while (!reached()) {
    if (limit.expired()) return false;
    usleep(200);
  }
  usleep(useconds_t(plan.delayUs));
  return true;
}

bool strike(const TrialPlan& plan, RankGroup& group, const NetnsHosts* net) {
  switch (plan.fault) {
    case FaultKind::Kill:
      group.kill(plan.victim, SIGKILL);
      return true;
    case FaultKind::Stop:
      group.kill(plan.victim, SIGSTOP);
      return true;
    case FaultKind::LinkCut:
      return net->setLink(plan.victim, false);
  }
  return false;
}

// A stopped victim is killed once every other rank has finished (or hung past any deadline).
void killStoppedVictim(const TrialPlan& plan, RankGroup& group, double waitSec) {
  Deadline limit = Deadline::after(waitSec);
  for (int r = 0; r < plan.ranks; ++r)
    while (r != plan.victim && processState(group.pid(r)) != 'Z' && !limit.expired()) usleep(1000);
  group.kill(plan.victim, SIGKILL);
}

std::string rankLine(const RankResult& r, const std::string& what) {
  return "rank " + std::to_string(r.rank) + " " + what + ": " + r.report;
}

// The checks of every rank once all have ended: the victim (unless its link was cut) by our
// SIGKILL; every other rank failed after the fault, within `limitSec`, naming the victim.
void judge(const TrialPlan& plan, const std::vector<RankResult>& results, const Shared* sh,
           int64_t faultAt, double limitSec, TrialOutcome* out) {
  std::string& why = out->failure;
  out->detected = true;
  for (const RankResult& r : results) {
    if (r.rank == plan.victim && plan.fault != FaultKind::LinkCut) {
      if (r.signal != SIGKILL) why += rankLine(r, "(the victim) did not end by SIGKILL");
      continue;
    }
    const int64_t at = sh->failedAtNs[r.rank].load();
    const double sec = double(at - faultAt) / 1e9;
    bool inTime = false;
    if (r.timedOut) {
      why += rankLine(r, std::string("hung in ") + kStuckIn[sh->stage[r.rank].load()]);
    } else if (!r.ok()) {
      why += rankLine(r, "ended with exit " + std::to_string(r.exitCode) + ", signal " +
                             std::to_string(r.signal));
    } else if (at == 0 || at < faultAt) {
      why += rankLine(r, "failed before the fault");
    } else if (sec > limitSec) {
      why += rankLine(r, "failed only " + std::to_string(sec) + " s after the fault");
    } else {
      inTime = true;
      out->detectionSec = std::max(out->detectionSec, sec);
      if (r.rank != plan.victim && !namesRank(r.report, plan.victim))
        why += rankLine(r, "did not name the victim");
    }
    out->detected = out->detected && inTime;
  }
  for (const RankResult& r : results) {
    const std::vector<std::string> left = shmSegmentsOf(r.pid);
    if (!left.empty()) why += "left in /dev/shm: " + left[0] + "\n";
    removeShmSegments(left);
  }
}

}  // namespace

TrialOutcome runTrial(const TrialPlan& plan, double timeoutSec, const NetnsHosts* net) {
  TrialOutcome out;
  void* mem =
      mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  Shared* sh = new (mem) Shared{};
  const std::string timeout = std::to_string(timeoutSec);
  RankGroup group(
      plan.ranks, [&plan, sh](RankContext& ctx) { return chaosRank(ctx, plan, sh); },
      [&](int rank) {
        setenv("CHORUS_TRANSPORT", plan.transport.c_str(), 1);
        setenv("CHORUS_ALGO", plan.algo.c_str(), 1);
        setenv("CHORUS_TIMEOUT", timeout.c_str(), 1);
        return net ? net->enterHost(rank) : 0;
      });
  const double limitSec = timeoutSec + kSlackSec;
  int64_t faultAt = 0;
  bool struck = false;
  if (!awaitFaultPoint(plan, sh)) {
    out.failure = "the ranks never reached the fault point\n";
  } else {
    out.hitSetUp = sh->stage[plan.victim].load() < kLooping;
    faultAt = nowNs();
    struck = strike(plan, group, net);
    if (!struck) out.failure = "could not inject the fault\n";
    if (plan.fault == FaultKind::Stop) killStoppedVictim(plan, group, limitSec + 10);
  }
  const std::vector<RankResult> results = group.wait(limitSec + 10);
  if (plan.fault == FaultKind::LinkCut) net->setLink(plan.victim, true);
  if (struck) judge(plan, results, sh, faultAt, limitSec, &out);
  out.passed = out.failure.empty();
  munmap(mem, sizeof(Shared));
  return out;
}

}  // namespace chorus::test
