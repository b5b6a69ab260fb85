// CUDA reduction kernels: the device counterpart of CpuReducer, with the same semantics for
// every DataType x op (narrow floats computed in float through the shared conversions of
// src/reduce/float_types.h, integers wrapping, NaN-propagating min/max). Built as
// libchorus_cuda.so when nvcc is found, so libchorus itself never needs the CUDA runtime.
#pragma once

#include <cstddef>
#include <cstdint>

#include "chorus/types.h"

struct CUstream_st;

namespace chorus::cuda {

// dst[i] = a[i] (op) b[i] on the device, enqueued on `stream` (nullptr: the legacy default
// stream). op is Sum, Prod, Max or Min. Returns 0 or the cudaError_t of the launch.
int reduce(DataType t, RedOp op, void* dst, const void* a, const void* b, size_t n,
           CUstream_st* stream);
// dst[i] = src[i] * (*scalar) (scalar: one element of type t in host memory).
int scale(DataType t, void* dst, const void* src, size_t n, const void* scalar,
          CUstream_st* stream);
// dst[i] = src[i] / divisor.
int divide(DataType t, void* dst, const void* src, size_t n, uint64_t divisor, CUstream_st* stream);

}  // namespace chorus::cuda
