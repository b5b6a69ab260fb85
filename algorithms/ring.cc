// Ring algorithms. Ranks form a ring; each sends to its right neighbour and receives from its
// left. The vector is cut into P segments, and in each of P-1 steps every rank passes one
// segment on, so every link carries (P-1)/P of the data per phase: bandwidth-optimal, with a
// latency of P-1 message times per phase. Segments are cut further into chunks and each
// forwarded chunk depends only on the same chunk having arrived, so the ring is pipelined.
//
//   reduce-scatter phase, step s: send segment (r-s), combine segment (r-s-1) from the left
//   allgather phase, step s:      send segment (r+1-s), receive segment (r-s) from the left
// After the reduce-scatter phase rank r holds the finished segment r+1.
#include "algorithms/ring_phases.h"

namespace chorus {

Group Group::all(int size, int rank) {
  Group g;
  for (int q = 0; q < size; ++q) g.ranks.push_back(q);
  g.me = rank;
  return g;
}

namespace {
uint64_t segOff(uint64_t n, const Group& g, int seg) {
  return segmentStart(n, g.size(), mod(seg, g.size()));
}
uint64_t segLen(uint64_t n, const Group& g, int seg) {
  int k = mod(seg, g.size());
  return segmentStart(n, g.size(), k + 1) - segmentStart(n, g.size(), k);
}
}  // namespace

RingPhase ringReduceScatterPhase(Builder& b, const Group& g, BufRef src, BufRef dst, uint64_t n,
                                 int dep) {
  RingPhase ph;
  const int G = g.size(), me = g.me;
  ph.sendOf.assign(G, -1);
  if (G == 1) {
    ph.done = b.copy(src, dst, n, {dep});
    return ph;
  }
  int prev = dep;
  for (int step = 0; step < G - 1; ++step) {
    const int sendSeg = me - step, recvSeg = me - step - 1;
    BufRef from = step == 0 ? src : dst;
    ph.sendOf[mod(sendSeg, G)] =
        b.send(g.at(me + 1), from + segOff(n, g, sendSeg), segLen(n, g, sendSeg), {prev});
    prev = b.recvReduce(g.at(me - 1), src + segOff(n, g, recvSeg), dst + segOff(n, g, recvSeg),
                        segLen(n, g, recvSeg), {dep});
  }
  ph.done = prev;
  return ph;
}

int ringAllGatherPhase(Builder& b, const Group& g, BufRef buf, uint64_t n, int ready,
                       const std::vector<int>& sendOf, bool join) {
  const int G = g.size(), me = g.me;
  int prev = ready;
  Builder::Deps all = {ready};
  for (int step = 0; step < G - 1; ++step) {
    const int sendSeg = me + 1 - step, recvSeg = me - step;
    b.send(g.at(me + 1), buf + segOff(n, g, sendSeg), segLen(n, g, sendSeg), {prev});
    // Wait for this rank's own last read of the segment: ordering it through the other ranks
    // would hold too, but the proof stays local (and it is free: that send finished long ago).
    prev = b.recv(g.at(me - 1), buf + segOff(n, g, recvSeg), segLen(n, g, recvSeg),
                  {sendOf[mod(recvSeg, G)]});
    all.push_back(prev);
  }
  return join ? b.join(all) : prev;
}

Schedule ringAllReduce(const OpDesc& d, int rank, int size) {
  Builder b("ring", d, rank);
  const Group g = Group::all(size, rank);
  RingPhase rs = ringReduceScatterPhase(b, g, input(), output(), d.count, -1);
  ringAllGatherPhase(b, g, output(), d.count, rs.done, rs.sendOf, false);
  return b.take();
}

// Reduce-scatter of P blocks of `count` elements; rank r ends with block r. Partial sums that
// pass through a rank live in scratch, so the output only ever receives the finished block.
Schedule ringReduceScatter(const OpDesc& d, int rank, int size) {
  Schedule s;
  s.algorithm = "ring";
  const uint64_t m = d.count;
  if (size == 1) {
    s.copy(input(), output(), m);
    return s;
  }
  const int right = mod(rank + 1, size), left = mod(rank - 1, size);
  s.scratchElems = m * size;
  int prev = -1;
  for (int step = 0; step < size - 1; ++step) {
    uint64_t sendOff = mod(rank - step - 1, size) * m, recvOff = mod(rank - step - 2, size) * m;
    BufRef src = step == 0 ? input(sendOff) : scratch(sendOff);
    s.send(right, src, m, prev);
    BufRef dst = step == size - 2 ? output(0) : scratch(recvOff);
    prev = s.recvReduce(left, input(recvOff), dst, m);
  }
  return s;
}

// Allgather of P blocks of `count` elements; block r comes from rank r.
Schedule ringAllGather(const OpDesc& d, int rank, int size) {
  Schedule s;
  s.algorithm = "ring";
  const uint64_t m = d.count;
  s.copy(input(), output(rank * m), m);
  const int right = mod(rank + 1, size), left = mod(rank - 1, size);
  int prev = -1;
  for (int step = 0; step < size - 1; ++step) {
    uint64_t sendOff = mod(rank - step, size) * m, recvOff = mod(rank - step - 1, size) * m;
    BufRef src = step == 0 ? input() : output(sendOff);
    s.send(right, src, m, prev);
    prev = s.recv(left, output(recvOff), m);
  }
  return s;
}

}  // namespace chorus
