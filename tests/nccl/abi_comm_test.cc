// The ABI proof, part two (NVIDIA's nccl.h, Chorus's library, four processes): groups of
// send/recv, split and shrink, custom ops with device-residence scalars, non-blocking init and
// configs from older headers.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <thread>
#include <vector>

#include "nccl.h"
#include "nccl_ranks.h"

using namespace nccltest;

namespace {

constexpr int kRanks = 4;

// Each rank sends to every other rank and receives from every other, all sends first. Each
// message is larger than the shared-memory pipe to a peer, so without group semantics every
// rank would block in its first send while no one receives.
TEST(NcclAbi, GroupedSendRecvAllPairsNeverDeadlocks) {
  std::string failures = runRanks(kRanks, [](int rank, int n, const ncclUniqueId& id) {
    ncclComm_t comm;
    RANK_NCCL(ncclCommInitRank(&comm, n, id, rank));
    const size_t count = 1 << 20;  // 4 MiB of floats per pair
    std::vector<std::vector<float>> out(n, std::vector<float>(count)), in = out;
    for (int p = 0; p < n; ++p)
      for (size_t i = 0; i < count; i += 4099) out[p][i] = float(rank * 1000 + p) + float(i);
    RANK_NCCL(ncclGroupStart());
    for (int k = 1; k < n; ++k) {
      int p = (rank + k) % n;
      RANK_NCCL(ncclSend(out[p].data(), count, ncclFloat, p, comm, nullptr));
    }
    for (int k = 1; k < n; ++k) {
      int p = (rank + n - k) % n;
      RANK_NCCL(ncclRecv(in[p].data(), count, ncclFloat, p, comm, nullptr));
    }
    RANK_NCCL(ncclGroupEnd());
    for (int p = 0; p < n; ++p) {
      if (p == rank) continue;
      for (size_t i = 0; i < count; i += 4099)
        RANK_REQUIRE(in[p][i] == float(p * 1000 + rank) + float(i), "from %d at %zu", p, i);
    }
    RANK_NCCL(ncclCommDestroy(comm));
    return 0;
  });
  EXPECT_EQ(failures, "");
}

int checkSubComm(ncclComm_t sub, int wantSize, int wantRank, int expectSum, int myValue) {
  int n = -1, r = -1;
  RANK_NCCL(ncclCommCount(sub, &n));
  RANK_NCCL(ncclCommUserRank(sub, &r));
  RANK_REQUIRE(n == wantSize && r == wantRank, "size %d rank %d, want %d %d", n, r, wantSize,
               wantRank);
  int v = myValue, sum = 0;
  RANK_NCCL(ncclAllReduce(&v, &sum, 1, ncclInt, ncclSum, sub, nullptr));
  RANK_REQUIRE(sum == expectSum, "sum %d, want %d", sum, expectSum);
  return 0;
}

TEST(NcclAbi, SplitEvenOddAndNoColorThenShrink) {
  std::string failures = runRanks(kRanks, [](int rank, int n, const ncclUniqueId& id) {
    ncclComm_t world, half = nullptr, some = nullptr, shrunk = nullptr;
    RANK_NCCL(ncclCommInitRank(&world, n, id, rank));
    // Keys reversed: rank order within each half is descending.
    RANK_NCCL(ncclCommSplit(world, rank % 2, n - rank, &half, nullptr));
    int evenSum = 0 + 2, oddSum = 1 + 3;
    if (int rc = checkSubComm(half, 2, rank < 2 ? 1 : 0, rank % 2 ? oddSum : evenSum, rank))
      return rc;
    // Rank 3 opts out: it gets NULL, the others a communicator of three.
    int color = rank == 3 ? NCCL_SPLIT_NOCOLOR : 7;
    RANK_NCCL(ncclCommSplit(world, color, rank, &some, nullptr));
    if (rank == 3)
      RANK_REQUIRE(some == nullptr, "NOCOLOR must give NULL");
    else if (int rc = checkSubComm(some, 3, rank, 0 + 1 + 2, rank))
      return rc;
    // Shrink away rank 0: everyone calls it (no rank has failed).
    int exclude[] = {0};
    RANK_NCCL(ncclCommShrink(world, exclude, 1, &shrunk, nullptr, NCCL_SHRINK_DEFAULT));
    if (rank == 0)
      RANK_REQUIRE(shrunk == nullptr, "an excluded rank gets NULL");
    else if (int rc = checkSubComm(shrunk, 3, rank - 1, 1 + 2 + 3, rank))
      return rc;
    for (ncclComm_t c : {half, some, shrunk, world})
      if (c) RANK_NCCL(ncclCommDestroy(c));
    return 0;
  });
  EXPECT_EQ(failures, "");
}

// A rank that dies (exits without a word) takes no part in the shrink that leaves it out; the
// survivors' new communicator works, and the dead one's failure was reported, not hung on.
TEST(NcclAbi, ShrinkAfterARankDied) {
  // Ranks past the first allreduce (shared by the forked ranks): rank 3 dies only once all have
  // finished it, since a death fails every call still running anywhere.
  auto* done =
      static_cast<std::atomic<int>*>(mmap(nullptr, sizeof(std::atomic<int>), PROT_READ | PROT_WRITE,
                                          MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(static_cast<void*>(done), MAP_FAILED);
  new (done) std::atomic<int>(0);
  std::string failures = runRanks(kRanks, [done](int rank, int n, const ncclUniqueId& id) {
    ncclComm_t world, shrunk = nullptr;
    RANK_NCCL(ncclCommInitRank(&world, n, id, rank));
    int v = 1, sum = 0;
    RANK_NCCL(ncclAllReduce(&v, &sum, 1, ncclInt, ncclSum, world, nullptr));
    done->fetch_add(1);
    if (rank == 3) {
      while (done->load() < n) usleep(1000);
      _exit(0);  // dies: no destroy, no goodbye
    }
    ncclResult_t r = ncclAllReduce(&v, &sum, 1, ncclInt, ncclSum, world, nullptr);
    RANK_REQUIRE(r != ncclSuccess, "an allreduce without rank 3 succeeded");
    int exclude[] = {3};
    RANK_NCCL(ncclCommShrink(world, exclude, 1, &shrunk, nullptr, NCCL_SHRINK_ABORT));
    if (int rc = checkSubComm(shrunk, 3, rank, 0 + 1 + 2, rank)) return rc;
    RANK_NCCL(ncclCommDestroy(shrunk));
    RANK_NCCL(ncclCommAbort(world));
    return 0;
  });
  EXPECT_EQ(failures, "");
  munmap(done, sizeof(std::atomic<int>));
}

// ncclCommAbort from another thread returns, and the call it interrupts returns too, long
// before any timeout (rank 1 never makes the call).
TEST(NcclAbi, AbortFromAnotherThreadReturns) {
  std::string failures = runRanks(2, [](int rank, int n, const ncclUniqueId& id) {
    ncclComm_t comm;
    RANK_NCCL(ncclCommInitRank(&comm, n, id, rank));
    if (rank == 1) {
      sleep(3);
      return 0;
    }
    std::atomic<int> result{-1};
    auto start = std::chrono::steady_clock::now();
    std::thread caller([&] {
      int v = 1, sum = 0;
      result = int(ncclAllReduce(&v, &sum, 1, ncclInt, ncclSum, comm, nullptr));
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    ncclResult_t aborted = ncclCommAbort(comm);
    caller.join();
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    RANK_REQUIRE(aborted == ncclSuccess, "ncclCommAbort -> %d", int(aborted));
    RANK_REQUIRE(result != int(ncclSuccess), "the interrupted allreduce succeeded");
    RANK_REQUIRE(secs < 2.5, "abort took %.2f s to end the call", secs);
    return 0;
  });
  EXPECT_EQ(failures, "");
}

// ncclScalarDevice: the scalar is read when each collective runs, not when the op is made.
TEST(NcclAbi, PreMulSumScalarResidence) {
  std::string failures = runRanks(kRanks, [](int rank, int n, const ncclUniqueId& id) {
    ncclComm_t comm;
    RANK_NCCL(ncclCommInitRank(&comm, n, id, rank));
    double scalar = 3, v = rank + 1, out = 0;
    ncclRedOp_t immediate, deferred;
    RANK_NCCL(
        ncclRedOpCreatePreMulSum(&immediate, &scalar, ncclDouble, ncclScalarHostImmediate, comm));
    RANK_NCCL(ncclRedOpCreatePreMulSum(&deferred, &scalar, ncclDouble, ncclScalarDevice, comm));
    RANK_REQUIRE(immediate >= ncclNumOps && deferred >= ncclNumOps && immediate != deferred,
                 "handles %d %d", int(immediate), int(deferred));
    scalar = 5;
    RANK_NCCL(ncclAllReduce(&v, &out, 1, ncclDouble, immediate, comm, nullptr));
    RANK_REQUIRE(out == 3 * 10, "immediate: %g", out);
    RANK_NCCL(ncclAllReduce(&v, &out, 1, ncclDouble, deferred, comm, nullptr));
    RANK_REQUIRE(out == 5 * 10, "device residence: %g", out);
    float f = 1;
    RANK_REQUIRE(
        ncclAllReduce(&f, &f, 1, ncclFloat, immediate, comm, nullptr) == ncclInvalidArgument,
        "an op made for double must be refused for float");
    RANK_NCCL(ncclRedOpDestroy(immediate, comm));
    RANK_NCCL(ncclRedOpDestroy(deferred, comm));
    RANK_REQUIRE(ncclRedOpDestroy(deferred, comm) == ncclInvalidArgument, "double destroy");
    RANK_REQUIRE(
        ncclAllReduce(&v, &out, 1, ncclDouble, deferred, comm, nullptr) == ncclInvalidArgument,
        "a destroyed op must be refused");
    RANK_NCCL(ncclCommDestroy(comm));
    return 0;
  });
  EXPECT_EQ(failures, "");
}

int waitReady(ncclComm_t comm) {
  ncclResult_t state = ncclInProgress;
  for (int i = 0; i < 60000 && state == ncclInProgress; ++i) {
    RANK_NCCL(ncclCommGetAsyncError(comm, &state));
    if (state == ncclInProgress) usleep(1000);
  }
  RANK_REQUIRE(state == ncclSuccess, "async init ended in %d: %s", int(state),
               ncclGetLastError(comm));
  return 0;
}

TEST(NcclAbi, NonBlockingInitReportsProgressThenSuccess) {
  std::string failures = runRanks(kRanks, [](int rank, int n, const ncclUniqueId& id) {
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    config.commName = "nonblocking-test";
    ncclComm_t comm = nullptr;
    ncclResult_t r = ncclCommInitRankConfig(&comm, n, id, rank, &config);
    RANK_REQUIRE(r == ncclInProgress || r == ncclSuccess, "init returned %d", int(r));
    RANK_REQUIRE(comm != nullptr, "a non-blocking init still returns the handle");
    if (int rc = waitReady(comm)) return rc;
    int v = 1, sum = 0;
    RANK_NCCL(ncclAllReduce(&v, &sum, 1, ncclInt, ncclSum, comm, nullptr));
    RANK_REQUIRE(sum == n, "sum %d", sum);
    RANK_NCCL(ncclCommFinalize(comm));
    RANK_REQUIRE(ncclAllReduce(&v, &sum, 1, ncclInt, ncclSum, comm, nullptr) == ncclInvalidUsage,
                 "a finalized communicator refuses work");
    RANK_NCCL(ncclCommDestroy(comm));
    return 0;
  });
  EXPECT_EQ(failures, "");
}

// nccl_device.h's host functions, declared as NVIDIA's header does (it needs nvcc to include).
struct DeviceTeam {
  int nRanks, rank, stride;
};
extern "C" DeviceTeam ncclTeamWorld(ncclComm_t);
extern "C" DeviceTeam ncclTeamLsa(ncclComm_t);
extern "C" DeviceTeam ncclTeamRail(ncclComm_t);
extern "C" int ncclTeamRankToWorld(ncclComm_t, DeviceTeam, int rank);
extern "C" ncclResult_t ncclDevCommCreate(ncclComm_t, const void* requirements, void* devComm);
extern "C" ncclResult_t ncclLsaBarrierCreateRequirement(DeviceTeam, int, void*, void*);

// The device API loads and says what it is: teams as Chorus has them (the world; no peer
// reachable by load/store, so the LSA team is the rank alone), and a device communicator
// refused with ncclInvalidUsage and a reason.
TEST(NcclAbi, DeviceApiTeamsAndARefusalThatSaysWhy) {
  std::string failures = runRanks(2, [](int rank, int n, const ncclUniqueId& id) {
    ncclComm_t comm = nullptr;
    RANK_NCCL(ncclCommInitRank(&comm, n, id, rank));
    const DeviceTeam world = ncclTeamWorld(comm), lsa = ncclTeamLsa(comm),
                     rail = ncclTeamRail(comm);
    RANK_REQUIRE(world.nRanks == n && world.rank == rank && world.stride == 1, "world %d %d %d",
                 world.nRanks, world.rank, world.stride);
    RANK_REQUIRE(lsa.nRanks == 1 && lsa.rank == 0, "lsa %d %d", lsa.nRanks, lsa.rank);
    RANK_REQUIRE(rail.nRanks == n && rail.rank == rank, "rail %d %d", rail.nRanks, rail.rank);
    RANK_REQUIRE(ncclTeamRankToWorld(comm, world, 1 - rank) == 1 - rank, "peer's world rank");
    char devComm[256] = {}, requirements[256] = {};
    RANK_REQUIRE(ncclDevCommCreate(comm, requirements, devComm) == ncclInvalidUsage,
                 "a device communicator is refused");
    RANK_REQUIRE(strstr(ncclGetLastError(comm), "ncclDevCommCreate") &&
                     strstr(ncclGetLastError(comm), "device API"),
                 "the reason: %s", ncclGetLastError(comm));
    RANK_REQUIRE(ncclLsaBarrierCreateRequirement(lsa, 1, devComm, requirements) == ncclInvalidUsage,
                 "barrier requirements are refused");
    RANK_NCCL(ncclCommDestroy(comm));
    return 0;
  });
  EXPECT_EQ(failures, "");
}

// A program built against NCCL 2.13 never set `blocking`: whatever the memory holds there
// must be ignored, so init is blocking and returns ncclSuccess.
TEST(NcclAbi, ConfigFromAnOlderHeaderResetsNewerFields) {
  std::string failures = runRanks(2, [](int rank, int n, const ncclUniqueId& id) {
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.version = NCCL_VERSION(2, 13, 0);
    config.blocking = 0;
    ncclComm_t comm = nullptr;
    RANK_NCCL(ncclCommInitRankConfig(&comm, n, id, rank, &config));
    ncclResult_t state = ncclInProgress;
    RANK_NCCL(ncclCommGetAsyncError(comm, &state));
    RANK_REQUIRE(state == ncclSuccess, "blocking init must be complete on return");
    RANK_NCCL(ncclCommDestroy(comm));
    return 0;
  });
  EXPECT_EQ(failures, "");
}

}  // namespace
