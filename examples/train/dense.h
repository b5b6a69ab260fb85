// The pieces of a fully connected layer over BLAS, for the strategies that hold slices of the
// model's layers (rows, columns, or whole layers of a pipeline stage) rather than the whole Mlp.
// Matrices are row-major; a weight is out x in, as in Mlp's parameter layout.
#pragma once

#include <cblas.h>

#include <cstddef>

namespace train {

// C (m x n, rows ldc apart) = op(A) * op(B), row-major, overwriting C (zeros where k is 0). The
// same as cblas_sgemm with alpha 1 and beta 0, but OpenBLAS 0.3.21 clears C for beta 0 with scalar
// stores (sgemm_beta), which took 5-6% of a training step here for the weight gradients; clearing C
// with a vectorised fill and adding with beta 1 (which skips that pass) costs 30-40% of it.
void sgemmOverwrite(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, const float* a,
                    int lda, const float* b, int ldb, float* c, int ldc);

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
