// The executor's side of zero copy: memory lent to a connection (postSend) is not
// written, and the run does not end, until the connection hands it back; a receive offers its
// destination (postReceive) only where it may be written; a failed run takes memory back. The
// connection here is the test's own, so the moment the transport "writes" lent bytes is in the
// test's hands; the real TCP path is exercised by tcp_test (Loopback/TcpCollectives,
// StripesOverManyStreamsWithTinyChunks).
#include <gtest/gtest.h>

#include <atomic>
#include <vector>

#include "harness/one_peer_executor.h"

namespace chorus {
namespace {

struct Fixture : OnePeerExecutor {
  explicit Fixture(size_t lendFrom) : OnePeerExecutor(lendFrom, 1024, 1.0f, 2.0f) {}
  void start(Schedule s, const OpDesc& d) {
    OnePeerExecutor::start(std::move(s), d, engineFor(MemoryKind::Host));
  }
};

OpDesc bcastOf(uint64_t count) {
  OpDesc d;
  d.coll = Collective::Broadcast;
  d.count = count;
  d.root = 0;
  return d;
}

// Sends the output buffer, then (once the send is posted) receives into the same memory: with
// a copying send that is a swap; with a lent one the receive must wait for the hand-over.
TEST(ExecutorLending, AWriteWaitsUntilTheLentMemoryIsHandedOn) {
  Fixture f(1);
  Schedule s;
  const int send = s.send(1, output(), 1024);
  s.recv(1, output(), 1024, send);
  f.start(s, bcastOf(1024));

  EXPECT_EQ(f.poll(), Executor::Poll::Moved);
  ASSERT_EQ(f.conn.sent.size(), 1u);
  EXPECT_EQ(f.conn.sent[0].lentFrom, reinterpret_cast<const char*>(f.out.data()));
  std::vector<float> theirs(1024, 7.0f);
  const char* tp = reinterpret_cast<const char*>(theirs.data());
  f.conn.inbox.push_back({f.conn.sent[0].h, std::vector<char>(tp, tp + 4096)});

  for (int i = 0; i < 3; ++i) EXPECT_EQ(f.poll(), Executor::Poll::Idle);
  EXPECT_EQ(f.out[0], 2.0f) << "the receive overwrote memory still lent to the connection";
  EXPECT_EQ(f.conn.inbox.size(), 1u);

  f.conn.handOnAll();
  EXPECT_TRUE(f.finishesWithin(2));
  EXPECT_EQ(f.out[1023], 7.0f);
  std::vector<float> wire(1024);
  memcpy(wire.data(), f.conn.sent[0].bytes.data(), 4096);
  EXPECT_EQ(wire[0], 2.0f);
  EXPECT_EQ(wire[1023], 2.0f);
}

// A receive offers its destination to the connection only once it may be written there: here
// not while the same memory is still lent to the send before it.
TEST(ExecutorLending, ReceivesArePostedOnlyWhereTheyMayBeWritten) {
  Fixture f(1);
  Schedule s;
  const int send = s.send(1, output(), 1024);
  s.recv(1, output(), 1024, send);
  f.start(s, bcastOf(1024));
  for (int i = 0; i < 3; ++i) f.poll();
  EXPECT_TRUE(f.conn.posts.empty()) << "posted memory that is still lent";
  f.conn.handOnAll();
  f.poll();
  ASSERT_EQ(f.conn.posts.size(), 1u);
  EXPECT_EQ(f.conn.posts[0].ahead, 0u);
  EXPECT_EQ(f.conn.posts[0].where, reinterpret_cast<char*>(f.out.data()));
  EXPECT_EQ(f.conn.posts[0].bytes, 4096u);

  // The transport read the payload straight into the posted memory.
  for (float& x : f.out) x = 9.0f;
  f.conn.landedAt = f.conn.posts[0].where;
  f.conn.inbox.push_back({f.conn.sent[0].h, {}});
  EXPECT_TRUE(f.finishesWithin(3));
  EXPECT_EQ(f.out[0], 9.0f);
  EXPECT_EQ(f.conn.posts.size(), 1u) << "posted the same chunk twice";
}

TEST(ExecutorLending, ARunIsNotDoneWhileMemoryIsLent) {
  Fixture f(1);
  Schedule s;
  s.send(1, input(), 1024);
  f.start(s, bcastOf(1024));
  EXPECT_EQ(f.poll(), Executor::Poll::Moved);
  EXPECT_EQ(f.poll(), Executor::Poll::Idle);
  EXPECT_EQ(f.poll(), Executor::Poll::Idle);
  f.conn.handOnAll();
  EXPECT_EQ(f.poll(), Executor::Poll::Done);
  EXPECT_FALSE(f.conn.reclaimed);
}

TEST(ExecutorLending, ALocalCopyIntoLentMemoryWaitsToo) {
  Fixture f(1);
  Schedule s;
  const int send = s.send(1, output(), 1024);
  s.copy(input(), output(), 1024, send);
  f.start(s, bcastOf(1024));
  EXPECT_EQ(f.poll(), Executor::Poll::Moved);
  EXPECT_EQ(f.poll(), Executor::Poll::Idle);
  EXPECT_EQ(f.out[0], 2.0f);
  f.conn.handOnAll();
  EXPECT_TRUE(f.finishesWithin(2));
  EXPECT_EQ(f.out[0], 1.0f);
}

TEST(ExecutorLending, MessagesBelowTheConnectionsThresholdAreCopied) {
  Fixture f(8192);
  Schedule s;
  s.send(1, input(), 1024);  // 4 KiB
  f.start(s, bcastOf(1024));
  EXPECT_EQ(f.poll(), Executor::Poll::Moved);
  ASSERT_EQ(f.conn.sent.size(), 1u);
  EXPECT_EQ(f.conn.sent[0].lentFrom, nullptr);
  EXPECT_EQ(f.poll(), Executor::Poll::Done);
}

TEST(ExecutorLending, AFailedRunTakesItsMemoryBack) {
  Fixture f(1);
  Schedule s;
  s.send(1, input(), 1024);
  f.start(s, bcastOf(1024));
  EXPECT_EQ(f.poll(), Executor::Poll::Moved);
  EXPECT_FALSE(f.conn.reclaimed);
  f.executor->reclaimLent();  // what Communicator::Impl::failedRun does
  EXPECT_TRUE(f.conn.reclaimed);
}

}  // namespace
}  // namespace chorus
