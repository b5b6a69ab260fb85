// --strategy tensor: Megatron-LM's tensor parallelism of an MLP (Shoeybi et al. 2019, sec. 3).
// Hidden layers go in pairs: the first of a pair is column-parallel (rank t holds rows
// [out t / T, out (t+1) / T) of W and of the bias, so it computes that slice of the outputs
// from the whole input and applies the ReLU locally), the second row-parallel (rank t holds
// the matching columns of W, multiplies its slice of the activations, and an allreduce sums the
// partial outputs; its bias is replicated and added after the sum). So each pair costs one
// allreduce forward (Megatron's g) and, when the pair's input itself needs a gradient (every
// pair but the first, whose input is the data), one allreduce backward (f): the input gradient
// of a column-parallel layer is a sum of every rank's partial product. An odd last layer (the
// default 784-512-256-10 has three) is replicated: its input is whole on every rank after the
// allreduce, so every rank computes the same logits, loss and gradients.
//
// With a data dimension (hybrid), each tensor group trains on its share of the global batch and
// the gradients of its slices are allreduced with the ranks holding the same slices.
#include "tensor.h"

#include <algorithm>
#include <cstdio>

#include "collective.h"
#include "dense.h"
#include "loss.h"
#include "mlp.h"

namespace train {
namespace {

using chorus::Communicator;
using chorus::DataType;
using chorus::Status;

enum class Split { Column, Row, Whole };

struct Slice {
  Split split = Split::Whole;
  int in = 0, out = 0;
  int lo = 0, n = 0;    // Column: rows [lo, lo+n) of W; Row: columns [lo, lo+n)
  size_t w = 0, b = 0;  // offsets into the local parameter array
  int localIn() const { return split == Split::Row ? n : in; }
  int localOut() const { return split == Split::Column ? n : out; }
};

class Tensor : public ModelSlice {
 public:
  Tensor(const Options& o, CommThread* ct, std::unique_ptr<Communicator> tensor,
         std::unique_ptr<Communicator> data, int tRank, int tSize, int dRank, int dSize,
         const std::vector<int>& dims)
      : ModelSlice(ct, std::move(data), dRank, dSize),
        tensor_(std::move(tensor)),
        tRank_(tRank),
        tSize_(tSize) {
    // The same initial parameters as one process: initialise the whole model, keep the slices.
    Mlp whole(dims);
    std::vector<float> full(whole.paramCount());
    whole.init(full.data(), o.seed);
    const int L = whole.layerCount();
    size_t at = 0;
    for (int l = 0; l < L; ++l) {
      const LayerSlot& s = whole.layer(l);
      Slice c;
      c.in = s.in;
      c.out = s.out;
      c.split = (l % 2 == 0) ? (l + 1 < L ? Split::Column : Split::Whole) : Split::Row;
      const int width = c.split == Split::Column ? s.out : s.in;
      const Share sh = shareOf(width, tRank, tSize);
      const bool whole = c.split == Split::Whole;
      c.lo = whole ? 0 : sh.lo;
      c.n = whole ? 0 : sh.n;
      c.b = at;
      c.w = at + size_t(c.split == Split::Column ? c.n : c.out);
      at = c.w + size_t(c.localOut()) * size_t(c.localIn());
      layers_.push_back(c);
    }
    params_.resize(at);
    for (const Slice& c : layers_) {
      const LayerSlot& s = whole.layer(int(&c - layers_.data()));
      float* p = params_.data();
      if (c.split == Split::Column) {
        std::copy_n(full.data() + s.bias + c.lo, c.n, p + c.b);
        std::copy_n(full.data() + s.weight + size_t(c.lo) * size_t(c.in),
                    size_t(c.n) * size_t(c.in), p + c.w);
      } else {
        std::copy_n(full.data() + s.bias, c.out, p + c.b);
        for (int r = 0; r < c.out; ++r)
          std::copy_n(full.data() + s.weight + size_t(r) * size_t(c.in) + c.lo, c.localIn(),
                      p + c.w + size_t(r) * size_t(c.localIn()));
      }
    }
    initOptimizer(o);
    act_.resize(layers_.size());
  }

  Status step(const Dataset& data, const uint32_t* batch, int globalBatch, double* loss) override {
    const Share s = shareOf(globalBatch, dRank_, dSize_);
    CHORUS_RETURN_IF_ERROR(load(data, batch + s.lo, s.n));
    CHORUS_RETURN_IF_ERROR(forward(s.n));
    const int C = layers_.back().out;
    const float scale = 1.0f / float(globalBatch);
    delta_.resize(size_t(s.n) * size_t(C));
    int64_t correct = 0;
    const double sum =
        softmaxCrossEntropy(act_.back().data(), s.n, C, y_.data(), scale, delta_.data(), &correct);
    std::fill(grads_.begin(), grads_.end(), 0.0f);
    CHORUS_RETURN_IF_ERROR(backward(s.n));
    // Every rank of a tensor group holds the same loss: the first one reports it.
    return update(tRank_ == 0 ? sum * scale : 0, loss);
  }

  Status evaluate(const Dataset& test, double* accuracy) override {
    const Share s = shareOf(test.count, dRank_, dSize_);
    double counts[2] = {0, tRank_ == 0 ? double(s.n) : 0};
    std::vector<uint32_t> idx;
    std::vector<int> pred;
    for (int at = s.lo; at < s.lo + s.n; at += 1000) {
      const int n = std::min(1000, s.lo + s.n - at);
      idx.resize(size_t(n));
      for (int i = 0; i < n; ++i) idx[size_t(i)] = uint32_t(at + i);
      CHORUS_RETURN_IF_ERROR(load(test, idx.data(), n));
      CHORUS_RETURN_IF_ERROR(forward(n));
      pred.resize(size_t(n));
      argmaxRows(act_.back().data(), n, layers_.back().out, pred.data());
      if (tRank_ == 0)
        for (int i = 0; i < n; ++i) counts[0] += pred[size_t(i)] == y_[size_t(i)];
    }
    CHORUS_RETURN_IF_ERROR(sumDoubles(ct_, counts, 2));
    *accuracy = counts[1] > 0 ? counts[0] / counts[1] : 0;
    return Status::Ok();
  }

  std::string layout() const override {
    std::string kinds;
    for (const Slice& c : layers_)
      kinds += std::string(kinds.empty() ? "" : ", ") + (c.split == Split::Column ? "column"
                                                         : c.split == Split::Row  ? "row"
                                                                                  : "whole");
    char buf[200];
    snprintf(buf, sizeof buf, "%s: %d data x %d tensor (layers: %s)",
             dSize_ > 1 ? "hybrid" : "tensor", dSize_, tSize_, kinds.c_str());
    return buf;
  }

 private:
  Status load(const Dataset& d, const uint32_t* idx, int n) {
    x_.resize(size_t(std::max(n, 1)) * size_t(d.pixels));
    y_.resize(size_t(std::max(n, 1)));
    gatherBatch(d, idx, n, x_.data(), y_.data());
    return Status::Ok();
  }

  Status sumOverTensor(float* v, size_t count, const char* what) {
    if (!tensor_) return Status::Ok();
    return ct_->run([&](Communicator&) {
      return tensor_->allReduce(v, v, count, DataType::Float32, chorus::RedOp::Sum)
          .withContext(what);
    });
  }

  Status forward(int n) {
    const float* in = x_.data();
    for (size_t l = 0; l < layers_.size(); ++l) {
      const Slice& c = layers_[l];
      const float* p = params_.data();
      std::vector<float>& z = act_[l];
      z.resize(size_t(n) * size_t(c.localOut()));
      if (c.split == Split::Row) {
        denseForward(in, n, c.n, p + c.w, nullptr, c.out, z.data());
        CHORUS_RETURN_IF_ERROR(sumOverTensor(z.data(), z.size(), "row-parallel forward allreduce"));
        for (int i = 0; i < n; ++i)
          for (int o = 0; o < c.out; ++o)
            z[size_t(i) * size_t(c.out) + size_t(o)] += p[c.b + size_t(o)];
      } else {
        denseForward(in, n, c.in, p + c.w, p + c.b, c.localOut(), z.data());
      }
      if (l + 1 < layers_.size()) relu(z.data(), z.size());
      in = z.data();
    }
    return Status::Ok();
  }

  Status backward(int n) {
    for (size_t l = layers_.size(); l-- > 0;) {
      const Slice& c = layers_[l];
      const float* in = l == 0 ? x_.data() : act_[l - 1].data();
      float* g = grads_.data();
      denseGradAdd(delta_.data(), n, c.localOut(), in, c.localIn(), g + c.w, g + c.b);
      if (l == 0) break;
      deltaPrev_.resize(size_t(n) * size_t(c.localIn()));
      denseInputGrad(delta_.data(), n, c.localOut(), params_.data() + c.w, c.localIn(),
                     deltaPrev_.data());
      // A column-parallel layer's input gradient is the sum of every rank's share of it.
      if (c.split == Split::Column)
        CHORUS_RETURN_IF_ERROR(sumOverTensor(deltaPrev_.data(), deltaPrev_.size(),
                                             "column-parallel backward allreduce"));
      reluMask(deltaPrev_.data(), act_[l - 1].data(), deltaPrev_.size());
      delta_.swap(deltaPrev_);
    }
    return Status::Ok();
  }

  std::unique_ptr<Communicator> tensor_;
  const int tRank_, tSize_;
  std::vector<Slice> layers_;
  std::vector<std::vector<float>> act_;
  std::vector<float> x_, delta_, deltaPrev_;
  std::vector<int> y_;
};

}  // namespace

std::unique_ptr<Strategy> makeTensor(const Options& o, CommThread* ct,
                                     std::unique_ptr<Communicator> tensor,
                                     std::unique_ptr<Communicator> data, int tensorRank,
                                     int tensorSize, int dataRank, int dataSize,
                                     const std::vector<int>& dims) {
  return std::make_unique<Tensor>(o, ct, std::move(tensor), std::move(data), tensorRank, tensorSize,
                                  dataRank, dataSize, dims);
}

}  // namespace train
