#include "mlp.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>

#include "dense.h"
#include "loss.h"
#include "rng.h"

namespace train {

Mlp::Mlp(std::vector<int> dims) : dims_(std::move(dims)) {
  const int L = int(dims_.size()) - 1;
  layers_.resize(size_t(L));
  for (int l = L - 1; l >= 0; --l) {  // last layer first: see the header
    LayerSlot& s = layers_[size_t(l)];
    s.in = dims_[size_t(l)];
    s.out = dims_[size_t(l) + 1];
    s.bias = total_;
    s.weight = total_ + size_t(s.out);
    total_ = s.weight + size_t(s.out) * size_t(s.in);
  }
  act_.resize(size_t(L));
}

void Mlp::init(float* params, uint64_t seed) const {
  Rng rng(seed);
  for (const LayerSlot& s : layers_) {  // drawn layer 0 first, whatever the storage order
    const float bound = 1.0f / std::sqrt(float(s.in));
    for (size_t i = 0; i < size_t(s.out) * size_t(s.in); ++i)
      params[s.weight + i] = rng.uniform(-bound, bound);
    for (int i = 0; i < s.out; ++i) params[s.bias + size_t(i)] = rng.uniform(-bound, bound);
  }
}

void Mlp::forward(const float* params, const float* x, int n) {
  n_ = n;
  x_ = x;
  const float* in = x;
  for (int l = 0; l < layerCount(); ++l) {
    const LayerSlot& s = layers_[size_t(l)];
    std::vector<float>& z = act_[size_t(l)];
    z.resize(size_t(n) * size_t(s.out));
    denseForward(in, n, s.in, params + s.weight, params + s.bias, s.out, z.data());
    if (l + 1 < layerCount()) relu(z.data(), z.size());
    in = z.data();
  }
}

double Mlp::lossAndGrad(const int* y, float scale, int64_t* correct) {
  const int C = dims_.back();
  delta_.resize(size_t(n_) * size_t(C));
  return softmaxCrossEntropy(act_.back().data(), n_, C, y, scale, delta_.data(), correct);
}

void Mlp::predict(int* out) const {
  argmaxRows(act_.back().data(), n_, dims_.back(), out);
}

void Mlp::backward(const float* params, float* grads, size_t sliceElems,
                   const std::function<void(size_t)>& ready) {
  for (int l = layerCount() - 1; l >= 0; --l) {
    const LayerSlot& s = layers_[size_t(l)];
    const float* in = l == 0 ? x_ : act_[size_t(l) - 1].data();
    // Bias gradient: column sums of delta (n x out).
    float* db = grads + s.bias;
    std::fill_n(db, s.out, 0.0f);
    for (int i = 0; i < n_; ++i) {
      const float* d = delta_.data() + size_t(i) * size_t(s.out);
      for (int o = 0; o < s.out; ++o) db[o] += d[o];
    }
    // Weight gradient dW = delta^T * in, in row slices so finished rows can be shipped early.
    // Clamped in size_t first: a single process passes SIZE_MAX, whose quotient overflows an int
    // (it became -1 for 512 inputs, i.e. 32-row slices where one slice was meant).
    const int rowsPerSlice =
        int(std::clamp(sliceElems / size_t(s.in), size_t(std::min(32, s.out)), size_t(s.out)));
    for (int r0 = 0; r0 < s.out; r0 += rowsPerSlice) {
      const int rows = std::min(rowsPerSlice, s.out - r0);
      float* dw = grads + s.weight + size_t(r0) * size_t(s.in);
      sgemmOverwrite(CblasTrans, CblasNoTrans, rows, s.in, n_, delta_.data() + r0, s.out, in, s.in,
                     dw, s.in);
      ready(s.weight + size_t(r0 + rows) * size_t(s.in));
    }
    if (l == 0) break;
    // delta for the layer below: (delta * W) masked by ReLU'(its output).
    deltaPrev_.resize(size_t(n_) * size_t(s.in));
    denseInputGrad(delta_.data(), n_, s.out, params + s.weight, s.in, deltaPrev_.data());
    reluMask(deltaPrev_.data(), act_[size_t(l) - 1].data(), deltaPrev_.size());
    delta_.swap(deltaPrev_);
  }
}

}  // namespace train
