// AVX-512 kernels: as kernels_avx2.cc, with 16 lanes and mask registers for the NaN patch-up.
#include <immintrin.h>

// GCC 12 warns about the _mm512_undefined_*() placeholders inside its own intrinsics once they
// are inlined (GCC bug 105593, fixed in 13); nothing in this file reads an undefined value.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ < 13
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include "reduce/kernels.h"
#include "reduce/kernels_impl.h"

namespace chorus {
namespace {

struct VF16 {
  __m512 v;
};
inline __mmask16 isNan(__m512 a) {
  return _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q);
}
inline VF16 sumOf(VF16 a, VF16 b) {
  return {_mm512_add_ps(a.v, b.v)};
}
inline VF16 prodOf(VF16 a, VF16 b) {
  return {_mm512_mul_ps(a.v, b.v)};
}
inline VF16 divOf(VF16 a, VF16 b) {
  return {_mm512_div_ps(a.v, b.v)};
}
// maxps/minps return b when either input is NaN; patch a's NaN back in to match maxOf().
inline VF16 maxOf(VF16 a, VF16 b) {
  return {_mm512_mask_blend_ps(isNan(a.v), _mm512_max_ps(a.v, b.v), a.v)};
}
inline VF16 minOf(VF16 a, VF16 b) {
  return {_mm512_mask_blend_ps(isNan(a.v), _mm512_min_ps(a.v, b.v), a.v)};
}

struct Fp16Avx512 : Fp16Scalar {
  using Vec = VF16;
  static constexpr size_t kLanes = 16;
  static Vec broadcast(float s) { return {_mm512_set1_ps(s)}; }
  static Vec loadVec(const uint16_t* p) {
    return {_mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)))};
  }
  static void storeVec(uint16_t* p, Vec v) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p),
                        _mm512_cvtps_ph(v.v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
};

struct Bf16Avx512 : Bf16Scalar {
  using Vec = VF16;
  static constexpr size_t kLanes = 16;
  static Vec broadcast(float s) { return {_mm512_set1_ps(s)}; }
  static Vec loadVec(const uint16_t* p) {
    __m512i w = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
    return {_mm512_castsi512_ps(_mm512_slli_epi32(w, 16))};
  }
  static void storeVec(uint16_t* p, Vec v) {
    const __m512i x = _mm512_castps_si512(v.v);
    const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(x, 16), _mm512_set1_epi32(1));
    const __m512i bias = _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff));
    const __m512i rne = _mm512_srli_epi32(_mm512_add_epi32(x, bias), 16);
    const __m512i nan = _mm512_or_si512(_mm512_srli_epi32(x, 16), _mm512_set1_epi32(0x40));
    const __m512i r = _mm512_mask_blend_epi32(isNan(v.v), rne, nan);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtepi32_epi16(r));
  }
};

}  // namespace

void fillAvx512Kernels(CpuReducer* r) {
  r->isa_ = "avx512";
  fillAllTypes<Fp16Avx512, Bf16Avx512, E4m3Fast, E5m2Fast>(r);
}

}  // namespace chorus
