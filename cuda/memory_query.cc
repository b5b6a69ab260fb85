#include "memory_query.h"

#include <cuda_runtime_api.h>

#include <string>

extern "C" int chorus_cuda_probe(int* devices, const char** why) {
  static thread_local std::string text;
  *devices = 0;
  const cudaError_t e = cudaGetDeviceCount(devices);
  if (e == cudaSuccess && *devices > 0) return 0;
  text = e == cudaSuccess ? "no CUDA device"
                          : std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
  *why = text.c_str();
  (void)cudaGetLastError();  // the probe's failure must not stick to the caller's next call
  return e == cudaSuccess ? int(cudaErrorNoDevice) : int(e);
}

extern "C" int chorus_cuda_classify(const void* p, int* kind, int* device) {
  cudaPointerAttributes a{};
  const cudaError_t e = cudaPointerGetAttributes(&a, p);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return int(e);
  }
  switch (a.type) {
    case cudaMemoryTypeHost:
      *kind = 1;
      break;
    case cudaMemoryTypeDevice:
      *kind = 2;
      break;
    case cudaMemoryTypeManaged:
      *kind = 3;
      break;
    default:
      *kind = 0;
  }
  *device = *kind == 0 ? -1 : a.device;
  return 0;
}

extern "C" int chorus_cuda_current_device(int* device) {
  return int(cudaGetDevice(device));
}
