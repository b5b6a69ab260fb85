// Lone small sends and receives skip the plan (Executor::sendAtOnce, receiveAtOnce) where the
// general path would prepare and walk a one-step schedule. Either side may take either path (a
// receive that finds nothing yet waits in the general path; a grouped call always takes it), so
// these tests mix the two, in both directions, over shared memory and TCP, with messages that
// wait in the ring and messages that do not, and check every byte and the order. A receive of
// another size must not take the message: the general path reports the mismatch.
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "chorus/group.h"
#include "harness/multirank.h"

namespace chorus::test {
namespace {

// "tcp64": TCP cutting messages at 64 bytes, so that a message the general path sends in
// pieces must not go at once whole.
Config configFor(const std::string& transport) {
  Config config;
  EXPECT_TRUE(Config::fromEnvironment(&config).ok());
  config.transport = transport == "tcp64" ? "tcp" : transport;
  if (transport == "tcp64") config.tcpChunkBytes = 64;
  config.timeoutSec = 20;
  return config;
}

// Message k of `bytes` from `from`: distinct in every byte, size and message.
std::vector<char> message(int from, int k, size_t bytes) {
  std::vector<char> m(bytes);
  for (size_t i = 0; i < bytes; ++i) m[i] = char(i * 7 + size_t(k) * 13 + size_t(from) * 101 + 1);
  return m;
}

class LoneP2p : public ::testing::TestWithParam<const char*> {};

TEST_P(LoneP2p, SmallMessagesMixedWithTheGeneralPathArriveWholeAndInOrder) {
  const std::string transport = GetParam();
  auto results = runRanks(2, [&](RankContext& ctx) {
    const Config config = configFor(transport);
    auto comm = ctx.connect(&config);
    if (!comm) return 1;
    const int me = ctx.rank, peer = 1 - me;
    // Sizes on both sides of the one cache line, of Executor::kAtOnceBytes and of a 64-byte
    // chunk, and one that is always chunked.
    const std::vector<size_t> sizes = {1, 8, 32, 33, 64, 65, 4095, 4096, 4097, 100000};
    int k = 0;
    for (int round = 0; round < 4; ++round) {
      // Round 0: ping-pong, the receiver usually first. Round 1: the receiver late, so
      // messages wait in the ring. Round 2: the receiver groups, the sender does not.
      // Round 3: the sender groups, the receiver does not.
      const bool sender = (round + me) % 2 == 0;
      for (size_t bytes : sizes) {
        ++k;
        if (sender) {
          const std::vector<char> m = message(me, k, bytes);
          const bool grouped = round == 3;
          if (grouped) groupStart();
          Status st = comm->send(m.data(), bytes, DataType::Uint8, peer);
          if (grouped) st = groupEnd();
          if (!st.ok()) {
            ctx.report("round %d send %zu: %s", round, bytes, st.toString().c_str());
            return 2;
          }
          continue;
        }
        if (round == 1) usleep(2000);
        std::vector<char> got(bytes, 0);
        const bool grouped = round == 2;
        if (grouped) groupStart();
        Status st = comm->recv(got.data(), bytes, DataType::Uint8, peer);
        if (grouped) st = groupEnd();
        if (!st.ok() || got != message(peer, k, bytes)) {
          ctx.report("round %d recv %zu: %s%s", round, bytes, st.toString().c_str(),
                     st.ok() ? " (wrong bytes)" : "");
          return 3;
        }
      }
      if (Status st = comm->barrier(); !st.ok()) return 4;
    }
    // Several small messages queued at once, taken in order by lone receives.
    std::vector<std::vector<char>> burst;
    for (int i = 0; i < 20; ++i) burst.push_back(message(me, 1000 + i, size_t(1 + 7 * i)));
    if (me == 0) {
      for (const auto& m : burst)
        if (!comm->send(m.data(), m.size(), DataType::Uint8, peer).ok()) return 5;
    } else {
      usleep(2000);
      for (int i = 0; i < 20; ++i) {
        std::vector<char> got(size_t(1 + 7 * i), 0);
        Status st = comm->recv(got.data(), got.size(), DataType::Uint8, peer);
        if (!st.ok() || got != message(peer, 1000 + i, got.size())) {
          ctx.report("burst message %d: %s", i, st.toString().c_str());
          return 6;
        }
      }
    }
    return comm->barrier().ok() ? 0 : 7;
  });
  EXPECT_EQ(describeFailures(results), "");
}

// The receiver asks for 16 bytes where 8 arrived (and, the other way round, 8 where 16 did): it
// must not take the message at once but report both calls, and leave its buffer alone.
TEST_P(LoneP2p, AReceiveOfAnotherSizeReportsTheMismatch) {
  const std::string transport = GetParam();
  for (const auto& [sent, asked] : {std::pair<size_t, size_t>{8, 16}, {16, 8}}) {
    auto results = runRanks(2, [&, sent = sent, asked = asked](RankContext& ctx) {
      const Config config = configFor(transport);
      auto comm = ctx.connect(&config);
      if (!comm) return 1;
      std::vector<char> buf(32, 'x');
      if (ctx.rank == 0) return comm->send(buf.data(), sent, DataType::Uint8, 1).ok() ? 0 : 2;
      usleep(2000);  // the message is there when the receive starts
      Status st = comm->recv(buf.data(), asked, DataType::Uint8, 0);
      ctx.report("%s", st.toString().c_str());
      const std::string want = "sent data for send(count=" + std::to_string(sent);
      if (st.code() != StatusCode::InvalidUsage || st.message().find(want) == std::string::npos)
        return 3;
      return buf == std::vector<char>(32, 'x') ? 0 : 4;
    });
    EXPECT_EQ(describeFailures(results), "") << sent << " bytes sent, " << asked << " asked";
  }
}

INSTANTIATE_TEST_SUITE_P(Transports, LoneP2p, ::testing::Values("shm", "tcp", "tcp64"),
                         [](const auto& info) { return std::string(info.param); });

}  // namespace
}  // namespace chorus::test
