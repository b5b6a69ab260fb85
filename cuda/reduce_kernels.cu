// Grid-stride elementwise kernels, one instantiation per DataType x op, dispatched at run time.
#include <cuda_runtime.h>

#include "cuda/cuda_reducer.h"
#include "cuda/elementwise.cuh"

namespace chorus::cuda {

namespace {

constexpr int kThreads = 256;

int blocksFor(size_t n) {
  size_t b = (n + kThreads - 1) / kThreads;
  return int(b < 4096 ? (b ? b : 1) : 4096);
}

template <typename T, T (*Op)(T, T)>
__global__ void reduceKernel(T* dst, const T* a, const T* b, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x)
    dst[i] = Op(a[i], b[i]);
}

template <typename T>
__global__ void scaleKernel(T* dst, const T* src, size_t n, T scalar) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x)
    dst[i] = opProd(src[i], scalar);
}

template <typename T>
__global__ void divideKernel(T* dst, const T* src, size_t n, uint64_t divisor) {
  using C = typename Compute<T>::type;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x) {
    C x = load(src[i]);
    if constexpr (C(-1) < C(0) && C(0.5) == C(0)) {  // signed integer: divide the magnitude
      uint64_t mag = x < 0 ? 0 - uint64_t(x) : uint64_t(x);
      uint64_t q = mag / divisor;
      dst[i] = store<T>(C(x < 0 ? 0 - q : q));
    } else if constexpr (C(0.5) == C(0)) {
      dst[i] = store<T>(C(uint64_t(x) / divisor));
    } else {
      dst[i] = store<T>(x / C(divisor));
    }
  }
}

template <typename T>
int launchReduce(RedOp op, void* dst, const void* a, const void* b, size_t n, cudaStream_t s) {
  T* d = static_cast<T*>(dst);
  const T* x = static_cast<const T*>(a);
  const T* y = static_cast<const T*>(b);
  switch (op) {
    case RedOp::Prod:
      reduceKernel<T, opProd<T>><<<blocksFor(n), kThreads, 0, s>>>(d, x, y, n);
      break;
    case RedOp::Max:
      reduceKernel<T, opMax<T>><<<blocksFor(n), kThreads, 0, s>>>(d, x, y, n);
      break;
    case RedOp::Min:
      reduceKernel<T, opMin<T>><<<blocksFor(n), kThreads, 0, s>>>(d, x, y, n);
      break;
    default:
      reduceKernel<T, opSum<T>><<<blocksFor(n), kThreads, 0, s>>>(d, x, y, n);
      break;
  }
  return int(cudaGetLastError());
}

template <typename T>
struct ReduceLaunch {
  static int run(RedOp op, void* dst, const void* a, const void* b, size_t n, cudaStream_t s) {
    return launchReduce<T>(op, dst, a, b, n, s);
  }
};
template <typename T>
struct ScaleLaunch {
  static int run(void* dst, const void* src, size_t n, const void* scalar, cudaStream_t s) {
    scaleKernel<T><<<blocksFor(n), kThreads, 0, s>>>(
        static_cast<T*>(dst), static_cast<const T*>(src), n, *static_cast<const T*>(scalar));
    return int(cudaGetLastError());
  }
};
template <typename T>
struct DivideLaunch {
  static int run(void* dst, const void* src, size_t n, uint64_t divisor, cudaStream_t s) {
    divideKernel<T><<<blocksFor(n), kThreads, 0, s>>>(static_cast<T*>(dst),
                                                      static_cast<const T*>(src), n, divisor);
    return int(cudaGetLastError());
  }
};

// Calls Launch<T>::run(args...) with the storage type T of t.
template <template <typename> class Launch, typename... Args>
int withType(DataType t, Args... args) {
  switch (t) {
    case DataType::Int8:
      return Launch<int8_t>::run(args...);
    case DataType::Uint8:
      return Launch<uint8_t>::run(args...);
    case DataType::Int32:
      return Launch<int32_t>::run(args...);
    case DataType::Uint32:
      return Launch<uint32_t>::run(args...);
    case DataType::Int64:
      return Launch<int64_t>::run(args...);
    case DataType::Uint64:
      return Launch<uint64_t>::run(args...);
    case DataType::Float16:
      return Launch<Half>::run(args...);
    case DataType::Float32:
      return Launch<float>::run(args...);
    case DataType::Float64:
      return Launch<double>::run(args...);
    case DataType::Bfloat16:
      return Launch<Bf16>::run(args...);
    case DataType::Float8E4M3:
      return Launch<E4m3>::run(args...);
    case DataType::Float8E5M2:
      return Launch<E5m2>::run(args...);
  }
  return int(cudaErrorInvalidValue);
}

}  // namespace

int reduce(DataType t, RedOp op, void* dst, const void* a, const void* b, size_t n,
           CUstream_st* stream) {
  if (n == 0) return 0;
  return withType<ReduceLaunch>(t, op, dst, a, b, n, stream);
}

int scale(DataType t, void* dst, const void* src, size_t n, const void* scalar,
          CUstream_st* stream) {
  if (n == 0) return 0;
  return withType<ScaleLaunch>(t, dst, src, n, scalar, stream);
}

int divide(DataType t, void* dst, const void* src, size_t n, uint64_t divisor,
           CUstream_st* stream) {
  if (n == 0) return 0;
  return withType<DivideLaunch>(t, dst, src, n, divisor, stream);
}

}  // namespace chorus::cuda
