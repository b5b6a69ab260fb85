// The reduction loops, written once and instantiated by each per-ISA translation unit
// (kernels_scalar.cc, kernels_avx2.cc, kernels_avx512.cc), whose -m flags decide what the
// compiler vectorises them into.
//
// Terms: a Codec says how one element type is stored (S) and computed (C): fp16 is stored as
// uint16_t and computed in float. Codecs for which auto-vectorisation fails (the narrow float
// formats) may also offer a vector path: a wrapper type Vec of kLanes elements with
// loadVec/storeVec/broadcast, plus sumOf/prodOf/maxOf/minOf/divOf overloads for Vec found by
// argument-dependent lookup. The loops use it for whole vectors and the scalar path for the tail,
// and both compute the same operation in the same precision, so results do not depend on the
// ISA or on where a chunk boundary falls.
//
// Everything here is in an anonymous namespace: each ISA's instantiations must stay private to
// its TU, or the linker could hand the scalar dispatcher an AVX-512 copy of an inline function.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "reduce/float_types.h"
#include "reduce/reducer.h"

namespace chorus {
namespace {

// Wrapping integer arithmetic without signed-overflow UB: compute in the unsigned type. For
// 8-bit types the operands promote to int, where the product of two bytes cannot overflow.
template <class T>
inline T sumOf(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}
template <class T>
inline T prodOf(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
  } else {
    return a * b;
  }
}
// Floating-point max/min propagate NaN (a NaN in either input gives NaN; a's if both are). On
// equal inputs (+0 vs -0) b is returned. This is exactly x86 maxps(a, b) = a > b ? a : b with a
// NaN in a patched in, so vector and scalar paths agree bit for bit.
// Float picks go through selectBits for the same reason as in the FP8 codecs below (a branch
// here would strand the codecs' float arithmetic in branches and stop vectorisation); the
// comparisons are the quiet built-ins so that nothing in them can trap either.
inline uint32_t selectBits(bool c, uint32_t ifTrue, uint32_t ifFalse) {
  const uint32_t m = 0u - static_cast<uint32_t>(c);
  return (ifTrue & m) | (ifFalse & ~m);
}
template <class T>
inline T pick(bool takeA, T a, T b) {
  if constexpr (std::is_same_v<T, float>)
    return bitsToFloat(selectBits(takeA, floatToBits(a), floatToBits(b)));
  else
    return takeA ? a : b;
}
template <class T>
inline T maxOf(T a, T b) {
  if constexpr (std::is_integral_v<T>)
    return a > b ? a : b;
  else
    return pick(__builtin_isunordered(a, a) || __builtin_isgreater(a, b), a, b);
}
template <class T>
inline T minOf(T a, T b) {
  if constexpr (std::is_integral_v<T>)
    return a < b ? a : b;
  else
    return pick(__builtin_isunordered(a, a) || __builtin_isless(a, b), a, b);
}

struct OpSum {
  template <class C>
  static C apply(C a, C b) {
    return sumOf(a, b);
  }
};
struct OpProd {
  template <class C>
  static C apply(C a, C b) {
    return prodOf(a, b);
  }
};
struct OpMax {
  template <class C>
  static C apply(C a, C b) {
    return maxOf(a, b);
  }
};
struct OpMin {
  template <class C>
  static C apply(C a, C b) {
    return minOf(a, b);
  }
};

// Types computed in their own precision.
template <class T>
struct NativeCodec {
  using S = T;
  using C = T;
  static C load(S v) { return v; }
  static S store(C v) { return v; }
};

// Narrow floats computed in float, rounded once per operation.
struct Fp16Scalar {
  using S = uint16_t;
  using C = float;
  static C load(S v) { return halfBitsToFloat(v); }
  static S store(C v) { return floatToHalfBits(v); }
};
struct Bf16Scalar {
  using S = uint16_t;
  using C = float;
  static C load(S v) { return bf16BitsToFloat(v); }
  static S store(C v) { return floatToBf16Bits(v); }
};
struct E4m3Scalar {
  using S = uint8_t;
  using C = float;
  static C load(S v) { return e4m3BitsToFloat(v); }
  static S store(C v) { return floatToE4m3Bits(v); }
};
struct E5m2Scalar {
  using S = uint8_t;
  using C = float;
  static C load(S v) { return e5m2BitsToFloat(v); }
  static S store(C v) { return floatToE5m2Bits(v); }
};

// FP8 codecs the compiler can vectorise: the same results as float_types.h bit for bit (the
// tests check every ISA against it), but branch-free, with float arithmetic doing the
// subnormal work. Host-only: they rely on the CPU not flushing subnormals (MXCSR default).
//  - decode: placing the code's exponent and mantissa at the bottom of a float's exponent and
//    top of its mantissa gives a float 2^(127-bias) too small, subnormals included; one exact
//    multiplication rescales it.
//  - encode: magnitudes are clamped to the max finite value first (saturation), normal results
//    round to nearest even with the usual add-and-shift on the float bits, and subnormal results
//    come from adding a power of two whose ulp is the format's subnormal step, so the FPU's
//    round-to-nearest-even does the rounding.
// Selects are written as bit masks, not `?:`: GCC would sink each float operation into the
// branch that uses it and then (with its default -ftrapping-math) refuse to if-convert it back
// without AVX-512 masking, leaving a branchy loop it cannot vectorise.
template <int kMan, int kBias, uint32_t kMaxBits, uint32_t kMinNormalBits, uint32_t kMagicBits>
struct Fp8Fast {
  static float decodeMag(uint32_t mag) {
    return bitsToFloat(mag << (23 - kMan)) * bitsToFloat(static_cast<uint32_t>(254 - kBias) << 23);
  }
  static uint32_t encodeMag(uint32_t a) {  // a: |x| bits, not NaN
    const uint32_t c = a < kMaxBits ? a : kMaxBits;
    const uint32_t lsb = (c >> (23 - kMan)) & 1;
    const uint32_t normal = ((c + (1u << (22 - kMan)) - 1 + lsb) >> (23 - kMan)) -
                            (static_cast<uint32_t>(127 - kBias) << kMan);
    const uint32_t sub = floatToBits(bitsToFloat(c) + bitsToFloat(kMagicBits)) - kMagicBits;
    return selectBits(c < kMinNormalBits, sub, normal);
  }
};
// 448 = 0x43e00000, 2^-6 = 0x3c800000, 2^14 (ulp 2^-9) = 0x46800000.
using E4m3Math = Fp8Fast<3, 7, 0x43e00000u, 0x3c800000u, 0x46800000u>;
// 57344 = 0x47600000, 2^-14 = 0x38800000, 2^7 (ulp 2^-16) = 0x43000000.
using E5m2Math = Fp8Fast<2, 15, 0x47600000u, 0x38800000u, 0x43000000u>;

struct E4m3Fast : E4m3Scalar {
  static C load(S v) {
    const uint32_t mag = v & 0x7fu;
    const uint32_t finite = floatToBits(E4m3Math::decodeMag(mag));
    const uint32_t bits = selectBits(mag == 0x7f, 0x7fc00000u, finite);
    return bitsToFloat(bits | static_cast<uint32_t>(v & 0x80u) << 24);
  }
  static S store(C f) {
    const uint32_t x = floatToBits(f), a = x & 0x7fffffffu;
    const uint32_t finite = E4m3Math::encodeMag(a);
    const uint32_t code = selectBits(a > 0x7f800000u, 0x7fu, finite);
    return static_cast<S>(((x >> 24) & 0x80u) | code);
  }
};
struct E5m2Fast : E5m2Scalar {
  static C load(S v) {
    const uint32_t mag = v & 0x7fu;
    const uint32_t special = 0x7f800000u | (mag & 3u) << 21;  // inf, or NaN with its payload
    const uint32_t finite = floatToBits(E5m2Math::decodeMag(mag));
    const uint32_t bits = selectBits(mag >= 0x7c, special, finite);
    return bitsToFloat(bits | static_cast<uint32_t>(v & 0x80u) << 24);
  }
  static S store(C f) {
    const uint32_t x = floatToBits(f), a = x & 0x7fffffffu;
    const uint32_t finite = E5m2Math::encodeMag(a);
    const uint32_t code = selectBits(a > 0x7f800000u, 0x7eu, finite);
    return static_cast<S>(((x >> 24) & 0x80u) | code);
  }
};

template <class Codec, class = void>
struct HasVec : std::false_type {};
template <class Codec>
struct HasVec<Codec, std::void_t<typename Codec::Vec>> : std::true_type {};

// The loops below carry `ivdep` because dst may alias a source exactly: element i is read
// before it is written and no iteration touches another's elements, so vectorising is safe,
// but the compiler cannot prove it and would otherwise fall back to scalar code when it sees
// the overlap at run time.
template <class Codec, class Op>
void reduceKernel(void* dst, const void* a, const void* b, size_t n) {
  using S = typename Codec::S;
  S* d = static_cast<S*>(dst);
  const S* x = static_cast<const S*>(a);
  const S* y = static_cast<const S*>(b);
  size_t i = 0;
  if constexpr (HasVec<Codec>::value) {
    for (; i + Codec::kLanes <= n; i += Codec::kLanes)
      Codec::storeVec(d + i, Op::apply(Codec::loadVec(x + i), Codec::loadVec(y + i)));
  }
#pragma GCC ivdep
  for (; i < n; ++i) d[i] = Codec::store(Op::apply(Codec::load(x[i]), Codec::load(y[i])));
}

template <class Codec>
void scaleKernel(void* dst, const void* src, size_t n, const void* scalar) {
  using S = typename Codec::S;
  S* d = static_cast<S*>(dst);
  const S* x = static_cast<const S*>(src);
  const typename Codec::C s = Codec::load(*static_cast<const S*>(scalar));
  size_t i = 0;
  if constexpr (HasVec<Codec>::value) {
    const typename Codec::Vec vs = Codec::broadcast(s);
    for (; i + Codec::kLanes <= n; i += Codec::kLanes)
      Codec::storeVec(d + i, prodOf(Codec::loadVec(x + i), vs));
  }
#pragma GCC ivdep
  for (; i < n; ++i) d[i] = Codec::store(prodOf(Codec::load(x[i]), s));
}

// Truncating integer division done on magnitudes, so that no divisor (even one above
// INT64_MAX) and no dividend (even INT64_MIN) reaches an overflowing signed division.
template <class T>
inline T divideInt(T x, uint64_t divisor) {
  if constexpr (std::is_signed_v<T>) {
    const uint64_t mag = x < 0 ? 0 - static_cast<uint64_t>(x) : static_cast<uint64_t>(x);
    const uint64_t q = mag / divisor;
    return static_cast<T>(x < 0 ? 0 - q : q);
  } else {
    return static_cast<T>(x / divisor);
  }
}

template <class Codec>
void divideKernel(void* dst, const void* src, size_t n, uint64_t divisor) {
  using S = typename Codec::S;
  using C = typename Codec::C;
  S* d = static_cast<S*>(dst);
  const S* x = static_cast<const S*>(src);
  if constexpr (std::is_integral_v<C>) {
    for (size_t i = 0; i < n; ++i) d[i] = divideInt(x[i], divisor);
  } else {
    const C dv = static_cast<C>(divisor);
    size_t i = 0;
    if constexpr (HasVec<Codec>::value) {
      const typename Codec::Vec vd = Codec::broadcast(dv);
      for (; i + Codec::kLanes <= n; i += Codec::kLanes)
        Codec::storeVec(d + i, divOf(Codec::loadVec(x + i), vd));
    }
#pragma GCC ivdep
    for (; i < n; ++i) d[i] = Codec::store(Codec::load(x[i]) / dv);
  }
}

template <class Codec>
void fillType(CpuReducer* r, DataType t) {
  const int ti = static_cast<int>(t);
  r->reduce_[ti][static_cast<int>(RedOp::Sum)] = &reduceKernel<Codec, OpSum>;
  r->reduce_[ti][static_cast<int>(RedOp::Prod)] = &reduceKernel<Codec, OpProd>;
  r->reduce_[ti][static_cast<int>(RedOp::Max)] = &reduceKernel<Codec, OpMax>;
  r->reduce_[ti][static_cast<int>(RedOp::Min)] = &reduceKernel<Codec, OpMin>;
  r->scale_[ti] = &scaleKernel<Codec>;
  r->divide_[ti] = &divideKernel<Codec>;
}

// Fills every table entry; an ISA passes the codecs it has vector paths for.
template <class Fp16Codec, class Bf16Codec, class E4m3Codec, class E5m2Codec>
void fillAllTypes(CpuReducer* r) {
  fillType<NativeCodec<int8_t>>(r, DataType::Int8);
  fillType<NativeCodec<uint8_t>>(r, DataType::Uint8);
  fillType<NativeCodec<int32_t>>(r, DataType::Int32);
  fillType<NativeCodec<uint32_t>>(r, DataType::Uint32);
  fillType<NativeCodec<int64_t>>(r, DataType::Int64);
  fillType<NativeCodec<uint64_t>>(r, DataType::Uint64);
  fillType<Fp16Codec>(r, DataType::Float16);
  fillType<NativeCodec<float>>(r, DataType::Float32);
  fillType<NativeCodec<double>>(r, DataType::Float64);
  fillType<Bf16Codec>(r, DataType::Bfloat16);
  fillType<E4m3Codec>(r, DataType::Float8E4M3);
  fillType<E5m2Codec>(r, DataType::Float8E5M2);
}

}  // namespace
}  // namespace chorus
