// Bruck's algorithms: ceil(log2 P) rounds for any P, for small blocks where message count,
// not volume, is the cost.
// allgather: in round k (d = 2^k) rank r sends the min(d, P-d) blocks it holds, starting at its
//   own, to r-d and receives as many from r+d, so what it holds doubles. log P message times,
//   (P-1) m elements received: ring's volume at logarithmic latency.
// alltoall: block i of rank r is the one for rank r+i. In round k every block whose i has bit k
//   set moves 2^k ranks on, packed into one message; after all rounds position i holds the
//   block from rank r-i. log P message times, but about (P/2) m log P elements per rank
//   (pairwise moves (P-1) m), plus local packing copies.
#include "algorithms/algorithms.h"
#include "algorithms/builder.h"

namespace chorus {

namespace {
// Blocks [first, first + cnt) mod P as at most two contiguous runs (first block, length).
std::vector<std::pair<int, int>> runs(int first, int cnt, int P) {
  first = mod(first, P);
  if (first + cnt <= P) return {{first, cnt}};
  return {{first, P - first}, {0, cnt - (P - first)}};
}
}  // namespace

Schedule bruckAllGather(const OpDesc& d, int rank, int size) {
  Builder b("bruck", d, rank);
  const uint64_t m = d.count;
  Builder::Deps held = {b.copy(input(), output(uint64_t(rank) * m), m)};
  for (int dist = 1; dist < size; dist *= 2) {
    const int cnt = std::min(dist, size - dist);
    const int to = mod(rank - dist, size), from = mod(rank + dist, size);
    const int ready = dist == 1 ? -1 : b.join(held);
    if (dist > 1) held = {ready};
    for (auto [blk, k] : runs(rank, cnt, size)) {
      BufRef src = dist == 1 ? input() : output(uint64_t(blk) * m);
      held.push_back(b.send(to, src, uint64_t(k) * m, {ready}));
    }
    for (auto [blk, k] : runs(rank + dist, cnt, size))
      held.push_back(b.recv(from, output(uint64_t(blk) * m), uint64_t(k) * m));
  }
  return b.take();
}

Schedule bruckAllToAll(const OpDesc& d, int rank, int size) {
  Builder b("bruck", d, rank);
  const uint64_t m = d.count;
  // Where position i's current block lives and which step put it there (-1: the input).
  std::vector<BufRef> loc(size);
  std::vector<int> writer(size, -1);
  for (int i = 0; i < size; ++i) loc[i] = input(uint64_t(mod(rank + i, size)) * m);
  uint64_t base = 0;
  for (int dist = 1; dist < size; dist *= 2) {
    std::vector<int> moving;
    for (int i = 1; i < size; ++i)
      if (i & dist) moving.push_back(i);
    const uint64_t len = uint64_t(moving.size()) * m;
    Builder::Deps packed;
    for (size_t j = 0; j < moving.size(); ++j)
      packed.push_back(b.copy(loc[moving[j]], scratch(base + j * m), m, {writer[moving[j]]}));
    b.send(mod(rank + dist, size), scratch(base), len, {b.join(packed)});
    const int got = b.recv(mod(rank - dist, size), scratch(base + len), len);
    for (size_t j = 0; j < moving.size(); ++j) {
      loc[moving[j]] = scratch(base + len + j * m);
      writer[moving[j]] = got;
    }
    base += 2 * len;
  }
  b.needScratch(base);
  for (int i = 0; i < size; ++i)
    b.copy(loc[i], output(uint64_t(mod(rank - i, size)) * m), m, {writer[i]});
  return b.take();
}

}  // namespace chorus
