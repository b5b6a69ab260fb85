#include "engine/cpu_engine.h"

#include <cstring>

namespace chorus {

CpuEngine& CpuEngine::get() {
  static CpuEngine engine(CpuReducer::get());
  return engine;
}

Completion CpuEngine::copy(MemRef dst, MemRef src, size_t bytes) {
  memcpy(dst.ptr, src.ptr, bytes);
  return {};
}

Completion CpuEngine::reduce(DataType t, RedOp op, MemRef dst, MemRef a, MemRef b, size_t n) {
  reducer_.reduce(t, op, dst.ptr, a.ptr, b.ptr, n);
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
