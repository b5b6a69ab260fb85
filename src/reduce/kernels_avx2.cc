// AVX2 kernels. The native types vectorise from the shared loops; fp16 and bf16 get explicit
// 8-lane paths because the compiler cannot see through the bit-level conversions: fp16 through
// F16C, bf16 through 16-bit shifts with the same round-to-nearest-even as float_types.h.
#include <immintrin.h>

#include "reduce/kernels.h"
#include "reduce/kernels_impl.h"

namespace chorus {
namespace {

struct VF8 {
  __m256 v;
};
inline VF8 sumOf(VF8 a, VF8 b) {
  return {_mm256_add_ps(a.v, b.v)};
}
inline VF8 prodOf(VF8 a, VF8 b) {
  return {_mm256_mul_ps(a.v, b.v)};
}
inline VF8 divOf(VF8 a, VF8 b) {
  return {_mm256_div_ps(a.v, b.v)};
}
// maxps/minps return b when either input is NaN; patch a's NaN back in to match maxOf().
inline VF8 maxOf(VF8 a, VF8 b) {
  return {_mm256_blendv_ps(_mm256_max_ps(a.v, b.v), a.v, _mm256_cmp_ps(a.v, a.v, _CMP_UNORD_Q))};
}
inline VF8 minOf(VF8 a, VF8 b) {
  return {_mm256_blendv_ps(_mm256_min_ps(a.v, b.v), a.v, _mm256_cmp_ps(a.v, a.v, _CMP_UNORD_Q))};
}

struct Fp16Avx2 : Fp16Scalar {
  using Vec = VF8;
  static constexpr size_t kLanes = 8;
  static Vec broadcast(float s) { return {_mm256_set1_ps(s)}; }
  static Vec loadVec(const uint16_t* p) {
    return {_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)))};
  }
  static void storeVec(uint16_t* p, Vec v) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p),
                     _mm256_cvtps_ph(v.v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
};

struct Bf16Avx2 : Bf16Scalar {
  using Vec = VF8;
  static constexpr size_t kLanes = 8;
  static Vec broadcast(float s) { return {_mm256_set1_ps(s)}; }
  static Vec loadVec(const uint16_t* p) {
    __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return {_mm256_castsi256_ps(_mm256_slli_epi32(w, 16))};
  }
  static void storeVec(uint16_t* p, Vec v) {
    const __m256i x = _mm256_castps_si256(v.v);
    const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(x, 16), _mm256_set1_epi32(1));
    const __m256i bias = _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7fff));
    const __m256i rne = _mm256_srli_epi32(_mm256_add_epi32(x, bias), 16);
    const __m256i nan = _mm256_or_si256(_mm256_srli_epi32(x, 16), _mm256_set1_epi32(0x40));
    const __m256i isNan = _mm256_castps_si256(_mm256_cmp_ps(v.v, v.v, _CMP_UNORD_Q));
    const __m256i r = _mm256_blendv_epi8(rne, nan, isNan);
    // packus works within 128-bit lanes; the permute gathers the two useful quarters.
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0x08);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_castsi256_si128(packed));
  }
};

}  // namespace

void fillAvx2Kernels(CpuReducer* r) {
  r->isa_ = "avx2";
  fillAllTypes<Fp16Avx2, Bf16Avx2, E4m3Fast, E5m2Fast>(r);
}

}  // namespace chorus
