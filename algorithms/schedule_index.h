// The execution model of schedule.h, worked out once for a schedule and a chunking: how each
// step is cut into chunks, which dependencies are chunkwise and what a chunk waits for, and
// the order of the steps on each channel. The executor runs by it, the verifier proves it and
// the cost model times it, so the model lives here only; a new step kind is taught here.
//
// Terms. A channel is (peer, direction): a rank's sends to one peer, or its receives from one.
// A step of count 0 moves nothing and is done from the start: it has no chunks, is on no
// channel, and whoever depends on it does not wait for it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "algorithms/schedule.h"
#include "core/op_desc.h"

namespace chorus {

// What decides how a call's steps are cut: only things every rank knows alike, so that both
// ends of a channel cut a step the same way.
struct Chunking {
  size_t elementBytes = 1;
  size_t jobBytes = 1 << 20;  // what every transport of the job carries in one message
  // By peer rank: what the transport to that peer carries in one message (both ends of a pair
  // use the same transport). Empty, or 0 for a peer: jobBytes.
  std::vector<size_t> peerBytes;

  // The bytes per message of a step of `s` with `peer` (-1: a local copy): the schedule's
  // chunkBytes (0: jobBytes), never more than the channel's transport carries. A copy has no
  // transport; it takes the schedule's choice within jobBytes, which bounds a copy's slices.
  size_t bytesFor(const Schedule& s, int peer) const;
};

// The element size a call's schedule counts in: bytes for point-to-point calls.
size_t elementBytes(const OpDesc& d);

class ScheduleIndex {
 public:
  ScheduleIndex() = default;
  ScheduleIndex(const Schedule& s, const Chunking& c);
  bool built() const { return built_; }
  int steps() const { return int(steps_.size()); }

  // Chunk c of step i is elements [chunkBegin(i, c), + chunkLen(i, c)) of the step.
  uint64_t chunks(int i) const { return steps_[i].chunks; }
  uint64_t chunkElems(int i) const { return steps_[i].elems; }
  uint64_t chunkBegin(int i, uint64_t c) const { return c * steps_[i].elems; }
  uint64_t chunkLen(int i, uint64_t c) const {
    const StepIx& x = steps_[i];
    const uint64_t left = x.count - c * x.elems;
    return left < x.elems ? left : x.elems;
  }

  // The k-th dependency of step i that it waits for (k < Step::kMaxDeps), or -1: none, or an
  // empty step (and an empty step waits for nothing).
  int dep(int i, int k) const { return steps_[i].dep[k]; }
  // Same count: chunk by chunk. Else: all of it first.
  bool chunkwise(int i, int k) const { return steps_[i].chunkwise[k]; }
  // How many chunks of dep(i, k) must be done before chunk c of step i may start: the chunks
  // that cover the elements up to the end of chunk c when chunkwise (the dependency may be cut
  // differently: its channel's transport may carry less), else all of them.
  uint64_t chunksNeeded(int i, int k, uint64_t c) const {
    const StepIx& x = steps_[i];
    const StepIx& d = steps_[x.dep[k]];
    if (!x.chunkwise[k]) return d.chunks;
    if (d.elems == x.elems) return c + 1;
    const uint64_t end = (c + 1) * x.elems < x.count ? (c + 1) * x.elems : x.count;
    return (end + d.elems - 1) / d.elems;
  }
  // The one readiness rule: may chunk c of step i start, given done(d), the chunks of step d
  // done so far? (Channel order is the caller's: see head steps below.)
  template <class Done>
  bool depsReady(int i, uint64_t c, Done&& done) const {
    for (int k = 0; k < Step::kMaxDeps; ++k) {
      const int d = steps_[i].dep[k];
      if (d >= 0 && done(d) < chunksNeeded(i, k, c)) return false;
    }
    return true;
  }

  // Channels, numbered 2 * slot + isSend where slot indexes peers() (peers in order of first
  // use). On each, steps are served in list order: a step may move once the one before it on
  // its channel is done.
  const std::vector<int>& peers() const { return peers_; }
  int slotOf(int peer) const;  // index in peers(), or -1
  int channels() const { return int(2 * peers_.size()); }
  static int channelId(int slot, bool send) { return 2 * slot + int(send); }
  int channelOf(int peer, bool send) const;
  int channel(int i) const { return steps_[i].chan; }  // -1: a copy or an empty step
  int first(int ch) const { return first_[ch]; }       // -1: nothing on it
  int next(int i) const { return steps_[i].next; }     // next step on i's channel, or -1
  int prev(int i) const { return steps_[i].prev; }

 private:
  struct StepIx {
    uint64_t count = 0, elems = 1, chunks = 0;
    int dep[Step::kMaxDeps] = {-1, -1};
    bool chunkwise[Step::kMaxDeps] = {false, false};
    int chan = -1, next = -1, prev = -1;
  };
  bool built_ = false;
  std::vector<StepIx> steps_;
  std::vector<int> peers_;
  std::vector<std::pair<int, int>> slotByPeer_;  // (peer, slot), sorted
  std::vector<int> first_;                       // by channel
};

}  // namespace chorus
