#include "harness/reference.h"

#include <cmath>
#include <cstring>

#include "reduce/element.h"

namespace chorus::test {

namespace {

uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

bool isSigned(DataType t) {
  return t == DataType::Int8 || t == DataType::Int32 || t == DataType::Int64;
}
int bits(DataType t) {
  return int(dataTypeSize(t)) * 8;
}

uint64_t truncTo(DataType t, uint64_t v) {
  int b = bits(t);
  return b == 64 ? v : v & ((uint64_t(1) << b) - 1);
}
int64_t signExtend(DataType t, uint64_t v) {
  int b = bits(t);
  if (b == 64) return int64_t(v);
  uint64_t m = uint64_t(1) << (b - 1);
  v = truncTo(t, v);
  return int64_t((v ^ m) - m);
}

uint64_t rawInt(DataType t, const void* p, size_t i) {
  uint64_t v = 0;
  memcpy(&v, static_cast<const char*>(p) + i * dataTypeSize(t), dataTypeSize(t));
  return v;
}

int64_t smallInt(DataType t, int rank, uint64_t seed, size_t index) {
  uint64_t h = mix(seed * 1000003 + uint64_t(rank) * 7919 + index);
  return isSigned(t) ? int64_t(h % 201) - 100 : int64_t(h % 200);
}

double smallFloat(RedOp op, int rank, uint64_t seed, size_t index) {
  uint64_t h = mix(seed * 1000003 + uint64_t(rank) * 7919 + index);
  if (op == RedOp::Prod) return 1.0 + double(h % 500) / 1000.0;  // [1, 1.5)
  return (double(h % 2001) - 1000.0) / 1000.0;                   // [-1, 1]
}

std::string fmtMismatch(size_t i, double got, double want, double tol) {
  char b[200];
  snprintf(b, sizeof b, "element %zu: got %.9g, expected %.9g (tolerance %.3g); ", i, got, want,
           tol);
  return b;
}

}  // namespace

double inputValue(DataType t, RedOp op, int rank, uint64_t seed, size_t index) {
  if (!isFloatingPoint(t)) return double(smallInt(t, rank, seed, index));
  // Round through the type so the reference sees exactly what the library sees.
  unsigned char tmp[8];
  storeElement(t, tmp, 0, smallFloat(op, rank, seed, index));
  return loadElement(t, tmp, 0);
}

void fillInput(DataType t, RedOp op, int rank, uint64_t seed, void* buf, size_t n,
               size_t firstIndex) {
  for (size_t i = 0; i < n; ++i) {
    if (isFloatingPoint(t)) {
      storeElement(t, buf, i, smallFloat(op, rank, seed, firstIndex + i));
    } else {
      uint64_t v = uint64_t(smallInt(t, rank, seed, firstIndex + i));
      memcpy(static_cast<char*>(buf) + i * dataTypeSize(t), &v, dataTypeSize(t));
    }
  }
}

std::string checkReduced(DataType t, RedOp op, const void* premulScalar, int ranks, uint64_t seed,
                         const void* got, size_t n, size_t indexBase) {
  std::string err;
  int bad = 0;
  for (size_t i = 0; i < n && bad < 5; ++i) {
    const size_t idx = indexBase + i;
    if (!isFloatingPoint(t)) {
      uint64_t scalar = premulScalar ? rawInt(t, premulScalar, 0) : 1;
      uint64_t acc = 0;
      for (int r = 0; r < ranks; ++r) {
        uint64_t x = uint64_t(smallInt(t, r, seed, idx));
        if (op == RedOp::PreMulSum) x *= scalar;
        if (r == 0) {
          acc = x;
          continue;
        }
        switch (op) {
          case RedOp::Prod:
            acc *= x;
            break;
          case RedOp::Max:
          case RedOp::Min: {
            bool less = isSigned(t) ? signExtend(t, x) < signExtend(t, acc)
                                    : truncTo(t, x) < truncTo(t, acc);
            if ((op == RedOp::Min) == less) acc = x;
            break;
          }
          default:
            acc += x;
            break;
        }
      }
      if (op == RedOp::Avg) {
        acc = isSigned(t) ? uint64_t(signExtend(t, acc) / ranks) : truncTo(t, acc) / ranks;
      }
      uint64_t want = truncTo(t, acc), have = rawInt(t, got, i);
      if (want != have) {
        err += fmtMismatch(idx, double(signExtend(t, have)), double(signExtend(t, want)), 0);
        ++bad;
      }
      continue;
    }
    double scalar = premulScalar ? loadElement(t, premulScalar, 0) : 1.0;
    double acc = 0, mag = 0;
    for (int r = 0; r < ranks; ++r) {
      double x = inputValue(t, op, r, seed, idx);
      if (op == RedOp::PreMulSum) x *= scalar;
      mag += std::fabs(x);
      if (r == 0) {
        acc = x;
        continue;
      }
      switch (op) {
        case RedOp::Prod:
          acc *= x;
          break;
        case RedOp::Max:
          acc = std::max(acc, x);
          break;
        case RedOp::Min:
          acc = std::min(acc, x);
          break;
        default:
          acc += x;
          break;
      }
    }
    if (op == RedOp::Avg) {
      acc /= ranks;
      mag /= ranks;
    }
    // Each rounding errs by at most u relative, or by half the smallest subnormal when the
    // value underflows; there are at most ranks + 1 of them (premultiply, adds, divide).
    double u = unitRoundoff(t);
    const uint64_t one = 1;
    double tiny = loadElement(t, &one, 0) / 2;
    double tol = 0;
    if (op == RedOp::Prod) tol = (ranks + 2) * (u * std::fabs(acc) + tiny);
    if (op == RedOp::Sum || op == RedOp::Avg || op == RedOp::PreMulSum)
      tol = (ranks + 2) * (u * mag + tiny);
    double have = loadElement(t, got, i);
    if (!(std::fabs(have - acc) <= tol)) {
      err += fmtMismatch(idx, have, acc, tol);
      ++bad;
    }
  }
  return err;
}

std::string checkCopied(DataType t, RedOp op, int srcRank, uint64_t seed, const void* got, size_t n,
                        size_t indexBase) {
  std::vector<unsigned char> want(n * dataTypeSize(t) + 1);
  fillInput(t, op, srcRank, seed, want.data(), n, indexBase);
  if (n == 0 || memcmp(want.data(), got, n * dataTypeSize(t)) == 0) return "";
  for (size_t i = 0; i < n; ++i) {
    size_t e = dataTypeSize(t);
    if (memcmp(want.data() + i * e, static_cast<const char*>(got) + i * e, e) != 0)
      return "element " + std::to_string(indexBase + i) + " differs from rank " +
             std::to_string(srcRank) + "'s input (" + std::to_string(loadElement(t, got, i)) +
             " vs " + std::to_string(loadElement(t, want.data(), i)) + ")";
  }
  return "";
}

}  // namespace chorus::test
