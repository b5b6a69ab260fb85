// Stage one of the device path on a real GPU: a communicator records the current device,
// device buffers are recognised and refused with the reason (never read by the CPU), and
// pinned and managed host memory still work. Skips (visibly) where there is no CUDA device;
// tests/gpu/run.sh runs it on one.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <string>

#include "chorus/communicator.h"
#include "chorus/unique_id.h"
#include "engine/cuda_runtime.h"

namespace chorus {
namespace {

class GpuMemory : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!CudaRuntime::get().usable())
      GTEST_SKIP() << "no usable CUDA here (" << CudaRuntime::get().whyNot()
                   << "); run tests/gpu/run.sh on a GPU machine";
    UniqueId id;
    ASSERT_TRUE(createUniqueId(&id).ok());
    ASSERT_TRUE(Communicator::create(id, 0, 1, Config{}, &comm_).ok());
  }
  std::unique_ptr<Communicator> comm_;
};

TEST_F(GpuMemory, TheCommunicatorRecordsTheCurrentDevice) {
  int device = -1;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  EXPECT_EQ(comm_->cudaDevice(), device);
}

TEST_F(GpuMemory, DeviceBuffersAreRefusedWithTheReason) {
  float* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 1024 * sizeof(float)), cudaSuccess);
  int device = -1;
  EXPECT_EQ(CudaRuntime::get().classify(d, &device), MemoryKind::CudaDevice);
  Status st = comm_->allReduce(d, d, 1024, DataType::Float32, RedOp::Sum);
  EXPECT_EQ(st.code(), StatusCode::InvalidUsage) << st.toString();
  EXPECT_NE(st.message().find("memory of CUDA device"), std::string::npos) << st.toString();
  // Refused before anything ran: the communicator goes on with host buffers.
  float x = 3;
  EXPECT_TRUE(comm_->allReduce(&x, &x, 1, DataType::Float32, RedOp::Sum).ok());
  cudaFree(d);
}

TEST_F(GpuMemory, PinnedAndManagedHostMemoryWork) {
  float *pinned = nullptr, *managed = nullptr;
  ASSERT_EQ(cudaMallocHost(&pinned, 64 * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMallocManaged(&managed, 64 * sizeof(float)), cudaSuccess);
  for (int i = 0; i < 64; ++i) pinned[i] = managed[i] = float(i);
  EXPECT_TRUE(comm_->allReduce(pinned, pinned, 64, DataType::Float32, RedOp::Sum).ok());
  EXPECT_TRUE(comm_->allReduce(managed, managed, 64, DataType::Float32, RedOp::Sum).ok());
  EXPECT_EQ(pinned[63], 63.0f);
  EXPECT_EQ(managed[63], 63.0f);
  cudaFreeHost(pinned);
  cudaFree(managed);
}

}  // namespace
}  // namespace chorus
