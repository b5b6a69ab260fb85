#include "engine/cpu_engine.h"

namespace chorus {

CpuEngine& CpuEngine::get() {
  static CpuEngine engine(CpuReducer::get());
  return engine;
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
