// The ABI proof, part three, in one process (NVIDIA's nccl.h, Chorus's library): version and
// error strings, argument checking with its messages, group misuse, ncclGroupSimulateEnd,
// memory and registration calls. Communicators here have one rank.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "nccl.h"

namespace {

ncclComm_t oneRank() {
  ncclUniqueId id;
  EXPECT_EQ(ncclGetUniqueId(&id), ncclSuccess) << ncclGetLastError(nullptr);
  ncclComm_t comm = nullptr;
  EXPECT_EQ(ncclCommInitRank(&comm, 1, id, 0), ncclSuccess) << ncclGetLastError(nullptr);
  return comm;
}

bool lastErrorMentions(const char* text) {
  return std::string(ncclGetLastError(nullptr)).find(text) != std::string::npos;
}

TEST(NcclAbiErrors, VersionAndNcclsOwnErrorStrings) {
  int v = 0;
  ASSERT_EQ(ncclGetVersion(&v), ncclSuccess);
  EXPECT_EQ(v, NCCL_VERSION_CODE);
  EXPECT_EQ(v, 22809);
  EXPECT_STREQ(ncclGetErrorString(ncclSuccess), "no error");
  EXPECT_STREQ(ncclGetErrorString(ncclUnhandledCudaError),
               "unhandled cuda error (run with NCCL_DEBUG=INFO for details)");
  EXPECT_STREQ(ncclGetErrorString(ncclSystemError),
               "unhandled system error (run with NCCL_DEBUG=INFO for details)");
  EXPECT_STREQ(ncclGetErrorString(ncclInternalError),
               "internal error - please report this issue to the NCCL developers");
  EXPECT_STREQ(ncclGetErrorString(ncclInvalidArgument),
               "invalid argument (run with NCCL_DEBUG=WARN for details)");
  EXPECT_STREQ(ncclGetErrorString(ncclInvalidUsage),
               "invalid usage (run with NCCL_DEBUG=WARN for details)");
  EXPECT_STREQ(ncclGetErrorString(ncclRemoteError),
               "remote process exited or there was a network error");
  EXPECT_STREQ(ncclGetErrorString(ncclInProgress), "NCCL operation in progress");
  EXPECT_STREQ(ncclGetErrorString(ncclResult_t(99)), "unknown result code");
  EXPECT_EQ(ncclGetVersion(nullptr), ncclInvalidArgument);
}

TEST(NcclAbiErrors, LayoutMatchesNccl) {
  EXPECT_EQ(sizeof(ncclUniqueId), 128u);
  EXPECT_EQ(sizeof(ncclRedOp_t), sizeof(int));
  ncclConfig_t c = NCCL_CONFIG_INITIALIZER;
  EXPECT_EQ(c.size, sizeof(ncclConfig_t));
  EXPECT_EQ(c.magic, 0xcafebeefu);
  EXPECT_EQ(c.version, unsigned(NCCL_VERSION(2, 28, 9)));
}

TEST(NcclAbiErrors, BadConfigIsRefusedWithAMessage) {
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.magic = 0;
  ncclComm_t comm = nullptr;
  EXPECT_EQ(ncclCommInitRankConfig(&comm, 1, id, 0, &config), ncclInvalidArgument);
  EXPECT_TRUE(lastErrorMentions("NCCL_CONFIG_INITIALIZER")) << ncclGetLastError(nullptr);
  ncclConfig_t bad = NCCL_CONFIG_INITIALIZER;
  bad.blocking = 7;
  EXPECT_EQ(ncclCommInitRankConfig(&comm, 1, id, 0, &bad), ncclInvalidArgument);
  EXPECT_TRUE(lastErrorMentions("blocking")) << ncclGetLastError(nullptr);
  EXPECT_EQ(ncclCommInitRank(&comm, 1, id, 3), ncclInvalidArgument);
  EXPECT_EQ(ncclCommInitRank(nullptr, 1, id, 0), ncclInvalidArgument);
}

TEST(NcclAbiErrors, CollectiveArgumentsAreChecked) {
  ncclComm_t comm = oneRank();
  ASSERT_NE(comm, nullptr);
  float buf[4] = {1, 2, 3, 4};
  EXPECT_EQ(ncclAllReduce(buf, buf, 4, ncclFloat, ncclSum, nullptr, nullptr), ncclInvalidArgument);
  EXPECT_TRUE(lastErrorMentions("NULL"));
  EXPECT_EQ(ncclAllReduce(buf, buf, 4, ncclDataType_t(99), ncclSum, comm, nullptr),
            ncclInvalidArgument);
  EXPECT_TRUE(lastErrorMentions("datatype"));
  EXPECT_EQ(ncclAllReduce(buf, buf, 4, ncclFloat, ncclRedOp_t(42), comm, nullptr),
            ncclInvalidArgument);
  EXPECT_TRUE(lastErrorMentions("op 42"));
  EXPECT_EQ(ncclAllReduce(nullptr, buf, 4, ncclFloat, ncclSum, comm, nullptr), ncclInvalidArgument);
  EXPECT_TRUE(lastErrorMentions("send buffer"));
  EXPECT_EQ(ncclAllReduce(buf, buf, SIZE_MAX / 2, ncclFloat, ncclSum, comm, nullptr),
            ncclInvalidArgument);
  EXPECT_TRUE(lastErrorMentions("too large"));
  EXPECT_EQ(ncclBroadcast(buf, buf, 4, ncclFloat, 1, comm, nullptr), ncclInvalidArgument);
  EXPECT_TRUE(lastErrorMentions("root 1"));
  EXPECT_EQ(ncclSend(buf, 4, ncclFloat, -1, comm, nullptr), ncclInvalidArgument);
  // Without CUDA a stream cannot be honoured: refused, with the reason.
  cudaStream_t fake = reinterpret_cast<cudaStream_t>(uintptr_t(0x1000));
  EXPECT_EQ(ncclAllReduce(buf, buf, 4, ncclFloat, ncclSum, comm, fake), ncclInvalidArgument);
  EXPECT_TRUE(lastErrorMentions("stream")) << ncclGetLastError(nullptr);
  // ... and the reason is CUDA's own where it cannot be used (here: no driver, or no
  // libchorus_cuda), or that the device path is not built yet where it can.
  EXPECT_TRUE(lastErrorMentions("cudaError") || lastErrorMentions("libchorus_cuda.so") ||
              lastErrorMentions("not built yet"))
      << ncclGetLastError(nullptr);
  // Count 0 with NULL buffers is a valid no-op, as in NCCL.
  EXPECT_EQ(ncclAllReduce(nullptr, nullptr, 0, ncclFloat, ncclSum, comm, nullptr), ncclSuccess);
  EXPECT_EQ(ncclAllReduce(buf, buf, 4, ncclFloat, ncclSum, comm, nullptr), ncclSuccess);
  EXPECT_EQ(buf[3], 4.0f);
  ASSERT_EQ(ncclCommDestroy(comm), ncclSuccess);
  // The handle is now stale: detected, not dereferenced.
  EXPECT_EQ(ncclAllReduce(buf, buf, 4, ncclFloat, ncclSum, comm, nullptr), ncclInvalidArgument);
  EXPECT_TRUE(lastErrorMentions("destroyed")) << ncclGetLastError(nullptr);
  EXPECT_EQ(ncclCommDestroy(comm), ncclInvalidArgument);
}

TEST(NcclAbiErrors, GroupMisuseAndErrorsInsideAGroup) {
  EXPECT_EQ(ncclGroupEnd(), ncclInvalidUsage);
  ncclComm_t comm = oneRank();
  float buf[2] = {1, 2};
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);  // nested: only depth
  EXPECT_EQ(ncclAllReduce(buf, buf, 2, ncclDataType_t(77), ncclSum, comm, nullptr),
            ncclInvalidArgument);
  EXPECT_EQ(ncclGroupEnd(), ncclSuccess);
  EXPECT_EQ(ncclGroupEnd(), ncclInvalidArgument);  // the group fails with the first error
  EXPECT_TRUE(lastErrorMentions("earlier call")) << ncclGetLastError(nullptr);
  // Self send/recv inside a group completes.
  float out[2] = {0, 0};
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  ASSERT_EQ(ncclSend(buf, 2, ncclFloat, 0, comm, nullptr), ncclSuccess);
  ASSERT_EQ(ncclRecv(out, 2, ncclFloat, 0, comm, nullptr), ncclSuccess);
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess) << ncclGetLastError(nullptr);
  EXPECT_EQ(out[1], 2.0f);
  EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
}

TEST(NcclAbiErrors, SimulateEndEstimatesWithoutRunning) {
  ncclComm_t comm = oneRank();
  std::vector<float> in(1 << 16, 1.0f), out(1 << 16, -1.0f);
  ncclSimInfo_t info = NCCL_SIM_INFO_INITIALIZER;
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  ASSERT_EQ(ncclAllReduce(in.data(), out.data(), in.size(), ncclFloat, ncclSum, comm, nullptr),
            ncclSuccess);
  ASSERT_EQ(ncclGroupSimulateEnd(&info), ncclSuccess) << ncclGetLastError(nullptr);
  EXPECT_GT(info.estimatedTime, 0.0f);
  EXPECT_EQ(out[0], -1.0f) << "a simulated group must not run";
  // The cost model behind it grows with the bytes (64x the data here).
  std::vector<float> big(in.size() * 64, 1.0f);
  ncclSimInfo_t large = NCCL_SIM_INFO_INITIALIZER;
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  ASSERT_EQ(ncclAllReduce(big.data(), big.data(), big.size(), ncclFloat, ncclSum, comm, nullptr),
            ncclSuccess);
  ASSERT_EQ(ncclGroupSimulateEnd(&large), ncclSuccess) << ncclGetLastError(nullptr);
  EXPECT_GT(large.estimatedTime, 10 * info.estimatedTime);
  ncclSimInfo_t bad = NCCL_SIM_INFO_INITIALIZER;
  bad.magic = 1;
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  EXPECT_EQ(ncclGroupSimulateEnd(&bad), ncclInvalidArgument);
  EXPECT_EQ(ncclGroupEnd(), ncclSuccess);
  EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
}

TEST(NcclAbiErrors, MemoryAndRegistration) {
  void* p = nullptr;
  ASSERT_EQ(ncclMemAlloc(&p, 10000), ncclSuccess);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % NCCL_WIN_REQUIRED_ALIGNMENT, 0u);
  memset(p, 1, 10000);
  EXPECT_EQ(ncclMemAlloc(nullptr, 8), ncclInvalidArgument);
  ncclComm_t comm = oneRank();
  void* handle = nullptr;
  ASSERT_EQ(ncclCommRegister(comm, p, 10000, &handle), ncclSuccess);
  EXPECT_NE(handle, nullptr);
  ncclWindow_t win = nullptr;
  ASSERT_EQ(ncclCommWindowRegister(comm, p, 8192, &win, NCCL_WIN_COLL_SYMMETRIC), ncclSuccess);
  EXPECT_EQ(ncclCommWindowDeregister(comm, reinterpret_cast<ncclWindow_t>(handle)),
            ncclInvalidArgument);
  EXPECT_EQ(ncclCommWindowDeregister(comm, win), ncclSuccess);
  EXPECT_EQ(ncclCommDeregister(comm, handle), ncclSuccess);
  EXPECT_EQ(ncclCommDeregister(comm, handle), ncclInvalidArgument);
  int dev = -1, count = 0, rank = -1;
  EXPECT_EQ(ncclCommCuDevice(comm, &dev), ncclSuccess);
  EXPECT_EQ(ncclCommCount(comm, &count), ncclSuccess);
  EXPECT_EQ(ncclCommUserRank(comm, &rank), ncclSuccess);
  EXPECT_EQ(count, 1);
  EXPECT_EQ(rank, 0);
  EXPECT_EQ(ncclCommRevoke(comm, 5), ncclInvalidArgument);
  EXPECT_EQ(ncclCommRevoke(comm, NCCL_REVOKE_DEFAULT), ncclSuccess);
  float x = 1;
  EXPECT_EQ(ncclAllReduce(&x, &x, 1, ncclFloat, ncclSum, comm, nullptr), ncclInvalidUsage);
  EXPECT_EQ(ncclCommAbort(comm), ncclSuccess);
  EXPECT_EQ(ncclMemFree(p), ncclSuccess);
}

}  // namespace
