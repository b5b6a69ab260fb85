// The executor honours the data engine's completions: work the engine has not finished yet
// (as a CUDA engine's kernels on a stream) holds back the message it reads, the steps that
// depend on it and the end of the run. The engine here defers every operation until the test
// lets it finish, so reading a destination too early or releasing a message the engine still
// reads shows as wrong data.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <functional>
#include <vector>

#include "engine/cpu_engine.h"
#include "harness/one_peer_executor.h"

namespace chorus {
namespace {

// Queues every operation and runs it only in finishAll(), like a stream the host has not
// synchronised with. Sources are read at finish time, so they must still be there.
class DeferredEngine final : public DataEngine {
 public:
  const char* name() const override { return "deferred"; }
  bool handles(MemoryKind k) const override { return k == MemoryKind::Host; }
  Completion copy(MemRef dst, MemRef src, size_t bytes) override {
    return defer([=] { cpu().copy(dst, src, bytes); });
  }
  Completion reduce(DataType t, RedOp op, MemRef dst, MemRef a, MemRef b, size_t n) override {
    return defer([=] { cpu().reduce(t, op, dst, a, b, n); });
  }
  Completion scale(DataType t, MemRef dst, MemRef src, size_t n, const void* scalar) override {
    return defer([=] { cpu().scale(t, dst, src, n, scalar); });
  }
  Completion divide(DataType t, MemRef dst, MemRef src, size_t n, uint64_t divisor) override {
    return defer([=] { cpu().divide(t, dst, src, n, divisor); });
  }
  bool test(const Completion& c) override { return c.ticket <= finished_; }

  void finishAll() {
    for (auto& op : queue_) op();
    finished_ += queue_.size();
    queue_.clear();
  }
  size_t pending() const { return queue_.size(); }

 private:
  static CpuEngine& cpu() { return CpuEngine::get(); }
  Completion defer(std::function<void()> op) {
    queue_.push_back(std::move(op));
    return {finished_ + queue_.size()};
  }
  std::vector<std::function<void()>> queue_;
  uint64_t finished_ = 0;
};

struct Fixture : OnePeerExecutor {
  static constexpr uint32_t kCount = 256;
  Fixture() : OnePeerExecutor(0, kCount, 1.0f, 0.0f) {}
  void start(Schedule s, Collective coll) {
    OpDesc d;
    d.coll = coll;
    d.count = kCount;
    d.root = coll == Collective::AllReduce ? -1 : 0;
    OnePeerExecutor::start(std::move(s), d, &engine);
    header = WireHeader{d.count,       0, d.root, kCount * 4, uint8_t(d.coll), uint8_t(d.dtype),
                        uint8_t(d.op), 0};
  }
  // A message from the peer: the whole step's elements, all `value`.
  void deliver(float value) {
    std::vector<char> bytes(kCount * 4);
    std::vector<float> v(kCount, value);
    memcpy(bytes.data(), v.data(), bytes.size());
    conn.inbox.push_back({header, bytes});
  }

  DeferredEngine engine;
  WireHeader header{};
};

TEST(ExecutorEngine, AReceiveHoldsItsMessageUntilTheEngineHasReducedIt) {
  Fixture f;
  Schedule s;
  s.recvReduce(1, input(), output(), Fixture::kCount);
  f.start(s, Collective::AllReduce);
  f.deliver(2.0f);
  EXPECT_EQ(f.poll(), Executor::Poll::Moved);
  EXPECT_EQ(f.engine.pending(), 1u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(f.poll(), Executor::Poll::Idle);
  EXPECT_EQ(f.conn.inbox.size(), 1u) << "released a message the engine still reads";
  f.engine.finishAll();
  EXPECT_EQ(f.poll(), Executor::Poll::Moved);
  EXPECT_TRUE(f.conn.inbox.empty());
  EXPECT_EQ(f.poll(), Executor::Poll::Done);
  EXPECT_EQ(f.out[0], 3.0f);
  EXPECT_EQ(f.out[Fixture::kCount - 1], 3.0f);
}

TEST(ExecutorEngine, AStepWaitsForTheCopyItDependsOn) {
  Fixture f;
  Schedule s;
  const int copy = s.copy(input(), output(), Fixture::kCount);
  s.send(1, output(), Fixture::kCount, copy);
  f.start(s, Collective::Broadcast);
  EXPECT_EQ(f.poll(), Executor::Poll::Moved);
  EXPECT_EQ(f.poll(), Executor::Poll::Idle);
  EXPECT_TRUE(f.conn.sent.empty()) << "sent a chunk before the copy into it finished";
  f.engine.finishAll();
  EXPECT_EQ(f.poll(), Executor::Poll::Moved);
  ASSERT_EQ(f.conn.sent.size(), 1u);
  float first;
  memcpy(&first, f.conn.sent[0].bytes.data(), 4);
  EXPECT_EQ(first, 1.0f);
  EXPECT_EQ(f.poll(), Executor::Poll::Done);
}

TEST(ExecutorEngine, ARunIsNotDoneWhileTheEngineWorks) {
  Fixture f;
  Schedule s;
  s.recv(1, output(), Fixture::kCount);
  f.start(s, Collective::Broadcast);
  f.deliver(5.0f);
  EXPECT_EQ(f.poll(), Executor::Poll::Moved);
  for (int i = 0; i < 3; ++i) EXPECT_NE(f.poll(), Executor::Poll::Done);
  EXPECT_EQ(f.out[0], 0.0f);
  f.engine.finishAll();
  EXPECT_EQ(f.poll(), Executor::Poll::Moved);
  EXPECT_EQ(f.poll(), Executor::Poll::Done);
  EXPECT_EQ(f.out[7], 5.0f);
}

// The same call cut into messages of another size (the two ranks disagree on the chunk size)
// is named as that, not as a different call.
TEST(ExecutorEngine, AMessageCutDifferentlyIsNamedAsSuch) {
  Fixture f;
  Schedule s;
  s.recv(1, output(), Fixture::kCount);
  f.start(s, Collective::Broadcast);
  f.header.bytes /= 2;
  f.deliver(1.0f);
  Status err;
  EXPECT_EQ(f.executor->poll(&err), Executor::Poll::Failed);
  EXPECT_NE(err.message().find("into messages of different sizes (1024 bytes expected here, 512"),
            std::string::npos)
      << err.toString();
}

}  // namespace
}  // namespace chorus
