// The data-parallel training loop: every rank holds the whole model, takes its shard of each
// global batch, and the averaged gradients keep all replicas bitwise identical (checked).
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "chorus/communicator.h"
#include "comm_thread.h"
#include "idx.h"
#include "metrics.h"
#include "options.h"

namespace train {

// comm may be null: a plain single process. Prints progress on rank 0.
// One epoch's loop, the same for every strategy: `step` on each batch of this epoch's order
// until --max-steps (then *stopped), counting the steps and keeping their losses, checking the
// replicas every --check-every steps, with rank 0's progress bar. Fills rec's epoch, wall time,
// loss, samples per second and commS (the communication thread's busy time).
chorus::Status runEpoch(const Options& o, int rank, CommThread* ct, const Dataset& train, int epoch,
                        uint64_t* steps, std::vector<float>* stepLoss, bool* stopped,
                        const std::function<chorus::Status(const uint32_t* batch, int globalBatch,
                                                           float lr, double* loss)>& step,
                        const std::function<chorus::Status(uint64_t steps)>& check,
                        EpochRecord* rec);

chorus::Status runTraining(const Options& o, chorus::Communicator* comm, const Dataset& trainSet,
                           const Dataset& testSet);

}  // namespace train
