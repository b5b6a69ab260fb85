#include "harness/bin_dir.h"

#include <limits.h>
#include <unistd.h>

#include <cstdlib>

namespace chorus::test {

std::string binDir() {
  if (const char* dir = getenv("CHORUS_BIN_DIR")) return dir;
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  std::string self = n > 0 ? std::string(buf, size_t(n)) : "./x";
  return self.substr(0, self.rfind('/'));
}

}  // namespace chorus::test
