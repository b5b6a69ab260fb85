#include "engine/cpu_engine.h"

#include <algorithm>

namespace chorus {

CpuEngine& CpuEngine::get() {
  static CpuEngine engine(CpuReducer::get());
  return engine;
}

Completion CpuEngine::reduceStreaming(DataType t, RedOp op, MemRef dst, MemRef a, MemRef b,
                                      size_t n) {
  constexpr size_t kPieceBytes = 16 << 10;
  alignas(64) char piece[kPieceBytes];
  const size_t esize = dataTypeSize(t), perPiece = kPieceBytes / esize;
  for (size_t i = 0; i < n; i += perPiece) {
    const size_t k = std::min(perPiece, n - i), off = i * esize;
    // Each piece of a and b is read before the same piece of dst is written: dst may alias.
    reducer_.reduce(t, op, piece, a.ptr + off, b.ptr + off, k);
    streamCopy(dst.ptr + off, piece, k * esize);
  }
  return {};
}

Completion CpuEngine::scale(DataType t, MemRef dst, MemRef src, size_t n, const void* scalar) {
  reducer_.scale(t, dst.ptr, src.ptr, n, scalar);
  return {};
}

Completion CpuEngine::divide(DataType t, MemRef dst, MemRef src, size_t n, uint64_t divisor) {
  reducer_.divide(t, dst.ptr, src.ptr, n, divisor);
  return {};
}

}  // namespace chorus
