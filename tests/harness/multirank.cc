#include "harness/multirank.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "common/clock.h"

namespace chorus::test {

void RankContext::report(const char* fmt, ...) {
  char buf[4096];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof buf - 1, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if (n > int(sizeof buf) - 2) n = sizeof buf - 2;
  buf[n++] = '\n';
  if (reportFd >= 0 && write(reportFd, buf, n) < 0) {
  }
}

std::unique_ptr<Communicator> RankContext::connect(const Config* config) {
  Config c;
  if (config) {
    c = *config;
  } else {
    Status st = Config::fromEnvironment(&c);
    if (!st.ok()) {
      report("config: %s", st.toString().c_str());
      return nullptr;
    }
  }
  std::unique_ptr<Communicator> comm;
  Status st = Communicator::create(id, rank, size, c, &comm);
  if (!st.ok()) {
    report("create failed: %s", st.toString().c_str());
    return nullptr;
  }
  return comm;
}

namespace {
bool readExact(int fd, void* p, size_t n) {
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
}  // namespace

RankGroup::RankGroup(int size, RankFn fn, RankSetup setup) {
  // One pipe per non-zero rank carries the id from rank 0; one per rank carries its report.
  std::vector<int> idRead(size, -1), idWrite(size, -1);
  for (int r = 1; r < size; ++r) {
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) abort();
    idRead[r] = p[0];
    idWrite[r] = p[1];
  }
  fflush(stdout);
  fflush(stderr);
  for (int r = 0; r < size; ++r) {
    int rep[2];
    if (pipe2(rep, O_CLOEXEC) != 0) abort();
    pid_t pid = fork();
    if (pid == 0) {
      close(rep[0]);
      RankContext ctx;
      ctx.rank = r;
      ctx.size = size;
      ctx.reportFd = rep[1];
      int code = setup ? setup(r) : 0;
      if (code != 0) {
        ctx.report("rank setup failed (%d)", code);
        _exit(code);
      }
      if (r == 0) {
        // The root waits as long as the ranks do, as a launcher's would (env_init.cc).
        Config c;
        const double rootSec =
            getenv("CHORUS_TIMEOUT") && Config::fromEnvironment(&c).ok() ? c.timeoutSec : 60;
        Status st = createUniqueId(&ctx.id, rootSec);
        if (!st.ok()) {
          ctx.report("createUniqueId: %s", st.toString().c_str());
          _exit(90);
        }
        for (int q = 1; q < size; ++q)
          if (write(idWrite[q], &ctx.id, sizeof ctx.id) != sizeof ctx.id) _exit(91);
      } else if (!readExact(idRead[r], &ctx.id, sizeof ctx.id)) {
        ctx.report("did not receive the unique id from rank 0");
        _exit(92);
      }
      for (int q = 1; q < size; ++q) {
        close(idRead[q]);
        close(idWrite[q]);
      }
      code = fn(ctx);
      fflush(stdout);
      fflush(stderr);
      _exit(code);
    }
    close(rep[1]);
    fcntl(rep[0], F_SETFL, O_NONBLOCK);
    pids_.push_back(pid);
    reportFds_.push_back(rep[0]);
  }
  for (int r = 1; r < size; ++r) {
    close(idRead[r]);
    close(idWrite[r]);
  }
}

RankGroup::~RankGroup() {
  if (!waited_) wait(0);
  for (int fd : reportFds_) close(fd);
}

void RankGroup::kill(int rank, int sig) {
  ::kill(pids_[rank], sig);
}

std::vector<RankResult> RankGroup::wait(double timeoutSec) {
  waited_ = true;
  const int n = int(pids_.size());
  std::vector<RankResult> res(n);
  std::vector<bool> done(n, false), eof(n, false);
  Deadline deadline = Deadline::after(timeoutSec);
  int remaining = n;
  bool killed = false;
  while (remaining > 0) {
    // Drain reports so a chatty rank never blocks on a full pipe.
    std::vector<pollfd> pfds;
    for (int r = 0; r < n; ++r)
      if (!eof[r]) pfds.push_back({reportFds_[r], POLLIN, 0});
    poll(pfds.data(), pfds.size(), 10);
    for (int r = 0; r < n; ++r) {
      if (eof[r]) continue;
      char buf[4096];
      ssize_t k;
      while ((k = read(reportFds_[r], buf, sizeof buf)) > 0) res[r].report.append(buf, size_t(k));
      if (k == 0) eof[r] = true;
      if (k < 0 && errno != EAGAIN && errno != EINTR) eof[r] = true;
    }
    for (int r = 0; r < n; ++r) {
      if (done[r]) continue;
      int status = 0;
      pid_t p = waitpid(pids_[r], &status, WNOHANG);
      if (p != pids_[r]) continue;
      done[r] = true;
      --remaining;
      res[r].rank = r;
      res[r].pid = p;
      if (WIFEXITED(status)) res[r].exitCode = WEXITSTATUS(status);
      if (WIFSIGNALED(status)) res[r].signal = WTERMSIG(status);
    }
    if (remaining > 0 && deadline.expired() && !killed) {
      for (int r = 0; r < n; ++r)
        if (!done[r]) {
          ::kill(pids_[r], SIGKILL);
          res[r].timedOut = true;
        }
      killed = true;
    }
  }
  for (int r = 0; r < n; ++r) {
    char buf[4096];
    ssize_t k;
    while ((k = read(reportFds_[r], buf, sizeof buf)) > 0) res[r].report.append(buf, size_t(k));
  }
  return res;
}

std::vector<RankResult> runRanks(int size, RankFn fn, double timeoutSec, RankSetup setup) {
  RankGroup g(size, std::move(fn), std::move(setup));
  return g.wait(timeoutSec);
}

std::string describeFailures(const std::vector<RankResult>& results) {
  std::string out;
  for (const RankResult& r : results) {
    if (r.ok()) continue;
    out += "rank " + std::to_string(r.rank) + ": ";
    if (r.timedOut) out += "timed out (killed); ";
    if (r.signaled())
      out += std::string("killed by signal ") + strsignal(r.signal) + "; ";
    else
      out += "exit " + std::to_string(r.exitCode) + "; ";
    out += r.report + "\n";
  }
  return out;
}

bool namesRank(const std::string& text, int r) {
  const std::string name = "rank " + std::to_string(r);
  for (size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 1)) {
    const size_t end = at + name.size();
    if (end == text.size() || !isdigit(static_cast<unsigned char>(text[end]))) return true;
  }
  return false;
}

char processState(pid_t pid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/stat", int(pid));
  FILE* f = fopen(path, "r");
  if (!f) return 0;
  char line[512];
  const bool got = fgets(line, sizeof line, f) != nullptr;
  fclose(f);
  // "pid (comm) S ...": the command may hold spaces and parentheses, the state follows the last.
  const char* paren = got ? strrchr(line, ')') : nullptr;
  return paren && paren[1] == ' ' ? paren[2] : 0;
}

}  // namespace chorus::test
