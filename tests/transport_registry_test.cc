// The transport registry's choice, on its own: every pair of ranks takes the highest-priority
// allowed transport that reaches it for the call's kind of memory, the job's chunk size is the
// smallest of the transports it uses, and a pair nothing reaches is an error that says why.
// (The transports themselves are exercised by the collective suites over shm and TCP.)
#include <gtest/gtest.h>

#include "transport/registry.h"

namespace chorus {
namespace {

int indexOf(const std::vector<TransportEntry>& entries, const char* name) {
  for (size_t k = 0; k < entries.size(); ++k)
    if (std::string(entries[k].name) == name) return int(k);
  return -2;
}

TEST(TransportRegistry, ShmWithinAHostTcpBetweenHosts) {
  const auto& entries = registeredTransports();
  JobShape job{{0, 0, 2, 2}, {}};
  Config config;
  TransportChoice c;
  ASSERT_TRUE(chooseTransports(entries, job, 0, config, MemoryKind::Host, &c).ok());
  const int shm = indexOf(entries, "shm"), tcp = indexOf(entries, "tcp");
  EXPECT_EQ(c.of, (std::vector<int>{-1, shm, tcp, tcp}));
  EXPECT_TRUE(c.used[size_t(shm)]);
  EXPECT_TRUE(c.used[size_t(tcp)]);
  EXPECT_EQ(c.chunkBytes, std::min(config.shmSlotBytes, config.tcpChunkBytes));
}

TEST(TransportRegistry, OneHostMakesNoTcp) {
  const auto& entries = registeredTransports();
  JobShape job{{0, 0, 0}, {}};
  Config config;
  TransportChoice c;
  ASSERT_TRUE(chooseTransports(entries, job, 2, config, MemoryKind::Host, &c).ok());
  EXPECT_FALSE(c.used[size_t(indexOf(entries, "tcp"))]);
  EXPECT_EQ(c.chunkBytes, config.shmSlotBytes);
}

// A rank alone on its host still knows that the others use shm, so it joins shm's set-up.
TEST(TransportRegistry, UsedMeansAnywhereInTheJob) {
  const auto& entries = registeredTransports();
  JobShape job{{0, 0, 2}, {}};
  TransportChoice c;
  ASSERT_TRUE(chooseTransports(entries, job, 2, Config{}, MemoryKind::Host, &c).ok());
  EXPECT_TRUE(c.used[size_t(indexOf(entries, "shm"))]);
  EXPECT_EQ(c.of[0], indexOf(entries, "tcp"));
}

TEST(TransportRegistry, TheTransportListRestrictsTheChoice) {
  const auto& entries = registeredTransports();
  JobShape job{{0, 0}, {}};
  Config config;
  config.transport = "tcp";
  TransportChoice c;
  ASSERT_TRUE(chooseTransports(entries, job, 0, config, MemoryKind::Host, &c).ok());
  EXPECT_EQ(c.of[1], indexOf(entries, "tcp"));
  EXPECT_FALSE(c.used[size_t(indexOf(entries, "shm"))]);
  EXPECT_EQ(c.chunkBytes, config.tcpChunkBytes);
}

TEST(TransportRegistry, APairNothingReachesSaysWhy) {
  JobShape job{{0, 1}, {}};
  Config config;
  config.transport = "shm";
  TransportChoice c;
  Status st = chooseTransports(registeredTransports(), job, 0, config, MemoryKind::Host, &c);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("no transport reaches rank 1 from rank 0 for host memory"),
            std::string::npos)
      << st.toString();
  EXPECT_NE(st.message().find("different hosts"), std::string::npos);
  EXPECT_NE(st.message().find("CHORUS_TRANSPORT=shm"), std::string::npos);
}

TEST(TransportRegistry, UnknownNamesAreRejectedWithTheKnownOnes) {
  Config config;
  config.transport = "shm,carrier-pigeon";
  Status st = config.validate();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("'carrier-pigeon'"), std::string::npos) << st.toString();
  EXPECT_NE(st.message().find("shm, ib, ofi, tcp"), std::string::npos) << st.toString();
  config.transport = ",";
  EXPECT_FALSE(config.validate().ok());
  config.transport = "tcp,shm";
  EXPECT_TRUE(config.validate().ok());
}

// The memory kind is part of the question: a transport for device memory between ranks of a
// host (as CUDA IPC will be) wins for device buffers and is never asked to carry host ones.
TEST(TransportRegistry, TheMemoryKindChoosesAmongTransports) {
  TransportEntry ipc = registeredTransports()[0];
  ipc.name = "device-ipc";
  ipc.priority = 300;
  ipc.canReach = [](const JobShape& job, int a, int b, MemoryKind kind) {
    return kind == MemoryKind::CudaDevice && job.sameHost(a, b);
  };
  std::vector<TransportEntry> entries{ipc};
  for (const TransportEntry& e : registeredTransports()) entries.push_back(e);
  JobShape job{{0, 0}, {}};
  TransportChoice c;
  ASSERT_TRUE(chooseTransports(entries, job, 0, Config{}, MemoryKind::Host, &c).ok());
  EXPECT_EQ(c.of[1], indexOf(entries, "shm"));
  EXPECT_FALSE(c.used[0]);
  ASSERT_TRUE(chooseTransports(entries, job, 0, Config{}, MemoryKind::CudaDevice, &c).ok());
  EXPECT_EQ(c.of[1], 0);
  JobShape twoHosts{{0, 1}, {}};
  Status st = chooseTransports(entries, twoHosts, 0, Config{}, MemoryKind::CudaDevice, &c);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("CUDA device memory"), std::string::npos) << st.toString();
}

// What each rank can open (JobShape::opens) decides where RDMA is used: between hosts where
// both ranks of a pair have a device, TCP elsewhere; never within a host unless named.
uint32_t bitsOf(std::initializer_list<const char*> names) {
  uint32_t bits = 0;
  for (const char* n : names) bits |= uint32_t(1) << indexOf(registeredTransports(), n);
  return bits;
}

TEST(TransportRegistry, RdmaWhereBothRanksOpenItTcpElsewhere) {
  const auto& entries = registeredTransports();
  const uint32_t plain = bitsOf({"shm", "tcp"}), ofi = plain | bitsOf({"ofi"}),
                 both = ofi | bitsOf({"ib"});
  JobShape job{{0, 0, 2, 3}, {both, both, both, ofi}};
  TransportChoice c;
  ASSERT_TRUE(chooseTransports(entries, job, 0, Config{}, MemoryKind::Host, &c).ok());
  EXPECT_EQ(c.of, (std::vector<int>{-1, indexOf(entries, "shm"), indexOf(entries, "ib"),
                                    indexOf(entries, "ofi")}));
  job.opens = {both, both, plain, plain};
  ASSERT_TRUE(chooseTransports(entries, job, 0, Config{}, MemoryKind::Host, &c).ok());
  EXPECT_EQ(c.of[2], indexOf(entries, "tcp"));
  EXPECT_FALSE(c.used[size_t(indexOf(entries, "ib"))]);
}

TEST(TransportRegistry, ChorusNetForcesOneAndSaysWhoCannotOpenIt) {
  const auto& entries = registeredTransports();
  const uint32_t plain = bitsOf({"shm", "tcp"}), ofi = plain | bitsOf({"ofi", "ib"});
  JobShape job{{0, 1}, {ofi, ofi}};
  Config config;
  config.net = "socket";
  TransportChoice c;
  ASSERT_TRUE(chooseTransports(entries, job, 0, config, MemoryKind::Host, &c).ok());
  EXPECT_EQ(c.of[1], indexOf(entries, "tcp"));
  config.net = "ofi";
  ASSERT_TRUE(chooseTransports(entries, job, 0, config, MemoryKind::Host, &c).ok());
  EXPECT_EQ(c.of[1], indexOf(entries, "ofi"));
  job.opens = {ofi, plain};
  Status st = chooseTransports(entries, job, 0, config, MemoryKind::Host, &c);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("CHORUS_NET=ofi but rank 1 cannot open it"), std::string::npos)
      << st.toString();
}

TEST(TransportRegistry, RdmaWithinAHostOnlyWhenNamed) {
  const auto& entries = registeredTransports();
  const uint32_t all = bitsOf({"shm", "tcp", "ofi", "ib"});
  JobShape job{{0, 0}, {all, all}};
  Config config;
  config.transport = "ofi,tcp";
  TransportChoice c;
  ASSERT_TRUE(chooseTransports(entries, job, 0, config, MemoryKind::Host, &c).ok());
  EXPECT_EQ(c.of[1], indexOf(entries, "ofi"));
  config.transport = "auto";
  config.net = "ofi";
  ASSERT_TRUE(chooseTransports(entries, job, 0, config, MemoryKind::Host, &c).ok());
  EXPECT_EQ(c.of[1], indexOf(entries, "shm"));
}

}  // namespace
}  // namespace chorus
