// Double binary tree allreduce (as in NCCL): two binary trees over the ranks, each reducing
// and then broadcasting half of the vector, pipelined chunk by chunk. The second tree is the
// first mirrored (even P) or shifted by one (odd P), so a rank that is a leaf in one is an
// inner node in the other and every rank sends and receives about n elements in all. Latency
// is 2 log2 P message times for the first chunk; bandwidth about n per rank. For
// latency-bound sizes at large rank counts, where a ring's 2(P-1) message times dominate.
#include "algorithms/algorithms.h"
#include "algorithms/builder.h"

namespace chorus {

namespace {
struct BinNode {
  int up = -1, down[2] = {-1, -1};
};

// The in-order binary tree of NCCL's ncclGetBtree: rank 0 is the root with one child.
BinNode btree(int P, int r) {
  BinNode n;
  int bit = 1;
  while (bit < P && !(bit & r)) bit <<= 1;
  if (r == 0) {
    n.down[1] = P > 1 ? bit >> 1 : -1;
    return n;
  }
  n.up = (r ^ bit) | (bit << 1);
  if (n.up >= P) n.up = r ^ bit;
  int low = bit >> 1;
  n.down[0] = low ? r - low : -1;
  int c = low ? r + low : -1;
  while (c >= P) {
    low >>= 1;
    c = low ? r + low : -1;
  }
  n.down[1] = c;
  return n;
}

BinNode treeFor(int t, int P, int r) {
  if (t == 0) return btree(P, r);
  auto to = [&](int x) { return P % 2 ? mod(x - 1, P) : P - 1 - x; };
  auto back = [&](int y) { return y < 0 ? -1 : (P % 2 ? mod(y + 1, P) : P - 1 - y); };
  BinNode n = btree(P, to(r));
  return {back(n.up), {back(n.down[0]), back(n.down[1])}};
}

struct Half {
  BinNode node;
  uint64_t off = 0, len = 0;
  int reduced = -1, up = -1;
};
}  // namespace

Schedule doubleBinaryTreeAllReduce(const OpDesc& d, int rank, int size) {
  Builder b("double_binary_tree", d, rank);
  if (size == 1) {
    b.copy(input(), output(), d.count);
    return b.take();
  }
  Half h[2];
  for (int t = 0; t < 2; ++t) {  // both reductions first: they feed the broadcasts
    h[t].node = treeFor(t, size, rank);
    h[t].off = segmentStart(d.count, 2, t);
    h[t].len = segmentLen(d.count, 2, t);
    BufRef acc = input(h[t].off);
    for (int c : h[t].node.down) {
      if (c < 0) continue;
      h[t].reduced = b.recvReduce(c, acc, output(h[t].off), h[t].len, {h[t].reduced});
      acc = output(h[t].off);
    }
    if (h[t].node.up >= 0) h[t].up = b.send(h[t].node.up, acc, h[t].len, {h[t].reduced});
  }
  for (Half& x : h) {
    int got = x.reduced;
    if (x.node.up >= 0) got = b.recv(x.node.up, output(x.off), x.len, {x.up});
    for (int c : x.node.down)
      if (c >= 0) b.send(c, output(x.off), x.len, {got});
  }
  return b.take();
}

}  // namespace chorus
