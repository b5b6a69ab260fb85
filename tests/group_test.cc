// Groups and split: grouped sends/receives that would deadlock one at a time, sends to self,
// one thread driving several communicators, and sub-communicators by color and key.
#include "chorus/group.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <thread>
#include <vector>

#include "harness/multirank.h"

namespace chorus::test {
namespace {

// Every rank sends a large message to every rank (itself included) before receiving any:
// without a group the first sends would wait forever for credits nobody frees.
TEST(Group, AllPairsSendsBeforeReceivesComplete) {
  auto results = runRanks(4, [](RankContext& ctx) {
    auto comm = ctx.connect();
    if (!comm) return 1;
    const size_t n = 1 << 20;  // many chunks per message
    const int P = ctx.size;
    std::vector<std::vector<int32_t>> out(P), in(P);
    groupStart();
    for (int q = 0; q < P; ++q) {
      out[q].assign(n, ctx.rank * 100 + q);
      if (!comm->send(out[q].data(), n, DataType::Int32, q).ok()) return 2;
    }
    for (int q = 0; q < P; ++q) {
      in[q].assign(n, -1);
      if (!comm->recv(in[q].data(), n, DataType::Int32, q).ok()) return 3;
    }
    Status st = groupEnd();
    if (!st.ok()) {
      ctx.report("groupEnd: %s", st.toString().c_str());
      return 4;
    }
    for (int q = 0; q < P; ++q)
      for (size_t i = 0; i < n; i += 4099)
        if (in[q][i] != q * 100 + ctx.rank) {
          ctx.report("from %d: element %zu is %d", q, i, in[q][i]);
          return 5;
        }
    return 0;
  });
  EXPECT_EQ(describeFailures(results), "");
}

TEST(Group, NestedGroupsRunAtTheOutermostEnd) {
  auto results = runRanks(2, [](RankContext& ctx) {
    auto comm = ctx.connect();
    if (!comm) return 1;
    float a = float(ctx.rank + 1), b = 10.0f * float(ctx.rank + 1);
    groupStart();
    groupStart();
    if (!comm->allReduce(&a, &a, 1, DataType::Float32, RedOp::Sum).ok()) return 2;
    if (!groupEnd().ok()) return 3;
    if (a != float(ctx.rank + 1)) return 4;  // still queued
    if (!comm->allReduce(&b, &b, 1, DataType::Float32, RedOp::Sum).ok()) return 5;
    Status st = groupEnd();
    if (!st.ok() || a != 3 || b != 30) {
      ctx.report("%s a=%g b=%g", st.toString().c_str(), a, b);
      return 6;
    }
    return groupEnd().code() == StatusCode::InvalidUsage ? 0 : 7;
  });
  EXPECT_EQ(describeFailures(results), "");
}

TEST(Group, SendsToSelfPairWithReceivesFromSelf) {
  auto results = runRanks(1, [](RankContext& ctx) {
    auto comm = ctx.connect();
    if (!comm) return 1;
    int x = 42, y = 0;
    groupStart();
    (void)comm->send(&x, 1, DataType::Int32, 0);
    Status st = groupEnd();
    if (st.code() != StatusCode::InvalidUsage) {
      ctx.report("unmatched send to self: %s", st.toString().c_str());
      return 2;
    }
    groupStart();
    (void)comm->recv(&y, 1, DataType::Int32, 0);
    (void)comm->send(&x, 1, DataType::Int32, 0);
    st = groupEnd();
    if (!st.ok() || y != 42) {
      ctx.report("matched pair: %s y=%d", st.toString().c_str(), y);
      return 3;
    }
    return 0;
  });
  EXPECT_EQ(describeFailures(results), "");
}

// One process, two ranks of one job in two threads for init; then a single thread drives both
// communicators through one group, as ncclCommInitAll programs do.
TEST(Group, OneThreadDrivesTwoCommunicators) {
  auto results = runRanks(1, [](RankContext& ctx) {
    UniqueId id;
    if (!createUniqueId(&id, 30).ok()) return 1;
    std::unique_ptr<Communicator> c[2];
    Status st[2];
    std::thread t([&] { st[1] = Communicator::create(id, 1, 2, Config{}, &c[1]); });
    st[0] = Communicator::create(id, 0, 2, Config{}, &c[0]);
    t.join();
    if (!st[0].ok() || !st[1].ok()) {
      ctx.report("create: %s / %s", st[0].toString().c_str(), st[1].toString().c_str());
      return 2;
    }
    std::vector<double> v0(300000, 1.0), v1(300000, 2.0);
    groupStart();
    (void)c[0]->allReduce(v0.data(), v0.data(), v0.size(), DataType::Float64, RedOp::Sum);
    (void)c[1]->allReduce(v1.data(), v1.data(), v1.size(), DataType::Float64, RedOp::Sum);
    Status g = groupEnd();
    if (!g.ok() || v0[12345] != 3.0 || v1[299999] != 3.0) {
      ctx.report("%s %g %g", g.toString().c_str(), v0[12345], v1[299999]);
      return 3;
    }
    int x = 7, y = 0;
    groupStart();
    (void)c[0]->send(&x, 1, DataType::Int32, 0);
    (void)c[0]->recv(&y, 1, DataType::Int32, 0);
    g = groupEnd();
    return g.ok() && y == 7 ? 0 : 4;
  });
  EXPECT_EQ(describeFailures(results), "");
}

// A rank that destroys its communicator while the others still call a collective is an error
// for them (named, and quick), not a wait until the timeout.
TEST(Group, PeerThatLeftEarlyIsAnErrorNotAHang) {
  auto results = runRanks(3, [](RankContext& ctx) {
    auto comm = ctx.connect();
    if (!comm) return 1;
    if (ctx.rank == 2) return 0;  // leaves cleanly at once
    usleep(300000);
    std::vector<float> v(100000, 1.0f);
    Status st = comm->allReduce(v.data(), v.data(), v.size(), DataType::Float32, RedOp::Sum);
    ctx.report("%s", st.toString().c_str());
    return st.code() == StatusCode::RemoteError &&
                   st.message().find("rank 2 left the job") != std::string::npos
               ? 0
               : 2;
  });
  EXPECT_EQ(describeFailures(results), "");
}

TEST(Split, ColorsAndKeysFormSubCommunicators) {
  auto results = runRanks(5, [](RankContext& ctx) {
    auto comm = ctx.connect();
    if (!comm) return 1;
    // Rank 4 opts out; the others split into evens and odds, ordered by descending rank.
    int color = ctx.rank == 4 ? -1 : ctx.rank % 2;
    std::unique_ptr<Communicator> sub;
    Status st = comm->split(color, -ctx.rank, Config{}, &sub);
    if (!st.ok()) {
      ctx.report("split: %s", st.toString().c_str());
      return 2;
    }
    if (ctx.rank == 4) {
      if (sub) return 3;
      int v = 1;
      st = comm->allReduce(&v, &v, 1, DataType::Int32, RedOp::Sum);
      return st.ok() && v == 5 ? 0 : 8;
    }
    if (!sub || sub->size() != 2) return 4;
    const int expectRank = ctx.rank >= 2 ? 0 : 1;  // higher old rank first
    if (sub->rank() != expectRank) {
      ctx.report("rank %d got sub rank %d", ctx.rank, sub->rank());
      return 5;
    }
    int v = ctx.rank;
    st = sub->allReduce(&v, &v, 1, DataType::Int32, RedOp::Sum);
    int want = ctx.rank % 2 == 0 ? 0 + 2 : 1 + 3;
    if (!st.ok() || v != want) {
      ctx.report("sub allreduce: %s v=%d want %d", st.toString().c_str(), v, want);
      return 6;
    }
    // The parent still works after the split.
    v = 1;
    st = comm->allReduce(&v, &v, 1, DataType::Int32, RedOp::Sum);
    return st.ok() && v == 5 ? 0 : 7;
  });
  EXPECT_EQ(describeFailures(results), "");
}

}  // namespace
}  // namespace chorus::test
