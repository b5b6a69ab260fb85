// Chaos trials: a job of real ranks runs one collective in a loop, and one fault strikes it at
// a random point, of set-up or of the loop: SIGKILL, SIGSTOP (the process lives on, its sockets
// stay open, only deadlines can tell), or a cut link (tests/netns). Everything a trial does
// follows from its seed, so a failing trial can be run again alone. Each trial must show that
// every rank still running fails within the deadline with an error naming the lost rank, that
// abort() and destruction return, and that nothing of the job is left in /dev/shm.
#pragma once

#include <cstdint>
#include <string>

#include "harness/collective_cases.h"

namespace chorus::test {

class NetnsHosts;

enum class FaultKind { Kill, Stop, LinkCut };
const char* faultName(FaultKind f);

struct TrialPlan {
  uint64_t seed = 0;
  FaultKind fault = FaultKind::Kill;
  Coll coll = Coll::AllReduce;
  std::string algo;       // CHORUS_ALGO; empty: the selector's choice
  std::string transport;  // CHORUS_TRANSPORT
  size_t count = 0;       // float32 elements per call, as runCase counts them
  int root = 0;
  int ranks = 4;
  int victim = 0;  // the killed or stopped rank, or the one whose host loses its link
  bool duringSetUp = false;
  int afterCalls = 0;  // loop faults: once every rank has finished this many calls ...
  int delayUs = 0;     // ... and this much later (set-up faults: after all began set-up)
  std::string describe() const;
};

// Link cuts put each rank on a host of its own and use TCP (the only way between hosts).
TrialPlan drawTrial(uint64_t seed, FaultKind fault);

struct TrialOutcome {
  bool detected = false;    // every rank still running failed within the deadline
  bool passed = false;      // and every other check held
  bool hitSetUp = false;    // the fault struck before the victim had finished set-up
  double detectionSec = 0;  // from the fault to the last of those failures
  std::string failure;      // what went wrong, when !passed
};

// `net`: the hosts for link cuts (null otherwise). `timeoutSec`: CHORUS_TIMEOUT of the ranks.
TrialOutcome runTrial(const TrialPlan& plan, double timeoutSec, const NetnsHosts* net);

}  // namespace chorus::test
