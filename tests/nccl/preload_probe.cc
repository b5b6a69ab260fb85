// Built against NVIDIA's nccl.h and linked against NVIDIA's libnccl.so.2; run by
// preload_check.sh with and without LD_PRELOAD of Chorus's library. Prints what it did; the
// script decides who answered.
#include <cstdio>

#include "nccl.h"

int main() {
  int version = 0;
  if (ncclGetVersion(&version) != ncclSuccess) return 2;
  printf("version %d\n", version);
  ncclUniqueId id;
  ncclComm_t comm;
  if (ncclGetUniqueId(&id) != ncclSuccess || ncclCommInitRank(&comm, 1, id, 0) != ncclSuccess) {
    printf("init failed: %s\n", ncclGetLastError(nullptr));
    return 3;
  }
  float x[3] = {1, 2, 3}, y[3] = {0, 0, 0};
  ncclResult_t r = ncclAllReduce(x, y, 3, ncclFloat, ncclSum, comm, nullptr);
  ncclCommDestroy(comm);
  if (r != ncclSuccess || y[2] != 3) {
    printf("allreduce failed: %s\n", ncclGetErrorString(r));
    return 4;
  }
  printf("host allreduce ok\n");
  return 0;
}
