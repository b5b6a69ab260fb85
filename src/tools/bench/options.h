// The command line of chorus-bench, one subcommand per test. Collectives take nccl-tests' short
// options, point-to-point tests take OSU's (the two disagree on -f and -c, so each command reads
// its own set), and the rest are long options common to all.
#pragma once

#include <string>
#include <vector>

#include "chorus/types.h"
#include "report.h"

namespace chorus::bench {

enum class Placement { OutOfPlace, InPlace, Both };

struct Options {
  std::string command;          // allreduce ... sendrecv, latency, bw, bibw, compare
  std::string impl = "chorus";  // chorus | mpi | gloo

  // Sweep (collectives: -b -e -f; point-to-point: -m min:max, always doubling).
  size_t minBytes = 8, maxBytes = 64 << 20;
  double factor = 2;
  int iters = 0;  // 0: as many as fit in budgetSec (at least 5, at most 1000)
  int warmup = 5;
  double budgetSec = 0.2;  // time spent timing each size when iters == 0
  DataType dtype = DataType::Float32;
  RedOp op = RedOp::Sum;
  int root = 0;
  bool check = true;
  Placement placement = Placement::Both;
  std::string alloc = "malloc";  // malloc | shared (chorus::allocateShared)

  // Point-to-point (OSU): window of messages in flight for bw/bibw, -f full statistics.
  int window = 64;
  bool full = false;

  Format format = Format::Table;
  std::string plot;   // .svg or .png
  int progress = -1;  // -1: when stderr is a terminal

  // Gloo: where the file store lives, the address its TCP pairs bind, the allreduce algorithm.
  std::string glooStore = "/tmp";
  std::string glooHost = "127.0.0.1";
  std::string glooAlgo = "ring";  // ring | bcube | hd (halving-doubling)

  // compare: ranks, which implementations, extra mpirun arguments; the collective and its
  // options follow the name and are passed through to every run.
  int ranks = 2;
  std::vector<std::string> impls;
  std::string mpirunArgs;
  std::vector<std::string> passThrough;
};

bool isCollective(const std::string& name);

// On the tools' option layer (src/tools/cli): -1 when the run should go on, otherwise the exit
// status once the help, the version or the usage error is printed.
int parseOptions(int argc, char** argv, Options* o);

}  // namespace chorus::bench
