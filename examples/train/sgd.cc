#include "sgd.h"

#include <algorithm>
#include <cmath>

namespace train {

float scheduledLearningRate(const std::string& schedule, float base, uint64_t step,
                            uint64_t steps) {
  if (schedule == "constant" || steps == 0) return base;
  const double done = double(std::min(step, steps)) / double(steps);
  return float(0.5 * double(base) * (1.0 + std::cos(M_PI * done)));
}

void Sgd::step(float* params, const float* grads, size_t begin, size_t end) {
  float* v = velocity_.data();
  const float m = momentum_, lr = lr_;
  for (size_t i = begin; i < end; ++i) {
    v[i] = m * v[i] + grads[i];
    params[i] -= lr * v[i];
  }
}

}  // namespace train
