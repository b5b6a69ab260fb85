// Algorithms where every rank talks to its partners directly: alltoall by pairwise exchange
// (in step k rank r sends to r+k and receives from r-k, so every rank has one partner each way
// per step and no link is shared), linear gather/scatter at the root, point-to-point, and the
// dissemination barrier (ceil(log2 P) rounds; in round k rank r signals r+2^k and waits for
// r-2^k, so after the last round every rank has transitively heard from all).
//
// For ranks that share memory (every pair one hop apart), the direct collectives:
// one_shot allreduce: every rank sends its whole vector to every other and reduces all P
//   itself. One message time; (P-1) n elements out of each rank and (P-1) n reduced: for small
//   vectors on few ranks.
// two_shot allreduce: rank r reduces segment r from all peers (direct reduce-scatter), then
//   sends it to all (direct allgather). Two message times, 2 (P-1)/P n elements per rank.
// direct reduce_scatter / allgather: the two halves, on blocks of the caller's count.
#include <functional>

#include "algorithms/algorithms.h"
#include "algorithms/builder.h"

namespace chorus {

Schedule pairwiseAllToAll(const OpDesc& d, int rank, int size) {
  Schedule s;
  s.algorithm = "pairwise";
  const uint64_t m = d.count;
  s.copy(input(rank * m), output(rank * m), m);
  for (int k = 1; k < size; ++k) {
    int to = mod(rank + k, size), from = mod(rank - k, size);
    s.send(to, input(to * m), m);
    s.recv(from, output(from * m), m);
  }
  return s;
}

Schedule directOneShotAllReduce(const OpDesc& d, int rank, int size) {
  Builder b("one_shot", d, rank);
  const uint64_t n = d.count;
  if (size == 1) {
    b.copy(input(), output(), n);
    return b.take();
  }
  // Sends are chained chunkwise so that, in place, chunk c of the output is overwritten only
  // once every peer has been sent chunk c.
  int prev = -1;
  for (int k = 1; k < size; ++k) prev = b.send(mod(rank + k, size), input(), n, {prev});
  BufRef cur = input();
  for (int k = 1; k < size; ++k) {
    prev = b.recvReduce(mod(rank - k, size), cur, output(), n, {prev});
    cur = output();
  }
  return b.take();
}

namespace {
// Rank r reduces block r (offset off(r), length len(r)) of everyone's input into `dst`;
// sendOf[q] is the step that sent block q to rank q.
int directReducePart(Builder& b, int rank, int size, BufRef dst,
                     const std::function<uint64_t(int)>& off,
                     const std::function<uint64_t(int)>& len, std::vector<int>* sendOf) {
  sendOf->assign(size, -1);
  for (int k = 1; k < size; ++k) {
    int q = mod(rank + k, size);
    (*sendOf)[q] = b.send(q, input(off(q)), len(q));
  }
  BufRef cur = input(off(rank));
  int prev = -1;
  for (int k = 1; k < size; ++k) {
    prev = b.recvReduce(mod(rank - k, size), cur, dst, len(rank), {prev});
    cur = dst;
  }
  return size == 1 ? b.copy(cur, dst, len(rank)) : prev;
}
}  // namespace

Schedule directTwoShotAllReduce(const OpDesc& d, int rank, int size) {
  Builder b("two_shot", d, rank);
  const uint64_t n = d.count;
  auto off = [&](int k) { return segmentStart(n, size, k); };
  auto len = [&](int k) { return segmentLen(n, size, k); };
  std::vector<int> sendOf;
  const int mine = directReducePart(b, rank, size, output(off(rank)), off, len, &sendOf);
  for (int k = 1; k < size; ++k) b.send(mod(rank + k, size), output(off(rank)), len(rank), {mine});
  for (int k = 1; k < size; ++k) {
    int q = mod(rank - k, size);
    b.recv(q, output(off(q)), len(q), {sendOf[q]});  // in place, block q was sent from here
  }
  return b.take();
}

Schedule directReduceScatter(const OpDesc& d, int rank, int size) {
  Builder b("direct", d, rank);
  const uint64_t m = d.count;
  std::vector<int> sendOf;
  directReducePart(
      b, rank, size, output(), [&](int k) { return uint64_t(k) * m; }, [&](int) { return m; },
      &sendOf);
  return b.take();
}

Schedule directAllGather(const OpDesc& d, int rank, int size) {
  Builder b("direct", d, rank);
  const uint64_t m = d.count;
  b.copy(input(), output(uint64_t(rank) * m), m);
  for (int k = 1; k < size; ++k) b.send(mod(rank + k, size), input(), m);
  for (int k = 1; k < size; ++k) {
    int q = mod(rank - k, size);
    b.recv(q, output(uint64_t(q) * m), m);
  }
  return b.take();
}

Schedule linearGather(const OpDesc& d, int rank, int size) {
  Schedule s;
  s.algorithm = "linear";
  const uint64_t m = d.count;
  if (rank != d.root) {
    s.send(d.root, input(), m);
    return s;
  }
  s.copy(input(), output(rank * m), m);
  for (int q = 0; q < size; ++q)
    if (q != rank) s.recv(q, output(q * m), m);
  return s;
}

Schedule linearScatter(const OpDesc& d, int rank, int size) {
  Schedule s;
  s.algorithm = "linear";
  const uint64_t m = d.count;
  if (rank != d.root) {
    s.recv(d.root, output(), m);
    return s;
  }
  for (int q = 0; q < size; ++q)
    if (q != rank) s.send(q, input(q * m), m);
  s.copy(input(rank * m), output(), m);
  return s;
}

Schedule pointToPoint(const OpDesc& d, int /*rank*/, int /*size*/) {
  Schedule s;
  s.algorithm = "direct";
  if (d.coll == Collective::Send)
    s.send(d.root, input(), d.count);
  else
    s.recv(d.root, output(), d.count);
  return s;
}

// One byte of scratch is the token; round k's signal waits for round k-1's to have arrived.
Schedule disseminationBarrier(const OpDesc& /*d*/, int rank, int size) {
  Schedule s;
  s.algorithm = "dissemination";
  s.scratchElems = 1;
  int prev = -1;
  for (int dist = 1; dist < size; dist <<= 1) {
    int sent = s.send(mod(rank + dist, size), scratch(), 1, prev);
    prev = s.recv(mod(rank - dist, size), scratch(), 1, sent);  // the token is reused
  }
  return s;
}

}  // namespace chorus
