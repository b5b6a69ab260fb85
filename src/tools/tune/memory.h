// chorus-tune's memory calibration: where this host's cache ends and what a byte that misses it
// costs, as the cost model's memory line (Topology::cacheMiB, missGBs) takes them.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "chorus/communicator.h"

namespace chorus::tune {

struct MemoryPoint {
  size_t workingSetBytes = 0;  // all the host's copying ranks' source and destination together
  double nsPerByte = 0;        // rank 0's fastest pass, per byte copied
};

struct MemoryFit {
  std::vector<MemoryPoint> points;
  bool knee = false;  // the time per byte rose past the cache; false: no figures to write
  double cacheMiB = 0, allMissMiB = 0, missGBs = 0;  // as Topology has them
};

// Every rank copies, at the same time, a source to a destination in chunkBytes pieces (the
// executor's copies), for host working sets from 16 MiB doubling to maxWorkingSet, sharing
// each working set among the `localRanks` ranks on rank 0's host. Every rank must call it
// with the same arguments (it runs barriers); rank 0's figures are the ones fitted.
Status measureMemory(Communicator& c, int localRanks, size_t chunkBytes, size_t maxWorkingSet,
                     int reps, MemoryFit* out);

// The fit, from the points alone: in cache, the time per byte of the smallest working sets;
// out of cache, that of the largest. Along the way, a working set's share of misses is where its
// time per byte lies between the two: cacheMiB is the last working set of the first run under
// 10%, allMissMiB the first one after it over 90% (a sweep over and over reuses each byte
// after a working set's worth of traffic, so these are reuse distances too). A copied byte that
// misses costs three bytes of memory traffic (the source read, the destination's read for
// ownership and its write-back), so missGBs = 3 / (extra ns per copied byte). No rise (the
// largest under 1.25 times the smallest) leaves knee false: the cache may be larger than tried.
void fitMemory(MemoryFit* fit);

// "16 MiB 0.067 ns/B; 32 MiB ..." for the tuning file's comments.
std::string describeMemory(const MemoryFit& fit);

}  // namespace chorus::tune
