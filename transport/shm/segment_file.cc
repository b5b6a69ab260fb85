#include "transport/shm/segment_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <random>

namespace chorus {

std::string newSegmentName() {
  std::random_device rd;
  char name[kSegmentNameBytes];
  snprintf(name, sizeof name, "/chorus-%d-%08x%08x", getpid(), rd(), rd());
  return name;
}

Status createSegmentFile(const char* name, size_t bytes) {
  int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) return Status::FromErrno(errno, std::string("shm: creating segment ") + name);
  Status st;
  if (ftruncate(fd, off_t(bytes)) != 0)
    st = Status::FromErrno(errno, "shm: sizing segment to " + std::to_string(bytes) +
                                      " bytes (is /dev/shm large enough?)");
  close(fd);
  if (!st.ok()) shm_unlink(name);
  return st;
}

Status mapSegmentFile(const char* name, size_t bytes, void** base) {
  int fd = shm_open(name, O_RDWR, 0600);
  if (fd < 0) return Status::FromErrno(errno, std::string("shm: opening segment ") + name);
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (p == MAP_FAILED)
    return Status::FromErrno(errno, "shm: mapping " + std::to_string(bytes) + " bytes");
  *base = p;
  return Status::Ok();
}

}  // namespace chorus
