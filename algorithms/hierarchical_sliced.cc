// Sliced hierarchical allreduce: the hierarchical allreduce (hierarchical.cc) run on K slices
// of the vector at once, so that the links of both levels work at the same time. Slice k is
// the range segmentStart(n, K, k) of K: a ring reduce-scatter inside the host, a ring
// allreduce across hosts of the segment that ended on me, a ring allgather inside the host.
//
// Why slices: the plain algorithm runs its three phases one after another, so NVLink idles
// while the NICs carry the cross-host phase and the NICs idle during the other two. Here the
// local ring reduce-scatters slice k+1 while slice k crosses the network, and gathers slice k
// as soon as it is back.
//
// Why a different host order per slice: a ring across H hosts is 2(H-1) steps, each waiting for
// the one before; when a step is a message or two, every step waits a network latency with the
// NIC idle (a 512 MiB allreduce on 128 hosts of 8 GPUs in 8 slices: 64 KiB steps, 1.4 us on a
// 400 Gb/s NIC against 5 us of latency). Slice k's cross-host ring visits the hosts in steps of
// stride s_k (h -> h + s_k mod H, s_k coprime with H so that one ring holds every host), and
// distinct strides make distinct channels (pairs of peers), so the slices' rings run side by
// side and fill each other's waits, as NCCL's channels do. Strides: 1, H-1, 2, H-2, ... coprime
// with H; with fewer than K of them, slices share a ring in slice order.
//
// Slices: K = min(8, n / P), at least 1 (one slice is the plain algorithm). Channel order: the
// local ring carries every slice's reduce-scatter, then every slice's allgather, in slice order.
// Cost per rank: the plain algorithm's bytes; K times its messages, so it pays off for large
// vectors only (the selector weighs it).
#include <numeric>
#include <vector>

#include "algorithms/registry.h"
#include "algorithms/ring_phases.h"

namespace chorus {

namespace {

constexpr uint64_t kMaxSlices = 8;

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
  const int K = int(std::max<uint64_t>(1, std::min<uint64_t>(kMaxSlices, n / uint64_t(size))));
  const std::vector<int> strides = ringStrides(H);

  std::vector<RingPhase> rs(K);
  for (int k = 0; k < K; ++k) {
    const uint64_t o = segmentStart(n, K, k), len = segmentLen(n, K, k);
    rs[k] = ringReduceScatterPhase(b, local, input(o), output(o), len, -1);
  }
  for (int k = 0; k < K; ++k) {
    const uint64_t o = segmentStart(n, K, k), len = segmentLen(n, K, k);
    const int seg = mod(local.me + 1, L);
    const uint64_t off = o + segmentStart(len, L, seg), segLen = segmentLen(len, L, seg);
    int ready = rs[k].done;
    if (H > 1) {
      const int s = strides[size_t(k) % strides.size()];
      Group cross;  // position i: host i * s mod H
      for (int i = 0; i < H; ++i) {
        const int h = int(int64_t(i) * s % H);
        cross.ranks.push_back(layout.hosts[h][local.me]);
        if (h == host) cross.me = i;
      }
      RingPhase x = ringReduceScatterPhase(b, cross, output(off), output(off), segLen, ready);
      ready = ringAllGatherPhase(b, cross, output(off), segLen, x.done, x.sendOf, true);
    }
    ringAllGatherPhase(b, local, output(o), len, ready, rs[k].sendOf, false);
  }
  return b.take();
}

}  // namespace chorus
