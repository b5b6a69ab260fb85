// The training loop for --strategy zero|tensor|pipeline|hybrid: the same epochs, batches,
// progress, metrics and plot as the ddp trainer (trainer.cc), with the step, evaluation and
// replica check delegated to a Strategy. Checkpoints are ddp's alone for now.
#pragma once

#include "chorus/communicator.h"
#include "idx.h"
#include "options.h"

namespace train {

// comm may be null: a plain single process (every strategy then trains the whole model).
chorus::Status runStrategyTraining(const Options& o, chorus::Communicator* comm,
                                   const Dataset& trainSet, const Dataset& testSet);

}  // namespace train
