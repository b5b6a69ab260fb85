// Rate-limits one repeated warning: the first is printed, then at most one per interval, each
// saying how many like it were held back. A flood of strangers or a failing accept must not
// fill the log (one such flood once wrote 85 MB in 8 s).
#pragma once

#include <cstdint>
#include <mutex>

#include "common/clock.h"

namespace chorus {

class WarnLimiter {
 public:
  explicit WarnLimiter(double intervalSec = 10) : intervalNs_(int64_t(intervalSec * 1e9)) {}

  // True when this occurrence should be printed; then *suppressed is how many were held back
  // since the last one printed. Any thread.
  bool allow(uint64_t* suppressed) {
    std::lock_guard<std::mutex> lock(mu_);
    int64_t now = nowNs();
    if (printedAny_ && now - lastNs_ < intervalNs_) {
      ++held_;
      return false;
    }
    printedAny_ = true;
    lastNs_ = now;
    *suppressed = held_;
    held_ = 0;
    return true;
  }

 private:
  std::mutex mu_;
  const int64_t intervalNs_;
  int64_t lastNs_ = 0;
  bool printedAny_ = false;
  uint64_t held_ = 0;
};

}  // namespace chorus

// LOG_WARN through a WarnLimiter; a printed line ends with the count of those held back.
#define LOG_WARN_LIMITED(limiter, subsys, fmt, ...)                                           \
  do {                                                                                        \
    uint64_t chorusHeld_ = 0;                                                                 \
    if (::chorus::logEnabled(::chorus::LogLevel::Warn, ::chorus::subsys) &&                   \
        (limiter).allow(&chorusHeld_)) {                                                      \
      if (chorusHeld_)                                                                        \
        LOG_WARN(subsys, fmt " (%llu more like it in the last interval were not printed)",    \
                 ##__VA_ARGS__, (unsigned long long)chorusHeld_);                             \
      else                                                                                    \
        LOG_WARN(subsys, fmt, ##__VA_ARGS__);                                                 \
    }                                                                                         \
  } while (0)
