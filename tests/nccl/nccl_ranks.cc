#include "nccl_ranks.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>
#include <vector>

namespace nccltest {

namespace {

bool readAll(int fd, void* p, size_t n) {
  char* c = static_cast<char*>(p);
  while (n) {
    ssize_t r = read(fd, c, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    c += r;
    n -= size_t(r);
  }
  return true;
}

[[noreturn]] void rankMain(int rank, int nranks, const std::vector<int>& rd,
                           const std::vector<int>& wr, const RankMain& fn) {
  ncclUniqueId id;
  if (rank == 0) {
    ncclResult_t r = ncclGetUniqueId(&id);
    if (r != ncclSuccess) {
      fprintf(stderr, "rank 0: ncclGetUniqueId: %s\n", ncclGetLastError(nullptr));
      _exit(90);
    }
    for (int q = 1; q < nranks; ++q)
      if (write(wr[q], &id, sizeof id) != ssize_t(sizeof id)) _exit(91);
  } else if (!readAll(rd[rank], &id, sizeof id)) {
    fprintf(stderr, "rank %d: no unique id from rank 0\n", rank);
    _exit(92);
  }
  int code = fn(rank, nranks, id);
  fflush(stdout);
  fflush(stderr);
  _exit(code);
}

}  // namespace

std::string runRanks(int nranks, RankMain fn, double timeoutSec) {
  std::vector<int> rd(nranks, -1), wr(nranks, -1);
  for (int q = 1; q < nranks; ++q) {
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) return "pipe failed";
    rd[q] = p[0];
    wr[q] = p[1];
  }
  fflush(stdout);
  fflush(stderr);
  std::vector<pid_t> pids;
  for (int r = 0; r < nranks; ++r) {
    pid_t pid = fork();
    if (pid == 0) rankMain(r, nranks, rd, wr, fn);
    pids.push_back(pid);
  }
  for (int q = 1; q < nranks; ++q) {
    close(rd[q]);
    close(wr[q]);
  }
  std::string failures;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeoutSec);
  std::vector<bool> done(nranks, false);
  for (int left = nranks; left > 0;) {
    for (int r = 0; r < nranks; ++r) {
      int status = 0;
      if (done[r] || waitpid(pids[r], &status, WNOHANG) != pids[r]) continue;
      done[r] = true;
      --left;
      if (WIFSIGNALED(status))
        failures +=
            "rank " + std::to_string(r) + ": signal " + std::to_string(WTERMSIG(status)) + "\n";
      else if (WEXITSTATUS(status) != 0)
        failures +=
            "rank " + std::to_string(r) + ": exit " + std::to_string(WEXITSTATUS(status)) + "\n";
    }
    if (left && std::chrono::steady_clock::now() > deadline) {
      for (int r = 0; r < nranks; ++r)
        if (!done[r]) {
          kill(pids[r], SIGKILL);
          waitpid(pids[r], nullptr, 0);
          failures += "rank " + std::to_string(r) + ": timed out\n";
        }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return failures;
}

}  // namespace nccltest
