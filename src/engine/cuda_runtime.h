// CUDA as libchorus sees it: loaded at run time through libchorus_cuda.so (cuda/memory_query.h),
// so that libchorus and the NCCL face load and run host collectives where there is no CUDA
// runtime, driver or device, and can still say why a device call cannot run there.
#pragma once

#include <string>

#include "engine/memory.h"

namespace chorus {

class CudaRuntime {
 public:
  // Loaded and probed once, on first use, by whichever thread comes first.
  static const CudaRuntime& get();

  // Whether CUDA can be used: libchorus_cuda.so loaded and at least one device present.
  bool usable() const { return usable_; }
  // When it cannot, why ("libchorus_cuda.so not found: ..." or the CUDA error's name and text).
  const std::string& whyNot() const { return whyNot_; }
  int devices() const { return devices_; }

  // Host for memory the CPU may read (ordinary, pinned or managed), CudaDevice for device
  // memory, with its device in *device; always Host when CUDA is not usable.
  MemoryKind classify(const void* p, int* device) const;
  // The device current on the calling thread; -1 when CUDA is not usable.
  int currentDevice() const;

 private:
  CudaRuntime();
  bool usable_ = false;
  int devices_ = 0;
  std::string whyNot_;
  int (*classify_)(const void*, int*, int*) = nullptr;
  int (*currentDevice_)(int*) = nullptr;
};

}  // namespace chorus
