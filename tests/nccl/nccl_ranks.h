// Multi-rank runs for the NCCL-face tests, written only against nccl.h (whichever one the test
// compiles with: NVIDIA's for the ABI test, Chorus's for the examples), so nothing of Chorus's
// C++ leaks into what is being proven. Rank 0 calls ncclGetUniqueId and passes the id to the
// others through pipes, as NCCL's examples do with MPI_Bcast.
#pragma once

#include <cstdio>
#include <functional>
#include <string>

#include "nccl.h"

namespace nccltest {

using RankMain = std::function<int(int rank, int nranks, const ncclUniqueId& id)>;

// Forks `nranks` processes running fn; "" when all exit 0 within timeoutSec, otherwise one
// line per failed rank (stragglers are killed).
std::string runRanks(int nranks, RankMain fn, double timeoutSec = 120);

}  // namespace nccltest

// For rank bodies: print where and why, then fail the rank.
#define RANK_REQUIRE(cond, ...)                                                \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                            \
      fprintf(stderr, "\n");                                                   \
      return 1;                                                                \
    }                                                                          \
  } while (0)

#define RANK_NCCL(call)                                                                          \
  do {                                                                                           \
    ncclResult_t r_ = (call);                                                                    \
    RANK_REQUIRE(r_ == ncclSuccess, "%s -> %d (%s): %s", #call, int(r_), ncclGetErrorString(r_), \
                 ncclGetLastError(nullptr));                                                     \
  } while (0)
