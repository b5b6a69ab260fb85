// The RDMA transport between network-namespace hosts (tests/netns), through libfabric's tcp
// provider, the one that runs without an RDMA NIC: every collective on 2 hosts x 2 ranks (shm
// within a host, RDMA between) and 4 hosts x 1, checked against the reference; a link cut
// turns into an error on every rank; strangers and garbage on every listening socket of a rank
// change nothing; and the choice of network: auto falls back to TCP where no RDMA device is,
// while CHORUS_NET=ib fails on every rank saying what is missing.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/clock.h"
#include "core/comm_internals.h"
#include "harness/collective_cases.h"
#include "harness/multirank.h"
#include "netns/netns_hosts.h"

namespace chorus::test {
namespace {

void reportTo(void* ctx, const char* line) {
  static_cast<RankContext*>(ctx)->report("%s", line);
}

// Each rank enters its host's namespace with the RDMA transport forced over libfabric's tcp.
RankSetup ofiHosts(const NetnsHosts& net, int perHost, const char* timeout) {
  return [&net, perHost, timeout](int rank) {
    setenv("CHORUS_TIMEOUT", timeout, 1);
    setenv("CHORUS_NET", "ofi", 1);
    setenv("CHORUS_OFI_PROVIDER", "tcp", 1);
    return net.enterHost(rank / perHost);
  };
}

// 0 when this rank talks to its other hosts over ofi; reports otherwise.
int expectOfi(RankContext& ctx, Communicator& comm) {
  const std::string used = CommInternals::transportName(comm);
  if (used.find("ofi") != std::string::npos) return 0;
  ctx.report("transports used: %s, not ofi", used.c_str());
  return 2;
}

struct Layout {
  int hosts, perHost;
};

class OfiMultiHost : public ::testing::TestWithParam<std::tuple<Layout, Coll>> {};

TEST_P(OfiMultiHost, MatchReference) {
  const auto [layout, coll] = GetParam();
  NetnsHosts net(layout.hosts);
  if (!net.ok()) GTEST_SKIP() << net.whyNot();
  auto results = runRanks(
      layout.hosts * layout.perHost,
      [coll = coll](RankContext& ctx) {
        auto comm = ctx.connect();
        if (!comm) return 1;
        if (int bad = expectOfi(ctx, *comm)) return bad;
        return runAllCases(*comm, coll, reportTo, &ctx) ? 1 : 0;
      },
      120, ofiHosts(net, layout.perHost, "30"));
  EXPECT_EQ(describeFailures(results), "");
}

INSTANTIATE_TEST_SUITE_P(Netns, OfiMultiHost,
                         ::testing::Combine(::testing::Values(Layout{2, 2}, Layout{4, 1}),
                                            ::testing::Values(Coll::AllReduce, Coll::ReduceScatter,
                                                              Coll::AllGather, Coll::Broadcast,
                                                              Coll::Reduce, Coll::AllToAll,
                                                              Coll::Gather, Coll::Scatter,
                                                              Coll::SendRecv, Coll::Barrier)),
                         [](const auto& info) {
                           const Layout l = std::get<0>(info.param);
                           return std::string(kCollNames[int(std::get<1>(info.param))]) + "_" +
                                  std::to_string(l.hosts) + "hosts_x" + std::to_string(l.perHost);
                         });

// Each receiver sizes its own FIFOs (CHORUS_RDMA_SLOTS, 0: by peer count) and tells its
// senders: ranks that chose 2, 5, 16 and 0 slots still carry every collective.
TEST(OfiFifoDepth, EachReceiverChoosesItsOwnSlots) {
  NetnsHosts net(4);
  if (!net.ok()) GTEST_SKIP() << net.whyNot();
  const RankSetup hosts = ofiHosts(net, 1, "30");
  auto results = runRanks(
      4,
      [](RankContext& ctx) {
        auto comm = ctx.connect();
        if (!comm) return 1;
        if (int bad = expectOfi(ctx, *comm)) return bad;
        for (Coll c : {Coll::AllReduce, Coll::AllGather, Coll::AllToAll, Coll::SendRecv})
          if (runAllCases(*comm, c, reportTo, &ctx)) return 1;
        return 0;
      },
      120,
      [&hosts](int rank) {
        static const char* kSlots[] = {"2", "5", "16", "0"};
        setenv("CHORUS_RDMA_SLOTS", kSlots[rank], 1);
        return hosts(rank);
      });
  EXPECT_EQ(describeFailures(results), "");
}

// Cut host 1's link while large allreduces run: every rank reports an error, nobody hangs.
TEST(OfiFaults, LinkCutGivesErrorsOnEveryRank) {
  NetnsHosts net(2);
  if (!net.ok()) GTEST_SKIP() << net.whyNot();
  const double timeoutSec = 4;
  RankGroup group(
      4,
      [](RankContext& ctx) {
        auto comm = ctx.connect();
        if (!comm) return 1;
        if (int bad = expectOfi(ctx, *comm)) return bad;
        std::vector<float> a(1 << 22, 1.0f), b(a.size());
        Deadline stopAt = Deadline::after(40);
        for (int i = 0; !stopAt.expired(); ++i) {
          Status st = comm->allReduce(a.data(), b.data(), a.size(), DataType::Float32, {});
          if (!st.ok()) {
            ctx.report("after %d allreduces: %s", i, st.toString().c_str());
            return 3;
          }
        }
        ctx.report("no error within 40 s of the link cut");
        return 4;
      },
      ofiHosts(net, 2, "4"));
  std::this_thread::sleep_for(std::chrono::milliseconds(2000));
  ASSERT_TRUE(net.setLink(1, false));
  const int64_t cutAt = nowNs();
  auto results = group.wait(30);
  const double took = double(nowNs() - cutAt) / 1e9;
  for (const RankResult& r : results) {
    EXPECT_EQ(r.exitCode, 3) << "rank " << r.rank << ": " << r.report;
    EXPECT_FALSE(r.timedOut) << "rank " << r.rank << " hung";
  }
  EXPECT_LT(took, 3 * timeoutSec + 5) << "errors took " << took << " s after the cut";
}

// Every TCP port listening in this rank's namespace (its own host): libfabric's, the
// bootstrap's. /proc/net/tcp lists the sockets of the reader's network namespace.
std::vector<int> listeningPorts() {
  std::ifstream in("/proc/self/net/tcp");
  std::string line;
  std::getline(in, line);
  std::vector<int> ports;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string slot, local, remote, state;
    f >> slot >> local >> remote >> state;
    if (state == "0A") ports.push_back(std::stoi(local.substr(local.find(':') + 1), nullptr, 16));
  }
  return ports;
}

// Connects to `port` on `addr` and sends `bytes` of garbage (0: connects and closes).
void pester(const std::string& addr, int port, size_t bytes) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(uint16_t(port));
  inet_pton(AF_INET, addr.c_str(), &sa.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0 && bytes) {
    std::vector<char> junk(bytes);
    for (size_t i = 0; i < bytes; ++i) junk[i] = char(i * 131 + 7);
    (void)!write(fd, junk.data(), junk.size());
  }
  close(fd);
}

TEST(OfiFaults, StrangersAndGarbageOnEveryListenerChangeNothing) {
  NetnsHosts net(2);
  if (!net.ok()) GTEST_SKIP() << net.whyNot();
  auto results = runRanks(
      2,
      [](RankContext& ctx) {
        auto comm = ctx.connect();
        if (!comm) return 1;
        if (int bad = expectOfi(ctx, *comm)) return bad;
        std::vector<float> a(1 << 18), b(a.size());
        auto check = [&](int round) {
          for (size_t i = 0; i < a.size(); ++i) a[i] = float(ctx.rank + 1) * float(i % 97);
          Status st = comm->allReduce(a.data(), b.data(), a.size(), DataType::Float32, {});
          if (!st.ok()) return ctx.report("round %d: %s", round, st.toString().c_str()), false;
          for (size_t i = 0; i < a.size(); ++i)
            if (b[i] != 3.0f * float(i % 97))
              return ctx.report("round %d: element %zu is %g", round, i, double(b[i])), false;
          return true;
        };
        if (!check(0)) return 3;
        if (ctx.rank == 1) {
          // Rank 1 is alone on host 1, so every listener there is Chorus's or libfabric's.
          const std::vector<int> ports = listeningPorts();
          if (ports.empty()) return ctx.report("no listening port found on host 1"), 2;
          for (int port : ports)
            for (size_t bytes : {size_t(0), size_t(1), size_t(64), size_t(4096), size_t(1 << 16)})
              pester(NetnsHosts::address(1), port, bytes);
        }
        for (int round = 1; round <= 5; ++round)
          if (!check(round)) return 3;
        return 0;
      },
      90, ofiHosts(net, 1, "20"));
  EXPECT_EQ(describeFailures(results), "");
}

// Without an RDMA device (this machine: libibverbs finds none; libfabric's hardware providers
// are absent), auto gives TCP between hosts; CHORUS_NET=ib fails on every rank, saying so.
TEST(NetChoice, AutoFallsBackToTcpAndForcedIbFailsClearly) {
  NetnsHosts net(2);
  if (!net.ok()) GTEST_SKIP() << net.whyNot();
  auto fallback = runRanks(
      2,
      [](RankContext& ctx) {
        auto comm = ctx.connect();
        if (!comm) return 1;
        const std::string used = CommInternals::transportName(*comm);
        if (used == "tcp") return 0;
        ctx.report("transports used: %s (this test expects a machine without an RDMA NIC)",
                   used.c_str());
        return 2;
      },
      60, [&net](int rank) { return net.enterHost(rank); });
  EXPECT_EQ(describeFailures(fallback), "");

  auto forced = runRanks(
      2,
      [](RankContext& ctx) {
        Config config;
        if (!Config::fromEnvironment(&config).ok()) return 1;
        config.timeoutSec = 20;
        std::unique_ptr<Communicator> comm;
        Status st = Communicator::create(ctx.id, ctx.rank, ctx.size, config, &comm);
        if (st.ok()) return ctx.report("init succeeded with CHORUS_NET=ib"), 2;
        ctx.report("%s", st.toString().c_str());
        return st.message().find("CHORUS_NET=ib but rank") != std::string::npos ? 0 : 3;
      },
      60,
      [&net](int rank) {
        setenv("CHORUS_NET", "ib", 1);
        return net.enterHost(rank);
      });
  EXPECT_EQ(describeFailures(forced), "");
  for (const RankResult& r : forced) printf("rank %d: %s\n", r.rank, r.report.c_str());
}

}  // namespace
}  // namespace chorus::test
