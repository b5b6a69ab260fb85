// The data-parallel training loop: every rank holds the whole model, takes its shard of each
// global batch, and the averaged gradients keep all replicas bitwise identical (checked).
#pragma once

#include <memory>

#include "chorus/communicator.h"
#include "comm_thread.h"
#include "idx.h"
#include "options.h"

namespace train {

// comm may be null: a plain single process. Prints progress on rank 0.
chorus::Status runTraining(const Options& o, chorus::Communicator* comm, const Dataset& trainSet,
                           const Dataset& testSet);

}  // namespace train
