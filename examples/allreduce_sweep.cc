// The demo job: an allreduce sweep over message sizes, with a correctness check at every size,
// printed as an nccl-tests style table by rank 0. Launch it with chorus-run (or mpirun/srun
// with CHORUS_COMM_ID set):   chorus-run -n 4 -- allreduce-sweep [-b 8] [-e 64M] [-f 2]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "chorus/chorus.h"
#include "common/clock.h"
#include "common/env.h"

using namespace chorus;

namespace {

int fail(const char* what, const Status& st) {
  fprintf(stderr, "allreduce-sweep: %s: %s\n", what, st.toString().c_str());
  return 1;
}

// Each rank contributes small integers, so the float sum is exact and checkable bit for bit.
void fillCheck(std::vector<float>& v, size_t n, int rank) {
  for (size_t i = 0; i < n; ++i) v[i] = float((rank + 1) * (i % 7 + 1));
}
size_t countWrong(const std::vector<float>& v, size_t n, int size) {
  size_t wrong = 0;
  const float ranks = float(size) * float(size + 1) / 2;
  for (size_t i = 0; i < n; ++i) wrong += v[i] != ranks * float(i % 7 + 1);
  return wrong;
}

}  // namespace

int main(int argc, char** argv) {
  size_t minBytes = 8, maxBytes = 64 << 20;
  double factor = 2, budgetSec = 0.15;
  for (int i = 1; i + 1 < argc; i += 2) {
    // Sizes as everywhere in Chorus (CHORUS_*_BYTES, the tools): 8, 64K, 1M, 1G.
    if (!strcmp(argv[i], "-b"))
      minBytes = size_t(parseBytes(argv[i + 1]).value_or(0));
    else if (!strcmp(argv[i], "-e"))
      maxBytes = size_t(parseBytes(argv[i + 1]).value_or(0));
    else if (!strcmp(argv[i], "-f"))
      factor = atof(argv[i + 1]);
    else if (!strcmp(argv[i], "-t"))
      budgetSec = atof(argv[i + 1]);
    else {
      fprintf(stderr, "usage: allreduce-sweep [-b min] [-e max] [-f factor] [-t seconds/size]\n");
      return 2;
    }
  }
  if (minBytes < 4 || factor <= 1 || maxBytes < minBytes) {
    fprintf(stderr, "allreduce-sweep: need -b >= 4, -e >= -b and -f > 1\n");
    return 2;
  }
  Config config;
  Status st = Config::fromEnvironment(&config);
  if (!st.ok()) return fail("configuration", st);
  std::unique_ptr<Communicator> comm;
  st = Communicator::createFromEnvironment(config, &comm);
  if (!st.ok()) return fail("init", st);
  const int rank = comm->rank(), size = comm->size();

  std::vector<float> send(maxBytes / 4), recv(maxBytes / 4);
  if (rank == 0) {
    printf("# Chorus allreduce sweep: %d ranks, float32, sum, out-of-place\n", size);
    printf("# %12s %12s %8s %6s %11s %12s %12s %7s\n", "size(B)", "count", "type", "redop",
           "time(us)", "algbw(GB/s)", "busbw(GB/s)", "#wrong");
  }
  double busSum = 0;
  int rows = 0;
  for (double bytes = double(minBytes); bytes <= double(maxBytes) * 1.0001; bytes *= factor) {
    const size_t n = size_t(bytes) / 4;
    // Correctness first, on data whose sum is exact.
    fillCheck(send, n, rank);
    st = comm->allReduce(send.data(), recv.data(), n, DataType::Float32, RedOp::Sum);
    if (!st.ok()) return fail("allreduce", st);
    double wrong = double(countWrong(recv, n, size));
    // Time: one untimed call, then enough calls to fill the budget (decided by rank 0's view
    // of the first timed call, so every rank runs the same number).
    int64_t t0 = nowNs();
    st = comm->allReduce(send.data(), recv.data(), n, DataType::Float32, RedOp::Sum);
    double iters = double(budgetSec * 1e9 / double(nowNs() - t0 + 1));
    if (iters < 3) iters = 3;
    if (iters > 2000) iters = 2000;
    if (st.ok()) st = comm->broadcast(&iters, &iters, 1, DataType::Float64, 0);
    if (st.ok()) st = comm->barrier();
    if (!st.ok()) return fail("allreduce", st);
    t0 = nowNs();
    for (int it = 0; it < int(iters); ++it) {
      st = comm->allReduce(send.data(), recv.data(), n, DataType::Float32, RedOp::Sum);
      if (!st.ok()) return fail("allreduce", st);
    }
    double us = double(nowNs() - t0) / 1e3 / int(iters);
    double stats[2] = {us, wrong};
    double maxStats[2];
    st = comm->allReduce(stats, maxStats, 2, DataType::Float64, RedOp::Max);
    if (!st.ok()) return fail("allreduce", st);
    double algbw = double(n * 4) / (maxStats[0] * 1e3);
    double busbw = algbw * 2.0 * (size - 1) / size;
    busSum += busbw;
    ++rows;
    if (rank == 0) {
      printf("  %12zu %12zu %8s %6s %11.2f %12.3f %12.3f %7.0f\n", n * 4, n, "float32", "sum",
             maxStats[0], algbw, busbw, maxStats[1]);
      fflush(stdout);
    }
    if (maxStats[1] > 0) {
      if (rank == 0) fprintf(stderr, "allreduce-sweep: wrong results at %zu bytes\n", n * 4);
      return 3;
    }
  }
  if (rank == 0) printf("# Average busbw: %.3f GB/s over %d sizes\n", busSum / rows, rows);
  return 0;
}
