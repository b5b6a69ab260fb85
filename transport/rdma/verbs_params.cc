#include "transport/rdma/verbs_params.h"

#include <algorithm>

namespace chorus {

namespace {
constexpr int kMinAckTimeout = 8;
constexpr int kDefaultAckTimeout = 20;
}  // namespace

double verbsRetrySeconds(int t) {
  return (kVerbsRetryCount + 1) * 4.096e-6 * double(1u << t);
}

int verbsAckTimeout(double timeoutSec) {
  int t = kDefaultAckTimeout;
  while (t > kMinAckTimeout && verbsRetrySeconds(t) > timeoutSec) --t;
  return t;
}

int verbsQueueDepth(int maxQpWr, int maxCqe, int qps) {
  if (qps < 1) qps = 1;
  // Each queue pair may have `depth` sends and `depth` receives completing on the one CQ.
  long fit = long(maxCqe) / (2L * qps);
  long depth = std::min<long>({kVerbsDepthCap, maxQpWr, fit});
  return depth < 2 ? 0 : int(depth);
}

int verbsMaxGather(int maxSge) {
  return maxSge < 2 ? 0 : std::min(maxSge, kVerbsGatherCap);
}

int verbsMtuBytes(int mtuCode) {
  return mtuCode >= 1 && mtuCode <= 5 ? 128 << mtuCode : 0;
}

}  // namespace chorus
