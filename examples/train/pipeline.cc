// --strategy pipeline: the layers are cut into S consecutive stages, one per rank, and each
// batch into M micro-batches that flow through them: activations forward with send/recv,
// gradients of those activations backward. The schedule is 1F1B (PipeDream-Flush, as in
// Megatron-LM): stage s first runs S-1-s forwards to fill the pipe, then alternates one
// forward and one backward, then drains the remaining backwards. So at most S-s micro-batches
// have activations alive on stage s (GPipe keeps all M), and the idle share of each stage, the
// bubble, is (S-1) / (M+S-1) of the schedule. Weight gradients of all micro-batches add up
// (each scaled by 1 / global batch), and the optimiser steps once per batch, so the result is
// the single-process step up to the order of float additions.
//
// The neighbour exchanges are paired in groups (send the activation while receiving the
// gradient, and the reverse) as Megatron does: two blocking sends facing each other could
// otherwise wait on each other for ever on a transport that does not buffer them.
#include "pipeline.h"

#include <algorithm>
#include <cstdio>

#include "chorus/group.h"
#include "collective.h"
#include "dense.h"
#include "loss.h"
#include "mlp.h"

namespace train {
namespace {

using chorus::Communicator;
using chorus::DataType;
using chorus::Status;

struct Layer {
  int in = 0, out = 0;
  size_t w = 0, b = 0;  // offsets into the stage's parameter array
  bool lastOfModel = false;
};

// What one micro-batch leaves on a stage between its forward and its backward.
struct Micro {
  Share rows;                           // of the data group's share of the batch
  std::vector<float> input;             // rows x layers.front().in
  std::vector<std::vector<float>> act;  // output of each local layer
  std::vector<float> grad;              // gradient of the stage's output, then of its input
  std::vector<int> y;                   // labels (the last stage)
};

class Pipeline : public ModelSlice {
 public:
  Pipeline(const Options& o, CommThread* ct, std::unique_ptr<Communicator> stages,
           std::unique_ptr<Communicator> data, int stage, int stageCount, int dRank, int dSize,
           const std::vector<int>& dims)
      : ModelSlice(ct, std::move(data), dRank, dSize),
        stages_(std::move(stages)),
        s_(stage),
        S_(stageCount),
        M_(o.microBatches > 0 ? o.microBatches : 2 * stageCount) {
    Mlp whole(dims);
    std::vector<float> full(whole.paramCount());
    whole.init(full.data(), o.seed);
    const Share mine = shareOf(whole.layerCount(), stage, stageCount);
    first_ = mine.lo;
    size_t at = 0;
    for (int l = mine.lo; l < mine.lo + mine.n; ++l) {
      const LayerSlot& s = whole.layer(l);
      Layer c{s.in, s.out, at + size_t(s.out), at, l + 1 == whole.layerCount()};
      at = c.w + size_t(s.out) * size_t(s.in);
      layers_.push_back(c);
    }
    params_.resize(at);
    for (size_t k = 0; k < layers_.size(); ++k) {
      const LayerSlot& s = whole.layer(first_ + int(k));
      std::copy_n(full.data() + s.bias, s.out, params_.data() + layers_[k].b);
      std::copy_n(full.data() + s.weight, size_t(s.out) * size_t(s.in),
                  params_.data() + layers_[k].w);
    }
    initOptimizer(o);
    micro_.resize(size_t(M_));
  }

  Status step(const Dataset& data, const uint32_t* batch, int globalBatch, double* loss) override {
    const Share share = shareOf(globalBatch, dRank_, dSize_);
    // Every stage derives the same micro-batches; none is empty.
    const int M = std::min(M_, std::max(share.n, 1));
    scale_ = 1.0f / float(globalBatch);
    lossSum_ = 0;
    std::fill(grads_.begin(), grads_.end(), 0.0f);
    for (int m = 0; m < M; ++m) micro_[size_t(m)].rows = shareOf(share.n, m, M);
    const uint32_t* items = batch + share.lo;
    const int warm = std::min(S_ - 1 - s_, M);
    for (int m = 0; m < warm; ++m) {
      CHORUS_RETURN_IF_ERROR(receiveInput(data, items, m));
      forward(m);
      CHORUS_RETURN_IF_ERROR(exchange(&micro_[size_t(m)], nullptr, true));
    }
    if (M > warm) CHORUS_RETURN_IF_ERROR(receiveInput(data, items, warm));
    for (int i = 0; i < M - warm; ++i) {
      const int f = warm + i;
      forward(f);
      CHORUS_RETURN_IF_ERROR(exchange(&micro_[size_t(f)], &micro_[size_t(i)], true));
      backward(i);
      // The next forward's input arrives while this backward's gradient leaves.
      Micro* next = nullptr;
      if (f + 1 < M) {
        loadItems(data, items, f + 1);
        next = &micro_[size_t(f + 1)];
      }
      CHORUS_RETURN_IF_ERROR(exchange(next, &micro_[size_t(i)], false));
    }
    for (int i = M - warm; i < M; ++i) {
      CHORUS_RETURN_IF_ERROR(exchange(nullptr, &micro_[size_t(i)], true));
      backward(i);
      CHORUS_RETURN_IF_ERROR(exchange(nullptr, &micro_[size_t(i)], false));
    }
    return update(lossSum_ * scale_, loss);
  }

  // Forward only, a chunk at a time through the stages; the last stage counts.
  Status evaluate(const Dataset& test, double* accuracy) override {
    const Share share = shareOf(test.count, dRank_, dSize_);
    const bool last = s_ + 1 == S_;
    double counts[2] = {0, last ? double(share.n) : 0};
    std::vector<uint32_t> idx;
    std::vector<int> pred;
    Micro& mb = micro_[0];
    for (int at = share.lo; at < share.lo + share.n; at += 1000) {
      const int n = std::min(1000, share.lo + share.n - at);
      idx.resize(size_t(n));
      for (int i = 0; i < n; ++i) idx[size_t(i)] = uint32_t(at + i);
      mb.rows = {0, n};
      CHORUS_RETURN_IF_ERROR(receiveInput(test, idx.data(), 0));
      forward(0);
      CHORUS_RETURN_IF_ERROR(exchange(&mb, nullptr, true));
      if (last) {
        pred.resize(size_t(n));
        argmaxRows(mb.act.back().data(), n, layers_.back().out, pred.data());
        for (int i = 0; i < n; ++i) counts[0] += pred[size_t(i)] == mb.y[size_t(i)];
      }
    }
    CHORUS_RETURN_IF_ERROR(sumDoubles(ct_, counts, 2));
    *accuracy = counts[1] > 0 ? counts[0] / counts[1] : 0;
    return Status::Ok();
  }

  double bubbleFraction() const override { return double(S_ - 1) / double(M_ + S_ - 1); }

  std::string layout() const override {
    char buf[200];
    snprintf(buf, sizeof buf,
             "%s: %d data x %d pipeline stages, %d micro-batches per batch, 1F1B (this stage: "
             "layers %d-%d)",
             dSize_ > 1 ? "hybrid" : "pipeline", dSize_, S_, M_, first_ + 1,
             first_ + int(layers_.size()));
    return buf;
  }

 private:
  // Stage 0 gathers micro-batch m's images; the last stage its labels; the items for both are
  // rows m of the data group's share (`items`).
  void loadItems(const Dataset& d, const uint32_t* items, int m) {
    Micro& mb = micro_[size_t(m)];
    const uint32_t* idx = items + mb.rows.lo;
    const int n = mb.rows.n;
    if (s_ == 0) {
      mb.input.resize(size_t(n) * size_t(d.pixels));
      mb.y.resize(size_t(n));
      gatherBatch(d, idx, n, mb.input.data(), mb.y.data());
    } else if (s_ + 1 == S_) {
      mb.y.resize(size_t(n));
      for (int i = 0; i < n; ++i) mb.y[size_t(i)] = d.labels[idx[i]];
    }
  }

  // Micro-batch m's input: gathered on stage 0, received from the stage before elsewhere.
  Status receiveInput(const Dataset& d, const uint32_t* items, int m) {
    loadItems(d, items, m);
    if (s_ == 0) return Status::Ok();
    return exchange(&micro_[size_t(m)], nullptr, false);
  }

  // One paired neighbour exchange. forwardDir: send `fwd`'s output to the next stage and receive
  // `bwd`'s output gradient from it; otherwise send `bwd`'s input gradient to the previous stage
  // and receive `fwd`'s input from it. Either side may be null (nothing to move that way), and
  // the first and last stages have no neighbour on one side.
  Status exchange(Micro* fwd, Micro* bwd, bool forwardDir) {
    const int peer = forwardDir ? s_ + 1 : s_ - 1;
    if (peer < 0 || peer >= S_ || (!fwd && !bwd)) return Status::Ok();
    const Layer& edge = forwardDir ? layers_.back() : layers_.front();
    const int width = forwardDir ? edge.out : edge.in;
    float* sendBuf = nullptr;
    float* recvBuf = nullptr;
    size_t sendCount = 0, recvCount = 0;
    if (forwardDir) {
      if (fwd) sendBuf = fwd->act.back().data(), sendCount = fwd->act.back().size();
      if (bwd) {
        bwd->grad.resize(size_t(bwd->rows.n) * size_t(width));
        recvBuf = bwd->grad.data(), recvCount = bwd->grad.size();
      }
    } else {
      if (bwd) sendBuf = bwd->grad.data(), sendCount = bwd->grad.size();
      if (fwd) {
        fwd->input.resize(size_t(fwd->rows.n) * size_t(width));
        recvBuf = fwd->input.data(), recvCount = fwd->input.size();
      }
    }
    Status st = ct_->run([&](Communicator&) {
      chorus::groupStart();
      Status queued;  // a call refused at once (bad arguments) still closes the group
      if (sendBuf) queued = stages_->send(sendBuf, sendCount, DataType::Float32, peer);
      if (recvBuf && queued.ok())
        queued = stages_->recv(recvBuf, recvCount, DataType::Float32, peer);
      Status ran = chorus::groupEnd();
      return queued.ok() ? ran : queued;
    });
    return st.withContext(std::string("pipeline exchange with stage ") + std::to_string(peer));
  }

  void forward(int m) {
    Micro& mb = micro_[size_t(m)];
    const int n = mb.rows.n;
    mb.act.resize(layers_.size());
    const float* in = mb.input.data();
    for (size_t k = 0; k < layers_.size(); ++k) {
      const Layer& c = layers_[k];
      std::vector<float>& z = mb.act[k];
      z.resize(size_t(n) * size_t(c.out));
      denseForward(in, n, c.in, params_.data() + c.w, params_.data() + c.b, c.out, z.data());
      if (!c.lastOfModel) relu(z.data(), z.size());
      in = z.data();
    }
    if (layers_.back().lastOfModel) {
      mb.grad.resize(mb.act.back().size());
      int64_t correct = 0;
      lossSum_ += softmaxCrossEntropy(mb.act.back().data(), n, layers_.back().out, mb.y.data(),
                                      scale_, mb.grad.data(), &correct);
    }
  }

  // Turns mb.grad (gradient of the stage's output) into the gradient of its input, adding the
  // weight gradients on the way.
  void backward(int m) {
    Micro& mb = micro_[size_t(m)];
    const int n = mb.rows.n;
    if (!layers_.back().lastOfModel) reluMask(mb.grad.data(), mb.act.back().data(), mb.grad.size());
    for (size_t k = layers_.size(); k-- > 0;) {
      const Layer& c = layers_[k];
      const float* in = k == 0 ? mb.input.data() : mb.act[k - 1].data();
      denseGradAdd(mb.grad.data(), n, c.out, in, c.in, grads_.data() + c.w, grads_.data() + c.b);
      if (k == 0 && s_ == 0) break;
      scratch_.resize(size_t(n) * size_t(c.in));
      denseInputGrad(mb.grad.data(), n, c.out, params_.data() + c.w, c.in, scratch_.data());
      if (k > 0) reluMask(scratch_.data(), mb.act[k - 1].data(), scratch_.size());
      mb.grad.swap(scratch_);
    }
  }

  std::unique_ptr<Communicator> stages_;
  const int s_, S_, M_;
  int first_ = 0;
  std::vector<Layer> layers_;
  std::vector<float> scratch_;
  std::vector<Micro> micro_;
  float scale_ = 1;
  double lossSum_ = 0;
};

}  // namespace

Status makePipeline(const Options& o, CommThread* ct, std::unique_ptr<Communicator> stages,
                    std::unique_ptr<Communicator> data, int stage, int stageCount, int dataRank,
                    int dataSize, const std::vector<int>& dims, std::unique_ptr<Strategy>* out) {
  const int layers = int(dims.size()) - 1;
  if (layers < stageCount)
    return Status::InvalidArgument(
        "a pipeline of " + std::to_string(stageCount) + " stages needs at least as many layers; " +
        "the model has " + std::to_string(layers) +
        ": add hidden layers (e.g. --hidden 512,256,128) or use fewer ranks per pipeline");
  *out = std::make_unique<Pipeline>(o, ct, std::move(stages), std::move(data), stage, stageCount,
                                    dataRank, dataSize, dims);
  return Status::Ok();
}

}  // namespace train
