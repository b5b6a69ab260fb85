// The numbers the verbs provider gives its queue pairs, worked out from the device's limits
// and the communicator's settings. Pure, so they are tested without a NIC.
#pragma once

#include <cstdint>

namespace chorus {

// Sends are retried kVerbsRetryCount times after the first try, each try waiting for an ACK
// 4.096 us * 2^timeout. Receiver-not-ready is retried for ever (7): every receive is re-posted
// as soon as it completes, so RNR only means a slow peer, and the deadline bounds the wait.
constexpr int kVerbsRetryCount = 7;
constexpr int kVerbsRnrRetry = 7;
constexpr int kVerbsMinRnrTimer = 12;  // 0.64 ms, as NCCL
// The most gather entries a write is given room for: each one widens every send WQE, and the
// protocol gathers a header and a payload or two.
constexpr int kVerbsGatherCap = 8;
// Writes in flight per queue pair; receives posted per queue pair are as many.
constexpr int kVerbsDepthCap = 128;

// The local ACK timeout exponent: NCCL's 20 (4.3 s a try, 34 s for all 8) unless the whole
// retry budget must fit a shorter `timeoutSec`; never below 8 (1 ms), which would retry
// needlessly under ordinary congestion.
int verbsAckTimeout(double timeoutSec);
// How long the ACK retries of exponent `t` take in all, in seconds.
double verbsRetrySeconds(int t);

// Writes in flight (and receives posted) per queue pair, so that `qps` queue pairs sharing one
// completion queue of at most `maxCqe` entries cannot overrun it; 0 when they cannot even get 2.
int verbsQueueDepth(int maxQpWr, int maxCqe, int qps);
// Gather entries per write; 0 when the device cannot give the 2 the interface promises.
int verbsMaxGather(int maxSge);

// A work request's 64-bit id says what completed, since a failed completion's opcode is
// undefined: bit 63 marks a receive, bits 32..62 hold the lane's index in the NIC's table,
// and a write's low 32 bits the slot holding its context.
constexpr uint64_t kVerbsRecvTag = uint64_t(1) << 63;
inline uint64_t verbsWriteId(uint32_t lane, uint32_t slot) {
  return uint64_t(lane) << 32 | slot;
}
inline uint64_t verbsRecvId(uint32_t lane) {
  return kVerbsRecvTag | uint64_t(lane) << 32;
}
inline bool verbsIsRecv(uint64_t id) {
  return (id & kVerbsRecvTag) != 0;
}
inline uint32_t verbsIdLane(uint64_t id) {
  return uint32_t(id >> 32) & 0x7fffffffu;
}
inline uint32_t verbsIdSlot(uint64_t id) {
  return uint32_t(id);
}

// 256 .. 4096 for enum ibv_mtu 1 .. 5; 0 otherwise.
int verbsMtuBytes(int mtuCode);

}  // namespace chorus
