#include "engine/stream_copy.h"

#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

namespace chorus {

void streamCopy(void* dst, const void* src, size_t bytes) {
#if defined(__x86_64__)
  auto* d = static_cast<char*>(dst);
  auto* s = static_cast<const char*>(src);
  // Whole cache lines of the destination only: a partly written line would be read in anyway.
  const size_t head = (64 - reinterpret_cast<uintptr_t>(d) % 64) % 64;
  if (bytes < head + 64) {
    memcpy(d, s, bytes);
    return;
  }
  memcpy(d, s, head);
  d += head, s += head, bytes -= head;
  const size_t body = bytes & ~size_t(63);
  for (size_t i = 0; i < body; i += 64) {  // SSE2: in every x86-64, as wide as the stores need
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 16));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 32));
    const __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 48), e);
  }
  _mm_sfence();
  memcpy(d + body, s + body, bytes - body);
#else
  memcpy(dst, src, bytes);
#endif
}

}  // namespace chorus
