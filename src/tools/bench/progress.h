// A one-line progress note on stderr for long sweeps ("allreduce 16 MiB  12.3 s"), shown only
// when stderr is a terminal (or when forced: under chorus-run stderr is a pipe), and erased
// before the table goes on, so piped output stays clean.
#pragma once

#include <cstdint>
#include <string>

namespace chorus::bench {

class Progress {
 public:
  // force: -1 auto (isatty), 0 never, 1 always.
  explicit Progress(int force);
  void update(const std::string& what);
  void clear();
  ~Progress() { clear(); }

 private:
  bool on_ = false;
  bool shown_ = false;
  int64_t startNs_ = 0;
};

}  // namespace chorus::bench
