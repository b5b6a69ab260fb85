#include "compare.h"

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <map>
#include <sstream>

#include "backend.h"
#include "common/clock.h"
#include "plot.h"
#include "progress.h"
#include "report.h"

namespace chorus::bench {

namespace {

std::string selfPath() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, size_t(n)) : "chorus-bench";
}

// chorus-run sits next to chorus-bench in build/bin and in an install's bin/.
std::string chorusRunPath(const std::string& self) {
  std::string dir = self.substr(0, self.rfind('/') + 1);
  std::string beside = dir + "chorus-run";
  return access(beside.c_str(), X_OK) == 0 ? beside : "chorus-run";
}

std::vector<std::string> words(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string w; ss >> w;) out.push_back(w);
  return out;
}

std::vector<std::string> command(const Options& o, const std::string& impl) {
  const std::string self = selfPath();
  std::vector<std::string> argv;
  const std::string np = std::to_string(o.ranks);
  if (impl == "mpi") {
    // vader is Open MPI's shared-memory transport: the fastest baseline on one host. Root
    // needs --allow-run-as-root, more ranks than cores need --oversubscribe.
    argv = {"mpirun",     "-n",        np,   "--oversubscribe", "--mca", "btl",
            "self,vader", "--timeout", "900"};
    if (geteuid() == 0) argv.push_back("--allow-run-as-root");
    for (auto& w : words(o.mpirunArgs)) argv.push_back(w);
  } else {
    argv = {chorusRunPath(self), "-n", np, "--no-tag-output", "--timeout", "900", "--"};
  }
  argv.push_back(self);
  for (auto& a : o.passThrough) argv.push_back(a);
  for (const char* a : {"--impl", impl.c_str(), "--csv", "--no-progress"}) argv.push_back(a);
  return argv;
}

// Runs argv with stdout captured; stderr stays the user's, so errors show as they happen.
int capture(const std::vector<std::string>& argv, std::string* out, Progress& progress,
            const std::string& label) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    dup2(fds[1], 1);
    close(fds[0]);
    close(fds[1]);
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    fprintf(stderr, "chorus-bench compare: cannot start %s: %s\n", args[0], strerror(errno));
    _exit(127);
  }
  close(fds[1]);
  char buf[4096];
  for (;;) {
    pollfd p{fds[0], POLLIN, 0};
    if (poll(&p, 1, 500) == 0) {
      progress.update(label);
      continue;
    }
    ssize_t n = read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out->append(buf, size_t(n));
    progress.update(label);
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

void printTable(const Options& o, const std::vector<std::string>& impls,
                std::map<std::string, std::map<size_t, CollRow>>& byImpl) {
  std::map<size_t, bool> sizes;
  for (auto& [impl, rows] : byImpl)
    for (auto& [bytes, row] : rows) sizes[bytes] = true;
  const std::string coll = o.passThrough[0];
  bool anyWrong = false;
  printf(
      "# compare %s: %d ranks, time = median us (out-of-place), busbw GB/s, speedup = "
      "baseline time / chorus time (> 1: Chorus faster)\n#\n",
      coll.c_str(), o.ranks);
  printf("# %10s", "size(B)");
  for (auto& i : impls) printf(" %11s", (i + "(us)").c_str());
  for (auto& i : impls) printf(" %11s", (i + "(GB/s)").c_str());
  for (auto& i : impls)
    if (i != "chorus") printf(" %12s", ("vs " + i).c_str());
  printf("\n");
  for (auto& [bytes, unused] : sizes) {
    printf("  %10zu", bytes);
    for (auto& i : impls) {
      auto it = byImpl[i].find(bytes);
      if (it == byImpl[i].end()) {
        printf(" %11s", "-");
        continue;
      }
      const bool bad = it->second.headline().wrong > 0;  // a baseline that is wrong is no baseline
      anyWrong |= bad;
      printf(" %10.2f%c", it->second.headline().us.median, bad ? '!' : ' ');
    }
    for (auto& i : impls) {
      auto it = byImpl[i].find(bytes);
      if (it == byImpl[i].end())
        printf(" %11s", "-");
      else
        printf(" %11.3f", it->second.headline().busbw);
    }
    auto mine = byImpl["chorus"].find(bytes);
    for (auto& i : impls) {
      if (i == "chorus") continue;
      auto it = byImpl[i].find(bytes);
      if (it == byImpl[i].end() || mine == byImpl["chorus"].end() ||
          mine->second.headline().us.median <= 0)
        printf(" %12s", "-");
      else
        printf(" %11.2fx", it->second.headline().us.median / mine->second.headline().us.median);
    }
    printf("\n");
  }
  if (anyWrong) printf("# !: that run's results were wrong at this size (#wrong > 0)\n");
  fflush(stdout);
}

}  // namespace

int runCompare(const Options& o) {
  std::vector<std::string> impls = o.impls.empty() ? builtBackends() : o.impls;
  const auto built = builtBackends();
  std::map<std::string, std::map<size_t, CollRow>> byImpl;
  std::vector<std::string> ran;
  Progress progress(-1);
  int rc = 0;
  for (const std::string& impl : impls) {
    if (std::find(built.begin(), built.end(), impl) == built.end()) {
      fprintf(stderr, "chorus-bench compare: %s is not built into this binary, skipped\n",
              impl.c_str());
      continue;
    }
    std::string out;
    const int64_t t0 = nowNs();
    int code = capture(command(o, impl), &out, progress, "compare: running " + impl);
    progress.clear();
    auto rows = parseCollCsv(out);
    fprintf(stderr, "chorus-bench compare: %s: %zu sizes in %.1f s%s\n", impl.c_str(), rows.size(),
            double(nowNs() - t0) / 1e9,
            code ? (", exit code " + std::to_string(code)).c_str() : "");
    if (code) rc = 1;
    if (rows.empty()) continue;
    ran.push_back(impl);
    for (auto& r : rows) byImpl[impl][r.bytes] = r;
  }
  if (ran.empty()) return 1;
  printTable(o, ran, byImpl);
  if (!o.plot.empty()) {
    std::vector<PlotSeries> series;
    for (auto& impl : ran) {
      PlotSeries s;
      s.name = impl;
      for (auto& [bytes, r] : byImpl[impl]) {
        s.bytes.push_back(double(bytes));
        s.busbw.push_back(r.headline().busbw);
        s.us.push_back(r.headline().us.median);
      }
      series.push_back(s);
    }
    std::string err;
    if (!plotSeries(o.plot, o.passThrough[0] + ", " + std::to_string(o.ranks) + " ranks", series,
                    &err)) {
      fprintf(stderr, "chorus-bench compare: %s\n", err.c_str());
      rc = 1;
    }
  }
  return rc;
}

}  // namespace chorus::bench
