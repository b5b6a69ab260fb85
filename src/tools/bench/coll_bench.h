// nccl-tests-style sweeps of one collective over a Backend: for each size, a checked call, a
// warm-up, then timed calls, out of place and in place; rank 0 prints one row per size.
#pragma once

#include <vector>

#include "backend.h"
#include "options.h"
#include "report.h"

namespace chorus::bench {

// Returns the exit code: 0, 1 on a library error, 3 when results were wrong.
// The rows measured are appended to *rows (rank 0's copy is the one with the table's numbers).
int runCollective(const Options& o, Backend& b, std::vector<CollRow>* rows);

// Times every call of a loop separately, then takes, per iteration, the slowest rank's time:
// a collective is as slow as its last rank. Iteration counts come from a time budget so a
// sweep from 8 B to 256 MiB takes seconds, not minutes. Shared with the point-to-point tests.
class Timer {
 public:
  Timer(const Options& o, Backend& b) : o_(o), b_(b) {}
  // Picks the iteration count for a call that took `oneCallUs` here (agreed by all ranks).
  Status iterations(double oneCallUs, int* iters);
  // Per-iteration microseconds, maximum over ranks, summarised.
  Status summarize(std::vector<double>& samplesUs, Summary* out);
  // Sums a count over all ranks (#wrong).
  Status sum(double* v);

 private:
  const Options& o_;
  Backend& b_;
};

}  // namespace chorus::bench
