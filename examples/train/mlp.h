// A multilayer perceptron with ReLU hidden layers and softmax cross-entropy, forward and
// backward written out by hand over BLAS matrix products.
//
// All parameters live in one flat array. Layers are stored last layer first, each as
// [bias | weights (out x in, row-major)], because backward produces gradients in that order:
// the gradient array then fills from offset 0 upward, and a gradient bucket (a contiguous
// range) is complete as soon as backward's "ready frontier" has passed its end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace train {

struct LayerSlot {
  int in = 0, out = 0;
  size_t bias = 0, weight = 0;  // offsets into the flat parameter array
};

class Mlp {
 public:
  // dims: input, hidden..., classes.
  explicit Mlp(std::vector<int> dims);
  const std::vector<int>& dims() const { return dims_; }
  size_t paramCount() const { return total_; }
  const LayerSlot& layer(int l) const { return layers_[size_t(l)]; }
  int layerCount() const { return int(layers_.size()); }

  // PyTorch nn.Linear's default: weights and biases uniform in +-1/sqrt(fan_in).
  void init(float* params, uint64_t seed) const;

  // Runs n rows of x (n x dims[0]) through the net, keeping activations for backward.
  void forward(const float* params, const float* x, int n);
  // Softmax cross-entropy of the logits from forward(). Writes dLoss/dLogits scaled by
  // `scale` (1 / global batch, so that summing the ranks' gradients gives the batch mean);
  // returns the summed (unscaled) loss and counts correct predictions.
  double lossAndGrad(const int* y, float scale, int64_t* correct);
  // Predicted classes of the last forward().
  void predict(int* out) const;

  // Fills grads (same layout as params). `ready(frontier)` is called each time
  // grads[0, frontier) is final; weight gradients are produced in row slices of about
  // `sliceElems` elements so that the frontier advances in steps of about a bucket.
  void backward(const float* params, float* grads, size_t sliceElems,
                const std::function<void(size_t)>& ready);

 private:
  std::vector<int> dims_;
  std::vector<LayerSlot> layers_;
  size_t total_ = 0;
  int n_ = 0;
  const float* x_ = nullptr;
  std::vector<std::vector<float>> act_;  // act_[l]: output of layer l (after ReLU if hidden)
  std::vector<float> delta_, deltaPrev_;
};

}  // namespace train
