// Several hosts on one machine (tests/netns): every collective across 2 hosts x 2 ranks (shm
// within a host, TCP between) and 4 hosts x 1 rank (TCP only), checked against the reference;
// and a link cut mid-collective, which must turn into an error on every rank before the
// deadline. Skipped, with the reason, where network namespaces cannot be made.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <thread>

#include "common/clock.h"
#include "core/comm_internals.h"
#include "harness/collective_cases.h"
#include "harness/multirank.h"
#include "netns/netns_hosts.h"

namespace chorus::test {
namespace {

struct Layout {
  int hosts, perHost;
};

void reportTo(void* ctx, const char* line) {
  static_cast<RankContext*>(ctx)->report("%s", line);
}

RankSetup joinHosts(const NetnsHosts& net, int perHost, const char* timeout) {
  return [&net, perHost, timeout](int rank) {
    setenv("CHORUS_TIMEOUT", timeout, 1);
    return net.enterHost(rank / perHost);
  };
}

class MultiHost : public ::testing::TestWithParam<std::tuple<Layout, Coll>> {};

TEST_P(MultiHost, MatchReference) {
  const auto [layout, coll] = GetParam();
  NetnsHosts net(layout.hosts);
  if (!net.ok()) GTEST_SKIP() << net.whyNot();
  auto results = runRanks(
      layout.hosts * layout.perHost,
      [coll = coll](RankContext& ctx) {
        auto comm = ctx.connect();
        if (!comm) return 1;
        return runAllCases(*comm, coll, reportTo, &ctx) ? 1 : 0;
      },
      90, joinHosts(net, layout.perHost, "30"));
  EXPECT_EQ(describeFailures(results), "");
}

INSTANTIATE_TEST_SUITE_P(Netns, MultiHost,
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

// Hierarchical algorithms forced (CHORUS_ALGO) across 2 hosts x 2 ranks: reduce-scatter over
// shared memory inside each host, the pieces across hosts over TCP, allgather inside each host.
// Each rank first checks that the selector's layout has two hosts: on one host the hierarchical
// algorithms degenerate into their intra-host phases and would prove nothing here.
// Runs every case of `coll` on hosts x perHost ranks with CHORUS_ALGO=`algo`, each rank first
// checking that the selector's layout has that many hosts.
std::string runForced(Coll coll, Layout layout, const char* algo) {
  NetnsHosts net(layout.hosts);
  if (!net.ok()) return "skip: " + net.whyNot();
  auto results = runRanks(
      layout.hosts * layout.perHost,
      [coll, layout](RankContext& ctx) {
        auto comm = ctx.connect();
        if (!comm) return 1;
        const size_t hosts = CommInternals::layout(*comm).hosts.size();
        if (hosts != size_t(layout.hosts)) {
          ctx.report("the selector sees %zu hosts, not %d", hosts, layout.hosts);
          return 2;
        }
        return runAllCases(*comm, coll, reportTo, &ctx) ? 1 : 0;
      },
      90,
      [&net, layout, algo](int rank) {
        setenv("CHORUS_ALGO", algo, 1);
        return joinHosts(net, layout.perHost, "30")(rank);
      });
  return describeFailures(results);
}

class MultiHostHierarchical : public ::testing::TestWithParam<Coll> {};

TEST_P(MultiHostHierarchical, MatchReference) {
  const std::string failures =
      runForced(GetParam(), Layout{2, 2},
                "allreduce=hierarchical,reduce_scatter=hierarchical,allgather=hierarchical");
  if (failures.rfind("skip: ", 0) == 0) GTEST_SKIP() << failures.substr(6);
  EXPECT_EQ(failures, "");
}

// The sliced allreduce across 4 hosts runs halving and doubling between them (2 rounds each
// way; across 2 hosts that would be one exchange, the same as a ring).
TEST(MultiHostSliced, HalvingAndDoublingAcross4HostsMatchReference) {
  const std::string failures =
      runForced(Coll::AllReduce, Layout{4, 1}, "allreduce=hierarchical_sliced");
  if (failures.rfind("skip: ", 0) == 0) GTEST_SKIP() << failures.substr(6);
  EXPECT_EQ(failures, "");
}

INSTANTIATE_TEST_SUITE_P(Netns, MultiHostHierarchical,
                         ::testing::Values(Coll::AllReduce, Coll::ReduceScatter, Coll::AllGather),
                         [](const auto& info) { return std::string(kCollNames[int(info.param)]); });

// Bytes each interface of this rank's network namespace has sent (/proc/self/net/dev, which
// shows the reader's own namespace).
std::map<std::string, uint64_t> sentBytes() {
  std::map<std::string, uint64_t> out;
  FILE* f = fopen("/proc/self/net/dev", "r");
  if (!f) return out;
  char line[512];
  while (fgets(line, sizeof line, f)) {
    char name[64];
    unsigned long long rx, tx, skip;
    // "  eth0: rxbytes packets errs drop fifo frame compressed multicast txbytes ..."
    if (sscanf(line, " %63[^:]: %llu %llu %llu %llu %llu %llu %llu %llu %llu", name, &rx, &skip,
               &skip, &skip, &skip, &skip, &skip, &skip, &tx) == 10)
      out[name] = tx;
  }
  fclose(f);
  return out;
}

// Two rails per host (eth0 and eth1, each a network of its own) named in CHORUS_SOCKET_IFNAME:
// local rank i of each host listens on rail i, so the hierarchical allreduce's cross-host step
// (rank 0 with 2 on one rail, 1 with 3 on the other) loads both rails, and the results stay
// right.
TEST(MultiHostRails, EachLocalRankTakesItsOwnRail) {
  NetnsHosts net(2, 2);
  if (!net.ok()) GTEST_SKIP() << net.whyNot();
  auto results = runRanks(
      4,
      [](RankContext& ctx) {
        auto comm = ctx.connect();
        if (!comm) return 1;
        std::map<std::string, uint64_t> before = sentBytes();
        std::vector<float> a(4 << 20), b(a.size());
        for (size_t i = 0; i < a.size(); ++i) a[i] = float(ctx.rank + 1) + float(i % 7);
        for (int round = 0; round < 2; ++round) {
          Status st = comm->allReduce(a.data(), b.data(), a.size(), DataType::Float32, {});
          if (!st.ok()) {
            ctx.report("%s", st.toString().c_str());
            return 2;
          }
          for (size_t i = 0; i < b.size(); ++i)
            if (b[i] != 10.0f + 4.0f * float(i % 7)) {
              ctx.report("element %zu is %g", i, double(b[i]));
              return 3;
            }
        }
        std::map<std::string, uint64_t> after = sentBytes();
        // Each rank sends half of its 16 MiB across hosts per call; the host's two ranks share
        // the namespace, so both rails must have carried at least that much.
        for (const char* rail : {"eth0", "eth1"}) {
          const uint64_t sent = after[rail] - before[rail];
          if (sent < (8u << 20)) {
            ctx.report("%s sent only %llu bytes", rail, static_cast<unsigned long long>(sent));
            return 4;
          }
        }
        return 0;
      },
      90,
      [&net](int rank) {
        setenv("CHORUS_SOCKET_IFNAME", "=eth0,eth1", 1);
        setenv("CHORUS_ALGO", "allreduce=hierarchical", 1);
        return joinHosts(net, 2, "30")(rank);
      });
  EXPECT_EQ(describeFailures(results), "");
}

// Cut host 1's link while large allreduces run: nobody may hang; every rank reports an error
// (a timeout or a broken connection) well before the test's own limit.
TEST(MultiHostFaults, LinkCutGivesErrorsOnEveryRank) {
  NetnsHosts net(2);
  if (!net.ok()) GTEST_SKIP() << net.whyNot();
  const double timeoutSec = 4;
  RankGroup group(
      4,
      [](RankContext& ctx) {
        auto comm = ctx.connect();
        if (!comm) return 1;
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
      joinHosts(net, 2, "4"));
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  ASSERT_TRUE(net.setLink(1, false));
  const int64_t cutAt = nowNs();
  auto results = group.wait(30);
  const double took = double(nowNs() - cutAt) / 1e9;
  for (const RankResult& r : results) {
    EXPECT_EQ(r.exitCode, 3) << "rank " << r.rank << ": " << r.report;
    EXPECT_FALSE(r.timedOut) << "rank " << r.rank << " hung";
  }
  EXPECT_LT(took, 3 * timeoutSec + 5) << "errors took " << took << " s after the cut";
  for (const RankResult& r : results) printf("rank %d: %s", r.rank, r.report.c_str());
}

}  // namespace
}  // namespace chorus::test
