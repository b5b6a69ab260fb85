#include "engine/memory.h"

namespace chorus {

const char* memoryKindName(MemoryKind k) {
  switch (k) {
    case MemoryKind::Host:
      return "host memory";
    case MemoryKind::CudaDevice:
      return "CUDA device memory";
    case MemoryKind::Registered:
      return "registered remote memory";
  }
  return "unknown memory";
}

}  // namespace chorus
