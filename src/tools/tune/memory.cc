#include "tools/tune/memory.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "common/clock.h"
#include "tools/tune/fit.h"

namespace chorus::tune {

namespace {
constexpr size_t kSmallest = 16 * kMiB;
constexpr double kKneeRatio = 1.25;
}  // namespace

Status measureMemory(Communicator& c, int localRanks, size_t chunkBytes, size_t maxWorkingSet,
                     int reps, MemoryFit* out) {
  out->points.clear();
  localRanks = std::max(1, localRanks);
  chunkBytes = std::max<size_t>(1, chunkBytes);
  for (size_t ws = kSmallest; ws <= maxWorkingSet; ws *= 2) {
    const size_t bytes = ws / (2 * size_t(localRanks));
    std::vector<char> src(bytes, 1), dst(bytes, 2);  // filled: every page is touched up front
    double best = 0;
    for (int rep = 0; rep <= reps; ++rep) {  // the first pass only warms up
      CHORUS_RETURN_IF_ERROR(c.barrier());
      const int64_t t0 = nowNs();
      for (size_t off = 0; off < bytes; off += chunkBytes)
        memcpy(dst.data() + off, src.data() + off, std::min(chunkBytes, bytes - off));
      const double ns = double(nowNs() - t0);
      if (rep > 0 && (best == 0 || ns < best)) best = ns;
    }
    out->points.push_back({ws, best / double(bytes)});
  }
  return c.barrier();
}

void fitMemory(MemoryFit* fit) {
  fit->knee = false;
  const std::vector<MemoryPoint>& p = fit->points;
  if (p.size() < 3) return;
  const double in = std::min(p[0].nsPerByte, p[1].nsPerByte);
  const double out = p.back().nsPerByte;
  if (out < kKneeRatio * in) return;
  auto share = [&](const MemoryPoint& q) { return (q.nsPerByte - in) / (out - in); };
  size_t i = 0;
  while (i + 1 < p.size() && share(p[i + 1]) <= 0.1) ++i;
  size_t j = i + 1;
  while (j + 1 < p.size() && share(p[j]) < 0.9) ++j;
  fit->knee = true;
  fit->cacheMiB = double(p[i].workingSetBytes) / double(kMiB);
  fit->allMissMiB = double(p[j].workingSetBytes) / double(kMiB);
  fit->missGBs = 3 / (out - in);
}

std::string describeMemory(const MemoryFit& fit) {
  std::string s;
  for (const MemoryPoint& q : fit.points) {
    char buf[64];
    snprintf(buf, sizeof buf, "%s%zu MiB %.3f ns/B", s.empty() ? "" : "; ",
             q.workingSetBytes / kMiB, q.nsPerByte);
    s += buf;
  }
  return s;
}

}  // namespace chorus::tune
