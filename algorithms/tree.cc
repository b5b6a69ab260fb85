// Binomial trees for broadcast and reduce. Ranks are renumbered relative to the root
// (v = r - root mod P); v's parent is v with its lowest set bit cleared, and its children are
// v + 2^k for every 2^k below that bit. Depth is ceil(log2 P), so latency is log P message
// times; the root sends the whole vector log P times, so for large vectors a chain or
// scatter+allgather is cheaper. Chunks are forwarded as soon as they arrive (pipelined).
#include "algorithms/algorithms.h"

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
