// Ring algorithms. Ranks form a ring; each sends to its right neighbour and receives from its
// left. The vector is cut into P segments, and in each of P-1 steps every rank passes one
// segment on, so every link carries (P-1)/P of the data per phase: bandwidth-optimal, with a
// latency of P-1 message times per phase. Segments are cut further into chunks and each
// forwarded chunk depends only on the same chunk having arrived, so the ring is pipelined.
//
//   reduce-scatter phase, step s: send segment (r-s), combine segment (r-s-1) from the left
//   allgather phase, step s:      send segment (r+1-s), receive segment (r-s) from the left
// After the reduce-scatter phase rank r holds the finished segment r+1.
#include "algorithms/algorithms.h"

namespace chorus {

Schedule ringAllReduce(const OpDesc& d, int rank, int size) {
  Schedule s;
  s.algorithm = "ring";
  const uint64_t n = d.count;
  if (size == 1) {
    s.copy(input(), output(), n);
    return s;
  }
  const int right = mod(rank + 1, size), left = mod(rank - 1, size);
  auto start = [&](int seg) { return segmentStart(n, size, mod(seg, size)); };
  auto segLen = [&](int seg) {
    int k = mod(seg, size);
    return segmentStart(n, size, k + 1) - segmentStart(n, size, k);
  };

  int prev = -1;  // the step that produced what we send next
  for (int step = 0; step < size - 1; ++step) {
    int sendSeg = rank - step, recvSeg = rank - step - 1;
    BufRef src = step == 0 ? input(start(sendSeg)) : output(start(sendSeg));
    s.send(right, src, segLen(sendSeg), prev);
    prev = s.recvReduce(left, input(start(recvSeg)), output(start(recvSeg)), segLen(recvSeg));
  }
  for (int step = 0; step < size - 1; ++step) {
    int sendSeg = rank + 1 - step, recvSeg = rank - step;
    s.send(right, output(start(sendSeg)), segLen(sendSeg), prev);
    prev = s.recv(left, output(start(recvSeg)), segLen(recvSeg));
  }
  return s;
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
