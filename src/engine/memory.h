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

struct MemRef {
  char* ptr = nullptr;
  MemoryKind kind = MemoryKind::Host;
  int16_t device = -1;  // CudaDevice: the device ordinal
  uint64_t key = 0;     // Registered: the transport's handle for the registration

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

}  // namespace chorus
