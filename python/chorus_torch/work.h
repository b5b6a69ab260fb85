// The handle torch gets back from every chorus call: completed by the worker thread with
// success or with Chorus's error text, through both faces torch uses - wait() (the Python
// API) and getFuture() (DistributedDataParallel's gradient buckets).
#pragma once

#include <ATen/core/ivalue.h>

#include <exception>
#include <functional>
#include <torch/csrc/distributed/c10d/Work.hpp>
#include <vector>

namespace chorus_torch {

class ChorusWork : public c10d::Work {
 public:
  ChorusWork(int rank, c10d::OpType type, std::vector<at::Tensor> outputs);

  // Called once, by the worker thread: wakes wait() and completes the future (with the output
  // tensors, or with `error`).
  void complete(std::exception_ptr error);

  // For held point-to-point ops (see worker.h): what starts them. Waiting for, polling or
  // taking the future of this work calls it first.
  void setStart(std::function<void()> start) { start_ = std::move(start); }

  bool wait(std::chrono::milliseconds timeout) override;
  bool isCompleted() override;
  std::vector<at::Tensor> result() override { return outputs_; }
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override;

 private:
  void start() {
    if (start_) start_();
  }

  std::function<void()> start_;
  std::vector<at::Tensor> outputs_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
};

}  // namespace chorus_torch
