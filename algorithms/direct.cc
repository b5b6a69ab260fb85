// Algorithms where every rank talks to its partners directly: alltoall by pairwise exchange
// (in step k rank r sends to r+k and receives from r-k, so every rank has one partner each way
// per step and no link is shared), linear gather/scatter at the root, point-to-point, and the
// dissemination barrier (ceil(log2 P) rounds; in round k rank r signals r+2^k and waits for
// r-2^k, so after the last round every rank has transitively heard from all).
#include "algorithms/algorithms.h"

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
    s.send(mod(rank + dist, size), scratch(), 1, prev);
    prev = s.recv(mod(rank - dist, size), scratch(), 1);
  }
  return s;
}

}  // namespace chorus
