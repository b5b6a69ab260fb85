// Sliced hierarchical allreduce: the hierarchical allreduce (hierarchical.cc) run on K slices
// of the vector at once, so that the links of both levels work at the same time. Slice k is
// the range segmentStart(n, K, k) of K: a ring reduce-scatter inside the host, an allreduce
// across hosts of the segment that ended on me, a ring allgather inside the host.
//
// Why slices: the plain algorithm runs its three phases one after another, so NVLink idles
// while the NICs carry the cross-host phase and the NICs idle during the other two. Here the
// local ring reduce-scatters slice k+1 while slice k crosses the network, and gathers slice k
// as soon as it is back.
//
// Across hosts, the latency of the steps matters: each step waits for the one before, and on
// many hosts a step is a message or two (a 512 MiB allreduce on 128 hosts of 8 GPUs in 32
// slices: 2 MiB per slice and GPU to allreduce among 128 hosts).
// - H a power of two: recursive halving, then doubling (halving_doubling_phase.cc), 2 log2 H
//   rounds. Every slice pairs the same hosts in the same round, and every slice's halving comes
//   before any slice's doubling: a slice's first round and its last pair the same hosts, so with
//   each slice's two halves together the next slice's first round would queue behind that last
//   round on their channel (messages between two ranks keep their order).
// - Otherwise a ring, 2 (H-1) steps. Slice k's ring visits the hosts in steps of stride s_k
//   (h -> h + s_k mod H, s_k coprime with H so that one ring holds every host), and distinct
//   strides make distinct channels (pairs of peers), so the slices' rings run side by side and
//   fill each other's waits, as NCCL's channels do. Strides: 1, H-1, 2, H-2, ... coprime with
//   H; with fewer than K of them, slices share a ring in slice order.
//
// Channel order: the local ring carries every slice's reduce-scatter, then every slice's
// allgather, in slice order. Cost per rank: the plain algorithm's bytes; K times its messages,
// so it pays off for large vectors only (the selector weighs it).
#include <bit>
#include <numeric>
#include <vector>

#include "algorithms/registry.h"
#include "algorithms/ring_phases.h"

namespace chorus {

namespace {

// Slices: 8, or one per 16 MiB up to 32 for large vectors, but at least `size` elements each.
// More slices overlap the levels better and pay more messages; on 128 DGX hosts (chorus-sim,
// docs/simulator.md) 8 slices were best from 64 to 128 MiB and 32 at 512 MiB.
uint64_t sliceCount(uint64_t n, size_t elemBytes, int size) {
  const uint64_t wide = std::min<uint64_t>(32, n * elemBytes / (16 << 20));
  return std::max<uint64_t>(1, std::min<uint64_t>(n / uint64_t(size), std::max<uint64_t>(8, wide)));
}

// Host strides coprime with H, nearest to 1 first, each once (H-s is s's mirror, a
// different channel: it sends where s receives from).
std::vector<int> ringStrides(int H) {
  std::vector<int> out;
  for (int s = 1; s <= H / 2; ++s) {
    if (std::gcd(s, H) != 1) continue;
    out.push_back(s);
    if (H - s != s) out.push_back(H - s);
  }
  if (out.empty()) out.push_back(1);  // H == 1: no cross-host ring anyway
  return out;
}

// The ranks at local position `pos` of every host, position i being host i * stride mod H.
Group stridedHosts(const RankLayout& layout, int host, int pos, int stride) {
  const int H = int(layout.hosts.size());
  Group g;
  for (int i = 0; i < H; ++i) {
    const int h = int(int64_t(i) * stride % H);
    g.ranks.push_back(layout.hosts[h][pos]);
    if (h == host) g.me = i;
  }
  return g;
}

}  // namespace

Schedule hierarchicalSlicedAllReduce(const OpDesc& d, int rank, int size,
                                     const RankLayout& layout) {
  Builder b("hierarchical_sliced", d, rank);
  const uint64_t n = d.count;
  const int host = layout.hostOf[rank], H = int(layout.hosts.size());
  Group local;
  local.ranks = layout.hosts[host];
  while (local.ranks[local.me] != rank) ++local.me;
  const int L = local.size();
  const int K = int(sliceCount(n, dataTypeSize(d.dtype), size));
  const std::vector<int> strides = ringStrides(H);

  // Slice k's own segment of the host's ring: where its cross-host allreduce runs.
  const int seg = mod(local.me + 1, L);
  auto sliceAt = [&](int k) { return segmentStart(n, K, k); };
  auto sliceLen = [&](int k) { return segmentLen(n, K, k); };
  auto ownAt = [&](int k) { return sliceAt(k) + segmentStart(sliceLen(k), L, seg); };
  auto ownLen = [&](int k) { return segmentLen(sliceLen(k), L, seg); };

  std::vector<RingPhase> rs(K);
  for (int k = 0; k < K; ++k)
    rs[k] =
        ringReduceScatterPhase(b, local, input(sliceAt(k)), output(sliceAt(k)), sliceLen(k), -1);
  std::vector<int> ready(K);
  for (int k = 0; k < K; ++k) ready[k] = rs[k].done;
  if (H > 1 && std::has_single_bit(unsigned(H))) {
    // Every slice pairs the same hosts in each round, and all reduce-scatters come before any
    // allgather on every channel: a slice's first round then never queues behind an earlier
    // slice's last round to the same host, which it would with each slice's two halves
    // together (the first and last rounds pair the same hosts).
    const Group cross = stridedHosts(layout, host, local.me, 1);
    std::vector<HalvingPhase> halving(K);
    for (int k = 0; k < K; ++k)
      halving[k] = halvingReduceScatterPhase(b, cross, output(ownAt(k)), output(ownAt(k)),
                                             ownLen(k), ready[k]);
    for (int k = 0; k < K; ++k)
      ready[k] = doublingAllGatherPhase(b, cross, output(ownAt(k)), ownLen(k), halving[k]);
  } else if (H > 1) {
    for (int k = 0; k < K; ++k) {
      const Group cross = stridedHosts(layout, host, local.me, strides[size_t(k) % strides.size()]);
      RingPhase x =
          ringReduceScatterPhase(b, cross, output(ownAt(k)), output(ownAt(k)), ownLen(k), ready[k]);
      ready[k] = ringAllGatherPhase(b, cross, output(ownAt(k)), ownLen(k), x.done, x.sendOf, true);
    }
  }
  for (int k = 0; k < K; ++k)
    ringAllGatherPhase(b, local, output(sliceAt(k)), sliceLen(k), ready[k], rs[k].sendOf, false);
  return b.take();
}

}  // namespace chorus
