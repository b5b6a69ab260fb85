// SGD with momentum, PyTorch's formulation (no dampening): v = m * v + g; p -= lr * v.
// It steps any range of the parameters on its own, so the trainer can update a bucket's
// parameters as soon as that bucket's allreduce is done, while later buckets are in flight.
#pragma once

#include <cstddef>
#include <vector>

namespace train {

class Sgd {
 public:
  Sgd(size_t n, float lr, float momentum) : velocity_(n, 0.0f), lr_(lr), momentum_(momentum) {}
  void step(float* params, const float* grads, size_t begin, size_t end);
  std::vector<float>& velocity() { return velocity_; }

 private:
  std::vector<float> velocity_;
  float lr_, momentum_;
};

}  // namespace train
