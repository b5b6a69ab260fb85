#include "progress.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>

namespace chorus::bench {

namespace {
int64_t monoNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
}  // namespace

Progress::Progress(int force) : on_(force < 0 ? isatty(2) != 0 : force > 0), startNs_(monoNs()) {}

void Progress::update(const std::string& what) {
  if (!on_) return;
  fprintf(stderr, "\r\033[K[chorus-bench] %s  (%.1f s)", what.c_str(),
          double(monoNs() - startNs_) / 1e9);
  fflush(stderr);
  shown_ = true;
}

void Progress::clear() {
  if (!shown_) return;
  fprintf(stderr, "\r\033[K");
  fflush(stderr);
  shown_ = false;
}

}  // namespace chorus::bench
