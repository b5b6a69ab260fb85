// Lone small point-to-point calls without a plan (Executor::sendAtOnce, receiveAtOnce). An
// 8-byte send or receive through the general path costs about 800 instructions, most of them
// preparing and walking a one-step schedule; these move the same one message straight to and
// from the connection, in the same form (advanceSend, headerMatches), so either side may take
// either path.
#include <cstring>

#include "core/executor.h"

namespace chorus {
namespace {

// The header of a point-to-point message of `bytes` sent alone (Executor::start's p2p case).
WireHeader loneMessage(uint32_t bytes) {
  return WireHeader{bytes,
                    0,
                    -1,
                    bytes,
                    uint8_t(Collective::Send),
                    uint8_t(DataType::Uint8),
                    uint8_t(RedOp::Sum),
                    kWireData};
}

}  // namespace

// Larger messages the general path cuts into chunks (ExecEnv::chunking: the job's message size
// and what this peer's transport carries), which both ends must do alike.
bool Executor::goesAtOnce(int peer, uint32_t bytes) const {
  const size_t peerBytes = env_.maxChunkBytesOf.empty() ? 0 : env_.maxChunkBytesOf[size_t(peer)];
  return bytes <= kAtOnceBytes && bytes <= env_.chunkBytes && (!peerBytes || bytes <= peerBytes);
}

bool Executor::sendAtOnce(int peer, const void* data, uint32_t bytes) {
  if (!goesAtOnce(peer, bytes) || env_.failed->load(std::memory_order_relaxed)) return false;
  Connection* c = env_.conns[size_t(peer)];
  return c && c->postSend(loneMessage(bytes), MemRef::host(data), nullptr);
}

bool Executor::receiveAtOnce(int peer, void* data, uint32_t bytes) {
  if (!goesAtOnce(peer, bytes) || !lent_.empty() || env_.failed->load(std::memory_order_relaxed))
    return false;
  Connection* c = env_.conns[size_t(peer)];
  if (!c) return false;
  // As long as the general path would spin before yielding: a reply is usually that close.
  const void* payload = nullptr;
  const WireHeader* h = c->peek(&payload);
  for (uint64_t poll = 0; !h && poll < env_.busyPolls; ++poll) h = c->peek(&payload);
  if (!h || !(*h == loneMessage(bytes))) return false;
  memcpy(data, payload, bytes);
  c->release();
  return true;
}

}  // namespace chorus
