// Multi-rank test harness: runs a function as `size` real processes (fork), each its own rank.
// Rank 0 creates the UniqueId and hands it to the others through pipes, the way an MPI job
// passes it out of band. Children report through a pipe and their exit code; the parent
// bounds the whole run with a deadline and SIGKILLs anything left.
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "chorus/communicator.h"

namespace chorus::test {

struct RankContext {
  int rank = 0;
  int size = 1;
  UniqueId id{};
  // Appends a line to this rank's report (shown by the parent on failure).
  void report(const char* fmt, ...) __attribute__((format(printf, 2, 3)));
  // Makes a communicator with `config` (defaults from the environment); reports and returns
  // null on failure.
  std::unique_ptr<Communicator> connect(const Config* config = nullptr);
  int reportFd = -1;
};

struct RankResult {
  int rank = 0;
  pid_t pid = 0;
  int exitCode = -1;  // valid when !signaled
  int signal = 0;     // the signal that ended it, or 0
  bool timedOut = false;
  std::string report;  // what the rank reported
  bool ok() const { return !signaled() && exitCode == 0 && !timedOut; }
  bool signaled() const { return signal != 0; }
};

using RankFn = std::function<int(RankContext&)>;
// Runs first in each child, before rank 0 makes the unique id (so a rank can move into a
// network namespace whose address the id then carries). Non-zero: the child exits with it.
using RankSetup = std::function<int(int rank)>;

class RankGroup {
 public:
  // Forks `size` ranks running fn; fn's return value is the exit code.
  RankGroup(int size, RankFn fn, RankSetup setup = {});
  ~RankGroup();  // kills and reaps whatever still runs
  pid_t pid(int rank) const { return pids_[rank]; }
  void kill(int rank, int sig);
  // Waits for every rank, at most timeoutSec in all; stragglers are SIGKILLed (timedOut).
  std::vector<RankResult> wait(double timeoutSec);

 private:
  std::vector<pid_t> pids_;
  std::vector<int> reportFds_;
  bool waited_ = false;
};

// Runs and waits; on top, formats every failed rank's result into `failures`.
std::vector<RankResult> runRanks(int size, RankFn fn, double timeoutSec = 120,
                                 RankSetup setup = {});
// "rank 2: exit 1: <report>" for each rank that did not succeed; empty if all did.
std::string describeFailures(const std::vector<RankResult>& results);
// Whether `text` says "rank <r>" (and not, for r = 1, "rank 12").
bool namesRank(const std::string& text, int r);
// The state letter of a process in /proc (R, S, T stopped, Z exited but not reaped), or 0 when
// there is none: how a test sees, without reaping, that a rank stopped or finished.
char processState(pid_t pid);

}  // namespace chorus::test
