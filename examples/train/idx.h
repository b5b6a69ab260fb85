// Fashion-MNIST in IDX form (gzipped, as Debian's dataset-fashion-mnist ships it): images as
// bytes, converted to floats in [0, 1] only when a batch is gathered, so each rank holds 47 MB
// instead of 188 MB.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "chorus/status.h"

namespace train {

struct Dataset {
  int64_t count = 0;
  int pixels = 0;               // rows * cols
  std::vector<uint8_t> images;  // count x pixels
  std::vector<uint8_t> labels;  // count, each 0..9
};

// Reads "<dir>/<prefix>-images-idx3-ubyte.gz" and "...-labels-idx1-ubyte.gz" (prefix "train" or
// "t10k"); limit > 0 keeps only the first `limit` items and stops reading there.
chorus::Status loadIdxPair(const std::string& dir, const std::string& prefix, int64_t limit,
                           Dataset* out);

// Writes images[idx[i]] as floats (x / 255) into out[i * pixels ...] and labels into y.
void gatherBatch(const Dataset& d, const uint32_t* idx, int n, float* out, int* y);

}  // namespace train
