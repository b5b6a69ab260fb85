// Topology: the shipped files load with the expected path classes, NIC affinity and host
// grouping; dump -> load is the identity; discovery works on this machine (no GPU, NVML or
// RDMA needed); hwloc XML is accepted; the job-wide view is the same on every rank.
#include "topo/topology.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <barrier>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

#include "topo/job.h"

namespace chorus::topo {
namespace {

std::string repoPath(const std::string& rel) {
  std::string f = __FILE__;  // <repo>/tests/topology_test.cc
  return f.substr(0, f.rfind("/tests/")) + "/" + rel;
}

Topology load(const std::string& rel) {
  Topology t;
  Status st = loadTopologyFile(repoPath(rel), &t);
  EXPECT_TRUE(st.ok()) << st.toString();
  return t;
}

const char* const kShipped[] = {"topologies/vm-2core.topo",
                                "topologies/dgx-h100.topo",
                                "topologies/pcie-4gpu-2socket.topo",
                                "topologies/cluster-128x-dgx-h100.topo",
                                "topologies/cluster-16x-pcie-4gpu.topo",
                                "topologies/cluster-4x-vm.topo"};

TEST(PathClass, NamesRoundTripAndOrder) {
  for (int i = 0; i < kNumPathClasses; ++i) {
    PathClass c;
    ASSERT_TRUE(parsePathClass(pathClassName(PathClass(i)), &c));
    EXPECT_EQ(int(c), i);
  }
  PathClass c;
  EXPECT_FALSE(parsePathClass("warp_drive", &c));
  EXPECT_LT(PathClass::NVLink, PathClass::CrossSocket);
  // Defaults must rank the classes: farther is never faster.
  for (int i = 2; i < kNumPathClasses; ++i)
    EXPECT_LE(defaultLink(PathClass(i)).bandwidthGBs, defaultLink(PathClass(i - 1)).bandwidthGBs);
}

TEST(TopologyFile, DgxH100) {
  Topology t = load("topologies/dgx-h100.topo");
  ASSERT_EQ(t.hosts.size(), 1u);
  const Host& h = t.hosts[0];
  EXPECT_EQ(h.sockets, 2);
  ASSERT_EQ(h.gpus.size(), 8u);
  ASSERT_EQ(h.nics.size(), 8u);
  for (int i = 0; i < 8; ++i) {
    for (int j = 0; j < 8; ++j)
      EXPECT_EQ(h.gpuPaths[i][j], i == j ? PathClass::Self : PathClass::NVLink) << i << "," << j;
    EXPECT_EQ(h.gpuNicPaths[i][i], PathClass::PcieSwitch);
    EXPECT_EQ(t.nearestNic(0, i, h.gpus[i].socket), i) << "GPU " << i << " has its own rail";
    EXPECT_TRUE(h.nics[i].rdma);
    EXPECT_EQ(h.nics[i].speedGbps, 400);
  }
  EXPECT_EQ(h.gpuNicPaths[0][1], PathClass::HostBridge);
  EXPECT_EQ(h.gpuNicPaths[0][4], PathClass::CrossSocket);
  EXPECT_EQ(h.gpuNicPaths[7][3], PathClass::CrossSocket);
  EXPECT_EQ(t.nearestNic(0, -1, 1), 4);  // a host-memory rank on socket 1: first NIC there
  ASSERT_EQ(t.ranks.size(), 8u);
  EXPECT_EQ(t.pathBetweenRanks(0, 7), PathClass::NVLink);
  EXPECT_EQ(t.pathBetweenRanks(3, 3), PathClass::Self);
  EXPECT_EQ(t.ranksByHost(), (std::vector<std::vector<int>>{{0, 1, 2, 3, 4, 5, 6, 7}}));
  EXPECT_EQ(t.ranksBySocket(0), (std::vector<std::vector<int>>{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  EXPECT_EQ(t.link(PathClass::Network).bandwidthGBs, 48);
  EXPECT_EQ(t.link(PathClass::NVLink).bandwidthGBs, defaultLink(PathClass::NVLink).bandwidthGBs);
  // What the simulator assumes of an H100 (docs/simulator.md): 18 NVLink 4 links of 25 GB/s
  // each way, 87% of it payload; NICs at 96% of their line rate; 1 MiB device messages.
  for (const Gpu& g : h.gpus) {
    EXPECT_EQ(g.nvlinks, 18);
    EXPECT_EQ(g.nvlinkGBs, 25);
  }
  EXPECT_DOUBLE_EQ(t.nvlinkPortGBs(0, 3), 18 * 25 * 0.87);
  EXPECT_EQ(t.nvlinkPortGBs(0, -1), 0);  // a host-memory rank has no NVLink
  EXPECT_EQ(t.nicEfficiency, 0.96);
  EXPECT_EQ(t.deviceMessageBytes, 1u << 20);
  EXPECT_EQ(t.deviceCopyGBs, 1300);
}

TEST(TopologyFile, PcieFourGpuTwoSockets) {
  Topology t = load("topologies/pcie-4gpu-2socket.topo");
  ASSERT_EQ(t.hosts.size(), 1u);
  const Host& h = t.hosts[0];
  ASSERT_EQ(h.gpus.size(), 4u);
  ASSERT_EQ(h.nics.size(), 1u);
  EXPECT_EQ(h.gpuPaths[0][1], PathClass::PcieSwitch);
  EXPECT_EQ(h.gpuPaths[2][3], PathClass::PcieMultiSwitch);
  EXPECT_EQ(h.gpuPaths[0][2], PathClass::CrossSocket);
  EXPECT_EQ(h.gpuPaths[1][3], PathClass::CrossSocket);
  EXPECT_EQ(h.gpuNicPaths[0][0], PathClass::HostBridge);
  EXPECT_EQ(h.gpuNicPaths[3][0], PathClass::CrossSocket);
  for (int g = 0; g < 4; ++g) EXPECT_EQ(t.nearestNic(0, g, h.gpus[g].socket), 0);
  for (const auto& row : h.gpuPaths)
    for (PathClass c : row) EXPECT_NE(c, PathClass::NVLink);
  EXPECT_EQ(t.ranksBySocket(0), (std::vector<std::vector<int>>{{0, 1}, {2, 3}}));
}

TEST(TopologyFile, ThisVm) {
  Topology t = load("topologies/vm-2core.topo");
  ASSERT_EQ(t.hosts.size(), 1u);
  EXPECT_TRUE(t.hosts[0].gpus.empty());
  ASSERT_EQ(t.hosts[0].nics.size(), 1u);
  EXPECT_EQ(t.hosts[0].nics[0].name, "eth0");
  EXPECT_FALSE(t.hosts[0].nics[0].rdma);
  ASSERT_EQ(t.ranks.size(), 2u);
  EXPECT_EQ(t.ranks[1].gpu, -1);
  EXPECT_EQ(t.pathBetweenRanks(0, 1), PathClass::HostBridge);
  EXPECT_EQ(t.nearestNic(0, -1, 0), 0);
}

TEST(TopologyFile, ClusterOf128Dgx) {
  Topology t = load("topologies/cluster-128x-dgx-h100.topo");
  ASSERT_EQ(t.hosts.size(), 128u);
  EXPECT_EQ(t.hosts[0].name, "node-0");
  EXPECT_EQ(t.hosts[127].name, "node-127");
  ASSERT_EQ(t.ranks.size(), 1024u);
  auto groups = t.ranksByHost();
  ASSERT_EQ(groups.size(), 128u);
  for (size_t h = 0; h < groups.size(); ++h) {
    ASSERT_EQ(groups[h].size(), 8u);
    EXPECT_EQ(groups[h][0], int(h * 8));
  }
  EXPECT_EQ(t.pathBetweenRanks(0, 1), PathClass::NVLink);
  EXPECT_EQ(t.pathBetweenRanks(0, 8), PathClass::Network);
  EXPECT_EQ(t.pathBetweenRanks(1023, 1016), PathClass::NVLink);
  EXPECT_EQ(t.nearestNic(77, 5, 1), 5);
  EXPECT_EQ(t.link(PathClass::Network).bandwidthGBs, 48);
  // Compact: the dump collapses the hosts back into one block.
  EXPECT_LT(formatTopology(t).size(), 3000u);
}

TEST(TopologyFile, OtherClusters) {
  Topology p = load("topologies/cluster-16x-pcie-4gpu.topo");
  EXPECT_EQ(p.hosts.size(), 16u);
  EXPECT_EQ(p.ranks.size(), 64u);
  EXPECT_EQ(p.pathBetweenRanks(6, 7), PathClass::PcieMultiSwitch);  // host 1, GPUs 2 and 3
  EXPECT_EQ(p.pathBetweenRanks(4, 7), PathClass::CrossSocket);
  Topology v = load("topologies/cluster-4x-vm.topo");
  EXPECT_EQ(v.ranksByHost(), (std::vector<std::vector<int>>{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
  EXPECT_EQ(v.pathBetweenRanks(1, 2), PathClass::Network);
}

void expectRoundTrip(const Topology& t) {
  std::string text = formatTopology(t);
  Topology back;
  Status st = parseTopology(text, "dump", &back);
  ASSERT_TRUE(st.ok()) << st.toString() << "\n" << text;
  EXPECT_TRUE(back.sameAs(t)) << text << "\n---\n" << formatTopology(back);
  EXPECT_EQ(formatTopology(back), text);
}

TEST(TopologyFile, ShippedFilesRoundTrip) {
  for (const char* f : kShipped) {
    SCOPED_TRACE(f);
    expectRoundTrip(load(f));
  }
}

TEST(TopologyFile, SaveAndLoadThroughAFile) {
  Topology t = load("topologies/dgx-h100.topo");
  std::string path = ::testing::TempDir() + "topo_roundtrip_" + std::to_string(getpid()) + ".topo";
  ASSERT_TRUE(saveTopologyFile(t, path).ok());
  Topology back;
  ASSERT_TRUE(loadTopologyFile(path, &back).ok());
  EXPECT_TRUE(back.sameAs(t));
  EXPECT_EQ(back.source, path);
  unlink(path.c_str());
}

TEST(TopologyFile, IrregularTopologyRoundTrips) {
  // Everything the shorthands cannot say: partial NVLink, an asymmetric override, ids, hosts
  // that differ, explicit ranks, link and reducer overrides.
  Topology t = load("topologies/pcie-4gpu-2socket.topo");
  Host& h = t.hosts[0];
  h.id = "box:1234";
  h.gpuPaths[0][1] = h.gpuPaths[1][0] = PathClass::NVLink;
  h.gpuPaths[2][3] = PathClass::HostBridge;  // only one direction
  h.gpuNicPaths[2][0] = PathClass::PcieMultiSwitch;
  Host other = load("topologies/dgx-h100.topo").hosts[0];
  other.name = "x-1";
  t.hosts.push_back(other);
  t.ranks = {{1, 1, 6}, {0, 0, -1}, {0, 1, 3}, {1, 0, -1}};
  t.links[PathClass::PcieSwitch] = {1.25, 0.1};
  t.hostReduceGBs = 7.5;
  expectRoundTrip(t);
  // Hosts named like a block but with different shapes must not collapse.
  Topology two = load("topologies/cluster-4x-vm.topo");
  two.hosts[2].coresPerSocket = 64;
  expectRoundTrip(two);
}

TEST(TopologyFile, ErrorsNameTheLine) {
  Topology t;
  Status st =
      parseTopology("chorus-topology 1\nhost a\n  gpu 0000:01:00.0 socket=3\nend\n", "f", &t);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("f:3:"), std::string::npos) << st.message();
  st = parseTopology("host a\n  path gpu 0 gpu 1 warp\nend\n", "g", &t);
  EXPECT_NE(st.message().find("g:2:"), std::string::npos) << st.message();
  st = parseTopology("host a\n", "h", &t);
  EXPECT_NE(st.message().find("no 'end'"), std::string::npos) << st.message();
  st = parseTopology("# nothing\n", "e", &t);
  EXPECT_FALSE(st.ok());
  st = loadTopologyFile("/nonexistent/chorus.topo", &t);
  EXPECT_EQ(st.code(), StatusCode::SystemError);
}

// Found by tests/fuzz: these took minutes and gigabytes, or were not written back as read.
TEST(TopologyFile, RefusesWhatCannotBeMeantOrWrittenBack) {
  Topology t;
  for (const char* text :
       {"host a count=3000000\nend\n", "host a sockets=2000000000\nend\n",
        "host a count=4\nend\nranks per_host 300000000\n", "host a\n  gpu 0 pcie_width=-1\nend\n",
        "link network latency_us=nan\nhost a\nend\n", "host a\n  gpu 0 nvlinks=-1\nend\n",
        "efficiency nvlink=1.5\nhost a\nend\n", "efficiency nic=0\nhost a\nend\n",
        "executor device_message_kib=-4\nhost a\nend\n"}) {
    Status st = parseTopology(text, "f", &t);
    EXPECT_EQ(st.code(), StatusCode::InvalidArgument) << text;
  }
  ASSERT_TRUE(
      parseTopology("host a count=2 sockets=1000\nend\nranks per_host 3000\n", "f", &t).ok());
  EXPECT_EQ(t.ranks.back().socket, 999);  // the last of 3000 ranks on the last of 1000 sockets
}

TEST(Discovery, ThisMachineWithoutGpuNvmlOrRdma) {
  Topology t;
  std::string notes;
  Status st = discoverLocalTopology(&t, &notes);
  ASSERT_TRUE(st.ok()) << st.toString();
  ASSERT_EQ(t.hosts.size(), 1u);
  const Host& h = t.hosts[0];
  EXPECT_GE(h.sockets, 1);
  EXPECT_GE(h.coresPerSocket, 1);
  EXPECT_FALSE(h.name.empty());
  EXPECT_FALSE(h.id.empty());
  EXPECT_GE(t.ranks.size(), 1u);
  EXPECT_EQ(h.gpuPaths.size(), h.gpus.size());
  EXPECT_NE(notes.find("NVML"), std::string::npos) << notes;  // says what it could not use
  expectRoundTrip(t);
}

TEST(Discovery, HwlocXml) {
  Topology t;
  Status st = loadTopologyFile(repoPath("topologies/hwloc/two-socket-2gpu.xml"), &t);
  if (st.code() == StatusCode::Unsupported) GTEST_SKIP() << st.message();
  ASSERT_TRUE(st.ok()) << st.toString();
  const Host& h = t.hosts.at(0);
  EXPECT_EQ(h.name, "xmlbox");
  EXPECT_EQ(h.sockets, 2);
  EXPECT_EQ(h.numaNodes, 2);
  ASSERT_EQ(h.gpus.size(), 2u);
  ASSERT_EQ(h.nics.size(), 1u);  // ib0 is the same port as mlx5_0
  EXPECT_EQ(h.nics[0].name, "mlx5_0");
  EXPECT_TRUE(h.nics[0].rdma);
  EXPECT_EQ(h.gpus[0].busId, "0000:13:00.0");
  EXPECT_EQ(h.gpus[1].socket, 1);
  EXPECT_EQ(h.gpus[1].numa, 1);
  EXPECT_EQ(h.gpuNicPaths[0][0], PathClass::PcieSwitch);
  EXPECT_EQ(h.gpuNicPaths[1][0], PathClass::CrossSocket);
  EXPECT_EQ(h.gpuPaths[0][1], PathClass::CrossSocket);
  EXPECT_EQ(t.ranks.size(), 2u);
  expectRoundTrip(t);

  Topology vm;
  ASSERT_TRUE(loadTopologyFile(repoPath("topologies/hwloc/vm-2core.xml"), &vm).ok());
  EXPECT_EQ(vm.hosts.at(0).coresPerSocket, 2);
  EXPECT_EQ(vm.hosts[0].nics.at(0).name, "eth0");
}

// Runs buildJobTopology on `opts.size()` threads joined by an in-process allgather.
std::vector<Status> buildOnThreads(const std::vector<JobTopologyOptions>& opts,
                                   std::vector<Topology>* out) {
  int n = int(opts.size());
  std::barrier sync(n);
  std::vector<std::vector<char>> slots(n);
  std::vector<Status> status(n);
  out->assign(n, Topology{});
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r)
    threads.emplace_back([&, r] {
      AllgatherFn ag = [&](const void* mine, size_t bytes, void* all) {
        slots[r].assign(static_cast<const char*>(mine), static_cast<const char*>(mine) + bytes);
        sync.arrive_and_wait();
        for (int q = 0; q < n; ++q)
          memcpy(static_cast<char*>(all) + q * bytes, slots[q].data(), bytes);
        sync.arrive_and_wait();
        return Status::Ok();
      };
      status[r] = buildJobTopology(r, n, opts[r], ag, &(*out)[r]);
    });
  for (auto& t : threads) t.join();
  return status;
}

TEST(JobTopology, DiscoveredHostsAreGroupedAndShared) {
  std::vector<JobTopologyOptions> opts(4);
  const char* ids[] = {"hostA", "hostB", "hostA", "hostB"};
  for (int r = 0; r < 4; ++r) opts[r].hostId = ids[r];
  std::vector<Topology> t;
  for (const Status& st : buildOnThreads(opts, &t)) ASSERT_TRUE(st.ok()) << st.toString();
  ASSERT_EQ(t[0].hosts.size(), 2u);
  EXPECT_EQ(t[0].hosts[0].id, "hostA");
  EXPECT_EQ(t[0].ranksByHost(), (std::vector<std::vector<int>>{{0, 2}, {1, 3}}));
  EXPECT_EQ(t[0].pathBetweenRanks(0, 1), PathClass::Network);
  for (int r = 1; r < 4; ++r) EXPECT_TRUE(t[r].sameAs(t[0])) << "rank " << r;
}

TEST(JobTopology, FilePlacesRanksOnGpus) {
  std::vector<JobTopologyOptions> opts(3);
  const char* buses[] = {"0000:9d:00.0", "1b:00.0", ""};  // any bus id spelling works
  std::string dump = ::testing::TempDir() + "job_topo_" + std::to_string(getpid()) + ".topo";
  for (int r = 0; r < 3; ++r) {
    opts[r].topoFile = repoPath("topologies/cluster-128x-dgx-h100.topo");
    opts[r].hostId = r < 2 ? "h0" : "h1";
    opts[r].gpuBusId = buses[r];
    opts[r].socket = 1;
    opts[r].dumpFile = dump;
  }
  std::vector<Topology> t;
  for (const Status& st : buildOnThreads(opts, &t)) ASSERT_TRUE(st.ok()) << st.toString();
  ASSERT_EQ(t[0].hosts.size(), 2u);  // hosts without ranks are dropped
  EXPECT_EQ(t[0].ranks[0], (RankPlace{0, 1, 4}));
  EXPECT_EQ(t[0].ranks[1], (RankPlace{0, 0, 0}));
  EXPECT_EQ(t[0].ranks[2], (RankPlace{1, 1, -1}));
  EXPECT_EQ(t[0].pathBetweenRanks(0, 1), PathClass::NVLink);
  EXPECT_EQ(t[0].pathBetweenRanks(1, 2), PathClass::Network);
  Topology dumped;
  ASSERT_TRUE(loadTopologyFile(dump, &dumped).ok());
  EXPECT_TRUE(dumped.sameAs(t[0]));
  unlink(dump.c_str());
}

TEST(JobTopology, RanksThatDisagreeAboutTheFileAllFail) {
  std::vector<JobTopologyOptions> opts(3);
  opts[0].topoFile = repoPath("topologies/dgx-h100.topo");
  opts[1].topoFile = repoPath("topologies/pcie-4gpu-2socket.topo");
  opts[2].topoFile = repoPath("topologies/dgx-h100.topo");
  std::vector<Topology> t;
  for (const Status& st : buildOnThreads(opts, &t)) {
    EXPECT_EQ(st.code(), StatusCode::InvalidArgument);
    EXPECT_NE(st.message().find("CHORUS_TOPO_FILE"), std::string::npos) << st.message();
  }
  // More real hosts than the file describes.
  std::vector<JobTopologyOptions> two(2);
  for (int r = 0; r < 2; ++r) two[r].topoFile = repoPath("topologies/pcie-4gpu-2socket.topo");
  two[0].hostId = "a", two[1].hostId = "b";
  for (const Status& st : buildOnThreads(two, &t))
    EXPECT_EQ(st.code(), StatusCode::InvalidArgument);
}

// chorus-topo itself: the views a person or a script reads.
std::string runTool(const std::string& args) {
  const char* dir = getenv("CHORUS_BIN_DIR");
  std::string bin = std::string(dir ? dir : "") + "/chorus-topo";
  if (!dir || access(bin.c_str(), X_OK) != 0) return "";
  std::string out;
  if (FILE* p = popen((bin + " " + args + " 2>&1").c_str(), "r")) {
    char buf[4096];
    for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
    pclose(p);
  }
  return out;
}

TEST(ChorusTopo, TreeDotJsonExplain) {
  std::string dgx = "--file " + repoPath("topologies/dgx-h100.topo");
  std::string tree = runTool(dgx);
  if (tree.empty()) GTEST_SKIP() << "chorus-topo not built (CHORUS_BIN_DIR unset or no binary)";
  EXPECT_NE(tree.find("-> nic mlx5_3 (pcie_switch)"), std::string::npos) << tree;
  std::string dot = runTool(dgx + " --dot");
  EXPECT_NE(dot.find("NVSwitch"), std::string::npos);
  EXPECT_NE(dot.find("#76b900"), std::string::npos);  // NVLink colour
  EXPECT_NE(dot.find("#d62728"), std::string::npos);  // cross-socket colour
  std::string json = runTool(dgx + " --json");
  EXPECT_NE(json.find("\"nearest_nic\":7"), std::string::npos);
  std::string ex =
      runTool("--file " + repoPath("topologies/cluster-16x-pcie-4gpu.topo") + " --explain");
  EXPECT_NE(ex.find("ibverbs mlx5_0 <-> mlx5_0"), std::string::npos) << ex;
  EXPECT_NE(ex.find("hierarchical"), std::string::npos) << ex;
}

}  // namespace
}  // namespace chorus::topo
