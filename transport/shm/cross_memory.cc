#include "transport/shm/cross_memory.h"

#include <sys/uio.h>

#include <cerrno>

namespace chorus {

namespace {

// The kernel may move fewer bytes than asked (a page boundary, a signal): go on from there.
Status move(bool write, pid_t pid, char* local, char* remote, size_t bytes,
            const std::string& who) {
  size_t done = 0;
  while (done < bytes) {
    iovec l{local + done, bytes - done}, r{remote + done, bytes - done};
    const ssize_t n =
        write ? process_vm_writev(pid, &l, 1, &r, 1, 0) : process_vm_readv(pid, &l, 1, &r, 1, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      return Status::FromErrno(
          n < 0 ? errno : EFAULT,
          std::string("shm: one-sided ") + (write ? "put into " : "get from ") + who + " (" +
              std::to_string(bytes) + " bytes at offset " + std::to_string(done) +
              "): is the registered buffer still there and large enough?");
    done += size_t(n);
  }
  return Status::Ok();
}

}  // namespace

bool crossMemoryWorks(pid_t pid, uint64_t addr, uint64_t expect) {
  uint64_t got = 0;
  iovec l{&got, sizeof got}, r{reinterpret_cast<void*>(addr), sizeof got};
  return process_vm_readv(pid, &l, 1, &r, 1, 0) == ssize_t(sizeof got) && got == expect;
}

Status crossMemoryWrite(pid_t pid, char* to, const char* src, size_t bytes,
                        const std::string& who) {
  return move(true, pid, const_cast<char*>(src), to, bytes, who);
}

Status crossMemoryRead(pid_t pid, char* dst, const char* from, size_t bytes,
                       const std::string& who) {
  return move(false, pid, dst, const_cast<char*>(from), bytes, who);
}

}  // namespace chorus
