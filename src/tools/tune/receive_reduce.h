// chorus-tune's reducer figure, as the executor pays it: a receive-reduce reads a message a
// peer on another core just wrote, so it runs slower than a reducer over two local arrays. A
// 2-rank allreduce forced to one_shot is exactly a send and a receive-reduce of the whole vector
// on each rank; its time, walked through the cost model with the link figures already fitted,
// gives the rate.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "chorus/communicator.h"
#include "topo/topology.h"
#include "tune/cost_model.h"

namespace chorus::tune {

// The sizes timed, all well inside the cache (2 ranks x input and output: 32 MiB at most).
const std::vector<size_t>& receiveReduceSizes();

// Times the forced one_shot allreduce between ranks 0 and 1 (the others only join the split):
// per size, the median over `reps` of the mean of `iters` calls, in microseconds as rank 0
// sees it. Every rank must call it.
Status measureOneShot(Communicator& c, int iters, int reps,
                      std::vector<std::pair<size_t, double>>* out);

// The model's time of that allreduce for `bytes` on ranks 0 and 1 of `t`.
double predictOneShot(const topo::Topology& t, const CostParams& p, size_t bytes);

// The hostReduceGBs at which predictOneShot best matches `measured` (least squares of the
// relative error); `t` carries every other figure already.
double fitReduceRate(topo::Topology t, const CostParams& p,
                     const std::vector<std::pair<size_t, double>>& measured);

}  // namespace chorus::tune
