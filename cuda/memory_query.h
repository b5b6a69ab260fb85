// What libchorus reads of the CUDA runtime, as plain C so that libchorus can load this library
// with dlopen and find the functions by name (src/engine/cuda_runtime.h). Where CUDA cannot be
// used (no driver, no device) these say so instead of failing later.
#pragma once

extern "C" {

// 0 when CUDA can be used, with the number of devices; otherwise the cudaError_t, and *why
// its name and text ("cudaErrorInsufficientDriver: CUDA driver version is insufficient ...").
int chorus_cuda_probe(int* devices, const char** why);

// Where p lives, as cudaPointerGetAttributes says: *kind 0 memory CUDA does not know (ordinary
// host memory), 1 host memory registered or allocated by CUDA, 2 device memory, 3 managed;
// *device its device (-1 for host memory). Returns 0 or the cudaError_t.
int chorus_cuda_classify(const void* p, int* kind, int* device);

// The device current on the calling thread (cudaGetDevice). Returns 0 or the cudaError_t.
int chorus_cuda_current_device(int* device);
}
