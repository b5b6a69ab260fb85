// Binomial trees for broadcast and reduce. Ranks are renumbered relative to the root
// (v = r - root mod P); v's parent is v with its lowest set bit cleared, and its children are
// v + 2^k for every 2^k below that bit. Depth is ceil(log2 P), so latency is log P message
// times; the root sends the whole vector log P times, so for large vectors a chain or
// scatter+allgather is cheaper. Chunks are forwarded as soon as they arrive (pipelined).
//
// Binomial gather/scatter use the same tree: the subtree of v is the relative ranks
// [v, v + lowbit(v)), so each node forwards one contiguous range. log P message times; the
// root moves (P-1) blocks, other ranks only their subtree's. A range that wraps past rank P-1
// in real numbering travels as two steps, split identically at both ends.
#include "algorithms/algorithms.h"
#include "algorithms/builder.h"

namespace chorus {

namespace {
struct TreeNode {
  int parent = -1;            // real rank, -1 at the root
  std::vector<int> children;  // real ranks, largest subtree first
};

TreeNode binomialNode(int rank, int root, int size) {
  TreeNode node;
  const int v = mod(rank - root, size);
  int lowbit = 1;
  while (lowbit < size && !(v & lowbit)) lowbit <<= 1;
  if (v != 0) node.parent = mod((v - lowbit) + root, size);
  for (int mask = lowbit >> 1; mask > 0; mask >>= 1)
    if (v + mask < size) node.children.push_back(mod(v + mask + root, size));
  return node;
}
}  // namespace

Schedule binomialBroadcast(const OpDesc& d, int rank, int size) {
  Schedule s;
  s.algorithm = "binomial_tree";
  const TreeNode node = binomialNode(rank, d.root, size);
  int have = -1;
  BufRef from = input();
  if (node.parent < 0) {
    s.copy(input(), output(), d.count);
  } else {
    have = s.recv(node.parent, output(), d.count);
    from = output();
  }
  for (int child : node.children) s.send(child, from, d.count, have);
  return s;
}

Schedule binomialReduce(const OpDesc& d, int rank, int size) {
  Schedule s;
  s.algorithm = "binomial_tree";
  const TreeNode node = binomialNode(rank, d.root, size);
  const bool isRoot = node.parent < 0;
  // Partial results accumulate in the output at the root and in scratch elsewhere, since the
  // output buffer of a non-root rank is not the caller's to write.
  const BufRef acc = isRoot ? output() : scratch();
  if (!isRoot && !node.children.empty()) s.scratchElems = d.count;
  int prev = -1;
  BufRef local = input();
  // Smallest subtree first: its partial result is ready soonest.
  for (auto it = node.children.rbegin(); it != node.children.rend(); ++it) {
    prev = s.recvReduce(*it, local, acc, d.count, prev);
    local = acc;
  }
  if (isRoot) {
    if (prev < 0) s.copy(input(), output(), d.count);
  } else {
    s.send(node.parent, prev < 0 ? input() : acc, d.count, prev);
  }
  return s;
}

}  // namespace chorus

namespace chorus {

namespace {
struct Subtree {
  int v = 0, size = 0;                    // relative rank, ranks in its subtree
  std::vector<std::pair<int, int>> kids;  // (relative child, its subtree size), largest first
};

Subtree subtreeOf(int v, int P) {
  Subtree t;
  t.v = v;
  int low = 1;
  while (low < P && !(v & low)) low <<= 1;
  t.size = std::min(low, P - v);
  for (int mask = low >> 1; mask > 0; mask >>= 1)
    if (v + mask < P) t.kids.push_back({v + mask, std::min(mask, P - v - mask)});
  return t;
}

// [a, b) in relative ranks, split where real rank numbering wraps to 0.
std::vector<std::pair<int, int>> pieces(int a, int b, int root, int P) {
  const int w = P - root;
  if (root > 0 && a < w && w < b) return {{a, w}, {w, b}};
  return {{a, b}};
}
}  // namespace

Schedule binomialGather(const OpDesc& d, int rank, int size) {
  Builder b("binomial_tree", d, rank);
  const uint64_t m = d.count;
  const int root = d.root, v = mod(rank - root, size);
  const Subtree t = subtreeOf(v, size);
  auto real = [&](int rel) { return mod(root + rel, size); };
  if (v == 0) {
    b.copy(input(), output(uint64_t(rank) * m), m);
    for (auto [c, csz] : t.kids)
      for (auto [a, e] : pieces(c, c + csz, root, size))
        b.recv(real(c), output(uint64_t(real(a)) * m), uint64_t(e - a) * m);
    return b.take();
  }
  int low = 1;
  while (!(v & low)) low <<= 1;
  const int up = real(v - low);
  if (t.kids.empty()) {
    b.send(up, input(), m);
    return b.take();
  }
  b.needScratch(uint64_t(t.size) * m);  // the subtree's blocks, in relative order
  Builder::Deps have = {b.copy(input(), scratch(), m)};
  for (auto [c, csz] : t.kids)
    for (auto [a, e] : pieces(c, c + csz, root, size))
      have.push_back(b.recv(real(c), scratch(uint64_t(a - v) * m), uint64_t(e - a) * m));
  const int all = b.join(have);
  for (auto [a, e] : pieces(v, v + t.size, root, size))
    b.send(up, scratch(uint64_t(a - v) * m), uint64_t(e - a) * m, {all});
  return b.take();
}

Schedule binomialScatter(const OpDesc& d, int rank, int size) {
  Builder b("binomial_tree", d, rank);
  const uint64_t m = d.count;
  const int root = d.root, v = mod(rank - root, size);
  const Subtree t = subtreeOf(v, size);
  auto real = [&](int rel) { return mod(root + rel, size); };
  if (v == 0) {
    for (auto [c, csz] : t.kids)
      for (auto [a, e] : pieces(c, c + csz, root, size))
        b.send(real(c), input(uint64_t(real(a)) * m), uint64_t(e - a) * m);
    b.copy(input(uint64_t(rank) * m), output(), m);
    return b.take();
  }
  int low = 1;
  while (!(v & low)) low <<= 1;
  const int up = real(v - low);
  if (t.kids.empty()) {
    b.recv(up, output(), m);
    return b.take();
  }
  b.needScratch(uint64_t(t.size) * m);
  std::vector<std::pair<int, int>> got;  // (first relative rank of a piece, its recv step)
  for (auto [a, e] : pieces(v, v + t.size, root, size))
    got.push_back({a, b.recv(up, scratch(uint64_t(a - v) * m), uint64_t(e - a) * m)});
  auto holder = [&](int rel) {
    int step = got[0].second;
    for (auto [a, s] : got)
      if (a <= rel) step = s;
    return step;
  };
  for (auto [c, csz] : t.kids)
    for (auto [a, e] : pieces(c, c + csz, root, size))
      b.send(real(c), scratch(uint64_t(a - v) * m), uint64_t(e - a) * m, {b.join({holder(a)})});
  b.copy(scratch(), output(), m, {got[0].second});
  return b.take();
}

}  // namespace chorus
