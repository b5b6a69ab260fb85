// SGD with momentum, PyTorch's formulation (no dampening): v = m * v + g; p -= lr * v.
// It steps any range of the parameters on its own, so the trainer can update a bucket's
// parameters as soon as that bucket's allreduce is done, while later buckets are in flight.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace train {

// The learning rate of step `step` (counted from 0) of a run of `steps` steps. "constant":
// `base` throughout. "cosine": `base` at the first step, decaying along half a cosine towards
// 0 at the last, as PyTorch's CosineAnnealingLR with eta_min 0 and T_max = steps. The small
// steps at the end let the model settle where a constant rate keeps it wandering: the test
// accuracy of the last epoch then depends much less on the seed or on the order in which the
// ranks' gradients were summed (docs/trainer.md).
float scheduledLearningRate(const std::string& schedule, float base, uint64_t step, uint64_t steps);

class Sgd {
 public:
  Sgd(size_t n, float lr, float momentum) : velocity_(n, 0.0f), lr_(lr), momentum_(momentum) {}
  void step(float* params, const float* grads, size_t begin, size_t end);
  // For the steps that follow (the trainer sets it before each step from the schedule).
  void setLearningRate(float lr) { lr_ = lr; }
  std::vector<float>& velocity() { return velocity_; }

 private:
  std::vector<float> velocity_;
  float lr_, momentum_;
};

}  // namespace train
