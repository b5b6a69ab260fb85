#include "dense.h"

#include <algorithm>

namespace train {

void sgemmOverwrite(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, const float* a,
                    int lda, const float* b, int ldb, float* c, int ldc) {
  for (int i = 0; i < m; ++i) std::fill_n(c + size_t(i) * size_t(ldc), n, 0.0f);
  if (m > 0 && n > 0 && k > 0)
    cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, 1.0f, a, lda, b, ldb, 1.0f, c, ldc);
}

void denseForward(const float* in, int n, int inDim, const float* w, const float* bias, int out,
                  float* z) {
  if (n == 0) return;
  if (!bias)
    return sgemmOverwrite(CblasNoTrans, CblasTrans, n, out, inDim, in, inDim, w, inDim, z, out);
  for (int i = 0; i < n; ++i) std::copy_n(bias, out, z + size_t(i) * size_t(out));
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, out, inDim, 1.0f, in, inDim, w, inDim,
              1.0f, z, out);
}

void relu(float* z, size_t count) {
  for (size_t i = 0; i < count; ++i) z[i] = z[i] > 0 ? z[i] : 0;
}

void denseGradAdd(const float* delta, int n, int out, const float* in, int inDim, float* dw,
                  float* db) {
  if (n == 0) return;
  if (db) {
    for (int i = 0; i < n; ++i) {
      const float* d = delta + size_t(i) * size_t(out);
      for (int o = 0; o < out; ++o) db[o] += d[o];
    }
  }
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, out, inDim, n, 1.0f, delta, out, in, inDim,
              1.0f, dw, inDim);
}

void denseInputGrad(const float* delta, int n, int out, const float* w, int inDim, float* dIn) {
  if (n == 0) return;
  sgemmOverwrite(CblasNoTrans, CblasNoTrans, n, inDim, out, delta, out, w, inDim, dIn, inDim);
}

void reluMask(float* d, const float* a, size_t count) {
  for (size_t i = 0; i < count; ++i) d[i] = a[i] > 0 ? d[i] : 0;
}

}  // namespace train
