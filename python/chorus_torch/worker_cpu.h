// Where a process group's worker thread runs. The worker makes every Chorus call of its group,
// so the copies and sums of large collectives run on it. torchrun pins nothing, and left to the
// scheduler the workers of two ranks sometimes shared a core or moved between cores: the same
// 16 MiB allreduce then took up to 2.4x as long for whole runs (docs/pytorch.md, "Worker threads
// on CPUs of their own"). So the worker of local rank i runs on the i-th CPU the process may
// use, where there is one per local rank; CHORUS_TORCH_PIN_WORKER=0 leaves it to the scheduler.
#pragma once

#include <vector>

namespace chorus_torch {

// The CPU for the worker of local rank `localRank` of `localSize`, from the CPUs the process
// may use (`allowed`, ascending); -1 to leave it unpinned (fewer CPUs than local ranks).
int workerCpu(const std::vector<int>& allowed, int localRank, int localSize);

// Names the calling thread "chorus-worker" and pins it by workerCpu, with torchrun's
// LOCAL_RANK and LOCAL_WORLD_SIZE; without them, or with CHORUS_TORCH_PIN_WORKER=0, it stays
// where it is.
void placeWorkerThread();

}  // namespace chorus_torch
