#include "stats.h"

#include <algorithm>
#include <cstdlib>
#include <numeric>

namespace chorus::bench {

Summary summarize(std::vector<double> v) {
  Summary s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  s.samples = int(n);
  s.min = v.front();
  s.max = v.back();
  s.median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  s.mean = std::accumulate(v.begin(), v.end(), 0.0) / double(n);
  return s;
}

std::string sizeLabel(size_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB"};
  int u = 0;
  while (u < 3 && bytes >= 1024 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++u;
  }
  return std::to_string(bytes) + " " + units[u];
}

double busBwFactor(const std::string& c, int n) {
  if (n <= 1) return 1;
  if (c == "allreduce") return 2.0 * (n - 1) / n;
  if (c == "reduce_scatter" || c == "allgather" || c == "alltoall" || c == "gather" ||
      c == "scatter")
    return double(n - 1) / n;
  return 1;  // broadcast, reduce, sendrecv
}

}  // namespace chorus::bench
