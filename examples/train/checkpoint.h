// Checkpoints: everything needed to continue a run exactly as if it had not stopped
// (parameters, momentum, epochs done, the metrics so far). Written to "<path>.tmp", synced,
// then renamed over <path>, so a crash leaves the old checkpoint or the new one, never a torn
// file; a CRC-32 at the end catches a damaged file on load.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "chorus/status.h"
#include "metrics.h"

namespace train {

struct TrainState {
  std::vector<int> dims;
  uint64_t seed = 0;
  int batch = 0;
  int epochsDone = 0;
  uint64_t step = 0;
  std::vector<float> params, velocity;
  std::vector<EpochRecord> history;
  std::vector<float> stepLoss;
};

chorus::Status saveCheckpoint(const std::string& path, const TrainState& s);
chorus::Status loadCheckpoint(const std::string& path, TrainState* s);

}  // namespace train
