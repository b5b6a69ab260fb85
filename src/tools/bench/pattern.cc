#include "pattern.h"

#include <cmath>
#include <cstdint>

#include "native_type.h"
#include "reduce/element.h"

namespace chorus::bench {

namespace {

// The types without a native C++ form (fp16, bf16, fp8) go through element.h's conversions,
// which are slower but exact.
template <typename V>
void fill(DataType t, void* buf, size_t n, size_t first, V value) {
  withNativeType(
      t,
      [&](auto x) {
        using T = decltype(x);
        for (size_t k = 0; k < n; ++k) static_cast<T*>(buf)[k] = T(value(first + k));
      },
      [&] {
        for (size_t k = 0; k < n; ++k) storeElement(t, buf, k, value(first + k));
      });
}

// What storing v into type t and reading it back gives.
double rounded(DataType t, double v) {
  alignas(8) unsigned char tmp[8];
  storeElement(t, tmp, 0, v);
  return loadElement(t, tmp, 0);
}

template <typename V>
size_t wrong(DataType t, const void* buf, size_t n, size_t first, V expect, double tol) {
  size_t bad = 0;
  withNativeType(
      t,
      [&](auto x) {
        using T = decltype(x);
        for (size_t k = 0; k < n; ++k) {
          const double e = double(T(expect(first + k)));
          bad += std::fabs(double(static_cast<const T*>(buf)[k]) - e) > tol;
        }
      },
      [&] {
        for (size_t k = 0; k < n; ++k) {
          const double e = rounded(t, expect(first + k));
          bad += std::fabs(loadElement(t, buf, k) - e) > tol * std::fmax(1, std::fabs(e));
        }
      });
  return bad;
}

}  // namespace

double Pattern::reduceInput(int rank, size_t i) const {
  switch (op_) {
    case RedOp::Prod:
      return i % size_t(ranks_) == size_t(rank) ? 2 : 1;  // product: always 2
    case RedOp::Max:
    case RedOp::Min:
      return double((size_t(rank) * 7 + i * 3) % 11);
    default:
      return double((size_t(rank) * 3 + i) % 5);  // sums stay below 5 * ranks
  }
}

double Pattern::reduced(size_t i) const {
  double acc = reduceInput(0, i);
  for (int r = 1; r < ranks_; ++r) {
    const double v = reduceInput(r, i);
    switch (op_) {
      case RedOp::Prod:
        acc *= v;
        break;
      case RedOp::Max:
        acc = std::fmax(acc, v);
        break;
      case RedOp::Min:
        acc = std::fmin(acc, v);
        break;
      default:
        acc += v;
        break;
    }
  }
  if (op_ == RedOp::Avg) acc /= ranks_;
  return acc;
}

double Pattern::moveInput(int rank, size_t i) {
  return double((size_t(rank) * 17 + i * 5) % 61 + 1);
}

void Pattern::fillReduce(void* buf, size_t n, size_t first, int rank) const {
  fill(t_, buf, n, first, [&](size_t i) { return reduceInput(rank, i); });
}

void Pattern::fillMove(void* buf, size_t n, size_t first, int rank) const {
  fill(t_, buf, n, first, [&](size_t i) { return moveInput(rank, i); });
}

size_t Pattern::wrongReduced(const void* buf, size_t n, size_t first) const {
  // Exact for integers and for floats wide enough for these small sums; low-precision floats
  // round at every step of the reduction, in an order each algorithm chooses.
  double tol = isFloatingPoint(t_) ? 4 * ranks_ * unitRoundoff(t_) : 0;
  if (op_ == RedOp::Avg && !isFloatingPoint(t_)) tol = 1;  // integer division may truncate
  if (op_ == RedOp::Avg && isFloatingPoint(t_)) tol = std::fmax(tol, 1e-6);
  return wrong(
      t_, buf, n, first, [&](size_t i) { return reduced(i); }, tol);
}

size_t Pattern::wrongMoved(const void* buf, size_t n, size_t first, int fromRank) const {
  return wrong(
      t_, buf, n, first, [&](size_t i) { return moveInput(fromRank, i); }, 0);
}

}  // namespace chorus::bench
