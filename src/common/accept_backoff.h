// When accept() fails for want of resources (EMFILE, ENFILE, ENOBUFS, ENOMEM) the connection
// stays queued and the listener stays readable, so polling it again at once spins. A listener
// that hit such a failure rests: it is not polled until the pause is over, and the pause
// doubles (1 ms to 1 s) while failures go on, resetting after a successful accept.
#pragma once

#include <algorithm>
#include <cerrno>
#include <cstdint>

#include "common/clock.h"

namespace chorus {

class AcceptBackoff {
 public:
  // True for the errno values that mean "out of resources, try later".
  static bool isExhaustion(int err) {
    return err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM;
  }
  void failed() {
    pauseNs_ = pauseNs_ ? std::min(pauseNs_ * 2, kMaxNs) : kMinNs;
    restUntilNs_ = nowNs() + pauseNs_;
  }
  void succeeded() { pauseNs_ = 0; }
  // Whether the listener may be polled now.
  bool ready() const { return nowNs() >= restUntilNs_; }
  // Milliseconds until it may be polled again (0 when ready), for poll timeouts.
  int restMs() const {
    int64_t left = restUntilNs_ - nowNs();
    return left <= 0 ? 0 : int((left + 999999) / 1000000);
  }
  int64_t pauseNs() const { return pauseNs_; }

 private:
  static constexpr int64_t kMinNs = 1000000, kMaxNs = 1000000000;
  int64_t pauseNs_ = 0;
  int64_t restUntilNs_ = 0;
};

}  // namespace chorus
