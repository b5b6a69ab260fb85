// Sharded data parallelism (ZeRO stage 1-2); see zero.cc.
#pragma once

#include "strategy.h"

namespace train {

std::unique_ptr<Strategy> makeZero(const Options& o, CommThread* ct, int rank, int size,
                                   const std::vector<int>& dims);

}  // namespace train
