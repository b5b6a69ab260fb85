// Per-element arithmetic shared by the CUDA kernels: loads widen to a compute type (float for
// the narrow floats), ops match the CPU reducer's semantics exactly, stores round to nearest
// even through the same conversions the CPU uses.
#pragma once

#include <cstdint>

#include "reduce/float_types.h"

namespace chorus::cuda {

struct Half {
  uint16_t bits;
};
struct Bf16 {
  uint16_t bits;
};
struct E4m3 {
  uint8_t bits;
};
struct E5m2 {
  uint8_t bits;
};

template <typename T>
struct Compute {
  using type = T;
};
template <>
struct Compute<Half> {
  using type = float;
};
template <>
struct Compute<Bf16> {
  using type = float;
};
template <>
struct Compute<E4m3> {
  using type = float;
};
template <>
struct Compute<E5m2> {
  using type = float;
};

template <typename T>
CHORUS_HD inline typename Compute<T>::type load(T v) {
  return v;
}
CHORUS_HD inline float load(Half v) {
  return halfBitsToFloat(v.bits);
}
CHORUS_HD inline float load(Bf16 v) {
  return bf16BitsToFloat(v.bits);
}
CHORUS_HD inline float load(E4m3 v) {
  return e4m3BitsToFloat(v.bits);
}
CHORUS_HD inline float load(E5m2 v) {
  return e5m2BitsToFloat(v.bits);
}

template <typename T>
CHORUS_HD inline T store(typename Compute<T>::type v) {
  return T(v);
}
template <>
CHORUS_HD inline Half store<Half>(float v) {
  return {floatToHalfBits(v)};
}
template <>
CHORUS_HD inline Bf16 store<Bf16>(float v) {
  return {floatToBf16Bits(v)};
}
template <>
CHORUS_HD inline E4m3 store<E4m3>(float v) {
  return {floatToE4m3Bits(v)};
}
template <>
CHORUS_HD inline E5m2 store<E5m2>(float v) {
  return {floatToE5m2Bits(v)};
}

// Integers wrap: do the arithmetic in the unsigned type of the same width.
template <typename T>
struct Wrap {
  using type = T;
};
template <>
struct Wrap<int8_t> {
  using type = uint8_t;
};
template <>
struct Wrap<int32_t> {
  using type = uint32_t;
};
template <>
struct Wrap<int64_t> {
  using type = uint64_t;
};

template <typename C>
CHORUS_HD inline bool isNan(C x) {
  return x != x;
}

template <typename T>
CHORUS_HD inline T opSum(T a, T b) {
  using C = typename Compute<T>::type;
  using W = typename Wrap<C>::type;
  return store<T>(C(W(load(a)) + W(load(b))));
}
template <typename T>
CHORUS_HD inline T opProd(T a, T b) {
  using C = typename Compute<T>::type;
  using W = typename Wrap<C>::type;
  return store<T>(C(W(load(a)) * W(load(b))));
}
// NaN wins (a's first); on a tie b is returned, like the CPU kernels.
template <typename T>
CHORUS_HD inline T opMax(T a, T b) {
  auto x = load(a), y = load(b);
  if (isNan(x)) return a;
  if (isNan(y)) return b;
  return x > y ? a : b;
}
template <typename T>
CHORUS_HD inline T opMin(T a, T b) {
  auto x = load(a), y = load(b);
  if (isNan(x)) return a;
  if (isNan(y)) return b;
  return x < y ? a : b;
}

}  // namespace chorus::cuda
