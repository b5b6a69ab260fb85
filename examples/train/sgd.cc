#include "sgd.h"

namespace train {

void Sgd::step(float* params, const float* grads, size_t begin, size_t end) {
  float* v = velocity_.data();
  const float m = momentum_, lr = lr_;
  for (size_t i = begin; i < end; ++i) {
    v[i] = m * v[i] + grads[i];
    params[i] -= lr * v[i];
  }
}

}  // namespace train
