#include "loss.h"

#include <algorithm>
#include <cmath>

namespace train {

double softmaxCrossEntropy(const float* logits, int n, int classes, const int* y, float scale,
                           float* delta, int64_t* correct) {
  const int C = classes;
  double loss = 0;
  int64_t right = 0;
  for (int i = 0; i < n; ++i) {
    const float* z = logits + size_t(i) * size_t(C);
    float* d = delta + size_t(i) * size_t(C);
    const int best = int(std::max_element(z, z + C) - z);
    right += best == y[i];
    const float zmax = z[best];
    double sum = 0;
    for (int c = 0; c < C; ++c) sum += std::exp(double(z[c] - zmax));
    loss += std::log(sum) - double(z[y[i]] - zmax);
    for (int c = 0; c < C; ++c) {
      const double p = std::exp(double(z[c] - zmax)) / sum;
      d[c] = float((p - (c == y[i] ? 1.0 : 0.0)) * scale);
    }
  }
  *correct = right;
  return loss;
}

void argmaxRows(const float* logits, int n, int classes, int* out) {
  for (int i = 0; i < n; ++i) {
    const float* z = logits + size_t(i) * size_t(classes);
    out[i] = int(std::max_element(z, z + classes) - z);
  }
}

}  // namespace train
