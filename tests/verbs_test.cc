// The rdma-core verbs provider (transport/rdma/verbs_*, ib_hca): what runs without an RDMA
// NIC is tested here for real: CHORUS_IB_HCA's syntax, the set-up description's encoding, the
// RoCE GID choice on a fake sysfs tree, the queue-pair numbers, and what openVerbsNic says
// on a machine without a device. The provider itself (device choice, set-up, writes,
// completions, waiting) runs against a pretend fabric behind the same entry points. The
// loopback test at the end needs an active RDMA port and skips, saying so, where there is none.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include "transport/rdma/ib_hca.h"
#include "transport/rdma/rdma_nic.h"
#include "transport/rdma/verbs_blob.h"
#include "transport/rdma/verbs_gid.h"
#include "transport/rdma/verbs_params.h"

#if defined(CHORUS_HAVE_IBVERBS)
#include "transport/rdma/verbs_nic.h"
#endif

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

#if defined(CHORUS_HAVE_IBVERBS)
// A pretend RDMA fabric inside this process, behind the same entry points libibverbs gives
// (VerbsLibrary) and the same context function table the inline post/poll calls go through.
// A write copies its gathered bytes to the target at once, consuming one of the target queue
// pair's posted receives, and completes on both sides; keys and ranges are checked as a NIC
// would, and a failure puts the queue pair in the error state, which flushes what follows.
// It checks what hardware cannot tell here: the provider's choices, its bookkeeping and its
// messages, never that the real NIC accepts them.
namespace fake {

struct Port {
  ibv_port_attr attr{};
  std::vector<std::string> gids;  // text, "" for an empty entry
};
struct Device {
  ibv_device dev{};  // first, so the ibv_device* the provider holds leads back here
  ibv_device_attr attr{};
  std::vector<Port> ports;
};
struct Cq {
  ibv_cq cq{};
  std::deque<ibv_wc> wcs;
  bool armed = false;
};
struct Qp {
  ibv_qp qp{};
  Cq* cq = nullptr;
  ibv_qp_init_attr init{};
  ibv_qp_state state = IBV_QPS_RESET;
  ibv_qp_attr rtr{}, rts{};
  std::deque<uint64_t> recvs;
  int sendsInCq = 0;  // signalled sends not yet polled: the send queue's occupancy
};

struct World {
  std::vector<std::unique_ptr<Device>> devices;
  int listErrno = 0;  // ibv_get_device_list fails with this when set
  std::mutex mutex;
  std::map<uint32_t, Qp*> qps;
  std::map<uint32_t, ibv_mr*> mrs;  // by rkey (= lkey)
  std::map<ibv_comp_channel*, Cq*> cqOfChannel;
  uint32_t nextQpn = 0x100, nextKey = 0x10;
  int contexts = 0, pds = 0, cqs = 0, channels = 0, unackedEvents = 0;
  int postSendEnomem = 0;  // a post the provider should have held back (kBusy)
};
World* world = nullptr;

Device* deviceOf(ibv_context* c) {
  return reinterpret_cast<Device*>(c->device);
}
Qp* qpOf(ibv_qp* q) {
  return reinterpret_cast<Qp*>(q);
}
Cq* cqOf(ibv_cq* c) {
  return reinterpret_cast<Cq*>(c);
}

void complete(Cq* cq, const ibv_wc& wc) {
  cq->wcs.push_back(wc);
  if (cq->armed && cq->cq.channel) {
    cq->armed = false;
    uint64_t one = 1;
    EXPECT_EQ(::write(cq->cq.channel->fd, &one, sizeof one), 8);
  }
}

// The bytes of [addr, addr + len) lie inside a region with key `key`.
bool inRegion(uint32_t key, uint64_t addr, uint64_t len) {
  auto it = world->mrs.find(key);
  if (it == world->mrs.end()) return false;
  uint64_t base = reinterpret_cast<uintptr_t>(it->second->addr);
  return addr >= base && addr + len <= base + it->second->length;
}

int postSend(ibv_qp* q, ibv_send_wr* wr, ibv_send_wr** bad) {
  std::lock_guard<std::mutex> lock(world->mutex);
  Qp* qp = qpOf(q);
  for (; wr; wr = wr->next) {
    *bad = wr;
    if (qp->state != IBV_QPS_RTS && qp->state != IBV_QPS_ERR) return EINVAL;
    if (qp->sendsInCq >= int(qp->init.cap.max_send_wr)) {
      ++world->postSendEnomem;
      return ENOMEM;
    }
    if (wr->num_sge > int(qp->init.cap.max_send_sge) || wr->opcode != IBV_WR_RDMA_WRITE_WITH_IMM)
      return EINVAL;
    ibv_wc mine{};
    mine.wr_id = wr->wr_id;
    mine.opcode = IBV_WC_RDMA_WRITE;
    mine.qp_num = qp->qp.qp_num;
    mine.status = IBV_WC_SUCCESS;
    uint64_t len = 0;
    for (int i = 0; i < wr->num_sge; ++i) {
      if (!inRegion(wr->sg_list[i].lkey, wr->sg_list[i].addr, wr->sg_list[i].length))
        mine.status = IBV_WC_LOC_PROT_ERR;
      len += wr->sg_list[i].length;
    }
    auto target = world->qps.find(qp->rtr.dest_qp_num);
    if (qp->state == IBV_QPS_ERR) {
      mine.status = IBV_WC_WR_FLUSH_ERR;
    } else if (mine.status == IBV_WC_SUCCESS &&
               !inRegion(wr->wr.rdma.rkey, wr->wr.rdma.remote_addr, len)) {
      mine.status = IBV_WC_REM_ACCESS_ERR;
    } else if (mine.status == IBV_WC_SUCCESS &&
               (target == world->qps.end() || target->second->recvs.empty())) {
      mine.status = IBV_WC_RNR_RETRY_EXC_ERR;  // with rnr_retry 7 a NIC would wait instead
    }
    if (mine.status == IBV_WC_SUCCESS) {
      auto* to = reinterpret_cast<char*>(uintptr_t(wr->wr.rdma.remote_addr));
      for (int i = 0; i < wr->num_sge; ++i) {
        std::memcpy(to, reinterpret_cast<char*>(uintptr_t(wr->sg_list[i].addr)),
                    wr->sg_list[i].length);
        to += wr->sg_list[i].length;
      }
      Qp* peer = target->second;
      ibv_wc theirs{};
      theirs.wr_id = peer->recvs.front();
      peer->recvs.pop_front();
      theirs.status = IBV_WC_SUCCESS;
      theirs.opcode = IBV_WC_RECV_RDMA_WITH_IMM;
      theirs.imm_data = wr->imm_data;
      theirs.wc_flags = IBV_WC_WITH_IMM;
      theirs.byte_len = uint32_t(len);
      theirs.qp_num = peer->qp.qp_num;
      complete(peer->cq, theirs);
    } else if (qp->state != IBV_QPS_ERR) {
      qp->state = IBV_QPS_ERR;
      for (uint64_t id : qp->recvs) {
        ibv_wc flushed{};
        flushed.wr_id = id;
        flushed.status = IBV_WC_WR_FLUSH_ERR;
        flushed.qp_num = qp->qp.qp_num;
        complete(qp->cq, flushed);
      }
      qp->recvs.clear();
    }
    if (wr->send_flags & IBV_SEND_SIGNALED || mine.status != IBV_WC_SUCCESS) {
      ++qp->sendsInCq;
      complete(qp->cq, mine);
    }
  }
  *bad = nullptr;
  return 0;
}

int postRecv(ibv_qp* q, ibv_recv_wr* wr, ibv_recv_wr** bad) {
  std::lock_guard<std::mutex> lock(world->mutex);
  Qp* qp = qpOf(q);
  for (; wr; wr = wr->next) {
    *bad = wr;
    if (qp->recvs.size() >= qp->init.cap.max_recv_wr || qp->state == IBV_QPS_RESET) return ENOMEM;
    qp->recvs.push_back(wr->wr_id);
  }
  *bad = nullptr;
  return 0;
}

int pollCq(ibv_cq* c, int n, ibv_wc* wc) {
  std::lock_guard<std::mutex> lock(world->mutex);
  Cq* cq = cqOf(c);
  int got = 0;
  for (; got < n && !cq->wcs.empty(); ++got) {
    wc[got] = cq->wcs.front();
    cq->wcs.pop_front();
    auto qp = world->qps.find(wc[got].qp_num);
    if (!verbsIsRecv(wc[got].wr_id) && qp != world->qps.end()) --qp->second->sendsInCq;
  }
  return got;
}

int reqNotifyCq(ibv_cq* c, int) {
  std::lock_guard<std::mutex> lock(world->mutex);
  cqOf(c)->armed = true;
  return 0;
}

ibv_device** getDeviceList(int* n) {
  if (world->listErrno) {
    errno = world->listErrno;
    return nullptr;
  }
  *n = int(world->devices.size());
  auto** list = new ibv_device*[world->devices.size() + 1];
  for (size_t i = 0; i < world->devices.size(); ++i) list[i] = &world->devices[i]->dev;
  list[world->devices.size()] = nullptr;
  return list;
}
void freeDeviceList(ibv_device** list) {
  delete[] list;
}
const char* getDeviceName(ibv_device* d) {
  return d->name;
}
ibv_context* openDevice(ibv_device* d) {
  auto* c = new ibv_context{};
  c->device = d;
  c->ops.poll_cq = pollCq;
  c->ops.req_notify_cq = reqNotifyCq;
  c->ops.post_send = postSend;
  c->ops.post_recv = postRecv;
  ++world->contexts;
  return c;
}
int closeDevice(ibv_context* c) {
  delete c;
  --world->contexts;
  return 0;
}
int queryDevice(ibv_context* c, ibv_device_attr* a) {
  *a = deviceOf(c)->attr;
  return 0;
}
int queryPort(ibv_context* c, uint8_t port, _compat_ibv_port_attr* a) {
  Device* d = deviceOf(c);
  if (port < 1 || port > d->ports.size()) return EINVAL;
  *reinterpret_cast<ibv_port_attr*>(a) = d->ports[port - 1].attr;
  return 0;
}
int queryGid(ibv_context* c, uint8_t port, int index, ibv_gid* gid) {
  Port& p = deviceOf(c)->ports[port - 1];
  *gid = ibv_gid{};
  if (index < 0 || index >= int(p.gids.size())) return -1;
  if (!p.gids[index].empty()) inet_pton(AF_INET6, p.gids[index].c_str(), gid->raw);
  return 0;
}
ibv_pd* allocPd(ibv_context* c) {
  ++world->pds;
  auto* pd = new ibv_pd{};
  pd->context = c;
  return pd;
}
int deallocPd(ibv_pd* pd) {
  for (auto& [key, mr] : world->mrs)
    if (mr->pd == pd) return EBUSY;
  delete pd;
  --world->pds;
  return 0;
}
ibv_mr* regMr(ibv_pd* pd, void* addr, size_t length, int access) {
  if (!(access & IBV_ACCESS_REMOTE_WRITE) || !(access & IBV_ACCESS_LOCAL_WRITE)) {
    errno = EINVAL;
    return nullptr;
  }
  auto* mr = new ibv_mr{};
  mr->context = pd->context;
  mr->pd = pd;
  mr->addr = addr;
  mr->length = length;
  mr->lkey = mr->rkey = world->nextKey++;
  world->mrs[mr->rkey] = mr;
  return mr;
}
int deregMr(ibv_mr* mr) {
  world->mrs.erase(mr->rkey);
  delete mr;
  return 0;
}
ibv_comp_channel* createCompChannel(ibv_context* c) {
  auto* ch = new ibv_comp_channel{};
  ch->context = c;
  ch->fd = eventfd(0, 0);  // the provider makes it non-blocking itself
  ++world->channels;
  return ch;
}
int destroyCompChannel(ibv_comp_channel* ch) {
  close(ch->fd);
  delete ch;
  --world->channels;
  return 0;
}
ibv_cq* createCq(ibv_context* c, int cqe, void*, ibv_comp_channel* ch, int) {
  auto* cq = new Cq;
  cq->cq.context = c;
  cq->cq.channel = ch;
  cq->cq.cqe = cqe;
  if (ch) world->cqOfChannel[ch] = cq;
  ++world->cqs;
  return &cq->cq;
}
int destroyCq(ibv_cq* c) {
  EXPECT_EQ(world->unackedEvents, 0) << "ibv_destroy_cq would wait for ever";
  delete cqOf(c);
  --world->cqs;
  return 0;
}
int getCqEvent(ibv_comp_channel* ch, ibv_cq** cq, void** context) {
  uint64_t n;
  if (read(ch->fd, &n, sizeof n) != sizeof n) return -1;
  *cq = &world->cqOfChannel.at(ch)->cq;
  *context = nullptr;
  world->unackedEvents += int(n);
  return 0;
}
void ackCqEvents(ibv_cq*, unsigned n) {
  world->unackedEvents -= int(n);
}
ibv_qp* createQp(ibv_pd* pd, ibv_qp_init_attr* init) {
  std::lock_guard<std::mutex> lock(world->mutex);
  auto* qp = new Qp;
  qp->qp.context = pd->context;
  qp->qp.pd = pd;
  qp->qp.qp_num = world->nextQpn++;
  qp->cq = cqOf(init->send_cq);
  qp->init = *init;
  world->qps[qp->qp.qp_num] = qp;
  return &qp->qp;
}
int modifyQp(ibv_qp* q, ibv_qp_attr* attr, int mask) {
  std::lock_guard<std::mutex> lock(world->mutex);
  Qp* qp = qpOf(q);
  ibv_qp_state from = qp->state, to = attr->qp_state;
  bool ok = (mask & IBV_QP_STATE) && ((from == IBV_QPS_RESET && to == IBV_QPS_INIT) ||
                                      (from == IBV_QPS_INIT && to == IBV_QPS_RTR) ||
                                      (from == IBV_QPS_RTR && to == IBV_QPS_RTS));
  if (!ok) return EINVAL;
  if (to == IBV_QPS_RTR) qp->rtr = *attr;
  if (to == IBV_QPS_RTS) qp->rts = *attr;
  qp->state = to;
  return 0;
}
int destroyQp(ibv_qp* q) {
  std::lock_guard<std::mutex> lock(world->mutex);
  world->qps.erase(q->qp_num);
  delete qpOf(q);
  return 0;
}
const char* wcStatusStr(ibv_wc_status s) {
  switch (s) {
    case IBV_WC_SUCCESS:
      return "success";
    case IBV_WC_REM_ACCESS_ERR:
      return "remote access error";
    case IBV_WC_WR_FLUSH_ERR:
      return "Work Request Flushed Error";
    case IBV_WC_RNR_RETRY_EXC_ERR:
      return "RNR retry counter exceeded";
    default:
      return "other error";
  }
}
const char* portStateStr(ibv_port_state s) {
  return s == IBV_PORT_ACTIVE ? "PORT_ACTIVE" : s == IBV_PORT_DOWN ? "PORT_DOWN" : "PORT_INIT";
}

VerbsLibrary library() {
  VerbsLibrary l{};
  l.getDeviceList = getDeviceList;
  l.freeDeviceList = freeDeviceList;
  l.getDeviceName = getDeviceName;
  l.openDevice = openDevice;
  l.closeDevice = closeDevice;
  l.queryDevice = queryDevice;
  l.queryPortCompat = queryPort;
  l.queryGid = queryGid;
  l.allocPd = allocPd;
  l.deallocPd = deallocPd;
  l.regMr = regMr;
  l.deregMr = deregMr;
  l.createCompChannel = createCompChannel;
  l.destroyCompChannel = destroyCompChannel;
  l.createCq = createCq;
  l.destroyCq = destroyCq;
  l.getCqEvent = getCqEvent;
  l.ackCqEvents = ackCqEvents;
  l.createQp = createQp;
  l.modifyQp = modifyQp;
  l.destroyQp = destroyQp;
  l.wcStatusStr = wcStatusStr;
  l.portStateStr = portStateStr;
  return l;
}

}  // namespace fake

// Each test builds its fabric: devices, ports, GIDs, and (for RoCE) a sysfs tree of GID types.
class FakeFabric : public FakeSysfs {
 protected:
  void SetUp() override {
    FakeSysfs::SetUp();
    fake::world = &world_;
  }
  void TearDown() override {
    fake::world = nullptr;
    FakeSysfs::TearDown();
  }
  fake::Device* addDevice(const char* name, int ports, int maxQpWr = 16384) {
    auto d = std::make_unique<fake::Device>();
    snprintf(d->dev.name, sizeof d->dev.name, "%s", name);
    snprintf(d->dev.ibdev_path, sizeof d->dev.ibdev_path, "%s/%s", root_.c_str(), name);
    d->attr.phys_port_cnt = uint8_t(ports);
    d->attr.max_sge = 30;
    d->attr.max_qp_wr = maxQpWr;
    d->attr.max_cqe = 4194303;
    for (int p = 0; p < ports; ++p) {
      fake::Port port;
      port.attr.state = IBV_PORT_ACTIVE;
      port.attr.link_layer = IBV_LINK_LAYER_INFINIBAND;
      port.attr.lid = uint16_t(0x10 + world_.devices.size() * 4 + p);
      port.attr.active_mtu = IBV_MTU_4096;
      port.attr.max_msg_sz = 1u << 30;
      port.attr.gid_tbl_len = 1;
      port.gids = {"fe80::1"};
      d->ports.push_back(port);
    }
    world_.devices.push_back(std::move(d));
    return world_.devices.back().get();
  }
  // Port 1 of `d` as a RoCE port with the usual table: link-local, IPv4 as v1 and v2.
  void makeRoce(fake::Device* d) {
    fake::Port& p = d->ports[0];
    p.attr.link_layer = IBV_LINK_LAYER_ETHERNET;
    p.attr.lid = 0;
    p.gids = {"fe80::1", "fe80::1", "::ffff:10.1.2.3", "::ffff:10.1.2.3", ""};
    p.attr.gid_tbl_len = int(p.gids.size());
    portDir_ = gidPortDir(d->dev.ibdev_path, 1);
    std::filesystem::create_directories(portDir_ + "/gid_attrs/types");
    const char* types[] = {"IB/RoCE v1", "RoCE v2", "IB/RoCE v1", "RoCE v2"};
    for (int i = 0; i < 4; ++i) writeType(i, types[i]);
  }
  Status open(const RdmaNicOptions& o, std::unique_ptr<RdmaNic>* nic) {
    return VerbsNic::openWith(lib_, o, nic);
  }
  // Ranks 0 and 1 of a job, each with its own NIC, set up through each other's descriptions.
  void connectPair(std::unique_ptr<RdmaNic> nic[2], int lanes, const RdmaNicOptions& o = {}) {
    std::vector<uint8_t> blob[2];
    for (int r = 0; r < 2; ++r) {
      ASSERT_TRUE(open(o, &nic[r]).ok());
      ASSERT_TRUE(nic[r]->prepare(r, 2, {1 - r}, lanes, &blob[r]).ok());
    }
    for (int r = 0; r < 2; ++r) {
      Status st = nic[r]->connect(1 - r, blob[1 - r].data(), blob[1 - r].size());
      ASSERT_TRUE(st.ok()) << st.toString();
    }
  }
  static std::vector<RdmaEvent> drain(RdmaNic* nic) {
    std::vector<RdmaEvent> out;
    RdmaEvent ev[16];
    for (int n; (n = nic->poll(ev, 16)) > 0;) out.insert(out.end(), ev, ev + n);
    return out;
  }
  fake::World world_;
  VerbsLibrary lib_ = fake::library();
};

TEST_F(FakeFabric, NoDeviceListNamesTheErrno) {
  world_.listErrno = ENOSYS;
  std::unique_ptr<RdmaNic> nic;
  Status st = open({}, &nic);
  EXPECT_EQ(st.message(),
            "libibverbs: ibv_get_device_list found no RDMA device (errno ENOSYS: Function not "
            "implemented); use CHORUS_NET=socket or install/enable the NIC's driver");
  world_.listErrno = 0;
  st = open({}, &nic);
  EXPECT_EQ(st.code(), StatusCode::Unsupported);
  EXPECT_NE(st.message().find("the list is empty"), std::string::npos) << st.message();
}

TEST_F(FakeFabric, TakesTheFirstActivePortTheRuleAllows) {
  fake::Device* d0 = addDevice("mlx5_0", 2);
  addDevice("mlx5_1", 1);
  d0->ports[0].attr.state = IBV_PORT_DOWN;
  std::unique_ptr<RdmaNic> nic;
  ASSERT_TRUE(open({}, &nic).ok());
  EXPECT_EQ(nic->describe(), "mlx5_0:2 (InfiniBand, LID 17)");
  EXPECT_EQ(nic->maxGather(), kVerbsGatherCap);
  EXPECT_TRUE(nic->registrationPins());
  EXPECT_EQ(world_.contexts, 1);
  nic.reset();
  RdmaNicOptions o;
  o.ibHca = "^mlx5_0:2";
  ASSERT_TRUE(open(o, &nic).ok());
  EXPECT_EQ(nic->describe(), "mlx5_1:1 (InfiniBand, LID 20)");
  nic.reset();
  EXPECT_EQ(world_.contexts + world_.pds + world_.channels, 0);
}

// Several usable devices are rails: local rank i takes the i-th of those as near (sysfs knows
// no NUMA node for these stand-ins, so all are), and the others are closed again.
TEST_F(FakeFabric, SeveralUsableDevicesAreRailsSpreadByLocalRank) {
  addDevice("mlx5_0", 1);
  addDevice("mlx5_1", 1);
  const char* expected[] = {"mlx5_0:1 (InfiniBand, LID 16)", "mlx5_1:1 (InfiniBand, LID 20)",
                            "mlx5_0:1 (InfiniBand, LID 16)"};
  for (int local = 0; local < 3; ++local) {
    RdmaNicOptions o;
    o.localIndex = local;
    std::unique_ptr<RdmaNic> nic;
    ASSERT_TRUE(open(o, &nic).ok());
    EXPECT_EQ(nic->describe(), expected[local]) << "local rank " << local;
    EXPECT_EQ(world_.contexts, 1);
  }
}

TEST_F(FakeFabric, NothingUsableSaysWhyForEachPort) {
  fake::Device* d0 = addDevice("mlx5_0", 2);
  fake::Device* d1 = addDevice("mlx5_1", 1);
  d0->ports[0].attr.state = IBV_PORT_DOWN;
  d0->ports[1].attr.state = IBV_PORT_INIT;
  d1->ports[0].attr.lid = 0;
  std::unique_ptr<RdmaNic> nic;
  Status st = open({}, &nic);
  EXPECT_EQ(st.code(), StatusCode::Unsupported);
  EXPECT_EQ(st.message(),
            "libibverbs: no usable RDMA port among mlx5_0, mlx5_1: mlx5_0:1 is PORT_DOWN (state "
            "1), not ACTIVE; mlx5_0:2 is PORT_INIT (state 2), not ACTIVE; mlx5_1:1: InfiniBand "
            "port without a LID (is a subnet manager running? `sminfo` tells); check the links "
            "(`ibv_devinfo`, `ibstat`), choose another port with CHORUS_IB_HCA, or use "
            "CHORUS_NET=socket");
  EXPECT_EQ(world_.contexts, 0) << "devices passed over are closed";
  RdmaNicOptions o;
  o.ibHca = "=mlx5";
  st = open(o, &nic);
  EXPECT_EQ(st.message(),
            "libibverbs: CHORUS_IB_HCA='=mlx5' allows none of the RDMA devices here (mlx5_0, "
            "mlx5_1); fix or unset it, or use CHORUS_NET=socket");
  o.ibHca = "mlx5_1:2";
  st = open(o, &nic);
  EXPECT_NE(st.message().find("mlx5_1: CHORUS_IB_HCA allows none of its ports"), std::string::npos)
      << st.message();
}

TEST_F(FakeFabric, RoceTakesTheV2Ipv4GidOrTheOneAsked) {
  makeRoce(addDevice("mlx5_0", 1));
  std::unique_ptr<RdmaNic> nic;
  ASSERT_TRUE(open({}, &nic).ok());
  EXPECT_EQ(nic->describe(), "mlx5_0:1 (RoCE v2, GID 3 ::ffff:10.1.2.3)");
  nic.reset();
  RdmaNicOptions o;
  o.ibGidIndex = 2;
  ASSERT_TRUE(open(o, &nic).ok());
  EXPECT_EQ(nic->describe(), "mlx5_0:1 (IB/RoCE v1, GID 2 ::ffff:10.1.2.3)");
  nic.reset();
  o.ibGidIndex = 4;
  Status st = open(o, &nic);
  EXPECT_NE(st.message().find("mlx5_0:1: GID index 4 is empty"), std::string::npos) << st.message();
  o.ibGidIndex = 9;
  st = open(o, &nic);
  EXPECT_NE(st.message().find("CHORUS_IB_GID_INDEX=9 is past its GID table of 5 entries"),
            std::string::npos)
      << st.message();
}

TEST_F(FakeFabric, QueuePairsAreJoinedLaneToLane) {
  fake::Device* d = addDevice("mlx5_0", 1);
  RdmaNicOptions o;
  o.timeoutSec = 1.0;
  std::unique_ptr<RdmaNic> nic[2];
  std::vector<uint8_t> blob[2];
  for (int r = 0; r < 2; ++r) {
    // The second rank's port runs a smaller MTU: the path takes the smaller.
    d->ports[0].attr.active_mtu = r ? IBV_MTU_1024 : IBV_MTU_4096;
    ASSERT_TRUE(open(o, &nic[r]).ok());
    ASSERT_TRUE(nic[r]->prepare(r, 2, {1 - r}, 2, &blob[r]).ok());
  }
  for (int r = 0; r < 2; ++r)
    ASSERT_TRUE(nic[r]->connect(1 - r, blob[1 - r].data(), blob[1 - r].size()).ok());
  ASSERT_EQ(world_.qps.size(), 4u);
  for (auto& [qpn, qp] : world_.qps) {
    EXPECT_EQ(qp->state, IBV_QPS_RTS);
    // Rank 0 made 0x100 (lane 0) and 0x101 (lane 1), rank 1 0x102 and 0x103.
    uint32_t peer = qpn < 0x102 ? qpn + 2 : qpn - 2;
    EXPECT_EQ(qp->rtr.dest_qp_num, peer);
    EXPECT_EQ(qp->rtr.path_mtu, IBV_MTU_1024);
    EXPECT_EQ(qp->rtr.ah_attr.is_global, 0);
    EXPECT_EQ(qp->rtr.ah_attr.dlid, 0x10);
    EXPECT_EQ(qp->rtr.ah_attr.port_num, 1);
    EXPECT_EQ(qp->rtr.min_rnr_timer, kVerbsMinRnrTimer);
    EXPECT_EQ(qp->rts.timeout, verbsAckTimeout(1.0));
    EXPECT_EQ(qp->rts.retry_cnt, 7);
    EXPECT_EQ(qp->rts.rnr_retry, 7);
    EXPECT_EQ(qp->init.qp_type, IBV_QPT_RC);
    EXPECT_EQ(qp->init.cap.max_send_sge, uint32_t(kVerbsGatherCap));
    EXPECT_EQ(qp->recvs.size(), size_t(kVerbsDepthCap)) << "every receive is posted";
  }
}

TEST_F(FakeFabric, RoceQueuePairsAreAddressedByGid) {
  makeRoce(addDevice("mlx5_0", 1));
  RdmaNicOptions o;
  o.ibTrafficClass = 106;
  std::unique_ptr<RdmaNic> nic[2];
  connectPair(nic, 1, o);
  uint8_t want[16];
  inet_pton(AF_INET6, "::ffff:10.1.2.3", want);
  for (auto& [qpn, qp] : world_.qps) {
    EXPECT_EQ(qp->rtr.ah_attr.is_global, 1);
    EXPECT_EQ(0, std::memcmp(qp->rtr.ah_attr.grh.dgid.raw, want, 16));
    EXPECT_EQ(qp->rtr.ah_attr.grh.sgid_index, 3);
    EXPECT_EQ(qp->rtr.ah_attr.grh.traffic_class, 106);
  }
}

TEST_F(FakeFabric, WriteWithImmediateLandsAndCompletes) {
  addDevice("mlx5_0", 1);
  std::unique_ptr<RdmaNic> nic[2];
  connectPair(nic, 2);
  std::vector<char> src(4096, 'x'), dst(4096, 0);
  std::memcpy(src.data(), "head", 4);
  std::unique_ptr<RdmaRegion> rs, rd;
  ASSERT_TRUE(nic[0]->registerMemory(src.data(), src.size(), &rs).ok());
  ASSERT_TRUE(nic[1]->registerMemory(dst.data(), dst.size(), &rd).ok());
  EXPECT_EQ(rd->remoteAddress(dst.data() + 5), reinterpret_cast<uintptr_t>(dst.data() + 5));
  RdmaGather g[2] = {{src.data(), 4, rs->desc()}, {src.data() + 100, 1000, rs->desc()}};
  RdmaTarget t{rd->remoteAddress(dst.data() + 16), rd->key()};
  int token = 0;
  std::string error;
  ASSERT_EQ(nic[0]->write(1, 1, g, 2, t, 0xdeadbeef, &token, &error), PostResult::kPosted) << error;
  EXPECT_EQ(std::string(dst.data() + 16, 4), "head");
  EXPECT_EQ(dst[20 + 999], 'x');
  EXPECT_EQ(dst[20 + 1000], 0);
  std::vector<RdmaEvent> mine = drain(nic[0].get()), theirs = drain(nic[1].get());
  ASSERT_EQ(mine.size(), 1u);
  EXPECT_EQ(mine[0].kind, RdmaEvent::kWritten);
  EXPECT_EQ(mine[0].context, &token);
  ASSERT_EQ(theirs.size(), 1u);
  EXPECT_EQ(theirs[0].kind, RdmaEvent::kArrived);
  EXPECT_EQ(theirs[0].imm, 0xdeadbeefu) << "host order on both sides";
  // Receives are re-posted as they are used: many more writes than were posted at first.
  for (int i = 0; i < 3 * kVerbsDepthCap; ++i) {
    ASSERT_EQ(nic[0]->write(1, i % 2, g, 1, t, uint32_t(i), nullptr, &error), PostResult::kPosted)
        << i << ": " << error;
    drain(nic[0].get());
    std::vector<RdmaEvent> got = drain(nic[1].get());
    ASSERT_EQ(got.size(), 1u) << i;
    ASSERT_EQ(got[0].kind, RdmaEvent::kArrived) << got[0].error;
    EXPECT_EQ(got[0].imm, uint32_t(i));
  }
}

TEST_F(FakeFabric, AFullSendQueueIsBusyNotAnError) {
  addDevice("mlx5_0", 1, /*maxQpWr=*/4);
  std::unique_ptr<RdmaNic> nic[2];
  connectPair(nic, 1);
  std::vector<char> src(64), dst(64);
  std::unique_ptr<RdmaRegion> rs, rd;
  ASSERT_TRUE(nic[0]->registerMemory(src.data(), src.size(), &rs).ok());
  ASSERT_TRUE(nic[1]->registerMemory(dst.data(), dst.size(), &rd).ok());
  RdmaGather g{src.data(), 8, rs->desc()};
  RdmaTarget t{rd->remoteAddress(dst.data()), rd->key()};
  int contexts[5];
  std::string error;
  for (int i = 0; i < 4; ++i)
    ASSERT_EQ(nic[0]->write(1, 0, &g, 1, t, 0, &contexts[i], &error), PostResult::kPosted);
  EXPECT_EQ(nic[0]->write(1, 0, &g, 1, t, 0, &contexts[4], &error), PostResult::kBusy);
  EXPECT_EQ(world_.postSendEnomem, 0) << "the provider must hold back, not let the post fail";
  RdmaEvent ev;
  ASSERT_EQ(nic[0]->poll(&ev, 1), 1);
  EXPECT_EQ(ev.context, &contexts[0]) << "completions come back in order, with their context";
  ASSERT_EQ(nic[0]->write(1, 0, &g, 1, t, 0, &contexts[4], &error), PostResult::kPosted);
  std::vector<RdmaEvent> rest = drain(nic[0].get());
  ASSERT_EQ(rest.size(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(rest[i].context, &contexts[i + 1]);
}

TEST_F(FakeFabric, AFailedWriteNamesPeerAndStatusAndBreaksItsLane) {
  addDevice("mlx5_0", 1);
  std::unique_ptr<RdmaNic> nic[2];
  connectPair(nic, 2);
  std::vector<char> src(64), dst(64);
  std::unique_ptr<RdmaRegion> rs, rd;
  ASSERT_TRUE(nic[0]->registerMemory(src.data(), src.size(), &rs).ok());
  ASSERT_TRUE(nic[1]->registerMemory(dst.data(), dst.size(), &rd).ok());
  RdmaGather g{src.data(), 8, rs->desc()};
  RdmaTarget stale{rd->remoteAddress(dst.data()), rd->key() + 100};
  int token;
  std::string error;
  ASSERT_EQ(nic[0]->write(1, 0, &g, 1, stale, 0, &token, &error), PostResult::kPosted);
  std::vector<RdmaEvent> ev = drain(nic[0].get());
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].kind, RdmaEvent::kFailed);
  EXPECT_EQ(ev[0].context, &token);
  EXPECT_EQ(ev[0].error,
            "verbs write to rank 1 lane 0 on mlx5_0:1 (InfiniBand, LID 16) failed: remote access "
            "error (status 10), vendor error 0x0; the target range is not registered at the "
            "peer, or the key is stale");
  EXPECT_EQ(nic[0]->write(1, 0, &g, 1, {stale.addr, rd->key()}, 0, &token, &error),
            PostResult::kFailed);
  EXPECT_NE(error.find("the queue pair failed earlier: verbs write to rank 1 lane 0"),
            std::string::npos)
      << error;
  // The other lane is a queue pair of its own, still fine.
  EXPECT_EQ(nic[0]->write(1, 1, &g, 1, {stale.addr, rd->key()}, 0, &token, &error),
            PostResult::kPosted)
      << error;
}

TEST_F(FakeFabric, BadWritesAreRefusedWithTheReason) {
  addDevice("mlx5_0", 1);
  std::unique_ptr<RdmaNic> nic;
  ASSERT_TRUE(open({}, &nic).ok());
  std::vector<uint8_t> blob;
  ASSERT_TRUE(nic->prepare(0, 3, {1, 2}, 1, &blob).ok());
  std::vector<char> src(64);
  std::unique_ptr<RdmaRegion> rs;
  ASSERT_TRUE(nic->registerMemory(src.data(), src.size(), &rs).ok());
  RdmaGather g[9];
  for (RdmaGather& e : g) e = {src.data(), 1, rs->desc()};
  std::string error;
  auto refused = [&](int peer, int lane, int n, const char* says) {
    EXPECT_EQ(nic->write(peer, lane, g, n, {0, 0}, 0, nullptr, &error), PostResult::kFailed);
    EXPECT_NE(error.find(says), std::string::npos) << error;
  };
  refused(1, 0, 1, "verbs write to rank 1 lane 0 on mlx5_0:1 (InfiniBand, LID 16): not connected");
  refused(0, 0, 1, "no such lane");
  refused(1, 1, 1, "no such lane");
  std::vector<uint8_t> peerBlob;
  std::unique_ptr<RdmaNic> peer;
  ASSERT_TRUE(open({}, &peer).ok());
  ASSERT_TRUE(peer->prepare(1, 3, {0}, 1, &peerBlob).ok());
  ASSERT_TRUE(nic->connect(1, peerBlob.data(), peerBlob.size()).ok());
  refused(1, 0, 9, "9 gather entries, at most 8");
  g[1].desc = nullptr;
  refused(1, 0, 2, "gather entry 1 has no region");
  EXPECT_EQ(nic->registerMemory(src.data(), 0, &rs).code(), StatusCode::InvalidArgument);
}

TEST_F(FakeFabric, ConnectRejectsDescriptionsThatDoNotFit) {
  addDevice("mlx5_0", 1);
  makeRoce(addDevice("mlx5_1", 1));
  std::unique_ptr<RdmaNic> a, b, c;
  std::vector<uint8_t> da, db, dc;
  ASSERT_TRUE(open({}, &a).ok());
  ASSERT_TRUE(open({}, &b).ok());
  RdmaNicOptions roce;
  roce.ibHca = "=mlx5_1";
  ASSERT_TRUE(open(roce, &c).ok());
  ASSERT_TRUE(a->prepare(0, 3, {1, 2}, 2, &da).ok());
  ASSERT_TRUE(b->prepare(1, 3, {2}, 2, &db).ok());  // b does not count rank 0 as a peer
  ASSERT_TRUE(c->prepare(2, 3, {0, 1}, 2, &dc).ok());
  EXPECT_EQ(a->prepare(0, 3, {1}, 2, &da).code(), StatusCode::InvalidUsage);

  std::vector<uint8_t> garbage(50, 7);
  Status st = a->connect(1, garbage.data(), garbage.size());
  EXPECT_EQ(st.code(), StatusCode::InvalidArgument);
  EXPECT_NE(st.message().find("verbs connect of rank 0 to rank 1 on mlx5_0:1 (InfiniBand, LID "
                              "16): its description: verbs set-up description is malformed"),
            std::string::npos)
      << st.message();
  st = a->connect(1, da.data(), da.size());
  EXPECT_NE(st.message().find("its description is rank 0's of 3 with 2 lanes, not rank 1's"),
            std::string::npos)
      << st.message();
  st = a->connect(1, db.data(), db.size());
  EXPECT_EQ(st.code(), StatusCode::InvalidUsage);
  EXPECT_NE(st.message().find("rank 1 made no queue pairs for rank 0"), std::string::npos)
      << st.message();
  st = a->connect(2, dc.data(), dc.size());
  EXPECT_EQ(st.code(), StatusCode::Unsupported);
  EXPECT_NE(st.message().find("the peer's port is RoCE and this one is not"), std::string::npos)
      << st.message();
  st = b->connect(0, da.data(), da.size());
  EXPECT_NE(st.message().find("the peer was not among those prepare() was given"),
            std::string::npos)
      << st.message();
}

TEST_F(FakeFabric, WaitForEventsWakesForACompletionAnInterruptOrTheTimeout) {
  addDevice("mlx5_0", 1);
  std::unique_ptr<RdmaNic> nic[2];
  connectPair(nic, 1);
  std::vector<char> src(64), dst(64);
  std::unique_ptr<RdmaRegion> rs, rd;
  ASSERT_TRUE(nic[0]->registerMemory(src.data(), src.size(), &rs).ok());
  ASSERT_TRUE(nic[1]->registerMemory(dst.data(), dst.size(), &rd).ok());
  RdmaGather g{src.data(), 8, rs->desc()};
  RdmaTarget t{rd->remoteAddress(dst.data()), rd->key()};
  using Clock = std::chrono::steady_clock;
  auto elapsed = [](Clock::time_point since) { return Clock::now() - since; };

  auto start = Clock::now();
  nic[1]->waitForEvents(100);
  EXPECT_GE(elapsed(start), std::chrono::milliseconds(90)) << "nothing came: the timeout";

  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::string error;
    EXPECT_EQ(nic[0]->write(1, 0, &g, 1, t, 42, nullptr, &error), PostResult::kPosted);
  });
  start = Clock::now();
  nic[1]->waitForEvents(10000);
  EXPECT_LT(elapsed(start), std::chrono::seconds(5)) << "the completion woke it";
  writer.join();
  std::vector<RdmaEvent> got = drain(nic[1].get());
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].imm, 42u);

  // A completion already waiting ends the wait at once and is not lost.
  std::string error;
  ASSERT_EQ(nic[0]->write(1, 0, &g, 1, t, 43, nullptr, &error), PostResult::kPosted);
  start = Clock::now();
  nic[1]->waitForEvents(10000);
  EXPECT_LT(elapsed(start), std::chrono::seconds(5));
  got = drain(nic[1].get());
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].imm, 43u);

  nic[1]->interruptWait();
  start = Clock::now();
  nic[1]->waitForEvents(10000);
  EXPECT_LT(elapsed(start), std::chrono::seconds(5)) << "interruptWait woke it";
  EXPECT_EQ(world_.unackedEvents, 0);
}

TEST_F(FakeFabric, EverythingIsFreedWithTheNic) {
  addDevice("mlx5_0", 1);
  {
    std::unique_ptr<RdmaNic> nic[2];
    connectPair(nic, 3);
    std::vector<char> buf(64);
    std::unique_ptr<RdmaRegion> r;
    ASSERT_TRUE(nic[0]->registerMemory(buf.data(), buf.size(), &r).ok());
  }
  EXPECT_TRUE(world_.qps.empty());
  EXPECT_TRUE(world_.mrs.empty());
  EXPECT_EQ(world_.contexts + world_.pds + world_.cqs + world_.channels, 0);
}

#endif  // CHORUS_HAVE_IBVERBS

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
