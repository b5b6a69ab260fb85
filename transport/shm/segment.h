// Layout of the shared-memory segment that all ranks of one host map. One lock-free ring of
// message slots per ordered pair of local ranks, and one doorbell per rank to sleep on.
//
//   [SegmentHeader][Doorbell x L][RingControl x L*L][slots of ring (0,0)]...[slots of (L-1,L-1)]
//
// A ring (i -> j) has one writer (rank i moves head) and one reader (rank j moves tail), so it
// needs no locks; head and tail live on separate cache lines so the two sides never contend.
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
  alignas(kCacheLine) std::atomic<uint64_t> head;  // messages posted (writer)
  alignas(kCacheLine) std::atomic<uint64_t> tail;  // messages consumed (reader)
};

struct alignas(kCacheLine) SlotHeader {
  WireHeader wire;
};

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
