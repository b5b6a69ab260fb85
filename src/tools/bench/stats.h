// Statistics and size arithmetic shared by every benchmark table: a noisy machine makes means
// lie, so each measurement keeps its median next to min and max.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace chorus::bench {

struct Summary {
  double median = 0, min = 0, max = 0, mean = 0;
  int samples = 0;
};

// Sorts a copy; an empty vector gives an all-zero Summary.
Summary summarize(std::vector<double> samples);

// "8 B", "1 KiB", "256 MiB": for headings and plot labels.
std::string sizeLabel(size_t bytes);

// The nccl-tests bus-bandwidth factors: the fraction of the data each rank's links must carry
// for the collective, so busbw is comparable across rank counts.
double busBwFactor(const std::string& collective, int ranks);

}  // namespace chorus::bench
