#include "harness/syscall_counter.h"

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>

namespace chorus::test {

SyscallCounter::SyscallCounter(const std::vector<int>& uncounted) {
#if !defined(__x86_64__)
  (void)uncounted;
  why_ = "the filter's system call numbers are x86-64's";
#else
  std::vector<sock_filter> prog;
  prog.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)));
  prog.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0));
  prog.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF));  // another ABI: counted
  prog.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)));
  for (int nr : uncounted) {
    prog.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, uint32_t(nr), 0, 1));
    prog.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  }
  prog.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF));
  const sock_fprog fprog{uint16_t(prog.size()), prog.data()};
  std::thread(&SyscallCounter::supervise, this).detach();
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    why_ = std::string("prctl(PR_SET_NO_NEW_PRIVS): ") + strerror(errno);
    listenerForSupervisor_.store(-2);
    return;
  }
  const long fd =
      syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &fprog);
  if (fd < 0) {
    why_ = std::string("seccomp with a user-notification listener: ") + strerror(errno);
    listenerForSupervisor_.store(-2);
    return;
  }
  listener_ = int(fd);
  listenerForSupervisor_.store(listener_);
#endif
}

void SyscallCounter::supervise() {
  int fd;
  while ((fd = listenerForSupervisor_.load()) == -1) sched_yield();
  if (fd < 0) return;  // no filter
  seccomp_notif_sizes sizes{};
  if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) != 0) return;
  std::vector<char> reqBuf(std::max<size_t>(sizes.seccomp_notif, sizeof(seccomp_notif)));
  std::vector<char> respBuf(std::max<size_t>(sizes.seccomp_notif_resp, sizeof(seccomp_notif_resp)));
  auto* req = reinterpret_cast<seccomp_notif*>(reqBuf.data());
  auto* resp = reinterpret_cast<seccomp_notif_resp*>(respBuf.data());
  for (;;) {
    memset(req, 0, reqBuf.size());
    if (ioctl(fd, SECCOMP_IOCTL_NOTIF_RECV, req) != 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (counting_.load()) {
      std::lock_guard<std::mutex> lock(mu_);
      ++counts_[req->data.nr];
    }
    memset(resp, 0, respBuf.size());
    resp->id = req->id;
    resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
    (void)ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, resp);  // ENOENT: the call was interrupted
  }
}

std::map<long, long> SyscallCounter::stop() {
  counting_.store(false);
  std::lock_guard<std::mutex> lock(mu_);
  std::map<long, long> counted;
  counted.swap(counts_);
  return counted;
}

std::string SyscallCounter::describe(const std::map<long, long>& counts) {
  std::string s;
  for (const auto& [nr, n] : counts)
    s += (s.empty() ? "" : ", ") + std::string("nr ") + std::to_string(nr) + " x" +
         std::to_string(n);
  return s.empty() ? "none" : s;
}

}  // namespace chorus::test
