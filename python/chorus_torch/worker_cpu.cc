#include "worker_cpu.h"

#include <pthread.h>
#include <sched.h>

#include <cstdlib>
#include <cstring>

namespace chorus_torch {
namespace {

// A non-negative integer from the environment, or -1.
int envIndex(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return -1;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  return *end || n < 0 || n > 1 << 20 ? -1 : int(n);
}

}  // namespace

int workerCpu(const std::vector<int>& allowed, int localRank, int localSize) {
  if (localRank < 0 || localSize <= 0 || localRank >= localSize) return -1;
  if (allowed.size() < size_t(localSize)) return -1;
  return allowed[size_t(localRank)];
}

void placeWorkerThread() {
  pthread_setname_np(pthread_self(), "chorus-worker");
  const char* off = std::getenv("CHORUS_TORCH_PIN_WORKER");
  if (off && std::strcmp(off, "0") == 0) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return;
  std::vector<int> allowed;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) allowed.push_back(c);
  const int cpu = workerCpu(allowed, envIndex("LOCAL_RANK"), envIndex("LOCAL_WORLD_SIZE"));
  if (cpu < 0) return;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  sched_setaffinity(0, sizeof set, &set);  // best effort: unpinned still works
}

}  // namespace chorus_torch
