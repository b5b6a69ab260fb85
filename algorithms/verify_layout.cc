// Buffer layout per collective and the results the verifier expects.
#include "algorithms/verify_internal.h"

namespace chorus::verify {

namespace {
uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

struct Sizes {
  uint64_t in = 0, out = 0;
  bool inValid = true, outValid = true;
};

Sizes sizesFor(const OpDesc& d, int P, int rank) {
  const uint64_t n = d.count, nP = n * uint64_t(P);
  const bool root = rank == d.root;
  switch (d.coll) {
    case Collective::AllReduce:
      return {n, n};
    case Collective::ReduceScatter:
      return {nP, n};
    case Collective::AllGather:
      return {n, nP};
    case Collective::Broadcast:
      return {n, n, root, true};
    case Collective::Reduce:
      return {n, n, true, root};
    case Collective::AllToAll:
      return {nP, nP};
    case Collective::Gather:
      return {n, nP, true, root};
    case Collective::Scatter:
      return {nP, n, root, true};
    default:
      return {0, 0, false, false};
  }
}
}  // namespace

Sym inputSym(int rank, uint64_t index) {
  return {mix(mix(uint64_t(rank) + 0x51ED) ^ index), 1, true};
}

RankMem layoutFor(const OpDesc& d, int size, int rank, uint64_t scratchElems) {
  RankMem m;
  const Sizes s = sizesFor(d, size, rank);
  Region& in = m.regions[int(BufferId::Input)];
  Region& out = m.regions[int(BufferId::Output)];
  in = {0, 0, s.inValid ? s.in : 0, s.inValid, false};
  out = {1, 0, s.outValid ? s.out : 0, s.outValid, s.outValid};
  m.regions[int(BufferId::Scratch)] = {2, 0, scratchElems, true, true};
  // In place (alltoall is staged by the communicator, gather/scatter never are).
  const bool alias = d.inPlace && d.coll != Collective::AllToAll && d.coll != Collective::Gather &&
                     d.coll != Collective::Scatter;
  if (alias && d.coll == Collective::ReduceScatter) {
    out.space = 0;
    out.base = uint64_t(rank) * d.count;
  } else if (alias && in.size) {
    in.space = 1;
    if (d.coll == Collective::AllGather) in.base = uint64_t(rank) * d.count;
  }
  for (const Region& r : m.regions)
    if (r.base + r.size > m.spaceSize[r.space]) m.spaceSize[r.space] = r.base + r.size;
  return m;
}

std::string refName(BufRef r) {
  static const char* kNames[] = {"in", "out", "tmp"};
  std::string b = int(r.buf) < 3 ? kNames[int(r.buf)] : "user" + std::to_string(int(r.buf));
  return b + "+" + std::to_string(r.offset);
}

std::string resolve(const RankMem& m, BufRef ref, uint64_t count, bool write, int* space,
                    uint64_t* start) {
  if (int(ref.buf) >= 3) return refName(ref) + ": caller buffers are not used by collectives";
  const Region& r = m.regions[int(ref.buf)];
  if (ref.offset + count > r.size || ref.offset + count < ref.offset)
    return refName(ref) + " n=" + std::to_string(count) + " is outside the buffer (" +
           std::to_string(r.size) + " elements" +
           (r.readable || r.writable ? "" : ", which this rank need not pass") + ")";
  if (write && !r.writable) return "writes " + refName(ref) + ", which is not writable here";
  if (!write && !r.readable) return "reads " + refName(ref) + ", which is not readable here";
  *space = r.space;
  *start = r.base + ref.offset;
  return "";
}

void physical(const RankMem& m, BufRef ref, int* space, uint64_t* start) {
  const Region& r = m.regions[int(ref.buf) < 3 ? int(ref.buf) : 0];
  *space = r.space;
  *start = r.base + ref.offset;
}

bool selfCopy(const RankMem& m, const Step& s) {
  if (s.kind != StepKind::Copy || int(s.src.buf) >= 3 || int(s.dst.buf) >= 3) return false;
  int a, b;
  uint64_t x, y;
  physical(m, s.src, &a, &x);
  physical(m, s.dst, &b, &y);
  return a == b && x == y;
}

Expected::Expected(const OpDesc& d, int size) : d_(d), size_(size) {}

bool Expected::wants(int rank) const {
  switch (d_.coll) {
    case Collective::Reduce:
    case Collective::Gather:
      return rank == d_.root;
    case Collective::Barrier:
    case Collective::Send:
    case Collective::Recv:
      return false;
    default:
      return true;
  }
}

uint64_t Expected::outputElems() const {
  switch (d_.coll) {
    case Collective::AllGather:
    case Collective::AllToAll:
    case Collective::Gather:
      return d_.count * uint64_t(size_);
    default:
      return d_.count;
  }
}

Sym Expected::sumOver(uint64_t index) const {
  if (index >= sums_.size()) {
    sums_.resize(index + 1);
    have_.resize(index + 1);
  }
  if (!have_[index]) {
    Sym s{0, 0, true};
    for (int q = 0; q < size_; ++q) s = combine(s, inputSym(q, index));
    sums_[index] = s;
    have_[index] = true;
  }
  return sums_[index];
}

Sym Expected::at(int rank, uint64_t i) const {
  const uint64_t n = d_.count;
  switch (d_.coll) {
    case Collective::AllReduce:
    case Collective::Reduce:
      return sumOver(i);
    case Collective::ReduceScatter:
      return sumOver(uint64_t(rank) * n + i);
    case Collective::AllGather:
    case Collective::Gather:
      return inputSym(int(i / n), i % n);
    case Collective::Broadcast:
      return inputSym(d_.root, i);
    case Collective::AllToAll:
      return inputSym(int(i / n), uint64_t(rank) * n + i % n);
    case Collective::Scatter:
      return inputSym(d_.root, uint64_t(rank) * n + i);
    default:
      return {};
  }
}

}  // namespace chorus::verify
