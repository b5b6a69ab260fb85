// Monotonic time and deadlines: every wait in Chorus is bounded by one of these.
#pragma once

#include <chrono>
#include <cstdint>

namespace chorus {

using Clock = std::chrono::steady_clock;

inline int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

class Deadline {
 public:
  static Deadline after(double seconds) { return Deadline(nowNs() + int64_t(seconds * 1e9)); }
  static Deadline never() { return Deadline(INT64_MAX); }
  // `seconds` after a time already read (saves a clock read on hot paths).
  static Deadline afterFrom(int64_t startNs, double seconds) {
    return Deadline(startNs + int64_t(seconds * 1e9));
  }
  bool expired() const { return nowNs() >= at_; }
  // Milliseconds left, clamped to [0, cap]; for poll() timeouts.
  int remainingMs(int cap = 1 << 30) const {
    int64_t left = (at_ - nowNs()) / 1000000;
    if (left < 0) return 0;
    return left > cap ? cap : int(left);
  }
  int64_t remainingNs() const { return at_ - nowNs(); }
  int64_t atNs() const { return at_; }

 private:
  explicit Deadline(int64_t at) : at_(at) {}
  int64_t at_;
};

}  // namespace chorus
