#include "tools/tune/receive_reduce.h"

#include <algorithm>
#include <memory>

#include "algorithms/registry.h"
#include "common/clock.h"
#include "core/comm_internals.h"
#include "tools/tune/fit.h"

namespace chorus::tune {

const std::vector<size_t>& receiveReduceSizes() {
  static const std::vector<size_t> sizes = {2 * kMiB, 8 * kMiB};
  return sizes;
}

Status measureOneShot(Communicator& c, int iters, int reps,
                      std::vector<std::pair<size_t, double>>* out) {
  Config cfg = CommInternals::config(c);
  cfg.algo = "allreduce=one_shot";
  std::unique_ptr<Communicator> pair;
  CHORUS_RETURN_IF_ERROR(c.split(c.rank() < 2 ? 0 : -1, c.rank(), cfg, &pair));
  if (!pair) return Status::Ok();
  const std::vector<size_t>& sizes = receiveReduceSizes();
  const size_t most = sizes.back() / sizeof(float);
  std::vector<float> in(most, 1.0f), result(most, 0.0f);
  std::vector<std::vector<double>> samples(sizes.size());
  for (int rep = 0; rep < reps; ++rep) {
    for (size_t i = 0; i < sizes.size(); ++i) {
      const size_t count = sizes[i] / sizeof(float);
      auto call = [&] {
        return pair->allReduce(in.data(), result.data(), count, DataType::Float32, RedOp::Sum);
      };
      CHORUS_RETURN_IF_ERROR(pair->barrier());
      CHORUS_RETURN_IF_ERROR(call());  // warm-up
      const int64_t t0 = nowNs();
      for (int k = 0; k < iters; ++k) CHORUS_RETURN_IF_ERROR(call());
      samples[i].push_back(double(nowNs() - t0) / 1e3 / iters);
    }
  }
  out->clear();
  for (size_t i = 0; i < sizes.size(); ++i) out->push_back({sizes[i], median(samples[i])});
  return Status::Ok();
}

double predictOneShot(const topo::Topology& t, const CostParams& p, size_t bytes) {
  OpDesc d;
  d.coll = Collective::AllReduce;
  d.dtype = DataType::Float32;
  d.op = RedOp::Sum;
  d.count = bytes / sizeof(float);
  const Algorithm* a = findAlgorithm(Collective::AllReduce, "one_shot");
  std::vector<Schedule> s;
  for (int r = 0; r < 2; ++r) s.push_back(a->build(d, r, 2, RankLayout::flat(2)));
  return predictTime(d, s, t, p);
}

double fitReduceRate(topo::Topology t, const CostParams& p,
                     const std::vector<std::pair<size_t, double>>& measured) {
  return minimiseOverLog(0.01, 10000.0, [&](double gbs) {
    t.hostReduceGBs = gbs;
    double e = 0;
    for (auto [bytes, us] : measured) {
      const double rel = predictOneShot(t, p, bytes) / us - 1;
      e += rel * rel;
    }
    return e;
  });
}

}  // namespace chorus::tune
