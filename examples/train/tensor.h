// Megatron-style tensor parallelism of the MLP, optionally replicated along a data dimension
// (hybrid data x tensor); see tensor.cc.
#pragma once

#include "strategy.h"

namespace train {

// `tensor` (the ranks sharing each layer) and `data` (the ranks holding the same slices, each
// on its own share of the batch) are splits of the world run through ct; either may be null
// when it would have one rank. tensorRank/tensorSize, dataRank/dataSize place this rank.
std::unique_ptr<Strategy> makeTensor(const Options& o, CommThread* ct,
                                     std::unique_ptr<chorus::Communicator> tensor,
                                     std::unique_ptr<chorus::Communicator> data, int tensorRank,
                                     int tensorSize, int dataRank, int dataSize,
                                     const std::vector<int>& dims);

}  // namespace train
