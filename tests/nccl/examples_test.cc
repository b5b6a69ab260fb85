// The examples of NCCL's user guide ("Examples" chapter), rewritten on host buffers with
// stream NULL and compiled against Chorus's own nccl.h: where the guide uses MPI_Bcast to pass
// the unique id, the ranks here are forked processes and the id travels through a pipe.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "nccl.h"
#include "nccl_ranks.h"

using namespace nccltest;

namespace {

constexpr size_t kSize = 32 * 1024;

// Fills rank r's send buffer with r + 1 and checks the allreduce sum 1 + ... + nranks.
struct Buffers {
  std::vector<float> send, recv;
  Buffers(int rank) : send(kSize, float(rank + 1)), recv(kSize, 0) {}
  bool summedOver(int nranks) const {
    for (float v : recv)
      if (v != float(nranks * (nranks + 1) / 2)) return false;
    return true;
  }
};

// Example 1: a single process and thread drives several "devices" with ncclCommInitAll and
// one group of allreduces.
TEST(NcclExamples, SingleProcessSingleThreadMultipleDevices) {
  const int nDev = 4;
  int devs[nDev] = {0, 1, 2, 3};
  ncclComm_t comms[nDev];
  ASSERT_EQ(ncclCommInitAll(comms, nDev, devs), ncclSuccess) << ncclGetLastError(nullptr);
  std::vector<Buffers> bufs;
  for (int i = 0; i < nDev; ++i) bufs.emplace_back(i);
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  for (int i = 0; i < nDev; ++i)
    ASSERT_EQ(ncclAllReduce(bufs[i].send.data(), bufs[i].recv.data(), kSize, ncclFloat, ncclSum,
                            comms[i], nullptr),
              ncclSuccess);
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess) << ncclGetLastError(nullptr);
  for (int i = 0; i < nDev; ++i) {
    EXPECT_TRUE(bufs[i].summedOver(nDev)) << "device " << i;
    int dev = -1;
    EXPECT_EQ(ncclCommCuDevice(comms[i], &dev), ncclSuccess);
    EXPECT_EQ(dev, devs[i]);
  }
  for (int i = 0; i < nDev; ++i) EXPECT_EQ(ncclCommDestroy(comms[i]), ncclSuccess);
}

// Example 2: one device per process, the unique id passed out of band.
TEST(NcclExamples, OneDevicePerProcess) {
  std::string failures = runRanks(4, [](int myRank, int nRanks, const ncclUniqueId& id) {
    Buffers b(myRank);
    ncclComm_t comm;
    RANK_NCCL(ncclCommInitRank(&comm, nRanks, id, myRank));
    RANK_NCCL(
        ncclAllReduce(b.send.data(), b.recv.data(), kSize, ncclFloat, ncclSum, comm, nullptr));
    RANK_REQUIRE(b.summedOver(nRanks), "wrong sum");
    RANK_NCCL(ncclCommDestroy(comm));
    return 0;
  });
  EXPECT_EQ(failures, "");
}

// Example 3: several devices per process, each process initialising its communicators inside
// one group (init is collective, so without the group the first would wait forever).
TEST(NcclExamples, MultipleDevicesPerProcess) {
  std::string failures = runRanks(2, [](int myRank, int nRanks, const ncclUniqueId& id) {
    const int nDev = 2;
    ncclComm_t comms[nDev];
    std::vector<Buffers> bufs;
    for (int i = 0; i < nDev; ++i) bufs.emplace_back(myRank * nDev + i);
    RANK_NCCL(ncclGroupStart());
    for (int i = 0; i < nDev; ++i)
      RANK_NCCL(ncclCommInitRank(comms + i, nRanks * nDev, id, myRank * nDev + i));
    RANK_NCCL(ncclGroupEnd());
    RANK_NCCL(ncclGroupStart());
    for (int i = 0; i < nDev; ++i)
      RANK_NCCL(ncclAllReduce(bufs[i].send.data(), bufs[i].recv.data(), kSize, ncclFloat, ncclSum,
                              comms[i], nullptr));
    RANK_NCCL(ncclGroupEnd());
    for (int i = 0; i < nDev; ++i) RANK_REQUIRE(bufs[i].summedOver(nRanks * nDev), "device %d", i);
    for (int i = 0; i < nDev; ++i) RANK_NCCL(ncclCommDestroy(comms[i]));
    return 0;
  });
  EXPECT_EQ(failures, "");
}

// One communicator per thread: threads of one process each init and use their own rank.
TEST(NcclExamples, OneDevicePerThread) {
  const int nThreads = 3;
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  std::vector<int> ok(nThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < nThreads; ++t)
    threads.emplace_back([&, t] {
      Buffers b(t);
      ncclComm_t comm;
      if (ncclCommInitRank(&comm, nThreads, id, t) != ncclSuccess) return;
      bool good = ncclAllReduce(b.send.data(), b.recv.data(), kSize, ncclFloat, ncclSum, comm,
                                nullptr) == ncclSuccess &&
                  b.summedOver(nThreads);
      ok[t] = good && ncclCommDestroy(comm) == ncclSuccess;
    });
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < nThreads; ++t)
    EXPECT_TRUE(ok[t]) << "thread " << t << ": " << ncclGetLastError(nullptr);
}

}  // namespace
