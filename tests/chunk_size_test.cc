// Chunk sizes per schedule and per channel (Schedule::chunkBytes, ExecEnv::maxChunkBytesOf):
// the verifier proves schedules cut smaller than the transports' size, the cost model and the
// selector can choose such a size, and schedules that carry one run end to end over shared
// memory and TCP, also when channels of one rank are cut differently.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "algorithms/registry.h"
#include "algorithms/verify.h"
#include "bootstrap/bootstrap.h"
#include "core/executor.h"
#include "engine/cpu_engine.h"
#include "harness/multirank.h"
#include "transport/registry.h"
#include "tune/selector.h"

namespace chorus {
namespace {

OpDesc call(Collective c, uint64_t count, int root = -1) {
  OpDesc d;
  d.coll = c;
  d.count = count;
  d.dtype = DataType::Float32;
  d.root = root;
  return d;
}

std::vector<Schedule> cutAll(const char* algo, const OpDesc& d, int size, size_t chunkBytes) {
  return buildAllRanks(*findAlgorithm(d.coll, algo), d, size, RankLayout::flat(size), chunkBytes);
}

TEST(ChunkSize, TheVerifierChecksSchedulesCutSmallerThanTheTransport) {
  VerifyOptions o;
  o.chunkElems = 1 << 20;  // the transports' size would make every step one message
  for (const Algorithm& a : allAlgorithms()) {
    if (a.coll == Collective::Barrier || a.coll == Collective::Send || a.coll == Collective::Recv)
      continue;
    const OpDesc d = call(a.coll, 37,
                          a.coll == Collective::Broadcast || a.coll == Collective::Reduce ||
                                  a.coll == Collective::Gather || a.coll == Collective::Scatter
                              ? 1
                              : -1);
    for (int size : {2, 5, 8}) {
      if (a.why(d, size, RankLayout::flat(size))) continue;
      VerifyReport rep;
      Status st = verifySchedules(d, cutAll(a.name, d, size, 12), o, &rep);  // 3 floats
      EXPECT_TRUE(st.ok()) << st.toString();
      VerifyReport whole;
      ASSERT_TRUE(verifySchedules(d, cutAll(a.name, d, size, 0), o, &whole).ok());
      EXPECT_GE(rep.messages, whole.messages) << a.name << " " << size;
      if (std::string(a.name) == "ring") {
        EXPECT_GT(rep.messages, whole.messages) << size;
      }
    }
  }
}

TEST(ChunkSize, RanksThatCutAChannelDifferentlyAreRefused) {
  const OpDesc d = call(Collective::AllReduce, 64);
  std::vector<Schedule> s = cutAll("ring", d, 3, 16);
  s[2].chunkBytes = 32;
  Status st = verifySchedules(d, s, {});
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("Schedule::chunkBytes"), std::string::npos) << st.message();
}

topo::Topology flat(int ranks) {
  const std::string text =
      "chorus-topology 1\nreduce host_gbs=10\nexecutor step_us=0.1\n"
      "link self latency_us=0 bandwidth_gbs=10\n"
      "link host_bridge latency_us=1 bandwidth_gbs=10\n"
      "link network latency_us=10 bandwidth_gbs=1\n"
      "host h count=1 sockets=1 cores_per_socket=64\nend\nranks per_host " +
      std::to_string(ranks) + "\n";
  topo::Topology t;
  EXPECT_TRUE(topo::parseTopology(text, "test", &t).ok());
  return t;
}

// A chain forwards a message once it has all of it: at 128 KiB, a 512 KiB broadcast down 8
// ranks waits 7 whole-chunk hops before the chunks stream; smaller chunks stream sooner.
TEST(ChunkSize, TheCostModelSeesAChainPipelineSooner) {
  const topo::Topology t = flat(8);
  const OpDesc d = call(Collective::Broadcast, 128 << 10, 0);
  CostParams p;
  const double whole = predictTime(d, cutAll("chain", d, 8, 0), t, p);
  const double small = predictTime(d, cutAll("chain", d, 8, 16 << 10), t, p);
  EXPECT_LT(small, 0.7 * whole) << small << " vs " << whole;
}

TEST(ChunkSize, TheSelectorPicksASmallerChunkOnlyWhenAskedAndItPays) {
  const topo::Topology t = flat(8);
  const RankLayout l = RankLayout::flat(8);
  const OpDesc d = call(Collective::Broadcast, 128 << 10, 0);
  CostParams p;
  Selection sel;
  ASSERT_TRUE(selectAlgorithm(d, 8, l, t, p, {}, &sel).ok());
  EXPECT_EQ(sel.chunkBytes, 0u) << "off unless CostParams::minChunkBytes";
  p.minChunkBytes = 4 << 10;
  ASSERT_TRUE(selectAlgorithm(d, 8, l, t, p, {}, &sel).ok());
  EXPECT_GE(sel.chunkBytes, p.minChunkBytes);
  EXPECT_LT(sel.chunkBytes, p.chunkBytes);
  EXPECT_NE(sel.describe().find("-byte chunks"), std::string::npos) << sel.describe();
  EXPECT_EQ(buildSelected(sel, d, 3, 8, l).chunkBytes, sel.chunkBytes);
  // A call of one message has nothing to pipeline: no walks, no change.
  ASSERT_TRUE(selectAlgorithm(call(Collective::Broadcast, 64, 0), 8, l, t, p, {}, &sel).ok());
  EXPECT_EQ(sel.chunkBytes, 0u);
}

// One rank of a job made by hand: the named transport to every peer, and an executor whose
// per-peer limits are `limitOf(rank, peer)` (0: the transport's), as both ends must agree.
int runCuts(test::RankContext& ctx, const char* transport) {
  Config config;
  if (!Config::fromEnvironment(&config).ok()) return 2;
  const Deadline deadline = Deadline::after(60);
  std::unique_ptr<Bootstrap> bs;
  if (Status st = Bootstrap::connect(ctx.id, ctx.rank, ctx.size, deadline, &bs); !st.ok()) {
    ctx.report("bootstrap: %s", st.toString().c_str());
    return 3;
  }
  const TransportEntry* entry = nullptr;
  for (const TransportEntry& e : registeredTransports())
    if (std::string(e.name) == transport) entry = &e;
  if (!entry) return 4;
  JobShape job;
  job.hostOf.assign(size_t(ctx.size), 0);
  std::atomic<bool> failed{false};
  Doorbell bell;
  TransportContext tc;
  tc.bootstrap = bs.get();
  tc.config = &config;
  tc.job = &job;
  tc.peers.assign(size_t(ctx.size), true);
  tc.peers[size_t(ctx.rank)] = false;
  tc.chunkBytes = entry->chunkBytes(config);
  tc.doorbell = &bell;
  tc.onError = [](const Status&) {};
  tc.failed = &failed;
  tc.deadline = deadline;
  std::unique_ptr<Transport> t;
  if (Status st = entry->create(tc, &t); !st.ok()) {
    ctx.report("%s: %s", transport, st.toString().c_str());
    return 5;
  }
  ExecEnv base;
  base.rank = ctx.rank;
  base.conns.assign(size_t(ctx.size), nullptr);
  base.transportOf.assign(size_t(ctx.size), nullptr);
  base.maxChunkBytesOf.assign(size_t(ctx.size), 0);
  for (int q = 0; q < ctx.size; ++q)
    if (q != ctx.rank) {
      base.conns[size_t(q)] = t->connection(q);
      base.transportOf[size_t(q)] = t.get();
      base.maxChunkBytesOf[size_t(q)] = t->maxPayloadBytes();
    }
  base.chunkBytes = tc.chunkBytes;
  base.doorbell = &bell;
  base.failed = &failed;
  base.failure = [] { return Status::Ok(); };

  struct Cut {
    const char* algo;
    size_t chunkBytes;
    bool narrowSomePairs;  // the pairs whose ranks add up to an even number carry 1 KiB
  };
  const Cut cuts[] = {{"ring", 0, false},      {"ring", 4096, false},   {"ring", 1000, false},
                      {"ring", 64, false},     {"ring", 0, true},       {"ring", 1 << 30, true},
                      {"two_shot", 256, true}, {"one_shot", 4096, true}};
  uint32_t seq = 0;
  for (const Cut& cut : cuts) {
    ExecEnv env = base;
    if (cut.narrowSomePairs)
      for (int q = 0; q < ctx.size; ++q)
        if (q != ctx.rank && (q + ctx.rank) % 2 == 0) env.maxChunkBytesOf[size_t(q)] = 1024;
    Executor ex(env);
    const OpDesc d = call(Collective::AllReduce, 20011);
    const Algorithm* a = findAlgorithm(d.coll, cut.algo);
    if (!a || a->why(d, ctx.size, RankLayout::flat(ctx.size))) continue;
    Schedule s = a->build(d, ctx.rank, ctx.size, RankLayout::flat(ctx.size));
    s.chunkBytes = cut.chunkBytes;
    const Plan plan = Plan::make(std::move(s), env.chunking(sizeof(float)));
    std::vector<float> in(d.count), out(d.count, -1), scratch(plan.schedule.scratchElems);
    for (uint64_t i = 0; i < d.count; ++i) in[i] = float(ctx.rank + 1) * float(i % 13);
    ExecBuffers bufs;
    bufs.input = MemRef::host(in.data());
    bufs.output = MemRef::host(out.data());
    bufs.scratch = MemRef::host(scratch.data());
    bufs.engine = &CpuEngine::get();
    Status st = ex.run(plan, d, seq++, RedOp::Sum, bufs, Deadline::after(30));
    if (!st.ok()) {
      ctx.report("%s chunk %zu: %s", cut.algo, cut.chunkBytes, st.toString().c_str());
      return 6;
    }
    const float ranks = float(ctx.size * (ctx.size + 1) / 2);
    for (uint64_t i = 0; i < d.count; ++i)
      if (out[i] != ranks * float(i % 13)) {
        ctx.report("%s chunk %zu: element %llu is %g, expected %g", cut.algo, cut.chunkBytes,
                   (unsigned long long)i, out[i], ranks * float(i % 13));
        return 7;
      }
  }
  return 0;
}

TEST(ChunkSize, SchedulesCutTheirOwnWayRunOverShm) {
  auto results = test::runRanks(3, [](test::RankContext& ctx) { return runCuts(ctx, "shm"); });
  EXPECT_EQ(test::describeFailures(results), "");
}

TEST(ChunkSize, SchedulesCutTheirOwnWayRunOverTcp) {
  auto results = test::runRanks(3, [](test::RankContext& ctx) { return runCuts(ctx, "tcp"); });
  EXPECT_EQ(test::describeFailures(results), "");
}

}  // namespace
}  // namespace chorus
