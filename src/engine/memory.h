// Where a buffer lives. Schedules name buffers abstractly (BufRef) and know nothing of memory;
// the communicator binds each call's buffers to memory references that carry their kind, so
// that the data engine and the transports know how they may touch them.
#pragma once

#include <cstddef>
#include <cstdint>

namespace chorus {

enum class MemoryKind : uint8_t {
  Host,        // this process's ordinary memory: the CPU reads and writes it
  CudaDevice,  // memory of CUDA device `device` (reserved: the CUDA issue brings its engine)
  Registered,  // a peer's buffer registered with a one-sided transport (RDMA, CUDA IPC),
               // reached only by put/get through that transport; `key` names the registration
};

const char* memoryKindName(MemoryKind k);

// Sixteen bytes, so that it travels in two registers: a 24-byte one, passed through the stack
// to the engine's virtual calls, measured 0.50 -> 0.59 us on a 2-rank 256-byte reduce_scatter
// (perf/ab.sh), the reduce kernel stalling on its first loads.
struct MemRef {
  char* ptr = nullptr;
  uint32_t key = 0;     // Registered: the transport's handle for the registration
  int16_t device = -1;  // CudaDevice: the device ordinal
  MemoryKind kind = MemoryKind::Host;

  static MemRef host(const void* p) { return {static_cast<char*>(const_cast<void*>(p))}; }
  // The same memory, `bytes` further on.
  MemRef operator+(size_t bytes) const {
    MemRef r = *this;
    r.ptr += bytes;
    return r;
  }
  bool sameMemory(const MemRef& o) const {
    return ptr == o.ptr && kind == o.kind && device == o.device && key == o.key;
  }
};

static_assert(sizeof(MemRef) == 16);

}  // namespace chorus
