// What the chorus backend accepts from torch: tensor checks and the mapping of torch's dtypes and
// ReduceOps onto Chorus's. Every rejection is a c10::Error (Python: RuntimeError) naming the
// operation, the rank, what is wrong and what to do instead.
#pragma once

#include <ATen/ATen.h>

#include <string>
#include <torch/csrc/distributed/c10d/Types.hpp>
#include <vector>

#include "chorus/communicator.h"
#include "chorus/types.h"

namespace chorus_torch {

// "chorus backend, rank 1 of 4, allreduce: " - the start of every message.
std::string where(const char* op, int rank, int size);

// Throws unless `t` is a dense, contiguous CPU tensor of a type Chorus moves.
void checkTensor(const at::Tensor& t, const char* op, int rank, int size);
// checkTensor on each, and all of the same dtype and (with sameShape) shape as `like`.
void checkTensors(const std::vector<at::Tensor>& ts, const at::Tensor& like, bool sameShape,
                  const char* op, int rank, int size);
// Exactly one tensor in the list, as for CPU tensors torch passes one per process.
const at::Tensor& single(const std::vector<at::Tensor>& ts, const char* op, int rank, int size);

chorus::DataType chorusType(const at::Tensor& t, const char* op, int rank, int size);

// The op plus, for PREMUL_SUM, its factor as a one-element tensor of `t`'s dtype (kept in
// `scalarHolder` so the pointer in the Reduction stays valid until the call runs).
chorus::Reduction chorusReduction(const c10d::ReduceOp& op, const at::Tensor& t,
                                  at::Tensor* scalarHolder, const char* opName, int rank, int size);

}  // namespace chorus_torch
