// The RDMA protocol's bookkeeping for one peer, apart from any provider, so that it can be
// tested alone.
//
// Each rank gives each peer a FIFO of `slots` message slots in registered memory. Message k
// from a peer lands in slot k % slots by an RDMA write whose immediate data names the slot;
// writes on different lanes may land out of order, so the receiver marks slots as they land
// and hands them to the executor in sequence. Credits: a sender may have `slots` messages the
// receiver has not released; the receiver returns released slots as counts in the immediate
// data of small writes, and since counts add up, the order those land in does not matter.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

namespace chorus {

// The 32 bits of immediate data: what a write means, who sent it, and a small value.
enum class ImmKind : uint32_t {
  kData = 0,     // a message landed in slot `value`
  kCredit = 1,   // the receiver released `value` more messages
  kGoodbye = 2,  // the sender has left; its total message count is in its goodbye word
};
inline constexpr int kImmRankBits = 22;
inline constexpr int kMaxImmRanks = 1 << kImmRankBits;
inline constexpr uint32_t kMaxImmValue = 255;

struct Imm {
  ImmKind kind;
  int rank;
  uint32_t value;
};

inline uint32_t encodeImm(ImmKind kind, int rank, uint32_t value) {
  return uint32_t(kind) << 30 | (uint32_t(rank) & (kMaxImmRanks - 1)) << 8 | (value & 0xff);
}

inline Imm decodeImm(uint32_t imm) {
  return {ImmKind(imm >> 30), int((imm >> 8) & (kMaxImmRanks - 1)), imm & 0xff};
}

// The sending side: executor thread, except credit(), which the progress thread calls.
class SendWindow {
 public:
  explicit SendWindow(int slots) : slots_(uint64_t(slots)) {}
  bool hasCredit() const { return sent_ - returned_.load(std::memory_order_acquire) < slots_; }
  uint64_t next() const { return sent_; }  // the sequence number of the next message
  int slotOf(uint64_t seq) const { return int(seq % slots_); }
  // Around posting the next message: before(), then posted() or notPosted(). A credit for it
  // may come back before posted() returns, so it counts as sent from before() on.
  void before() { sentShared_.store(sent_ + 1, std::memory_order_release); }
  void posted() { ++sent_; }
  void notPosted() { sentShared_.store(sent_, std::memory_order_release); }
  uint64_t sent() const { return sent_; }
  // The receiver released `n` more messages. False if that is more than were ever sent: the
  // peer broke the protocol.
  bool credit(uint32_t n) {
    return returned_.fetch_add(n, std::memory_order_acq_rel) + n <= sentShared();
  }

 private:
  uint64_t sentShared() const { return sentShared_.load(std::memory_order_acquire); }
  const uint64_t slots_;
  uint64_t sent_ = 0;
  std::atomic<uint64_t> sentShared_{0};  // sent_ as the progress thread may read it
  std::atomic<uint64_t> returned_{0};
};

// The receiving side: arrive() on the progress thread, the rest on the executor's.
class ReceiveWindow {
 public:
  explicit ReceiveWindow(int slots)
      : slots_(slots), landed_(new std::atomic<uint8_t>[size_t(slots)]) {
    for (int s = 0; s < slots; ++s) landed_[size_t(s)].store(0);
  }
  // A message landed in `slot`. False if the slot was already full or out of range: the peer
  // broke the protocol.
  bool arrive(uint32_t slot) {
    if (slot >= uint32_t(slots_)) return false;
    return landed_[slot].exchange(1, std::memory_order_acq_rel) == 0;
  }
  // The slot of the next message in sequence if it has landed, else -1.
  int ready() const {
    const int s = int(next_ % uint64_t(slots_));
    return landed_[size_t(s)].load(std::memory_order_acquire) ? s : -1;
  }
  // The executor is done with the next message: its slot is free, and its credit owed.
  void release() {
    landed_[size_t(next_ % uint64_t(slots_))].store(0, std::memory_order_release);
    ++next_;
    owed_.fetch_add(1, std::memory_order_acq_rel);
  }
  uint64_t consumed() const { return next_; }
  // Up to `max` owed credits, now the caller's to send; giveBack() those it could not.
  uint32_t takeCredits(uint32_t max) {
    uint32_t have = owed_.load(std::memory_order_acquire);
    while (have && !owed_.compare_exchange_weak(have, have - (have < max ? have : max)))
      ;
    return have < max ? have : max;
  }
  void giveBack(uint32_t n) { owed_.fetch_add(n, std::memory_order_acq_rel); }
  bool owesCredits() const { return owed_.load(std::memory_order_acquire) != 0; }

 private:
  const int slots_;
  std::unique_ptr<std::atomic<uint8_t>[]> landed_;
  uint64_t next_ = 0;
  std::atomic<uint32_t> owed_{0};
};

}  // namespace chorus
