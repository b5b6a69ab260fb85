// Pipelined chains and scatter+allgather, for large broadcasts and reductions.
// chain broadcast: root -> root+1 -> ... -> root-1; each rank forwards chunk c as soon as it
//   has it. (P-1) message times of latency for the first chunk, then one chunk time each: about
//   (P - 1 + n/chunk) chunk times, with every link carrying n once.
// chain reduce: the same line run backwards, each rank folding its input into what passes.
// scatter_allgather broadcast (van de Geijn): the root sends segment i to rank root+i, then the
//   segments travel down the line root -> root+1 -> ... (an allgather whose ring is cut at the
//   root, which already has everything). 2(P-1) message times, but the root sends only
//   n elements in all and every other rank n/P per step: twice a chain's bandwidth-time at
//   most, and far better than a binomial tree's n log P for large n.
#include "algorithms/algorithms.h"
#include "algorithms/builder.h"

namespace chorus {

Schedule chainBroadcast(const OpDesc& d, int rank, int size) {
  Builder b("chain", d, rank);
  const int v = mod(rank - d.root, size), next = mod(rank + 1, size), prev = mod(rank - 1, size);
  if (v == 0) {
    b.copy(input(), output(), d.count);
    if (size > 1) b.send(next, input(), d.count);
    return b.take();
  }
  int got = b.recv(prev, output(), d.count);
  if (v < size - 1) b.send(next, output(), d.count, {got});
  return b.take();
}

Schedule chainReduce(const OpDesc& d, int rank, int size) {
  Builder b("chain", d, rank);
  const uint64_t n = d.count;
  const int v = mod(rank - d.root, size), up = mod(rank - 1, size), down = mod(rank + 1, size);
  if (size == 1) {
    b.copy(input(), output(), n);
  } else if (v == size - 1) {
    b.send(up, input(), n);
  } else if (v > 0) {
    b.needScratch(n);  // a non-root's output is not ours to write
    int acc = b.recvReduce(down, input(), scratch(), n);
    b.send(up, scratch(), n, {acc});
  } else {
    b.recvReduce(down, input(), output(), n);
  }
  return b.take();
}

Schedule scatterAllGatherBroadcast(const OpDesc& d, int rank, int size) {
  Builder b("scatter_allgather", d, rank);
  const uint64_t n = d.count;
  const int v = mod(rank - d.root, size);
  auto real = [&](int i) { return mod(d.root + i, size); };
  auto off = [&](int i) { return segmentStart(n, size, mod(i, size)); };
  auto len = [&](int i) { return segmentLen(n, size, mod(i, size)); };
  int have = -1;
  if (v == 0) {
    b.copy(input(), output(), n);
    for (int i = 1; i < size; ++i) b.send(real(i), input(off(i)), len(i));
  } else {
    have = b.recv(d.root, output(off(v)), len(v));
  }
  // The line: at step t member v passes segment v - t on and receives segment v - t - 1.
  for (int t = 0; t + 1 < size; ++t) {
    if (v + 1 < size)
      b.send(real(v + 1), (v == 0 ? input() : output()) + off(v - t), len(v - t),
             {v == 0 ? -1 : have});
    if (v > 0) have = b.recv(real(v - 1), output(off(v - t - 1)), len(v - t - 1));
  }
  return b.take();
}

}  // namespace chorus
