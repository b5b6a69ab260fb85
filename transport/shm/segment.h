// Layout of the shared-memory segment that all ranks of one host map. One lock-free ring of
// message slots per ordered pair of local ranks, and one doorbell per rank to sleep on.
//
//   [SegmentHeader][Doorbell x L][RingControl x L*L][slots of ring (0,0)]...[slots of (L-1,L-1)]
//
// A ring (i -> j) has one writer (rank i) and one reader (rank j moving tail), so it needs no
// locks. The writer publishes a message by its slot's sequence word, in the same cache line as
// the message's header and, up to kInlineBytes, its payload: a small message crosses from core
// to core as one cache line (before, the reader polled a separate head counter and then fetched
// the slot: three lines, 0.42 us one way against 0.19 us for one line on this machine).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "transport/doorbell.h"
#include "transport/transport.h"

namespace chorus {

inline constexpr uint64_t kShmMagic = 0x43484f5255534d31ull;  // "CHORUSM1"
inline constexpr size_t kCacheLine = 64;

struct alignas(kCacheLine) SegmentHeader {
  uint64_t magic;
  uint64_t totalBytes;
  uint32_t localSize;
  uint32_t slotBytes;
  uint32_t slots;
};

// Each local rank's DoorbellWord (transport/doorbell.h) lives in the segment, so that peers
// ring it directly: the rank's communicator places its doorbell there.
static_assert(sizeof(DoorbellWord) == kCacheLine);

struct alignas(kCacheLine) RingControl {
  std::atomic<uint64_t> tail;  // messages consumed (reader); the writer reads it for credit
  // Set once by the reader where it can read the writer's memory (cross_memory.h): the writer
  // may then lend payloads (LendNote). On its own line: written once, read by the writer.
  alignas(kCacheLine) std::atomic<uint32_t> readerTakesLent;
  // Set once by the reader where it can also map the writer's memory files (shared_host.h).
  std::atomic<uint32_t> readerMapsShared;
  // The last message the reader has a destination for (Connection::postReceive): the writer
  // lends only those, which the reader lands in place, one copy in all. A lent message the
  // reader would land in its slot costs more than the writer's own copy into it.
  alignas(kCacheLine) std::atomic<uint64_t> postedUpTo;
};

// Payloads up to this size travel inside the slot's first cache line.
inline constexpr size_t kInlineBytes = 32;

struct alignas(kCacheLine) SlotHeader {
  // n + 1 once message n (counted from 0 on this ring) is in the slot; written last.
  std::atomic<uint64_t> seq;
  WireHeader wire;
  char inlinePayload[kInlineBytes];
};
static_assert(sizeof(SlotHeader) == kCacheLine, "a slot's header is one cache line");

// A message larger than kInlineBytes may leave its payload in the sender's memory (lent): the
// slot then carries where it is, in its unused inline payload, and the receiver reads it from
// there. Two ways: memory from allocateShared (include/chorus/memory.h) the receiver maps and
// reads like any of its own, reducing straight out of it; or any memory, read by cross-memory
// attach straight to where the payload is wanted. Either way one copy instead of two (into the
// slot, out of it). The state word hands the memory back: the sender may write it again once
// the receiver has taken it, and a sender that fails revokes what was not taken.
enum LendState : uint32_t {
  kPayloadInSlot = 0,  // an ordinary message
  kLent = 1,           // the payload is in the sender's memory (LendNote)
  kTaking = 2,         // the receiver is reading it
  kTaken = 3,          // read: the sender has its memory back
  kRevoked = 4,        // the sender failed and took its memory back unread
};
struct LendNote {
  std::atomic<uint32_t> state;
  int32_t fd;        // the sender's memory file holding the payload; -1: read `at` by address
  uint64_t at;       // the payload's offset in that file, or its address in the sender
  uint64_t blockId;  // the file's SharedBlock::id and size, for the receiver's mapping
  uint64_t blockBytes;
};
static_assert(sizeof(LendNote) <= kInlineBytes && offsetof(SlotHeader, inlinePayload) % 8 == 0);

struct SegmentLayout {
  uint32_t localSize, slotBytes, slots;

  size_t slotStride() const { return sizeof(SlotHeader) + slotBytes; }
  size_t doorbellsOffset() const { return sizeof(SegmentHeader); }
  size_t ringsOffset() const { return doorbellsOffset() + localSize * sizeof(DoorbellWord); }
  size_t slotsOffset() const {
    return ringsOffset() + size_t(localSize) * localSize * sizeof(RingControl);
  }
  size_t ringSlotsOffset(int from, int to) const {
    return slotsOffset() + (size_t(from) * localSize + to) * slots * slotStride();
  }
  size_t totalBytes() const {
    return ringSlotsOffset(localSize - 1, localSize - 1) + slots * slotStride();
  }
};

static_assert(std::atomic<uint64_t>::is_always_lock_free &&
                  std::atomic<uint32_t>::is_always_lock_free,
              "shared-memory rings need address-free atomics");

}  // namespace chorus
