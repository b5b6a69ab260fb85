// Pipeline parallelism with a 1F1B schedule, optionally replicated along a data dimension
// (hybrid data x pipeline); see pipeline.cc.
#pragma once

#include "strategy.h"

namespace train {

// `stages` links this rank to its neighbours (stage i is rank i of it); `data` joins the ranks
// of the same stage in other pipelines (null when there is one pipeline). Fails when the model
// has fewer layers than there are stages.
chorus::Status makePipeline(const Options& o, CommThread* ct,
                            std::unique_ptr<chorus::Communicator> stages,
                            std::unique_ptr<chorus::Communicator> data, int stage, int stageCount,
                            int dataRank, int dataSize, const std::vector<int>& dims,
                            std::unique_ptr<Strategy>* out);

}  // namespace train
