#include "evaluate.h"

#include <algorithm>
#include <vector>

#include "collective.h"

namespace train {

chorus::Status evaluateReplica(Mlp& mlp, const float* params, const Dataset& test, int rank,
                               int size, CommThread* ct, double* accuracy) {
  const int64_t lo = test.count * rank / size, hi = test.count * (rank + 1) / size;
  std::vector<uint32_t> idx;
  std::vector<float> x;
  std::vector<int> y, pred;
  double counts[2] = {0, double(hi - lo)};
  for (int64_t at = lo; at < hi; at += 1000) {
    const int n = int(std::min<int64_t>(1000, hi - at));
    idx.resize(size_t(n));
    for (int i = 0; i < n; ++i) idx[size_t(i)] = uint32_t(at + i);
    x.resize(size_t(n) * size_t(test.pixels));
    y.resize(size_t(n));
    pred.resize(size_t(n));
    gatherBatch(test, idx.data(), n, x.data(), y.data());
    mlp.forward(params, x.data(), n);
    mlp.predict(pred.data());
    for (int i = 0; i < n; ++i) counts[0] += pred[size_t(i)] == y[size_t(i)];
  }
  CHORUS_RETURN_IF_ERROR(sumDoubles(ct, counts, 2));
  *accuracy = counts[1] > 0 ? counts[0] / counts[1] : 0;
  return chorus::Status::Ok();
}

}  // namespace train
