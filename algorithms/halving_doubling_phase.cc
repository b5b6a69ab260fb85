// Rabenseifner's allreduce as two phases, for rabenseifner itself and for hierarchical_sliced's
// cross-host step: a reduce-scatter by recursive halving, then an allgather by recursive
// doubling. Round k of each pairs position i with i ^ 2^k of the group, so the two
// are 2 log2 G message times instead of a ring's 2 (G - 1), for the same bytes per member.
#include "algorithms/ring_phases.h"

namespace chorus {

HalvingPhase halvingReduceScatterPhase(Builder& b, const Group& g, BufRef src, BufRef dst,
                                       uint64_t n, int ready) {
  const int G = g.size(), v = g.me;
  auto B = [&](int k) { return segmentStart(n, G, k); };
  HalvingPhase ph;
  ph.gaveAway.assign(G, -1);
  ph.done = ready;
  ph.lo = 0, ph.hi = G;
  for (int mask = G / 2; mask >= 1; mask /= 2) {
    const int peer = g.ranks[v ^ mask], mid = ph.lo + mask;
    const bool upper = v & mask;
    const int klo = upper ? mid : ph.lo, khi = upper ? ph.hi : mid;  // kept
    const int glo = upper ? ph.lo : mid, ghi = upper ? mid : ph.hi;  // given away
    ph.gaveAway[mask] = b.send(peer, src + B(glo), B(ghi) - B(glo), {ph.done});
    ph.done = b.recvReduce(peer, src + B(klo), dst + B(klo), B(khi) - B(klo), {ph.done});
    ph.lo = klo, ph.hi = khi;
    src = dst;
  }
  return ph;
}

int doublingAllGatherPhase(Builder& b, const Group& g, BufRef dst, uint64_t n,
                           const HalvingPhase& halving) {
  const int G = g.size(), v = g.me;
  auto B = [&](int k) { return segmentStart(n, G, k); };
  int lo = halving.lo, hi = halving.hi, prev = halving.done, lastSend = -1;
  Builder::Deps all = {prev};
  for (int mask = 1; mask < G; mask <<= 1) {
    const int peer = g.ranks[v ^ mask];
    const int plo = (v & mask) ? lo - mask : hi, phi = plo + mask;
    lastSend = b.send(peer, dst + B(lo), B(hi) - B(lo), {prev, lastSend});
    // The peer sends back what this member gave away in the halving round of the same mask.
    prev = b.recv(peer, dst + B(plo), B(phi) - B(plo), {halving.gaveAway[mask]});
    all.push_back(prev);
    lo = std::min(lo, plo);
    hi = std::max(hi, phi);
  }
  return b.join(all);
}

}  // namespace chorus
