#include "algorithms/schedule_index.h"

#include <algorithm>

namespace chorus {

size_t Chunking::bytesFor(const Schedule& s, int peer) const {
  const size_t want = s.chunkBytes ? s.chunkBytes : jobBytes;
  size_t most = jobBytes;
  if (peer >= 0 && size_t(peer) < peerBytes.size() && peerBytes[peer]) most = peerBytes[peer];
  return std::min(want, most);
}

size_t elementBytes(const OpDesc& d) {
  return d.coll == Collective::Send || d.coll == Collective::Recv ? 1 : dataTypeSize(d.dtype);
}

namespace {
bool onChannel(const Step& s) {
  return s.kind != StepKind::Copy && s.count > 0;
}
}  // namespace

ScheduleIndex::ScheduleIndex(const Schedule& s, const Chunking& c) : built_(true) {
  const int n = int(s.steps.size());
  steps_.resize(n);
  const size_t esize = std::max<size_t>(1, c.elementBytes);
  // Peers in order of first use, and a sorted map to their slots (n log n: a direct
  // algorithm on a thousand ranks has a thousand peers).
  std::vector<std::pair<int, int>> uses;  // (peer, first step)
  for (int i = 0; i < n; ++i)
    if (onChannel(s.steps[i])) uses.push_back({s.steps[i].peer, i});
  std::sort(uses.begin(), uses.end());
  uses.erase(
      std::unique(uses.begin(), uses.end(), [](auto& a, auto& b) { return a.first == b.first; }),
      uses.end());
  std::vector<std::pair<int, int>> byUse;  // (first step, peer)
  for (auto [peer, i] : uses) byUse.push_back({i, peer});
  std::sort(byUse.begin(), byUse.end());
  for (auto [i, peer] : byUse) {
    slotByPeer_.push_back({peer, int(peers_.size())});
    peers_.push_back(peer);
  }
  std::sort(slotByPeer_.begin(), slotByPeer_.end());
  first_.assign(2 * peers_.size(), -1);
  std::vector<int> last(first_.size(), -1);
  for (int i = 0; i < n; ++i) {
    const Step& st = s.steps[i];
    StepIx& x = steps_[i];
    x.count = st.count;
    const bool local = st.kind == StepKind::Copy;
    x.elems = std::max<uint64_t>(1, c.bytesFor(s, local ? -1 : st.peer) / esize);
    x.chunks = (st.count + x.elems - 1) / x.elems;
    if (st.count == 0) continue;  // done from the start: it waits for nothing
    for (int k = 0; k < Step::kMaxDeps; ++k) {
      const int d = st.deps[k];
      // Out of range is the verifier's to report; an empty step is never waited for.
      if (d < 0 || d >= i || s.steps[d].count == 0) continue;
      x.dep[k] = d;
      x.chunkwise[k] = s.steps[d].count == st.count;
    }
    if (!onChannel(st)) continue;
    x.chan = channelId(slotOf(st.peer), st.kind == StepKind::Send);
    if (first_[x.chan] < 0) first_[x.chan] = i;
    x.prev = last[x.chan];
    if (x.prev >= 0) steps_[x.prev].next = i;
    last[x.chan] = i;
  }
}

int ScheduleIndex::slotOf(int peer) const {
  const auto at =
      std::lower_bound(slotByPeer_.begin(), slotByPeer_.end(), std::make_pair(peer, -1));
  return at != slotByPeer_.end() && at->first == peer ? at->second : -1;
}

int ScheduleIndex::channelOf(int peer, bool send) const {
  const int slot = slotOf(peer);
  return slot < 0 ? -1 : channelId(slot, send);
}

}  // namespace chorus
