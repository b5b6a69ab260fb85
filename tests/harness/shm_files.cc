#include "harness/shm_files.h"

#include <dirent.h>
#include <sys/mman.h>

#include <cstring>

namespace chorus::test {

std::vector<std::string> shmSegmentsOf(pid_t pid) {
  const std::string prefix = "chorus-" + std::to_string(pid) + "-";
  std::vector<std::string> out;
  if (DIR* d = opendir("/dev/shm")) {
    while (dirent* e = readdir(d))
      if (strncmp(e->d_name, prefix.c_str(), prefix.size()) == 0) out.push_back(e->d_name);
    closedir(d);
  }
  return out;
}

void removeShmSegments(const std::vector<std::string>& names) {
  for (const std::string& n : names) shm_unlink(("/" + n).c_str());
}

}  // namespace chorus::test
