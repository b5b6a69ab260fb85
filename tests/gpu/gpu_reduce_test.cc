// The CUDA reducers must compute exactly what the CPU reducers compute, bit for bit, for every
// type and op. Skips (visibly) where there is no CUDA device; tests/gpu/run.sh runs it on one.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cuda/cuda_reducer.h"
#include "reduce/element.h"
#include "reduce/reducer.h"

namespace chorus {
namespace {

// Empty if a device is usable, else why not.
std::string noDeviceReason() {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e == cudaSuccess && n > 0) return "";
  return std::string("no CUDA device here (") +
         (e == cudaSuccess ? "none found" : cudaGetErrorString(e)) +
         "); run tests/gpu/run.sh on a GPU machine";
}

struct DeviceBuf {
  explicit DeviceBuf(size_t bytes) { EXPECT_EQ(cudaMalloc(&p, bytes ? bytes : 1), cudaSuccess); }
  ~DeviceBuf() { cudaFree(p); }
  void* p = nullptr;
};

std::vector<unsigned char> randomValues(DataType t, size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-4, 4);
  std::vector<unsigned char> v(n * dataTypeSize(t));
  for (size_t i = 0; i < n; ++i)
    storeElement(t, v.data(), i, isFloatingPoint(t) ? u(rng) : double(rng() % 200) - 100);
  return v;
}

TEST(GpuReduce, MatchesCpuReducerForEveryTypeAndOp) {
  if (std::string why = noDeviceReason(); !why.empty()) GTEST_SKIP() << why;
  const size_t n = 100003;
  const CpuReducer& cpu = CpuReducer::get();
  for (int ti = 0; ti < kNumDataTypes; ++ti) {
    const DataType t = DataType(ti);
    const size_t bytes = n * dataTypeSize(t);
    auto a = randomValues(t, n, 1 + ti), b = randomValues(t, n, 100 + ti);
    DeviceBuf da(bytes), db(bytes), dd(bytes);
    cudaMemcpy(da.p, a.data(), bytes, cudaMemcpyHostToDevice);
    cudaMemcpy(db.p, b.data(), bytes, cudaMemcpyHostToDevice);
    std::vector<unsigned char> want(bytes), got(bytes);
    for (int op = 0; op < 4; ++op) {
      cpu.reduce(t, RedOp(op), want.data(), a.data(), b.data(), n);
      ASSERT_EQ(cuda::reduce(t, RedOp(op), dd.p, da.p, db.p, n, nullptr), 0);
      ASSERT_EQ(cudaMemcpy(got.data(), dd.p, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
      EXPECT_EQ(memcmp(want.data(), got.data(), bytes), 0)
          << dataTypeName(t) << " " << redOpName(RedOp(op));
    }
    unsigned char scalar[8];
    storeElement(t, scalar, 0, isFloatingPoint(t) ? 0.75 : 3);
    cpu.scale(t, want.data(), a.data(), n, scalar);
    ASSERT_EQ(cuda::scale(t, dd.p, da.p, n, scalar, nullptr), 0);
    cudaMemcpy(got.data(), dd.p, bytes, cudaMemcpyDeviceToHost);
    EXPECT_EQ(memcmp(want.data(), got.data(), bytes), 0) << dataTypeName(t) << " scale";
    cpu.divide(t, want.data(), a.data(), n, 3);
    ASSERT_EQ(cuda::divide(t, dd.p, da.p, n, 3, nullptr), 0);
    cudaMemcpy(got.data(), dd.p, bytes, cudaMemcpyDeviceToHost);
    EXPECT_EQ(memcmp(want.data(), got.data(), bytes), 0) << dataTypeName(t) << " divide";
  }
}

}  // namespace
}  // namespace chorus
