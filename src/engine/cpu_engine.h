// The data engine for host memory: today's SIMD reducers and memcpy, finishing every
// operation before it returns.
#pragma once

#include <cstring>

#include "engine/data_engine.h"
#include "engine/stream_copy.h"
#include "reduce/reducer.h"

namespace chorus {

class CpuEngine final : public DataEngine {
 public:
  explicit CpuEngine(const CpuReducer& reducer) : reducer_(reducer) {}
  // The engine on this CPU's best kernels (CpuReducer::get()).
  static CpuEngine& get();

  const char* name() const override { return reducer_.isa(); }
  bool handles(MemoryKind k) const override { return k == MemoryKind::Host; }
  // Inline, so that a caller holding a CpuEngine (final) pays no call of its own.
  Completion copy(MemRef dst, MemRef src, size_t bytes) override {
    memcpy(dst.ptr, src.ptr, bytes);
    return {};
  }
  // Non-temporal stores (stream_copy.h): twice memcpy's rate into a 256 MiB destination here.
  Completion copyStreaming(MemRef dst, MemRef src, size_t bytes) override {
    streamCopy(dst.ptr, src.ptr, bytes);
    return {};
  }
  Completion reduce(DataType t, RedOp op, MemRef dst, MemRef a, MemRef b, size_t n) override {
    reducer_.reduce(t, op, dst.ptr, a.ptr, b.ptr, n);
    return {};
  }
  // Reduces a few KiB at a time into a buffer that stays in L1, streamed out from there.
  Completion reduceStreaming(DataType t, RedOp op, MemRef dst, MemRef a, MemRef b,
                             size_t n) override;
  Completion scale(DataType t, MemRef dst, MemRef src, size_t n, const void* scalar) override;
  Completion divide(DataType t, MemRef dst, MemRef src, size_t n, uint64_t divisor) override;
  bool test(const Completion&) override { return true; }

 private:
  const CpuReducer& reducer_;
};

}  // namespace chorus
