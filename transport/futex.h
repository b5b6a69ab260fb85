// Process-shared futex wait/wake on a 32-bit word in shared memory.
#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstdint>

namespace chorus {

// Sleeps while *word == expected, at most timeoutNs. Spurious returns are fine: callers loop.
inline void futexWait(std::atomic<uint32_t>* word, uint32_t expected, int64_t timeoutNs) {
  if (timeoutNs <= 0) return;
  timespec ts{time_t(timeoutNs / 1000000000), long(timeoutNs % 1000000000)};
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT, expected, &ts, nullptr, 0);
}

inline void futexWakeAll(std::atomic<uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

}  // namespace chorus
