// Recursive doubling and halving. Non-power-of-two rank counts are folded onto p2 ranks first
// (Fold in algorithms.h): one extra message time before and after, and the odd partner of each
// folded pair carries twice the data.
//
// recursive_doubling allreduce: in round k every rank exchanges its whole vector with rank
//   r ^ 2^k and combines. log2 P rounds of n elements: lowest latency, n log P bandwidth; for
//   tiny vectors.
// rabenseifner allreduce: reduce-scatter by recursive halving (round k exchanges half of the
//   current range with r ^ 2^(L-1-k) and keeps the other half) then allgather by recursive
//   doubling. 2 log P message times and 2 (P-1)/P n elements per rank: the bandwidth of a
//   ring at logarithmic latency.
// recursive_halving reduce_scatter and recursive_doubling allgather: each half of the above.
#include "algorithms/algorithms.h"
#include "algorithms/builder.h"
#include "algorithms/ring_phases.h"

namespace chorus {

namespace {
// The even rank of a folded pair: gives its input away and gets the result back.
Schedule sitOutAllReduce(Builder& b, const OpDesc& d, const Fold& f) {
  int s = b.send(f.partner, input(), d.count);
  b.recv(f.partner, output(), d.count, {s});
  return b.take();
}
}  // namespace

Schedule recursiveDoublingAllReduce(const OpDesc& d, int rank, int size) {
  Builder b("recursive_doubling", d, rank);
  const uint64_t n = d.count;
  if (size == 1) {
    b.copy(input(), output(), n);
    return b.take();
  }
  const Fold f = Fold::of(rank, size);
  if (f.virt < 0) return sitOutAllReduce(b, d, f);
  BufRef cur = input();
  int prev = -1;
  if (f.partner >= 0) {
    prev = b.recvReduce(f.partner, input(), output(), n);
    cur = output();
  }
  for (int mask = 1; mask < f.p2; mask <<= 1) {
    const int peer = f.real(f.virt ^ mask);
    int s = b.send(peer, cur, n, {prev});
    prev = b.recvReduce(peer, cur, output(), n, {s});  // chunk c: after it has been sent
    cur = output();
  }
  if (f.partner >= 0) b.send(f.partner, output(), n, {prev});
  return b.take();
}

Schedule rabenseifnerAllReduce(const OpDesc& d, int rank, int size) {
  Builder b("rabenseifner", d, rank);
  const uint64_t n = d.count;
  if (size == 1) {
    b.copy(input(), output(), n);
    return b.take();
  }
  const Fold f = Fold::of(rank, size);
  if (f.virt < 0) return sitOutAllReduce(b, d, f);
  Group virt{{}, f.virt};  // the p2 ranks left after folding, by virtual rank
  for (int v = 0; v < f.p2; v++) virt.ranks.push_back(f.real(v));
  BufRef src = input();
  int ready = -1;
  if (f.partner >= 0) {
    ready = b.recvReduce(f.partner, input(), output(), n);
    src = output();
  }
  const HalvingPhase halving = halvingReduceScatterPhase(b, virt, src, output(), n, ready);
  const int done = doublingAllGatherPhase(b, virt, output(), n, halving);
  if (f.partner >= 0) b.send(f.partner, output(), n, {done});
  return b.take();
}

Schedule recursiveHalvingReduceScatter(const OpDesc& d, int rank, int size) {
  Builder b("recursive_halving", d, rank);
  const uint64_t m = d.count;
  if (size == 1) {
    b.copy(input(), output(), m);
    return b.take();
  }
  const Fold f = Fold::of(rank, size);
  if (f.virt < 0) {
    int s = b.send(f.partner, input(), m * size);
    b.recv(f.partner, output(), m, {s});  // in place the output is part of the input
    return b.take();
  }
  // Virtual rank v owns the real blocks [first(v), first(v+1)); E maps blocks to elements.
  auto first = [&](int v) { return v < f.rem ? 2 * v : v + f.rem; };
  auto E = [&](int v) { return uint64_t(first(v)) * m; };
  b.needScratch(m * size);
  BufRef cur = input();
  int prev = -1;
  if (f.partner >= 0) {
    prev = b.recvReduce(f.partner, input(), scratch(), m * size);
    cur = scratch();
  }
  const int v = f.virt;
  int lo = 0, hi = f.p2;
  for (int mask = f.p2 / 2; mask >= 1; mask /= 2) {
    const int peer = f.real(v ^ mask), mid = lo + mask;
    const bool upper = v & mask;
    const int klo = upper ? mid : lo, khi = upper ? hi : mid;
    const int glo = upper ? lo : mid, ghi = upper ? mid : hi;
    b.send(peer, cur + E(glo), E(ghi) - E(glo), {prev});
    const bool last = mask == 1 && f.partner < 0;
    BufRef dst = last ? output() : scratch(E(klo));
    prev = b.recvReduce(peer, cur + E(klo), dst, E(khi) - E(klo), {prev});
    lo = klo;
    hi = khi;
    cur = scratch();
  }
  if (f.partner >= 0) {  // scratch holds the pair's two blocks
    b.copy(scratch(uint64_t(rank) * m), output(), m, {prev});
    b.send(f.partner, scratch(uint64_t(f.partner) * m), m, {prev});
  }
  return b.take();
}

Schedule recursiveDoublingAllGather(const OpDesc& d, int rank, int size) {
  Builder b("recursive_doubling", d, rank);
  const uint64_t m = d.count, total = m * size;
  const int c0 = b.copy(input(), output(uint64_t(rank) * m), m);
  if (size == 1) return b.take();
  const Fold f = Fold::of(rank, size);
  if (f.virt < 0) {
    b.send(f.partner, input(), m);
    b.recv(f.partner, output(), uint64_t(rank) * m);
    b.recv(f.partner, output(uint64_t(rank + 1) * m), total - uint64_t(rank + 1) * m);
    return b.take();
  }
  auto E = [&](int v) { return uint64_t(v < f.rem ? 2 * v : v + f.rem) * m; };
  Builder::Deps deps = {c0};
  if (f.partner >= 0) deps.push_back(b.recv(f.partner, output(uint64_t(f.partner) * m), m));
  const int v = f.virt;
  for (int mask = 1; mask < f.p2; mask <<= 1) {
    const int peer = f.real(v ^ mask);
    const int mine = v / mask * mask, theirs = mine ^ mask;
    int s = b.send(peer, output(E(mine)), E(mine + mask) - E(mine), deps);
    int r = b.recv(peer, output(E(theirs)), E(theirs + mask) - E(theirs));
    deps = {r, s};
  }
  if (f.partner >= 0) {
    const uint64_t gap = uint64_t(f.partner) * m;
    b.send(f.partner, output(), gap, deps);
    b.send(f.partner, output(gap + m), total - gap - m, deps);
  }
  return b.take();
}

}  // namespace chorus
