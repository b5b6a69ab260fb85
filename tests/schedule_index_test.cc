// The schedule index: the one statement of the execution model (schedule_index.h) that the
// executor, the verifier and the cost model share. These pin its rules down directly.
#include "algorithms/schedule_index.h"

#include <gtest/gtest.h>

namespace chorus {
namespace {

Chunking bytes(size_t job, std::vector<size_t> peers = {}) {
  return {1, job, std::move(peers)};
}

TEST(ScheduleIndex, CutsStepsIntoChunksOfTheJobSize) {
  Schedule s;
  s.send(1, input(), 10);
  s.copy(input(), output(), 4);
  ScheduleIndex ix(s, bytes(4));
  EXPECT_EQ(ix.chunks(0), 3u);
  EXPECT_EQ(ix.chunkBegin(0, 2), 8u);
  EXPECT_EQ(ix.chunkLen(0, 2), 2u);
  EXPECT_EQ(ix.chunks(1), 1u);
  EXPECT_EQ(ix.chunkLen(1, 0), 4u);
}

TEST(ScheduleIndex, TheScheduleChoosesItsChunkWithinWhatTheTransportCarries) {
  Schedule s;
  s.send(1, input(), 64);
  s.send(2, input(), 64);
  s.copy(input(), output(), 64);
  s.chunkBytes = 16;
  ScheduleIndex small(s, bytes(32));
  for (int i = 0; i < 3; ++i) EXPECT_EQ(small.chunkElems(i), 16u) << i;
  // Asking for more than a channel's transport carries gets what it carries; a copy stays
  // within the job's size.
  s.chunkBytes = 64;
  ScheduleIndex big(s, bytes(32, {0, 64, 32}));
  EXPECT_EQ(big.chunkElems(0), 64u);
  EXPECT_EQ(big.chunkElems(1), 32u);
  EXPECT_EQ(big.chunkElems(2), 32u);
  // Elements, not bytes.
  s.chunkBytes = 0;
  ScheduleIndex floats(s, {4, 32, {}});
  EXPECT_EQ(floats.chunkElems(0), 8u);
  EXPECT_EQ(floats.chunks(0), 8u);
}

TEST(ScheduleIndex, ChannelsServeTheirStepsInListOrder) {
  Schedule s;
  const int a = s.send(2, input(), 4);
  const int b = s.recv(2, output(), 4);
  const int c = s.send(1, input(), 4);
  const int gap = s.send(2, input(), 0);  // empty: on no channel
  const int d = s.send(2, input(4), 4);
  ScheduleIndex ix(s, bytes(8));
  ASSERT_EQ(ix.peers(), (std::vector<int>{2, 1}));
  EXPECT_EQ(ix.slotOf(1), 1);
  EXPECT_EQ(ix.slotOf(3), -1);
  EXPECT_EQ(ix.channel(a), ix.channelOf(2, true));
  EXPECT_EQ(ix.channel(b), ix.channelOf(2, false));
  EXPECT_EQ(ix.first(ix.channelOf(2, true)), a);
  EXPECT_EQ(ix.next(a), d);
  EXPECT_EQ(ix.prev(d), a);
  EXPECT_EQ(ix.next(b), -1);
  EXPECT_EQ(ix.first(ix.channelOf(1, true)), c);
  EXPECT_EQ(ix.first(ix.channelOf(1, false)), -1);
  EXPECT_EQ(ix.channel(gap), -1);
  EXPECT_EQ(ix.chunks(gap), 0u);
}

TEST(ScheduleIndex, SameCountIsChunkwiseAnotherCountWaitsForAll) {
  Schedule s;
  const int r = s.recv(1, output(), 10);
  const int fwd = s.send(2, output(), 10, r);
  const int part = s.send(3, output(), 4, r);
  ScheduleIndex ix(s, bytes(4));
  EXPECT_TRUE(ix.chunkwise(fwd, 0));
  EXPECT_EQ(ix.chunksNeeded(fwd, 0, 1), 2u);
  EXPECT_FALSE(ix.chunkwise(part, 0));
  EXPECT_EQ(ix.chunksNeeded(part, 0, 0), 3u);
  std::vector<uint64_t> done(3, 0);
  auto doneOf = [&](int i) { return done[i]; };
  EXPECT_FALSE(ix.depsReady(fwd, 0, doneOf));
  done[r] = 1;
  EXPECT_TRUE(ix.depsReady(fwd, 0, doneOf));
  EXPECT_FALSE(ix.depsReady(fwd, 1, doneOf));
  EXPECT_FALSE(ix.depsReady(part, 0, doneOf));
}

// Channels cut differently (their transports carry different sizes): a chunk waits for the
// elements up to its end, whichever chunks of the dependency hold them.
TEST(ScheduleIndex, ChunkwiseAcrossChunkSizesCountsElements) {
  Schedule s;
  const int r = s.recv(1, output(), 10);     // chunks of 2 from rank 1
  const int f = s.send(2, output(), 10, r);  // chunks of 4 to rank 2
  const int g = s.send(3, output(), 10, f);  // chunks of 2 again, after f
  s.chunkBytes = 4;
  ScheduleIndex ix(s, bytes(4, {0, 2, 4, 2}));
  ASSERT_EQ(ix.chunkElems(r), 2u);
  ASSERT_EQ(ix.chunkElems(f), 4u);
  EXPECT_EQ(ix.chunksNeeded(f, 0, 0), 2u);  // elements [0, 4): chunks 0 and 1 of r
  EXPECT_EQ(ix.chunksNeeded(f, 0, 2), 5u);  // [8, 10): all five
  EXPECT_EQ(ix.chunksNeeded(g, 0, 0), 1u);  // [0, 2) lies in f's chunk 0
  EXPECT_EQ(ix.chunksNeeded(g, 0, 2), 2u);  // [4, 6) in its chunk 1
}

TEST(ScheduleIndex, AnEmptyStepWaitsForNothingAndNothingWaitsForIt) {
  Schedule s;
  const int r = s.recv(1, output(), 4);
  const int empty = s.copy(input(), output(), 0, r);
  const int after = s.send(1, output(), 4, empty, r);
  ScheduleIndex ix(s, bytes(4));
  EXPECT_EQ(ix.dep(empty, 0), -1);
  EXPECT_EQ(ix.dep(after, 0), -1);
  EXPECT_EQ(ix.dep(after, 1), r);
}

}  // namespace
}  // namespace chorus
