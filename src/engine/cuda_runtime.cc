#include "engine/cuda_runtime.h"

#include <dlfcn.h>

#include <string>

namespace chorus {

namespace {

// libchorus_cuda.so from the folder libchorus itself was loaded from (a build tree, an install
// prefix, a bundle), else wherever the loader finds it.
void* openCudaLibrary(std::string* error) {
  Dl_info self{};
  if (dladdr(reinterpret_cast<void*>(&CudaRuntime::get), &self) && self.dli_fname) {
    std::string dir = self.dli_fname;
    dir.erase(dir.find_last_of('/') + 1);
    if (void* lib = dlopen((dir + "libchorus_cuda.so").c_str(), RTLD_NOW | RTLD_LOCAL)) return lib;
  }
  if (void* lib = dlopen("libchorus_cuda.so", RTLD_NOW | RTLD_LOCAL)) return lib;
  *error = dlerror();
  return nullptr;
}

}  // namespace

CudaRuntime::CudaRuntime() {
  std::string error;
  void* lib = openCudaLibrary(&error);
  if (!lib) {
    whyNot_ = "libchorus_cuda.so could not be loaded (" + error +
              "; Chorus was built without CUDA, or its CUDA runtime is missing)";
    return;
  }
  int (*probe)(int*, const char**) = nullptr;
  probe = reinterpret_cast<decltype(probe)>(dlsym(lib, "chorus_cuda_probe"));
  classify_ = reinterpret_cast<decltype(classify_)>(dlsym(lib, "chorus_cuda_classify"));
  currentDevice_ =
      reinterpret_cast<decltype(currentDevice_)>(dlsym(lib, "chorus_cuda_current_device"));
  if (!probe || !classify_ || !currentDevice_) {
    whyNot_ = "libchorus_cuda.so is from another Chorus version (its functions are missing)";
    return;
  }
  const char* why = "";
  if (probe(&devices_, &why) != 0) {
    whyNot_ = why;
    return;
  }
  // The library stays loaded: the CUDA runtime must not be unloaded under a running process.
  usable_ = true;
}

const CudaRuntime& CudaRuntime::get() {
  static const CudaRuntime runtime;
  return runtime;
}

MemoryKind CudaRuntime::classify(const void* p, int* device) const {
  *device = -1;
  int kind = 0;
  if (!usable_ || !p || classify_(p, &kind, device) != 0 || kind != 2) {
    *device = -1;
    return MemoryKind::Host;
  }
  return MemoryKind::CudaDevice;
}

int CudaRuntime::currentDevice() const {
  int device = -1;
  return usable_ && currentDevice_(&device) == 0 ? device : -1;
}

}  // namespace chorus
