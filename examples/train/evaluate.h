// Test accuracy of a whole-model replica (ddp, zero): each rank scores its share of the test
// set and the counts are summed, so every rank learns the same accuracy.
#pragma once

#include "comm_thread.h"
#include "idx.h"
#include "mlp.h"

namespace train {

chorus::Status evaluateReplica(Mlp& mlp, const float* params, const Dataset& test, int rank,
                               int size, CommThread* ct, double* accuracy);

}  // namespace train
