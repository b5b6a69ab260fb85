// The CPU engine's writes around the caches (engine/stream_copy.h): every length and alignment
// of head, body and tail, and reduceStreaming against the plain reduce, in place too.
#include "engine/stream_copy.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "engine/cpu_engine.h"

namespace chorus {
namespace {

std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = uint8_t(i * 131 + seed);
  return v;
}

TEST(StreamCopy, CopiesEveryLengthAndAlignmentAndNothingElse) {
  const std::vector<uint8_t> src = pattern(4096 + 64, 7);
  for (size_t dstOff : {0, 1, 31, 63})
    for (size_t srcOff : {0, 5, 32})
      for (size_t n : {0, 1, 63, 64, 65, 127, 128, 129, 1000, 4000}) {
        std::vector<uint8_t> dst(4096 + 256, 0xee);
        streamCopy(dst.data() + 64 + dstOff, src.data() + srcOff, n);
        ASSERT_EQ(memcmp(dst.data() + 64 + dstOff, src.data() + srcOff, n), 0)
            << "n " << n << " dst+" << dstOff << " src+" << srcOff;
        for (size_t i = 0; i < 64 + dstOff; ++i) ASSERT_EQ(dst[i], 0xee) << "before, n " << n;
        for (size_t i = 64 + dstOff + n; i < dst.size(); ++i)
          ASSERT_EQ(dst[i], 0xee) << "after, n " << n;
      }
}

TEST(StreamCopy, ReduceStreamingMatchesReduceAcrossPieces) {
  CpuEngine& engine = CpuEngine::get();
  for (size_t n : {size_t(1), size_t(1000), size_t(4096 * 3 + 5), size_t(100000)}) {
    std::vector<float> a(n), b(n), plain(n), streamed(n);
    for (size_t i = 0; i < n; ++i) a[i] = float(i % 97), b[i] = float(i % 13) * 0.5f;
    (void)engine.reduce(DataType::Float32, RedOp::Sum, MemRef::host(plain.data()),
                        MemRef::host(a.data()), MemRef::host(b.data()), n);
    (void)engine.reduceStreaming(DataType::Float32, RedOp::Sum, MemRef::host(streamed.data()),
                                 MemRef::host(a.data()), MemRef::host(b.data()), n);
    EXPECT_EQ(memcmp(plain.data(), streamed.data(), n * sizeof(float)), 0) << n;
    // In place: dst is a.
    (void)engine.reduceStreaming(DataType::Float32, RedOp::Sum, MemRef::host(a.data()),
                                 MemRef::host(a.data()), MemRef::host(b.data()), n);
    EXPECT_EQ(memcmp(plain.data(), a.data(), n * sizeof(float)), 0) << n;
  }
}

}  // namespace
}  // namespace chorus
