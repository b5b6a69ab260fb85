#include "tensor_args.h"

#include <c10/util/Exception.h>

#include <torch/csrc/distributed/c10d/Types.hpp>

namespace chorus_torch {

std::string where(const char* op, int rank, int size) {
  return "chorus backend, rank " + std::to_string(rank) + " of " + std::to_string(size) + ", " +
         op + ": ";
}

chorus::DataType chorusType(const at::Tensor& t, const char* op, int rank, int size) {
  switch (t.scalar_type()) {
    case at::kByte:
      return chorus::DataType::Uint8;
    case at::kChar:
      return chorus::DataType::Int8;
    case at::kInt:
      return chorus::DataType::Int32;
    case at::kLong:
      return chorus::DataType::Int64;
    case at::kHalf:
      return chorus::DataType::Float16;
    case at::kBFloat16:
      return chorus::DataType::Bfloat16;
    case at::kFloat:
      return chorus::DataType::Float32;
    case at::kDouble:
      return chorus::DataType::Float64;
    default:
      break;
  }
  TORCH_CHECK(false, where(op, rank, size), "tensors of dtype ", t.scalar_type(),
              " are not supported (Chorus moves uint8, int8, int32, int64, float16, bfloat16, "
              "float32 and float64); convert with .to(...) first");
}

void checkTensor(const at::Tensor& t, const char* op, int rank, int size) {
  TORCH_CHECK(t.defined(), where(op, rank, size), "got an undefined tensor");
  TORCH_CHECK(t.layout() == at::kStrided, where(op, rank, size), "a ", t.layout(),
              " tensor is not supported, only dense (strided) tensors; call .to_dense() first");
  TORCH_CHECK(t.device().is_cpu(), where(op, rank, size), "the tensor is on ", t.device(),
              ", but this build of the chorus backend moves CPU tensors only (no CUDA device "
              "path yet); move it with .cpu(), or use the nccl backend for GPU tensors");
  TORCH_CHECK(t.is_contiguous(), where(op, rank, size), "the tensor is not contiguous (sizes ",
              t.sizes(), ", strides ", t.strides(),
              "); pass t.contiguous() and copy the result back if needed");
  chorusType(t, op, rank, size);
}

void checkTensors(const std::vector<at::Tensor>& ts, const at::Tensor& like, bool sameShape,
                  const char* op, int rank, int size) {
  for (size_t i = 0; i < ts.size(); ++i) {
    checkTensor(ts[i], op, rank, size);
    TORCH_CHECK(ts[i].scalar_type() == like.scalar_type(), where(op, rank, size), "tensor ", i,
                " has dtype ", ts[i].scalar_type(), " but the input has ", like.scalar_type());
    TORCH_CHECK(!sameShape || ts[i].sizes() == like.sizes(), where(op, rank, size), "tensor ", i,
                " has shape ", ts[i].sizes(), " but the input has ", like.sizes());
  }
}

const at::Tensor& single(const std::vector<at::Tensor>& ts, const char* op, int rank, int size) {
  TORCH_CHECK(ts.size() == 1, where(op, rank, size), "expected one tensor per process, got ",
              ts.size(), " (several tensors per process are for multi-GPU calls)");
  checkTensor(ts[0], op, rank, size);
  return ts[0];
}

chorus::Reduction chorusReduction(const c10d::ReduceOp& op, const at::Tensor& t,
                                  at::Tensor* scalarHolder, const char* opName, int rank,
                                  int size) {
  switch (op.op_) {
    case c10d::ReduceOp::SUM:
      return chorus::RedOp::Sum;
    case c10d::ReduceOp::AVG:
      return chorus::RedOp::Avg;
    case c10d::ReduceOp::PRODUCT:
      return chorus::RedOp::Prod;
    case c10d::ReduceOp::MIN:
      return chorus::RedOp::Min;
    case c10d::ReduceOp::MAX:
      return chorus::RedOp::Max;
    case c10d::ReduceOp::PREMUL_SUM: {
      // torch 1.13 carries the factor in an NCCL-named supplement: a double or a tensor.
      auto* s = dynamic_cast<c10d::NCCLPreMulSumSupplement*>(op.supplement_.get());
      TORCH_CHECK(s != nullptr, where(opName, rank, size),
                  "PREMUL_SUM without its factor; make the op with "
                  "torch.distributed._make_nccl_premul_sum(factor)");
      at::Tensor factor;
      if (!s->tensor_factors.empty()) {
        TORCH_CHECK(s->tensor_factors.size() == 1 && s->tensor_factors[0].numel() == 1,
                    where(opName, rank, size),
                    "PREMUL_SUM takes one one-element factor tensor per process");
        factor = s->tensor_factors[0].to(at::kCPU, t.scalar_type()).reshape({1});
      } else {
        factor = at::full({1}, s->double_factor, t.options().dtype(t.scalar_type()));
      }
      *scalarHolder = factor.contiguous();
      return chorus::Reduction(chorus::RedOp::PreMulSum, scalarHolder->data_ptr());
    }
    default:
      break;
  }
  TORCH_CHECK(false, where(opName, rank, size), "reduce op ", static_cast<int>(op.op_),
              " (BAND/BOR/BXOR) is not supported; Chorus reduces with SUM, AVG, PRODUCT, MIN, "
              "MAX and PREMUL_SUM");
}

}  // namespace chorus_torch
