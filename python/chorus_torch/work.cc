#include "work.h"

namespace chorus_torch {

ChorusWork::ChorusWork(int rank, c10d::OpType type, std::vector<at::Tensor> outputs)
    : c10d::Work(rank, type),
      outputs_(std::move(outputs)),
      future_(
          c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get()))) {
}

bool ChorusWork::wait(std::chrono::milliseconds timeout) {
  start();
  return c10d::Work::wait(timeout);
}

bool ChorusWork::isCompleted() {
  start();
  return c10d::Work::isCompleted();
}

c10::intrusive_ptr<c10::ivalue::Future> ChorusWork::getFuture() {
  start();
  return future_;
}

void ChorusWork::complete(std::exception_ptr error) {
  // wait() first: a future callback (DDP's) may run for a while on this thread.
  finish(error);
  if (error)
    future_->setError(error);
  else
    future_->markCompleted(c10::IValue(outputs_));
}

}  // namespace chorus_torch
