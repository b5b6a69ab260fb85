// Hierarchical allreduce over hosts of L ranks each: a ring reduce-scatter inside each host
// (local rank i ends with segment i+1 of n/L elements), a ring allreduce of that segment among
// the ranks with the same local index on every host, then a ring allgather inside each host.
// Only n/L elements per rank cross the network, and the slow links see 2(H-1) message times
// instead of 2(P-1): latency 2(L-1) local + 2(H-1) remote message times, bandwidth 2n(L-1)/L
// locally and 2n(H-1)/(HL) remotely per rank.
//
// Hierarchical allgather: a ring across hosts among the ranks with my local index (each ends
// with the H blocks of its index), then a ring inside the host whose every hop carries H
// blocks. Latency (H-1) remote + (L-1) local message times (x H messages per local hop);
// bandwidth (H-1) n remote and (L-1) H n local per rank, against (P-1) message times for a ring.
// Hierarchical reduce_scatter is its mirror image: a ring reduce-scatter inside the host over
// segments of H blocks (local index j ends with the host's sums of the blocks of index j),
// then a ring reduce-scatter across hosts of those H blocks. Scratch: 2H + 2 blocks.
#include <vector>

#include "algorithms/registry.h"
#include "algorithms/ring_phases.h"

namespace chorus {

Schedule hierarchicalAllReduce(const OpDesc& d, int rank, int size, const RankLayout& layout) {
  Builder b("hierarchical", d, rank);
  const uint64_t n = d.count;
  (void)size;
  const int host = layout.hostOf[rank];
  Group local, cross;
  local.ranks = layout.hosts[host];
  while (local.ranks[local.me] != rank) ++local.me;
  for (const auto& h : layout.hosts) cross.ranks.push_back(h[local.me]);
  cross.me = host;

  RingPhase rs = ringReduceScatterPhase(b, local, input(), output(), n, -1);
  const int seg = mod(local.me + 1, local.size());
  const uint64_t off = segmentStart(n, local.size(), seg), len = segmentLen(n, local.size(), seg);
  int ready = rs.done;
  if (cross.size() > 1) {
    RingPhase x = ringReduceScatterPhase(b, cross, output(off), output(off), len, rs.done);
    ready = ringAllGatherPhase(b, cross, output(off), len, x.done, x.sendOf, true);
  }
  ringAllGatherPhase(b, local, output(), n, ready, rs.sendOf, false);
  return b.take();
}

namespace {
// Where I sit: host h of H, local index j of L; rankAt(h, j) for any host and index (mod).
struct HostGrid {
  const RankLayout& l;
  int host = 0, local = 0, H = 1, L = 1;
  HostGrid(const RankLayout& layout, int rank) : l(layout) {
    host = l.hostOf[rank];
    H = int(l.hosts.size());
    L = int(l.hosts[host].size());
    while (l.hosts[host][local] != rank) ++local;
  }
  int at(int h, int j) const { return l.hosts[mod(h, H)][mod(j, L)]; }
};
}  // namespace

Schedule hierarchicalAllGather(const OpDesc& d, int rank, int size, const RankLayout& layout) {
  Builder b("hierarchical", d, rank);
  const uint64_t n = d.count;
  const HostGrid g(layout, rank);
  std::vector<int> producer(size, -1);  // the step that put each rank's block in my output
  producer[rank] = b.copy(input(), output(rank * n), n);
  // Across hosts: a ring of the ranks with my local index.
  const int nextH = g.at(g.host + 1, g.local), prevH = g.at(g.host - 1, g.local);
  for (int t = 0; t + 1 < g.H; ++t) {
    const int out = g.at(g.host - t, g.local), in = g.at(g.host - t - 1, g.local);
    b.send(nextH, output(out * n), n, {producer[out]});
    producer[in] = b.recv(prevH, output(in * n), n);
  }
  // Inside the host: a ring whose every hop carries one block per host.
  const int nextL = g.at(g.host, g.local + 1), prevL = g.at(g.host, g.local - 1);
  for (int s = 0; s + 1 < g.L; ++s) {
    for (int h = 0; h < g.H; ++h) {
      const int out = g.at(h, g.local - s);
      b.send(nextL, output(out * n), n, {producer[out]});
    }
    for (int h = 0; h < g.H; ++h) {
      const int in = g.at(h, g.local - s - 1);
      producer[in] = b.recv(prevL, output(in * n), n);
    }
  }
  return b.take();
}

Schedule hierarchicalReduceScatter(const OpDesc& d, int rank, int size, const RankLayout& layout) {
  Builder b("hierarchical", d, rank);
  (void)size;
  const uint64_t n = d.count;
  const HostGrid g(layout, rank);
  // Scratch: two alternating slots of H blocks inside the host, two blocks across hosts.
  b.needScratch((2 * uint64_t(g.H) + 2) * n);
  auto hostSlot = [&](int s, int h) { return scratch((uint64_t(s % 2) * g.H + h) * n); };
  auto netSlot = [&](int t) { return scratch((2 * uint64_t(g.H) + t % 2) * n); };
  // part[h]: where this host's sum of block at(h, my index) ends up, and the step writing it.
  std::vector<BufRef> part(g.H);
  std::vector<int> partStep(g.H, -1);
  for (int h = 0; h < g.H; ++h) part[h] = input(g.at(h, g.local) * n);

  // Inside the host: a ring reduce-scatter whose segment j is the H blocks of local index j.
  const int nextL = g.at(g.host, g.local + 1), prevL = g.at(g.host, g.local - 1);
  std::vector<int> reduced(g.H, -1), sent(g.H, -1);
  for (int s = 0; s + 1 < g.L; ++s) {
    std::vector<int> sentNow(g.H);
    for (int h = 0; h < g.H; ++h) {
      BufRef src = s == 0 ? input(g.at(h, g.local - 1) * n) : hostSlot(s - 1, h);
      sentNow[h] = b.send(nextL, src, n, {reduced[h]});
    }
    for (int h = 0; h < g.H; ++h) {
      // The slot written now was last read by the previous hop's send.
      const int war = s >= 2 ? sent[h] : -1;
      reduced[h] =
          b.recvReduce(prevL, input(g.at(h, g.local - s - 2) * n), hostSlot(s, h), n, {war});
    }
    sent = sentNow;
  }
  if (g.L > 1)
    for (int h = 0; h < g.H; ++h) part[h] = hostSlot(g.L - 2, h), partStep[h] = reduced[h];

  if (g.H == 1) {
    b.copy(part[0], output(), n, {partStep[0]});
    return b.take();
  }
  // Across hosts: a ring reduce-scatter of the blocks of my local index, one per host.
  const int nextH = g.at(g.host + 1, g.local), prevH = g.at(g.host - 1, g.local);
  int last = -1, lastSend = -1;
  for (int t = 0; t + 1 < g.H; ++t) {
    const int out = mod(g.host - t - 1, g.H), in = mod(g.host - t - 2, g.H);
    const int sendStep =
        b.send(nextH, t == 0 ? part[out] : netSlot(t - 1), n, {t == 0 ? partStep[out] : last});
    const BufRef dst = t + 2 == g.H ? output() : netSlot(t);
    last = b.recvReduce(prevH, part[in], dst, n, {partStep[in], t >= 2 ? lastSend : -1});
    lastSend = sendStep;
  }
  return b.take();
}

}  // namespace chorus
