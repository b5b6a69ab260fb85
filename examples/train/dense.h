// The pieces of a fully connected layer over BLAS, for the strategies that hold slices of the
// model's layers (rows, columns, or whole layers of a pipeline stage) rather than the whole Mlp.
// Matrices are row-major; a weight is out x in, as in Mlp's parameter layout.
#pragma once

#include <cstddef>

namespace train {

// z (n x out) = in (n x inDim) * W^T (+ bias broadcast over the rows when bias != null).
void denseForward(const float* in, int n, int inDim, const float* w, const float* bias, int out,
                  float* z);
// ReLU in place.
void relu(float* z, size_t count);
// Gradients of a layer from delta (n x out) and its input (n x inDim), added to dW (out x inDim)
// and, when db != null, db (out): accumulating lets micro-batches sum into one gradient.
void denseGradAdd(const float* delta, int n, int out, const float* in, int inDim, float* dw,
                  float* db);
// dIn (n x inDim) = delta (n x out) * W (out x inDim).
void denseInputGrad(const float* delta, int n, int out, const float* w, int inDim, float* dIn);
// d[i] = 0 where the ReLU output a[i] was 0 (the gradient through the ReLU).
void reluMask(float* d, const float* a, size_t count);

}  // namespace train
