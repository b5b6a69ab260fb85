// The numerics chorus-tune's fits share: the median of repeated samples, and a golden-section
// search (a rate is fitted by walking the cost model at candidate values until its predictions
// best match what was measured).
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

namespace chorus::tune {

inline constexpr size_t kMiB = size_t(1) << 20;

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The x in [lo, hi] that minimises error(exp(x)), for an error with one minimum there: rates
// are searched over their logarithm, so 0.01 and 10000 GB/s are equally reachable.
template <class F>
double minimiseOverLog(double lo, double hi, F error) {
  const double g = (std::sqrt(5.0) - 1) / 2;
  lo = std::log(lo), hi = std::log(hi);
  double a = hi - g * (hi - lo), b = lo + g * (hi - lo);
  double ea = error(std::exp(a)), eb = error(std::exp(b));
  for (int i = 0; i < 100 && hi - lo > 1e-6; ++i) {
    if (ea <= eb) {
      hi = b, b = a, eb = ea;
      a = hi - g * (hi - lo), ea = error(std::exp(a));
    } else {
      lo = a, a = b, ea = eb;
      b = lo + g * (hi - lo), eb = error(std::exp(b));
    }
  }
  return std::exp((lo + hi) / 2);
}

}  // namespace chorus::tune
