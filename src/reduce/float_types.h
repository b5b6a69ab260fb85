// Conversions between float and the narrow floating-point formats Chorus reduces: IEEE binary16
// (fp16), bfloat16, and the two OCP FP8 formats (e4m3, e5m2). Everything is integer bit
// manipulation so that CPU kernels and (later) CUDA kernels share the exact same rounding: a
// reduction gives bit-identical results whichever device computed it.
//
// Rules, for every float->narrow conversion:
//  - round to nearest, ties to even, including into and out of the subnormal range;
//  - fp16/bf16 overflow to +-inf; fp8 saturates to +-max finite (CUDA's __NV_SATFINITE), and
//    so does an infinite input, because e4m3 has no infinity and saturating both formats the
//    same way keeps Avg/PreMulSum from turning large-but-finite inputs into NaN-like codes;
//  - NaN stays NaN (quiet; fp16/bf16 keep the top payload bits, matching F16C's vcvtps2ph).
//
// The functions are `static inline` on purpose: this header is included by translation units
// compiled with different -m flags (scalar, AVX2, AVX-512). With external linkage the linker
// would keep one out-of-line copy for all of them, possibly one using AVX-512 instructions.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define CHORUS_HD __host__ __device__
#else
#define CHORUS_HD
#endif

namespace chorus {

CHORUS_HD static inline uint32_t floatToBits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
#endif
}

CHORUS_HD static inline float bitsToFloat(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
#endif
}

CHORUS_HD static inline int countLeadingZeros32(uint32_t x) {  // x != 0
#if defined(__CUDA_ARCH__)
  return __clz(x);
#else
  return __builtin_clz(x);
#endif
}

// Describes one narrow format for the generic encoder/decoder below. kOverflow is what a
// too-large magnitude becomes: the infinity code, or the max finite code when saturating.
struct Fp16Format {
  static constexpr int kMan = 10, kBias = 15, kSignShift = 15;
  static constexpr uint32_t kMaxFinite = 0x7bff, kOverflow = 0x7c00, kExpAllOnes = 0x1f;
  static constexpr bool kHasInf = true;
  CHORUS_HD static uint32_t nan(uint32_t a) { return 0x7e00 | ((a >> 13) & 0x3ff); }
};
struct Bf16Format {
  static constexpr int kMan = 7, kBias = 127, kSignShift = 15;
  static constexpr uint32_t kMaxFinite = 0x7f7f, kOverflow = 0x7f80, kExpAllOnes = 0xff;
  static constexpr bool kHasInf = true;
  CHORUS_HD static uint32_t nan(uint32_t a) { return 0x7fc0 | ((a >> 16) & 0x7f); }
};
struct E4m3Format {  // no infinities; S.1111.111 is the only NaN, so 0x7e (448) is the max
  static constexpr int kMan = 3, kBias = 7, kSignShift = 7;
  static constexpr uint32_t kMaxFinite = 0x7e, kOverflow = 0x7e, kExpAllOnes = 0xf;
  static constexpr bool kHasInf = false;
  CHORUS_HD static uint32_t nan(uint32_t) { return 0x7f; }
};
struct E5m2Format {  // IEEE-like: exponent 11111 is inf/NaN, max finite 0x7b (57344)
  static constexpr int kMan = 2, kBias = 15, kSignShift = 7;
  static constexpr uint32_t kMaxFinite = 0x7b, kOverflow = 0x7b, kExpAllOnes = 0x1f;
  static constexpr bool kHasInf = true;
  CHORUS_HD static uint32_t nan(uint32_t) { return 0x7e; }
};

template <class F>
CHORUS_HD static inline uint32_t encodeNarrow(float f) {
  const uint32_t x = floatToBits(f);
  const uint32_t sign = (x >> 31) << F::kSignShift;
  const uint32_t a = x & 0x7fffffffu;
  if (a > 0x7f800000u) return sign | F::nan(a);
  if (a == 0x7f800000u) return sign | F::kOverflow;
  // Split into an unbiased exponent and a significand with its implicit bit (float
  // subnormals have none and the minimum exponent).
  const uint32_t field = a >> 23;
  uint32_t m = a & 0x7fffffu;
  int e = -126;
  if (field != 0) {
    e = static_cast<int>(field) - 127;
    m |= 0x800000u;
  }
  // A normal result keeps the implicit bit in m: adding it to exponent field (e+bias-1) yields
  // field e+bias, and a rounding carry out of the mantissa bumps the exponent for free. A
  // subnormal result shifts further right, and rounding up to 2^kMan lands on the min normal.
  int shift = 23 - F::kMan;
  uint32_t base = 0;
  if (e >= 1 - F::kBias)
    base = static_cast<uint32_t>(e + F::kBias - 1) << F::kMan;
  else
    shift += 1 - F::kBias - e;
  if (shift > 24) return sign;  // below half the smallest subnormal: rounds to (signed) zero
  uint32_t q = m >> shift;
  const uint32_t rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
  q += (rem > half || (rem == half && (q & 1))) ? 1u : 0u;
  const uint32_t r = base + q;
  return sign | (r > F::kMaxFinite ? F::kOverflow : r);
}

template <class F>
CHORUS_HD static inline float decodeNarrow(uint32_t h) {
  const uint32_t sign = ((h >> F::kSignShift) & 1u) << 31;
  const uint32_t manMask = (1u << F::kMan) - 1;
  uint32_t field = (h >> F::kMan) & F::kExpAllOnes;
  uint32_t man = h & manMask;
  if (field == F::kExpAllOnes) {
    if (F::kHasInf) return bitsToFloat(sign | 0x7f800000u | (man << (23 - F::kMan)));
    if (man == manMask) return bitsToFloat(sign | 0x7fc00000u);
  }
  int e = static_cast<int>(field) - F::kBias;
  if (field == 0) {
    if (man == 0) return bitsToFloat(sign);
    // Subnormal: normalise so the leading one becomes the implicit bit; float has the range.
    const int s = countLeadingZeros32(man) - (31 - F::kMan);
    man = (man << s) & manMask;
    e = 1 - F::kBias - s;
  }
  return bitsToFloat(sign | static_cast<uint32_t>(e + 127) << 23 | man << (23 - F::kMan));
}

CHORUS_HD static inline uint16_t floatToHalfBits(float f) {
  return static_cast<uint16_t>(encodeNarrow<Fp16Format>(f));
}
CHORUS_HD static inline float halfBitsToFloat(uint16_t h) {
  return decodeNarrow<Fp16Format>(h);
}

CHORUS_HD static inline uint16_t floatToBf16Bits(float f) {
  return static_cast<uint16_t>(encodeNarrow<Bf16Format>(f));
}
// bf16 is the top half of a float, subnormals included, so widening is a shift.
CHORUS_HD static inline float bf16BitsToFloat(uint16_t h) {
  return bitsToFloat(static_cast<uint32_t>(h) << 16);
}

CHORUS_HD static inline uint8_t floatToE4m3Bits(float f) {
  return static_cast<uint8_t>(encodeNarrow<E4m3Format>(f));
}
CHORUS_HD static inline float e4m3BitsToFloat(uint8_t h) {
  return decodeNarrow<E4m3Format>(h);
}

CHORUS_HD static inline uint8_t floatToE5m2Bits(float f) {
  return static_cast<uint8_t>(encodeNarrow<E5m2Format>(f));
}
CHORUS_HD static inline float e5m2BitsToFloat(uint8_t h) {
  return decodeNarrow<E5m2Format>(h);
}

}  // namespace chorus
