// CUDA as libchorus finds it at run time (src/engine/cuda_runtime.h). Where it cannot be used,
// as on a machine without a driver, it says why and every buffer is host memory; where it can,
// ordinary memory is still host memory. Device buffers themselves are tried by
// tests/gpu/run.sh on a machine with a GPU.
#include "engine/cuda_runtime.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "chorus/communicator.h"
#include "harness/multirank.h"

namespace chorus {
namespace {

TEST(CudaRuntime, SaysWhyItCannotBeUsedOrTellsHostMemoryApart) {
  const CudaRuntime& cuda = CudaRuntime::get();
  std::vector<float> host(1024);
  int device = 7;
  EXPECT_EQ(cuda.classify(host.data(), &device), MemoryKind::Host);
  EXPECT_EQ(device, -1);
  EXPECT_EQ(cuda.classify(nullptr, &device), MemoryKind::Host);
  if (cuda.usable()) {
    EXPECT_GE(cuda.devices(), 1);
    EXPECT_GE(cuda.currentDevice(), 0);
    return;
  }
  EXPECT_EQ(cuda.currentDevice(), -1);
  // Either libchorus_cuda is absent (a build without nvcc) or CUDA's own error says why.
  const std::string why = cuda.whyNot();
  EXPECT_TRUE(why.find("cudaError") != std::string::npos ||
              why.find("libchorus_cuda.so could not be loaded") != std::string::npos ||
              why == "no CUDA device")
      << why;
}

// Host collectives run where CUDA cannot be used, and the communicator says it has no device.
TEST(CudaRuntime, CommunicatorsRecordTheirDevice) {
  auto results = test::runRanks(2, [](test::RankContext& ctx) {
    auto comm = ctx.connect();
    if (!comm) return 1;
    const int expected = CudaRuntime::get().usable() ? CudaRuntime::get().currentDevice() : -1;
    float x = 1;
    Status st = comm->allReduce(&x, &x, 1, DataType::Float32, RedOp::Sum);
    ctx.report("device %d (expected %d), allreduce %s, sum %g", comm->cudaDevice(), expected,
               st.toString().c_str(), double(x));
    return comm->cudaDevice() == expected && st.ok() && x == 2 ? 0 : 2;
  });
  EXPECT_EQ(test::describeFailures(results), "");
}

}  // namespace
}  // namespace chorus
