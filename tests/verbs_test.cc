// The rdma-core verbs provider (transport/rdma/verbs_*, ib_hca): what runs without an RDMA
// NIC is tested here for real: CHORUS_IB_HCA's syntax, the set-up description's encoding, the
// RoCE GID choice on a fake sysfs tree, the queue-pair numbers, and what openVerbsNic says
// on a machine without a device. The loopback test at the end needs an active RDMA port and
// skips, saying so, where there is none.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "transport/rdma/ib_hca.h"
#include "transport/rdma/rdma_nic.h"
#include "transport/rdma/verbs_blob.h"
#include "transport/rdma/verbs_gid.h"
#include "transport/rdma/verbs_params.h"

namespace chorus {
namespace {

IbHcaRule rule(const std::string& text) {
  IbHcaRule r;
  Status st = parseIbHca(text, &r);
  EXPECT_TRUE(st.ok()) << text << ": " << st.toString();
  return r;
}

TEST(IbHca, EmptyAllowsEverything) {
  IbHcaRule r = rule("");
  EXPECT_TRUE(r.allowsDevice("mlx5_0"));
  EXPECT_TRUE(r.allows("bnxt_re3", 2));
  EXPECT_TRUE(rule("  ").entries.empty());
}

TEST(IbHca, NamesArePrefixes) {
  IbHcaRule r = rule("mlx5");
  EXPECT_TRUE(r.allows("mlx5_0", 1));
  EXPECT_TRUE(r.allows("mlx5_10", 2));
  EXPECT_FALSE(r.allowsDevice("mlx4_0"));
  EXPECT_FALSE(r.allows("mlx4_0", 1));
  // A prefix longer than the name does not match it.
  EXPECT_FALSE(rule("mlx5_0x").allowsDevice("mlx5_0"));
}

TEST(IbHca, EqualsMakesNamesExact) {
  IbHcaRule r = rule("=mlx5_1");
  EXPECT_TRUE(r.exact);
  EXPECT_TRUE(r.allows("mlx5_1", 1));
  EXPECT_FALSE(r.allowsDevice("mlx5_10"));
  EXPECT_FALSE(r.allowsDevice("mlx5_"));
}

TEST(IbHca, PortsNarrowTheChoice) {
  IbHcaRule r = rule("=mlx5_0:1,mlx5_1:2");
  ASSERT_EQ(r.entries.size(), 2u);
  EXPECT_EQ(r.entries[1].name, "mlx5_1");
  EXPECT_EQ(r.entries[1].port, 2);
  EXPECT_TRUE(r.allows("mlx5_0", 1));
  EXPECT_FALSE(r.allows("mlx5_0", 2));
  EXPECT_TRUE(r.allows("mlx5_1", 2));
  EXPECT_FALSE(r.allows("mlx5_1", 1));
  EXPECT_TRUE(r.allowsDevice("mlx5_1"));
  EXPECT_FALSE(r.allowsDevice("mlx5_2"));
}

TEST(IbHca, CaretExcludes) {
  IbHcaRule r = rule("^=mlx5_1,mlx5_4");
  EXPECT_TRUE(r.exclude);
  EXPECT_TRUE(r.exact);
  EXPECT_TRUE(r.allows("mlx5_0", 1));
  EXPECT_FALSE(r.allows("mlx5_1", 1));
  EXPECT_FALSE(r.allowsDevice("mlx5_4"));
  EXPECT_TRUE(r.allowsDevice("mlx5_10"));  // exact: mlx5_1 is not a prefix here
  // Without '=', an excluded prefix takes its longer names with it.
  EXPECT_FALSE(rule("^mlx5_1").allowsDevice("mlx5_10"));
}

TEST(IbHca, ExcludingOnePortKeepsTheOthers) {
  IbHcaRule r = rule("^mlx5_0:1");
  EXPECT_TRUE(r.allowsDevice("mlx5_0"));
  EXPECT_FALSE(r.allows("mlx5_0", 1));
  EXPECT_TRUE(r.allows("mlx5_0", 2));
  EXPECT_TRUE(r.allows("mlx5_1", 1));
}

TEST(IbHca, SpacesAndEmptyEntriesAreTolerated) {
  IbHcaRule r = rule(" ^ = mlx5_0 : 1 , ,mlx5_2,");
  EXPECT_TRUE(r.exclude);
  EXPECT_TRUE(r.exact);
  ASSERT_EQ(r.entries.size(), 2u);
  EXPECT_EQ(r.entries[0].name, "mlx5_0");
  EXPECT_EQ(r.entries[0].port, 1);
  EXPECT_EQ(r.entries[1].port, -1);
}

TEST(IbHca, MalformedEntriesSayWhatIsWrong) {
  struct Case {
    const char* text;
    const char* says;
  } cases[] = {
      {":1", "no device name"},         {"mlx5_0:x", "port 'x'"},
      {"mlx5_0:", "port ''"},           {"mlx5_0:1:2", "port '1:2'"},
      {"mlx5_0:0", "ports are 1..255"}, {"mlx5_0:300", "ports are 1..255"},
      {"=^mlx5_0", "'^' first"},        {"mlx5_0,^mlx5_1", "'^' or '=' inside"},
      {"^", "names no device"},         {"^=", "names no device"},
  };
  for (const Case& c : cases) {
    IbHcaRule r;
    Status st = parseIbHca(c.text, &r, "NCCL_IB_HCA");
    EXPECT_EQ(st.code(), StatusCode::InvalidArgument) << c.text;
    EXPECT_NE(st.message().find(c.says), std::string::npos) << c.text << ": " << st.message();
    EXPECT_NE(st.message().find(std::string("NCCL_IB_HCA='") + c.text + "'"), std::string::npos)
        << st.message();
  }
}

VerbsEndpointInfo sampleInfo() {
  VerbsEndpointInfo info;
  info.linkLayer = VerbsEndpointInfo::kEthernet;
  info.mtu = 5;
  info.lid = 0x1234;
  for (int i = 0; i < 16; ++i) info.gid[i] = uint8_t(0xa0 + i);
  info.rank = 2;
  info.size = 7;
  info.lanes = 3;
  info.qpns[0] = {0x100, 0x101, 0xffffff};
  info.qpns[6] = {2, 0x203, 0x204};
  info.qpns[2] = {0x300, 0x301, 0x302};  // a rank may be its own peer (loopback)
  return info;
}

TEST(VerbsBlob, RoundTrip) {
  VerbsEndpointInfo in = sampleInfo();
  std::vector<uint8_t> blob = encodeVerbsInfo(in);
  EXPECT_EQ(blob.size(), kVerbsBlobHeaderBytes + 3 * (4 + 4 * 3));
  EXPECT_EQ(std::string(blob.begin(), blob.begin() + 4), "CHVB");
  VerbsEndpointInfo out;
  ASSERT_TRUE(decodeVerbsInfo(blob.data(), blob.size(), &out).ok());
  EXPECT_EQ(out.linkLayer, in.linkLayer);
  EXPECT_EQ(out.mtu, in.mtu);
  EXPECT_EQ(out.lid, in.lid);
  EXPECT_EQ(0, std::memcmp(out.gid, in.gid, 16));
  EXPECT_EQ(out.rank, 2);
  EXPECT_EQ(out.size, 7);
  EXPECT_EQ(out.lanes, 3);
  EXPECT_EQ(out.qpns, in.qpns);
}

TEST(VerbsBlob, NoPeersIsWellFormed) {
  VerbsEndpointInfo in = sampleInfo();
  in.qpns.clear();
  std::vector<uint8_t> blob = encodeVerbsInfo(in);
  VerbsEndpointInfo out;
  ASSERT_TRUE(decodeVerbsInfo(blob.data(), blob.size(), &out).ok());
  EXPECT_TRUE(out.qpns.empty());
}

TEST(VerbsBlob, EveryTruncationIsRejected) {
  std::vector<uint8_t> blob = encodeVerbsInfo(sampleInfo());
  VerbsEndpointInfo out;
  for (size_t n = 0; n < blob.size(); ++n) {
    Status st = decodeVerbsInfo(blob.data(), n, &out);
    EXPECT_EQ(st.code(), StatusCode::InvalidArgument) << n;
    EXPECT_NE(st.message().find("malformed"), std::string::npos) << st.message();
  }
  Status st = decodeVerbsInfo(blob.data(), 10, &out);
  EXPECT_NE(st.message().find("shorter than its 40-byte header"), std::string::npos)
      << st.message();
  blob.push_back(0);
  st = decodeVerbsInfo(blob.data(), blob.size(), &out);
  EXPECT_NE(st.message().find("where 3 peer entries of 3 lanes make"), std::string::npos)
      << st.message();
}

// Corrupts one byte (or a few) of a good blob and expects the message to name the fault.
void expectRejected(size_t offset, std::vector<uint8_t> patch, const char* says) {
  std::vector<uint8_t> blob = encodeVerbsInfo(sampleInfo());
  std::copy(patch.begin(), patch.end(), blob.begin() + offset);
  VerbsEndpointInfo out;
  Status st = decodeVerbsInfo(blob.data(), blob.size(), &out);
  EXPECT_EQ(st.code(), StatusCode::InvalidArgument) << says;
  EXPECT_NE(st.message().find(says), std::string::npos) << st.message();
}

TEST(VerbsBlob, CorruptFieldsAreNamed) {
  expectRejected(0, {'G', 'A', 'R', 'B'}, "does not start with 'CHVB'");
  expectRejected(4, {2, 0}, "version 2, this rank reads version 1");
  expectRejected(6, {3}, "link layer 3");
  expectRejected(7, {6}, "MTU code 6");
  expectRejected(10, {0, 0}, "0 lanes");
  expectRejected(12, {9, 0, 0, 0}, "rank 9 of 7");
  expectRejected(20, {8, 0, 0, 0}, "8 peer entries");
  expectRejected(40, {7, 0, 0, 0}, "an entry for rank 7 of a job of 7");
  expectRejected(40, {6, 0, 0, 0}, "two entries for rank 6");
  expectRejected(44, {0, 0, 0, 0}, "QP number 0 for rank 0 lane 0");
  expectRejected(44, {0, 0, 0, 1}, "QP number 16777216");
}

TEST(VerbsBlob, FindsTheQueuePairsMadeForThisRank) {
  VerbsEndpointInfo info = sampleInfo();
  std::vector<uint32_t> qpns;
  ASSERT_TRUE(findQpnsFor(info, 6, &qpns).ok());
  EXPECT_EQ(qpns, (std::vector<uint32_t>{2, 0x203, 0x204}));
  Status st = findQpnsFor(info, 4, &qpns);
  EXPECT_EQ(st.code(), StatusCode::InvalidUsage);
  EXPECT_NE(st.message().find("rank 2 made no queue pairs for rank 4"), std::string::npos)
      << st.message();
}

// A port directory as the kernel lays it out, in a temporary folder.
class FakeSysfs : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() /
            ("chorus_verbs_test_" + std::to_string(getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    portDir_ = gidPortDir((root_ / "mlx5_0").string(), 1);
    std::filesystem::create_directories(portDir_ + "/gid_attrs/types");
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  void writeType(int index, const char* text) {
    std::ofstream(portDir_ + "/gid_attrs/types/" + std::to_string(index)) << text;
  }
  std::filesystem::path root_;
  std::string portDir_;
};

RoceGid gid(int index, const char* address, std::string type) {
  RoceGid g;
  g.index = index;
  EXPECT_EQ(inet_pton(AF_INET6, address, g.gid), 1) << address;
  g.type = std::move(type);
  return g;
}

TEST_F(FakeSysfs, ReadsTheTypeOfEachGid) {
  EXPECT_EQ(portDir_, (root_ / "mlx5_0/ports/1").string());
  writeType(0, "IB/RoCE v1\n");
  writeType(1, "RoCE v2\n");
  writeType(2, "");  // the kernel fails the read of an unused entry; an empty file is alike
  EXPECT_EQ(readGidType(portDir_, 0), "IB/RoCE v1");
  EXPECT_EQ(readGidType(portDir_, 1), "RoCE v2");
  EXPECT_EQ(readGidType(portDir_, 2), "");
  EXPECT_EQ(readGidType(portDir_, 3), "");
}

// The usual table of a RoCE port with one IPv4 and one IPv6 address: each as v1 and v2.
TEST_F(FakeSysfs, PicksRoceV2WithAnIpv4Address) {
  const char* types[] = {"IB/RoCE v1", "RoCE v2", "IB/RoCE v1", "RoCE v2", "IB/RoCE v1", "RoCE v2"};
  const char* addresses[] = {"fe80::1",     "fe80::1",         "2001:db8::5",
                             "2001:db8::5", "::ffff:10.1.2.3", "::ffff:10.1.2.3"};
  std::vector<RoceGid> table;
  for (int i = 0; i < 6; ++i) {
    writeType(i, (std::string(types[i]) + "\n").c_str());
    table.push_back(gid(i, addresses[i], readGidType(portDir_, i)));
  }
  table.push_back(gid(6, "::", ""));  // unused entries are all zero
  EXPECT_EQ(chooseRoceGid(table), 5);
  EXPECT_EQ(gidText(table[5].gid), "::ffff:10.1.2.3");
  EXPECT_TRUE(gidIsIpv4Mapped(table[5].gid));
  EXPECT_FALSE(gidIsIpv4Mapped(table[3].gid));
  // Without an IPv4 address: the global IPv6 one over the link-local one.
  table.resize(4);
  EXPECT_EQ(chooseRoceGid(table), 3);
  // RoCE v2 at all beats v1 with a better address.
  table[3].type = "IB/RoCE v1";
  EXPECT_EQ(chooseRoceGid(table), 1);
}

TEST(VerbsGid, EmptyOrUnknownTables) {
  EXPECT_EQ(chooseRoceGid({}), -1);
  EXPECT_EQ(chooseRoceGid({gid(0, "::", "RoCE v2"), gid(1, "::", "RoCE v2")}), -1);
  // An unreadable type counts last, but still counts.
  EXPECT_EQ(chooseRoceGid({gid(0, "::", ""), gid(4, "::ffff:10.0.0.1", "")}), 4);
  EXPECT_EQ(chooseRoceGid({gid(4, "::ffff:10.0.0.1", ""), gid(7, "fe80::2", "roce v2")}), 7);
  // Ties go to the lowest index, wherever it stands in the list.
  EXPECT_EQ(
      chooseRoceGid({gid(9, "::ffff:10.0.0.1", "RoCE v2"), gid(3, "::ffff:10.0.0.2", "RoCE v2")}),
      3);
}

TEST(VerbsParams, AckTimeoutFitsTheDeadline) {
  EXPECT_EQ(verbsAckTimeout(300), 20);  // NCCL's default: 4.3 s a try
  EXPECT_NEAR(verbsRetrySeconds(20), 34.36, 0.01);
  EXPECT_EQ(verbsAckTimeout(1.0), 14);  // 8 tries of 67 ms
  EXPECT_LE(verbsRetrySeconds(verbsAckTimeout(1.0)), 1.0);
  EXPECT_GT(verbsRetrySeconds(verbsAckTimeout(1.0) + 1), 1.0);
  EXPECT_EQ(verbsAckTimeout(0.001), 8);
  EXPECT_EQ(verbsAckTimeout(0), 8);
}

TEST(VerbsParams, QueueDepthKeepsTheCompletionQueueFromOverrunning) {
  EXPECT_EQ(verbsQueueDepth(16384, 4194303, 2), kVerbsDepthCap);
  EXPECT_EQ(verbsQueueDepth(64, 4194303, 2), 64);
  EXPECT_EQ(verbsQueueDepth(16384, 1024, 16), 32);
  EXPECT_EQ(verbsQueueDepth(16384, 3, 1), 0);
  EXPECT_EQ(verbsQueueDepth(16384, 1024, 0), kVerbsDepthCap);
  for (int qps : {1, 7, 100, 1000}) {
    int depth = verbsQueueDepth(16384, 65535, qps);
    if (depth) {
      EXPECT_LE(2L * depth * qps, 65535) << qps;
    }
  }
}

TEST(VerbsParams, GatherAndMtu) {
  EXPECT_EQ(verbsMaxGather(30), kVerbsGatherCap);
  EXPECT_EQ(verbsMaxGather(2), 2);
  EXPECT_EQ(verbsMaxGather(1), 0);
  EXPECT_EQ(verbsMtuBytes(1), 256);
  EXPECT_EQ(verbsMtuBytes(5), 4096);
  EXPECT_EQ(verbsMtuBytes(0), 0);
  EXPECT_EQ(verbsMtuBytes(6), 0);
}

TEST(VerbsParams, WorkRequestIdsRoundTrip) {
  uint64_t w = verbsWriteId(0x7fffffff, 0xfffffffe);
  EXPECT_FALSE(verbsIsRecv(w));
  EXPECT_EQ(verbsIdLane(w), 0x7fffffffu);
  EXPECT_EQ(verbsIdSlot(w), 0xfffffffeu);
  uint64_t r = verbsRecvId(12345);
  EXPECT_TRUE(verbsIsRecv(r));
  EXPECT_EQ(verbsIdLane(r), 12345u);
}

bool haveRdmaDevice() {
  std::error_code ec;
  return std::filesystem::exists("/sys/class/infiniband", ec) &&
         !std::filesystem::is_empty("/sys/class/infiniband", ec);
}

// Here (no RDMA device: ibv_get_device_list fails with ENOSYS) opening must fail saying
// what is missing and what to do, so that CHORUS_NET=auto can fall back and CHORUS_NET=ib can
// report it.
TEST(VerbsOpen, WithoutADeviceSaysWhatIsMissing) {
  std::unique_ptr<RdmaNic> nic;
  Status st = openVerbsNic(RdmaNicOptions{}, &nic);
#if !defined(CHORUS_HAVE_IBVERBS)
  EXPECT_EQ(st.code(), StatusCode::Unsupported);
  EXPECT_NE(st.message().find("built without InfiniBand/RoCE verbs support"), std::string::npos)
      << st.message();
  return;
#endif
  if (haveRdmaDevice()) GTEST_SKIP() << "this machine has RDMA devices: " << st.toString();
  ASSERT_FALSE(st.ok());
  EXPECT_FALSE(nic);
  EXPECT_EQ(st.code(), StatusCode::Unsupported) << st.toString();
  std::cout << "openVerbsNic here: " << st.toString() << "\n";
  if (st.message().find("could not be loaded") != std::string::npos) {
    EXPECT_NE(st.message().find("libibverbs.so.1"), std::string::npos);
  } else {
    EXPECT_NE(st.message().find("libibverbs: ibv_get_device_list found no RDMA device ("),
              std::string::npos)
        << st.message();
    EXPECT_NE(st.message().find("install/enable the NIC's driver"), std::string::npos);
  }
  EXPECT_NE(st.message().find("use CHORUS_NET=socket"), std::string::npos) << st.message();
}

TEST(VerbsOpen, MalformedHcaIsReportedAsSuch) {
#if !defined(CHORUS_HAVE_IBVERBS)
  GTEST_SKIP() << "built without verbs support";
#endif
  RdmaNicOptions o;
  o.ibHca = "mlx5_0:x";
  std::unique_ptr<RdmaNic> nic;
  Status st = openVerbsNic(o, &nic);
  if (st.message().find("could not be loaded") != std::string::npos)
    GTEST_SKIP() << "libibverbs.so.1 is not installed: " << st.message();
  EXPECT_EQ(st.code(), StatusCode::InvalidArgument) << st.toString();
  EXPECT_NE(st.message().find("CHORUS_IB_HCA='mlx5_0:x'"), std::string::npos) << st.message();
}

// Two providers of one process on the same port, as rank 0 and rank 1 of a job: set-up
// through the descriptions, a gathered write with immediate data, and its two events.
TEST(VerbsLoopback, WriteWithImmediateArrives) {
  std::unique_ptr<RdmaNic> a, b;
  Status st = openVerbsNic(RdmaNicOptions{}, &a);
  if (!st.ok()) GTEST_SKIP() << "needs an active RDMA port: " << st.toString();
  ASSERT_TRUE(openVerbsNic(RdmaNicOptions{}, &b).ok());
  EXPECT_TRUE(a->registrationPins());
  ASSERT_GE(a->maxGather(), 2);
  std::vector<uint8_t> da, db;
  ASSERT_TRUE(a->prepare(0, 2, {1}, 2, &da).ok());
  ASSERT_TRUE(b->prepare(1, 2, {0}, 2, &db).ok());
  ASSERT_TRUE(a->connect(1, db.data(), db.size()).ok());
  ASSERT_TRUE(b->connect(0, da.data(), da.size()).ok());
  std::vector<char> src(8192, 'x'), dst(8192, 0);
  std::memcpy(src.data(), "head", 4);
  std::unique_ptr<RdmaRegion> rs, rd;
  ASSERT_TRUE(a->registerMemory(src.data(), src.size(), &rs).ok());
  ASSERT_TRUE(b->registerMemory(dst.data(), dst.size(), &rd).ok());
  RdmaGather g[2] = {{src.data(), 4, rs->desc()}, {src.data() + 100, 1000, rs->desc()}};
  RdmaTarget t{rd->remoteAddress(dst.data() + 16), rd->key()};
  std::string error;
  int token = 0;
  ASSERT_EQ(a->write(1, 1, g, 2, t, 0xdeadbeef, &token, &error), PostResult::kPosted) << error;
  bool written = false, arrived = false;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!(written && arrived) && std::chrono::steady_clock::now() < deadline) {
    RdmaEvent ev[4];
    for (RdmaNic* nic : {a.get(), b.get()}) {
      nic->waitForEvents(10);
      int n = nic->poll(ev, 4);
      for (int i = 0; i < n; ++i) {
        ASSERT_NE(ev[i].kind, RdmaEvent::kFailed) << ev[i].error;
        if (ev[i].kind == RdmaEvent::kWritten) written = ev[i].context == &token;
        if (ev[i].kind == RdmaEvent::kArrived) arrived = ev[i].imm == 0xdeadbeef;
      }
    }
  }
  EXPECT_TRUE(written && arrived) << a->describe();
  EXPECT_EQ(std::string(dst.data() + 16, 4), "head");
  EXPECT_EQ(dst[20], 'x');
  EXPECT_EQ(dst[20 + 999], 'x');
  EXPECT_EQ(dst[20 + 1000], 0);
  rs.reset();
  rd.reset();
}

TEST(VerbsLoopback, InterruptWaitEndsTheWait) {
  std::unique_ptr<RdmaNic> nic;
  Status st = openVerbsNic(RdmaNicOptions{}, &nic);
  if (!st.ok()) GTEST_SKIP() << "needs an active RDMA port: " << st.toString();
  nic->interruptWait();
  auto start = std::chrono::steady_clock::now();
  nic->waitForEvents(5000);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

}  // namespace
}  // namespace chorus
