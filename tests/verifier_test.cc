// Every algorithm in the registry, through the symbolic verifier: rank counts 1..64 and a few
// up to 1024, counts 0, 1, small primes and counts not divisible by the rank count, in and out
// of place, several roots, chunk sizes that split steps into many messages or none, and one
// slot per channel (the tightest flow control). Plus checks that the verifier itself catches
// broken schedules.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "algorithms/algorithms.h"
#include "algorithms/registry.h"
#include "algorithms/verify.h"

namespace chorus {
namespace {

bool rooted(Collective c) {
  return c == Collective::Broadcast || c == Collective::Reduce || c == Collective::Gather ||
         c == Collective::Scatter;
}
bool hasInPlace(Collective c) {
  return c != Collective::Gather && c != Collective::Scatter && c != Collective::Barrier;
}

bool perBlock(Collective c) {
  return c == Collective::AllGather || c == Collective::ReduceScatter ||
         c == Collective::AllToAll || c == Collective::Gather || c == Collective::Scatter;
}

std::vector<Schedule> buildAll(const Algorithm& a, const OpDesc& d, int P, const RankLayout& l) {
  std::vector<Schedule> s;
  for (int r = 0; r < P; ++r) s.push_back(a.build(d, r, P, l));
  return s;
}

// Verifies one algorithm over a sweep; returns the first failure.
std::string sweep(const Algorithm& a, const std::vector<int>& sizes, bool full) {
  for (int P : sizes) {
    // Counts per block (allgather, alltoall, ...) need no divisibility cases: the vector is
    // n * P. Counts of the whole vector (allreduce, broadcast, reduce) do.
    std::vector<uint64_t> counts = {0, 1, 2, 7, uint64_t(P) + 1, 3 * uint64_t(P) + 2};
    if (P > 16) counts.pop_back();  // P + 1 is uneven enough there
    if (perBlock(a.coll)) counts = {0, 1, 2, 3, 7};
    if (!full) counts = {1, perBlock(a.coll) ? 2 : uint64_t(P) + 3};
    if (a.coll == Collective::Barrier) counts = {1};
    std::vector<RankLayout> layouts = {RankLayout::flat(P)};
    if (std::string(a.name).rfind("hierarchical", 0) == 0)
      for (int per : full ? std::vector<int>{1, 2, 3, 4} : std::vector<int>{4})
        if (P % per == 0 && per < P) {
          layouts.push_back(RankLayout::uniform(P, per));
          if (!full || per == 1) continue;
          // Hosts whose ranks interleave (rank r on host r mod H), as round-robin launchers do.
          std::vector<int> hostOf(P);
          for (int r = 0; r < P; ++r) hostOf[r] = r % (P / per);
          layouts.push_back(RankLayout::fromHostIds(hostOf));
        }
    for (uint64_t n : counts)
      for (uint64_t chunk : {uint64_t(1), uint64_t(3), uint64_t(1) << 30})
        for (bool inPlace : {false, true}) {
          if (inPlace && !hasInPlace(a.coll)) continue;
          if (!full && chunk != (uint64_t(1) << 30)) continue;
          if (chunk == 1 && P > 16) continue;  // chunk 3 splits those steps already
          for (int root :
               rooted(a.coll) ? std::vector<int>{0, P - 1, P / 2} : std::vector<int>{-1}) {
            for (const RankLayout& l : layouts) {
              // Layout limits only: the proof is symbolic, so limits on floating-point
              // rounding (one_shot) do not apply to it.
              OpDesc probe;
              probe.dtype = DataType::Int32;
              if (a.why(probe, P, l)) continue;
              OpDesc d;
              d.coll = a.coll;
              d.count = n;
              d.root = root;
              d.inPlace = inPlace;
              VerifyOptions o;
              o.chunkElems = chunk;
              o.slots = 1;
              o.hazards = full || P <= 256;
              Status st = verifySchedules(d, buildAll(a, d, P, l), o);
              if (!st.ok() && getenv("VERIFY_DUMP"))
                for (auto& x : buildAll(a, d, P, l)) fprintf(stderr, "%s", x.toString().c_str());
              if (!st.ok())
                return st.message() +
                       (l.hosts.size() > 1 ? " [" + std::to_string(l.hosts.size()) + " hosts]"
                                           : "") +
                       (inPlace ? " [in place]" : "");
            }
            if (root == P - 1 && P == 1) break;
          }
        }
  }
  return "";
}

class EveryAlgorithm : public ::testing::TestWithParam<const Algorithm*> {};

TEST_P(EveryAlgorithm, Verifies1To64Ranks) {
  std::vector<int> sizes;
  for (int P = 1; P <= 64; ++P) sizes.push_back(P);
  EXPECT_EQ(sweep(*GetParam(), sizes, true), "");
}

TEST_P(EveryAlgorithm, VerifiesLargeRankCounts) {
  const Algorithm& a = *GetParam();
  std::vector<int> sizes = {100, 128};
  // The quadratic ones (every rank talks to every other) stop at 128 ranks.
  const std::string name = a.name;
  const bool quadratic = name == "one_shot" || name == "two_shot" || name == "direct" ||
                         name == "pairwise" || (name == "bruck" && a.coll == Collective::AllToAll);
  if (!quadratic) sizes = {100, 255, 1024};
  EXPECT_EQ(sweep(a, sizes, false), "");
}

std::vector<const Algorithm*> collectives() {
  std::vector<const Algorithm*> out;
  for (const Algorithm& a : allAlgorithms())
    if (a.coll != Collective::Send && a.coll != Collective::Recv) out.push_back(&a);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Registry, EveryAlgorithm, ::testing::ValuesIn(collectives()),
                         [](const auto& info) {
                           return std::string(collectiveName(info.param->coll)) + "_" +
                                  info.param->name;
                         });

// The verifier must reject what is wrong, with a message that says why.
OpDesc allreduce(uint64_t n, bool inPlace = false) {
  OpDesc d;
  d.count = n;
  d.inPlace = inPlace;
  return d;
}

TEST(Verifier, CatchesAMissingContribution) {
  std::vector<Schedule> s(2);
  s[0].copy(input(), output(), 4);  // never hears from rank 1
  s[1].send(0, input(), 4);
  s[1].recvReduce(0, input(), output(), 4);
  Status st = verifySchedules(allreduce(4), s, {});
  EXPECT_FALSE(st.ok());
}

TEST(Verifier, CatchesADeadlockUnderBoundedBuffers) {
  // Each rank receives before it sends, waiting on the receive as a whole: a cycle.
  std::vector<Schedule> s(2);
  for (int r = 0; r < 2; ++r) {
    int got = s[r].recvReduce(1 - r, input(), output(), 4);
    s[r].send(1 - r, scratch(), 2, got);
    s[r].scratchElems = 2;
  }
  Status st = verifySchedules(allreduce(4), s, {});
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("deadlock"), std::string::npos) << st.message();
}

TEST(Verifier, CatchesAWriteAfterReadHazardInPlace) {
  // In place, receiving into the output while the same memory is still being sent.
  std::vector<Schedule> s(2);
  for (int r = 0; r < 2; ++r) {
    s[r].send(1 - r, input(), 4);
    s[r].recvReduce(1 - r, input(), output(), 4);  // no dependency on the send
  }
  EXPECT_TRUE(verifySchedules(allreduce(4, false), s, {}).ok());
  Status st = verifySchedules(allreduce(4, true), s, {});
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("nothing orders them"), std::string::npos) << st.message();
}

TEST(Verifier, CatchesMismatchedMessageSizes) {
  std::vector<Schedule> s(2);
  s[0].send(1, input(), 4);
  s[1].recv(0, output(), 2);
  s[1].recv(0, output(2), 2);
  OpDesc d = allreduce(4);
  d.coll = Collective::Broadcast;
  d.root = 0;
  s[0].copy(input(), output(), 4);
  VerifyOptions o;
  o.chunkElems = 8;
  Status st = verifySchedules(d, s, o);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("message"), std::string::npos) << st.message();
}

TEST(Verifier, CatchesWritesToTheInput) {
  std::vector<Schedule> s(1);
  s[0].copy(output(), input(), 4);
  EXPECT_FALSE(verifySchedules(allreduce(4), s, {}).ok());
}

}  // namespace
}  // namespace chorus
