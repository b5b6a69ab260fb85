// Payloads in memory from allocateShared (include/chorus/memory.h), between real processes: the
// registry finds which memory is shared; a peer maps a block by taking its memory file; and
// over the shared-memory transport a collective's payload in such memory, posted for by the
// receiver, is lent by reference: the receiver copies it out of its view of the sender's
// buffer into the destination, also when it only waits (takeLent), and a sender that fails
// revokes it. Unposted payloads, memory from malloc (but for the allgathers cross-memory
// attach takes) and point-to-point sends are copied through the slots. Where the kernel
// forbids one process to reach into another, the tests say so instead of passing.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "chorus/memory.h"
#include "core/op_desc.h"
#include "engine/shared_host.h"
#include "harness/shm_pair.h"

namespace chorus {
namespace {

TEST(SharedHostMemory, FindsWhatItAllocatedAndNothingElse) {
  void* p = nullptr;
  ASSERT_TRUE(allocateShared(10000, &p).ok());
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 4096, 0u);
  EXPECT_EQ(static_cast<char*>(p)[9999], 0);  // zeroed
  SharedBlock b;
  ASSERT_TRUE(SharedHostMemory::get().find(static_cast<char*>(p) + 100, 5000, &b));
  EXPECT_EQ(b.base, p);
  EXPECT_GE(b.bytes, 10000u);
  EXPECT_GE(b.fd, 0);
  EXPECT_FALSE(SharedHostMemory::get().find(static_cast<char*>(p) + 100, b.bytes, &b));
  std::vector<char> plain(64);
  EXPECT_FALSE(SharedHostMemory::get().find(plain.data(), plain.size(), &b));
  void* q = nullptr;
  ASSERT_TRUE(allocateShared(0, &q).ok());
  SharedBlock bq;
  ASSERT_TRUE(SharedHostMemory::get().find(q, 1, &bq));
  EXPECT_NE(bq.id, b.id);
  EXPECT_FALSE(freeShared(static_cast<char*>(p) + 64).ok());  // not the start
  EXPECT_FALSE(freeShared(plain.data()).ok());
  EXPECT_TRUE(freeShared(p).ok());
  EXPECT_FALSE(SharedHostMemory::get().find(p, 1, &b));
  EXPECT_FALSE(freeShared(p).ok()) << "a second free of the same block";
  EXPECT_TRUE(freeShared(q).ok());
  EXPECT_TRUE(freeShared(nullptr).ok());
  EXPECT_FALSE(allocateShared(SIZE_MAX, &p).ok());
}

// A child process maps its parent's block and sees what the parent writes after the mapping.
TEST(SharedHostMemory, APeerMapsABlockAndSeesItsWrites) {
  void* p = nullptr;
  ASSERT_TRUE(allocateShared(1 << 20, &p).ok());
  SharedBlock b;
  ASSERT_TRUE(SharedHostMemory::get().find(p, 1, &b));
  auto* words = static_cast<volatile uint64_t*>(p);
  words[0] = 0x1234;
  const pid_t parent = getpid();
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  if (child == 0) {
    PeerBlocks blocks(parent, "the parent");
    const char* view = nullptr;
    if (!blocks.map(b.fd, b.id, b.bytes, &view).ok()) _exit(77);
    const auto* seen = reinterpret_cast<const volatile uint64_t*>(view);
    if (seen[0] != 0x1234) _exit(2);
    if (write(ready[1], "m", 1) != 1) _exit(3);
    for (int spins = 0; seen[(1 << 20) / 8 - 1] != 0x5678; ++spins)
      if (spins > 200000000) _exit(4);
    const char* again = nullptr;
    if (!blocks.map(b.fd, b.id, b.bytes, &again).ok() || again != view) _exit(5);  // reused
    _exit(blocks.mapped() == 1 ? 0 : 6);
  }
  char m;
  ASSERT_EQ(read(ready[0], &m, 1), 1) << "the child could not map the block";
  words[(1 << 20) / 8 - 1] = 0x5678;
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  close(ready[0]), close(ready[1]);
  EXPECT_TRUE(freeShared(p).ok());
  if (WIFEXITED(status) && WEXITSTATUS(status) == 77)
    GTEST_SKIP() << "this kernel refuses pidfd_getfd between parent and child";
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
}

constexpr uint32_t kBytes = 128 << 10;

using test::nextPayload;
using test::postMessage;

bool samePattern(const char* got, int salt) {
  for (size_t i = 0; i < kBytes; ++i)
    if (got[i] != test::patternByte(i, salt)) return false;
  return true;
}

// Rank 0 sends, rank 1 receives; a one-byte message is a cue between the steps. Exit 77: the
// kernel refused one process access to the other.
int rankMain(test::RankContext& ctx) {
  test::ShmPair p;
  if (int bad = test::connectLendingPair(ctx, ShmOptions{}, &p)) return bad;
  char cue = 1;
  if (ctx.rank == 1) {
    std::vector<char> dst(kBytes, 0);
    // 1-4: each posted but 2; only the lent one (1) lands in place, the copies come through
    // their slots. All carry their bytes.
    for (int salt = 1; salt <= 4; ++salt) {
      std::fill(dst.begin(), dst.end(), 0);
      if (salt != 2 && !p.conn->postReceive(0, MemRef::host(dst.data()), kBytes, false))
        return ctx.report("posted receive %d was declined", salt), 1;
      postMessage(p.conn, Collective::AllGather, &cue, 1, nullptr);
      const char* got = nextPayload(p.conn);
      if ((salt == 1) != (got == dst.data()))
        return ctx.report("payload %d landed %s", salt,
                          got == dst.data() ? "posted" : "in its slot"),
               1;
      if (!samePattern(got, salt)) return ctx.report("the bytes of payload %d", salt), 1;
      p.conn->release();
    }
    // 5. Posted, then taken by a rank that only waits, before it looks.
    std::fill(dst.begin(), dst.end(), 0);
    p.conn->postReceive(1, MemRef::host(dst.data()), kBytes, false);  // behind the sender's cue
    postMessage(p.conn, Collective::AllGather, &cue, 1, nullptr);
    nextPayload(p.conn);  // the sender's cue that it lent the payload
    p.conn->release();
    for (Deadline d = Deadline::after(20); dst[kBytes - 1] != test::patternByte(kBytes - 1, 5);) {
      if (d.expired()) return ctx.report("takeLent never took the payload"), 1;
      p.conn->takeLent();
    }
    if (nextPayload(p.conn) != dst.data())
      return ctx.report("the taken payload is not in place"), 1;
    if (!samePattern(dst.data(), 5)) return ctx.report("the bytes of the taken payload"), 1;
    p.conn->release();
    // 6. Posted, then revoked by a sender that failed: never read, and no hang.
    p.conn->postReceive(0, MemRef::host(dst.data()), kBytes, false);
    postMessage(p.conn, Collective::AllGather, &cue, 1, nullptr);
    if (!p.bs->barrier(Deadline::after(20)).ok()) return ctx.report("barrier"), 1;  // revoked
    const void* payload = nullptr;
    if (p.conn->peek(&payload)) return ctx.report("a revoked payload was read"), 1;
    return 0;
  }
  void* shared = nullptr;
  if (!allocateShared(kBytes, &shared).ok()) return ctx.report("allocateShared"), 1;
  char* src = static_cast<char*>(shared);
  std::vector<char> plain(kBytes);
  auto fill = [&](char* to, int salt) {
    for (size_t i = 0; i < kBytes; ++i) to[i] = test::patternByte(i, salt);
  };
  // What each of steps 1-4 sends, from where, and whether it must be lent.
  struct Case {
    Collective coll;
    char* from;
    bool lent;
  } cases[] = {{Collective::AllReduce, src, true},            // 1. shared, posted: lent
               {Collective::AllReduce, src, false},           // 2. not posted
               {Collective::AllReduce, plain.data(), false},  // 3. malloc'd, not an allgather
               {Collective::Send, src, false}};               // 4. point-to-point stays eager
  for (int salt = 1; salt <= 4; ++salt) {
    const Case& c = cases[salt - 1];
    fill(c.from, salt);
    nextPayload(p.conn), p.conn->release();  // the receiver posted (or not)
    Completion sent;
    postMessage(p.conn, c.coll, c.from, kBytes, &sent);
    if (sent.finished() == c.lent)
      return ctx.report("payload %d %s", salt, c.lent ? "copied" : "lent"), 1;
    for (Deadline d = Deadline::after(20); !p.conn->test(sent);)
      if (d.expired()) return ctx.report("lent payload %d never came back", salt), 1;
  }
  // 5.
  fill(src, 5);
  nextPayload(p.conn), p.conn->release();                        // posted
  postMessage(p.conn, Collective::AllGather, &cue, 1, nullptr);  // the cue comes before the payload
  Completion sent;
  postMessage(p.conn, Collective::ReduceScatter, src, kBytes, &sent);
  if (sent.finished()) return ctx.report("payload 5 was copied"), 1;
  for (Deadline d = Deadline::after(20); !p.conn->test(sent);)
    if (d.expired()) return ctx.report("takeLent never gave the payload back"), 1;
  // 6.
  nextPayload(p.conn), p.conn->release();  // posted
  sent = {};
  fill(src, 6);
  postMessage(p.conn, Collective::AllReduce, src, kBytes, &sent);
  if (sent.finished()) return ctx.report("the last payload was not lent"), 1;
  p.conn->reclaimLent();
  if (!p.bs->barrier(Deadline::after(20)).ok()) return ctx.report("barrier"), 1;
  (void)freeShared(shared);
  return 0;
}

TEST(ShmMappedLending, PostedSharedPayloadsAreLentAndGivenBack) {
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
    GTEST_SKIP() << "one CPU: the transport does not lend where ranks outnumber CPUs";
  auto results = test::runRanks(2, rankMain, 60);
  if (results[0].exitCode == 77 && results[1].exitCode == 77)
    GTEST_SKIP() << "cross-memory access refused here: " << results[0].report;
  EXPECT_EQ(test::describeFailures(results), "");
}

// Whole collectives with every buffer from allocateShared, in place and out of place, at sizes
// whose messages are lent: results match what they must be.
int collectivesMain(test::RankContext& ctx) {
  auto comm = ctx.connect();
  if (!comm) return 1;
  const int P = ctx.size, me = ctx.rank;
  for (size_t n : {size_t(1000), size_t(300000), size_t(2) << 20}) {
    void *a = nullptr, *b = nullptr;
    if (!allocateShared(n * P * sizeof(float), &a).ok() ||
        !allocateShared(n * P * sizeof(float), &b).ok())
      return ctx.report("allocateShared"), 1;
    auto* in = static_cast<float*>(a);
    auto* out = static_cast<float*>(b);
    auto value = [](int rank, size_t i) { return float(int(i % 1009) * (rank + 1)); };
    auto fail = [&](const char* what, size_t i, float got, float want) {
      ctx.report("%s of %zu floats: element %zu is %g, not %g", what, n, i, double(got),
                 double(want));
      return 1;
    };
    auto ok = [&](const char* what, const Status& st) {
      if (!st.ok()) ctx.report("%s: %s", what, st.toString().c_str());
      return st.ok();
    };
    const float sumOfRanks = float(P * (P + 1) / 2);
    // allreduce, out of place then in place
    for (size_t i = 0; i < n; ++i) in[i] = value(me, i);
    if (!ok("allreduce", comm->allReduce(in, out, n, DataType::Float32, RedOp::Sum))) return 1;
    for (size_t i = 0; i < n; ++i)
      if (out[i] != float(int(i % 1009)) * sumOfRanks)
        return fail("allreduce", i, out[i], float(int(i % 1009)) * sumOfRanks);
    if (!ok("allreduce in place", comm->allReduce(in, in, n, DataType::Float32, RedOp::Sum)))
      return 1;
    for (size_t i = 0; i < n; ++i)
      if (in[i] != out[i]) return fail("allreduce in place", i, in[i], out[i]);
    // allgather
    for (size_t i = 0; i < n; ++i) in[i] = value(me, i);
    if (!ok("allgather", comm->allGather(in, out, n, DataType::Float32))) return 1;
    for (int r = 0; r < P; ++r)
      for (size_t i = 0; i < n; ++i)
        if (out[size_t(r) * n + i] != value(r, i))
          return fail("allgather", size_t(r) * n + i, out[size_t(r) * n + i], value(r, i));
    // reduce_scatter
    for (size_t i = 0; i < n * P; ++i) in[i] = value(me, i);
    if (!ok("reduce_scatter", comm->reduceScatter(in, out, n, DataType::Float32, RedOp::Sum)))
      return 1;
    for (size_t i = 0; i < n; ++i) {
      const float want = float(int((size_t(me) * n + i) % 1009)) * sumOfRanks;
      if (out[i] != want) return fail("reduce_scatter", i, out[i], want);
    }
    // broadcast from the last rank, and alltoall
    for (size_t i = 0; i < n; ++i) in[i] = value(me, i);
    if (!ok("broadcast", comm->broadcast(in, out, n, DataType::Float32, P - 1))) return 1;
    for (size_t i = 0; i < n; ++i)
      if (out[i] != value(P - 1, i)) return fail("broadcast", i, out[i], value(P - 1, i));
    for (size_t i = 0; i < n * P; ++i) in[i] = value(me, i);
    if (!ok("alltoall", comm->allToAll(in, out, n, DataType::Float32))) return 1;
    for (int r = 0; r < P; ++r)
      for (size_t i = 0; i < n; ++i) {
        const float want = value(r, size_t(me) * n + i);
        if (out[size_t(r) * n + i] != want)
          return fail("alltoall", size_t(r) * n + i, out[size_t(r) * n + i], want);
      }
    (void)freeShared(a);
    (void)freeShared(b);
  }
  return 0;
}

TEST(ShmMappedLending, CollectivesOnSharedBuffersMatch) {
  for (int ranks : {2, 3}) {
    auto results = test::runRanks(ranks, collectivesMain, 120);
    EXPECT_EQ(test::describeFailures(results), "") << ranks << " ranks";
  }
}

}  // namespace
}  // namespace chorus
