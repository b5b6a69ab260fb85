// Counts the system calls one thread makes, by number, for tests of paths that must make none.
// A seccomp filter on the calling thread hands each of its system calls, except those in
// `uncounted`, to a supervisor thread through a user notification; the supervisor counts it
// while counting is on and lets it go ahead unchanged (SECCOMP_USER_NOTIF_FLAG_CONTINUE). Other
// threads, and threads that existed before, are not filtered. A filter cannot be removed, so
// the thread's later calls keep passing through the supervisor (slower, still correct) until
// the process ends: use it in a test's forked rank.
#pragma once

#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace chorus::test {

class SyscallCounter {
 public:
  // Filters the calling thread. ok() is false (whyNot() says why) where the kernel refuses.
  explicit SyscallCounter(const std::vector<int>& uncounted);
  SyscallCounter(const SyscallCounter&) = delete;
  SyscallCounter& operator=(const SyscallCounter&) = delete;

  bool ok() const { return listener_ >= 0; }
  const std::string& whyNot() const { return why_; }
  void start() { counting_.store(true); }
  // Stops counting; returns what was counted since start(), by system call number.
  std::map<long, long> stop();
  // "write x2, mmap x1" for a report.
  static std::string describe(const std::map<long, long>& counts);

 private:
  void supervise();
  int listener_ = -1;
  std::string why_;
  // The supervisor starts before the filter (a thread started after would be filtered too,
  // and would have to answer for itself) and waits for the filter's listener here.
  std::atomic<int> listenerForSupervisor_{-1};
  std::atomic<bool> counting_{false};
  std::mutex mu_;
  std::map<long, long> counts_;  // by the supervisor while counting_, under mu_
};

}  // namespace chorus::test
