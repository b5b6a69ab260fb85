// CPU reduction kernels: vectorised loops for every DataType x elementwise op, with the
// instruction set (AVX-512, AVX2, scalar) chosen once at run time. The executor calls these on
// chunks as they arrive, so they must be fast for sizes from a few bytes to a few MiB.
#pragma once

#include <cstddef>
#include <cstdint>

#include "chorus/types.h"

namespace chorus {

class CpuReducer {
 public:
  // The kernels for this CPU. CHORUS_CPU_ISA=scalar|avx2|avx512 forces a level (not above what
  // the CPU supports); the choice is made once per process.
  static const CpuReducer& get();
  // A specific level, for tests and benchmarks; nullptr if the CPU or build lacks it.
  static const CpuReducer* forIsa(const char* isa);

  // dst[i] = a[i] (op) b[i] for i < n. dst may alias a or b exactly (not partially). op must be
  // Sum, Prod, Max or Min (Avg and PreMulSum reduce with Sum; see scale/divide). Integer
  // arithmetic wraps; floating-point types are computed in float (fp16/bf16/fp8) or their own
  // precision (fp32/fp64) and rounded to nearest even.
  void reduce(DataType t, RedOp op, void* dst, const void* a, const void* b, size_t n) const {
    reduce_[static_cast<int>(t)][static_cast<int>(op)](dst, a, b, n);
  }
  // dst[i] = src[i] * (*scalar), with scalar one element of type t. dst may alias src.
  void scale(DataType t, void* dst, const void* src, size_t n, const void* scalar) const {
    scale_[static_cast<int>(t)](dst, src, n, scalar);
  }
  // dst[i] = src[i] / divisor (integer division, truncating, for integer types). dst may alias.
  void divide(DataType t, void* dst, const void* src, size_t n, uint64_t divisor) const {
    divide_[static_cast<int>(t)](dst, src, n, divisor);
  }
  const char* isa() const { return isa_; }

  using ReduceFn = void (*)(void* dst, const void* a, const void* b, size_t n);
  using ScaleFn = void (*)(void* dst, const void* src, size_t n, const void* scalar);
  using DivideFn = void (*)(void* dst, const void* src, size_t n, uint64_t divisor);

  // Filled in by the per-ISA translation units.
  const char* isa_ = "scalar";
  ReduceFn reduce_[kNumDataTypes][4] = {};
  ScaleFn scale_[kNumDataTypes] = {};
  DivideFn divide_[kNumDataTypes] = {};
};

}  // namespace chorus
