// chorus-run: starts the N ranks of one job on this host. Each rank learns its place and the job's
// rendezvous address (rank 0 listens there) and per-job secret from the environment. Their output
// comes back through pipes, one whole line at a time, tagged by rank. The job stops as a whole:
// when any rank fails, the time limit passes, or the user interrupts chorus-run.
//
// Like mpirun, it binds each rank to a core of its own when there are enough (--bind-to core, the
// default): two unbound ranks on a 2-core VM were seen sharing one core for whole benchmark
// rounds while the other idled (the scheduler wakes a rank where its waker runs). When the ranks
// are a whole multiple of the CPUs it deals them out round-robin, so every core carries as many
// and the placement does not change from run to run: unbound, 4 ranks on 2 cores measured a
// 32 KiB rabenseifner allreduce at 11-18 us from one run to the next, bound 11.5-12.5.
// Otherwise (3 ranks on 2 cores) binding would leave one core with fewer ranks, and the
// scheduler balances better.
//
// Nothing here waits without a bound: the single poll() loop wakes on output, on SIGCHLD and on
// signals (a self-pipe turns them into readable bytes), and never sleeps past the next deadline.

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tools/cli/tool.h"

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr int kMaxRanks = 1024;
constexpr auto kGrace = std::chrono::seconds(2);  // between SIGTERM and SIGKILL when stopping
// Once every rank has exited, a grandchild may still hold a pipe open; don't wait for it forever.
constexpr auto kDrainLimit = std::chrono::seconds(1);
constexpr auto kPollCap = milliseconds(500);  // a safety net only: SIGCHLD wakes the loop
constexpr size_t kMaxLine = 1 << 20;          // longer "lines" are cut so memory stays bounded
constexpr int kExitTimeout = 124, kExitExec = 127;
// The signals forwarded to the ranks, with their names.
constexpr std::pair<int, const char*> kForwarded[] = {
    {SIGINT, "SIGINT"}, {SIGTERM, "SIGTERM"}, {SIGHUP, "SIGHUP"}};

// All writes go through one write() per message, so chorus-run's own notes and the ranks' lines
// never split each other even though they share stderr.
void WriteAll(int fd, std::string_view s) {
  while (!s.empty()) {
    ssize_t n = write(fd, s.data(), s.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // EPIPE: whoever read our output has gone; the job still runs to the end
    s.remove_prefix(static_cast<size_t>(n));
  }
}

__attribute__((format(printf, 1, 2))) void Note(const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  WriteAll(2, std::string("chorus-run: ") + buf + "\n");
}

[[noreturn]] void Die(const char* what) {
  Note("%s: %s (errno %d)", what, strerror(errno), errno);
  exit(1);
}

// ---- Command line ------------------------------------------------------------------------------

struct Options {
  int np = 0;
  int port = 0;  // 0: pick a free one
  bool tag = true;
  bool bind = true;                  // --bind-to core
  double timeout_s = 0;              // 0: none
  std::vector<std::string> env;      // NAME=VALUE, applied after the CHORUS_* variables
  std::vector<std::string> program;  // the program and its arguments
  std::vector<char*> argv;  // into program's strings (they stay put when Options moves), null-ended
};

// Returns the options, or exits: 0 after --help and --version, 2 on a usage error.
Options ParseArgs(int argc, char** argv) {
  chorus::cli::Tool tool("chorus-run", "-n N [options] [--] program [args...]",
                         "Starts N ranks of program on this host with CHORUS_RANK, "
                         "CHORUS_WORLD_SIZE, CHORUS_LOCAL_RANK, CHORUS_LOCAL_SIZE, CHORUS_COMM_ID "
                         "and CHORUS_SECRET set, and tags their output lines by rank.");
  CLI::App& app = tool.app();
  app.prefix_command();  // the program's own options are the program's
  Options o;
  chorus::cli::integer(app, "-n,--np", &o.np, 1, kMaxRanks, "number of ranks")
      ->required()
      ->default_str("");
  chorus::cli::integer(app, "--port", &o.port, 1, 65535, "port rank 0 listens on")
      ->default_str("a free one");
  app.add_flag_callback(
      "--tag-output", [&] { o.tag = true; }, "prefix each output line with [rank] (default)");
  app.add_flag_callback(
      "--no-tag-output", [&] { o.tag = false; }, "print the ranks' lines as they are");
  chorus::cli::real(app, "--timeout", &o.timeout_s, 0.001, 1e9,
                    "stop the job after S seconds and exit 124")
      ->type_name("S")
      ->default_str("none");
  std::string bindTo = "core";
  chorus::cli::choice(app, "--bind-to", &bindTo, {"core", "none"},
                      "bind rank i to the i-th CPU chorus-run may use (round-robin when N is a "
                      "multiple of the CPUs; otherwise, with more ranks than CPUs, unbound)");
  chorus::cli::checked(
      app, "-x",
      [&](const std::string& opt, const std::string& v) {
        const size_t eq = v.find('=');
        if (eq == 0 || eq == std::string::npos)
          throw chorus::cli::BadValue(opt, v, "wants NAME=VALUE");
        o.env.push_back(v);
      },
      "NAME=VALUE", "", "set an environment variable in every rank (repeatable)")
      ->trigger_on_parse();
  if (int rc = tool.parse(argc, argv); rc >= 0) exit(rc);
  o.bind = bindTo == "core";
  std::vector<std::string> rest = app.remaining();
  if (!rest.empty() && rest[0] == "--")
    rest.erase(rest.begin());
  else if (!rest.empty() && rest[0][0] == '-')
    exit(tool.usageError("unknown option '" + rest[0] + "'"));
  if (rest.empty()) exit(tool.usageError("no program given"));
  o.program = rest;
  for (std::string& a : o.program) o.argv.push_back(a.data());
  o.argv.push_back(nullptr);
  return o;
}

// ---- Job identity ------------------------------------------------------------------------------

// Binding port 0 lets the kernel pick a port nobody holds; rank 0 binds it again moments later.
// Another process could grab it in between, which is what --port is for.
int FindFreePort() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) Die("socket() for finding a free port");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    Die("binding 127.0.0.1:0 to find a free port");
  close(fd);
  return ntohs(addr.sin_port);
}

// The ranks prove to each other that they belong to this job with it; 256 bits from the kernel.
std::string MakeSecret() {
  unsigned char bytes[32];
  size_t got = 0;
  while (got < sizeof bytes) {
    ssize_t n = getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) Die("getrandom() for the job secret");
    got += static_cast<size_t>(n);
  }
  static const char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned char b : bytes) hex += {kHex[b >> 4], kHex[b & 15]};
  return hex;
}

// ---- Signals: a self-pipe turns them into bytes the poll() loop reads ---------------------------

int g_signal_pipe[2] = {-1, -1};

extern "C" void OnSignal(int sig) {
  int saved = errno;
  unsigned char b = static_cast<unsigned char>(sig);
  // A full pipe means a wake-up is already pending, so a failed write loses nothing.
  [[maybe_unused]] ssize_t n = write(g_signal_pipe[1], &b, 1);
  errno = saved;
}

void InstallSignalHandlers() {
  if (pipe2(g_signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0) Die("pipe2() for signals");
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (auto [sig, name] : kForwarded) sigaction(sig, &sa, nullptr);
  sigaction(SIGCHLD, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);  // a closed stdout shows up as EPIPE in WriteAll instead
}

const char* SignalName(int sig) {
  for (auto [forwarded, name] : kForwarded)
    if (forwarded == sig) return name;
  return "a signal";
}

// ---- One rank's output --------------------------------------------------------------------------

// One of a rank's two pipes plus the part of a line not yet ended by '\n'.
struct Stream {
  int fd = -1;  // read end; -1 once closed
  int to = 1;   // where its lines go: 1 or 2
  std::string partial;
};

struct Rank {
  pid_t pid = -1;
  bool running = false;
  Stream out, err;
};

class Job {
 public:
  explicit Job(const Options& o) : o_(o), ranks_(o.np) {}
  int Run();

 private:
  void Start();
  int StartRank(int rank, const std::vector<std::string>& env);
  [[noreturn]] void ExecRank(int rank, const std::vector<std::string>& env, int out, int err,
                             int exec_err);
  void EmitLine(int rank, int to, std::string_view line);
  void ReadStream(int rank, Stream& s);
  void CloseStream(int rank, Stream& s);
  void PollOnce(Clock::time_point now);
  void Reap();
  void OnRankExit(int rank, int status);
  void HandleSignal(int sig);
  void CheckDeadlines(Clock::time_point now);
  void BeginStop(int exit_code);
  void SendAll(int sig);
  int OpenStreams() const;

  const Options& o_;
  std::vector<Rank> ranks_;
  std::vector<int> cpuOf_;  // per rank, the CPU it is bound to; empty: unbound
  int running_ = 0;
  bool stopping_ = false;  // set by the first cause; later exits are its consequences, not news
  int exit_code_ = 0;
  bool sigint_seen_ = false;
  std::optional<Clock::time_point> job_deadline_, kill_deadline_, drain_deadline_;
};

// Each line goes out with its prefix in one write(), so lines of different ranks never mix.
void Job::EmitLine(int rank, int to, std::string_view line) {
  std::string s;
  s.reserve(line.size() + 16);
  if (o_.tag) s.append("[").append(std::to_string(rank)).append("] ");
  s.append(line);
  s.push_back('\n');
  WriteAll(to, s);
}

void Job::ReadStream(int rank, Stream& s) {
  char buf[65536];
  ssize_t n = read(s.fd, buf, sizeof buf);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (n <= 0) return CloseStream(rank, s);
  s.partial.append(buf, static_cast<size_t>(n));
  size_t start = 0, nl;
  while ((nl = s.partial.find('\n', start)) != std::string::npos) {
    EmitLine(rank, s.to, std::string_view(s.partial).substr(start, nl - start));
    start = nl + 1;
  }
  s.partial.erase(0, start);
  if (s.partial.size() >= kMaxLine) {
    EmitLine(rank, s.to, s.partial);
    s.partial.clear();
  }
}

// A last line without '\n' is still a line the user wants to see.
void Job::CloseStream(int rank, Stream& s) {
  if (s.fd < 0) return;
  if (!s.partial.empty()) EmitLine(rank, s.to, s.partial);
  s.partial.clear();
  close(s.fd);
  s.fd = -1;
}

int Job::OpenStreams() const {
  int n = 0;
  for (const Rank& r : ranks_) n += (r.out.fd >= 0) + (r.err.fd >= 0);
  return n;
}

// ---- Starting ranks -----------------------------------------------------------------------------

// Runs in the child between fork and exec; the parent is single-threaded, so setenv is safe here.
void Job::ExecRank(int rank, const std::vector<std::string>& env, int out, int err, int exec_err) {
  // Before exec a signal must not reach our pipe.
  for (auto [sig, name] : kForwarded) signal(sig, SIG_DFL);
  signal(SIGCHLD, SIG_DFL);
  signal(SIGPIPE, SIG_DFL);  // an ignored SIGPIPE would survive exec
  dup2(out, 1);
  dup2(err, 2);
  if (!cpuOf_.empty()) {  // a failure leaves the rank unbound, which only costs speed
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpuOf_[rank], &one);
    sched_setaffinity(0, sizeof one, &one);
  }
  if (rank != 0) {  // like mpirun: only rank 0 reads the terminal
    int null = open("/dev/null", O_RDONLY);
    if (null >= 0) dup2(null, 0);
  }
  for (const std::string& kv : env) {
    size_t eq = kv.find('=');
    setenv(kv.substr(0, eq).c_str(), kv.c_str() + eq + 1, 1);
  }
  execvp(o_.argv[0], o_.argv.data());
  int e = errno;
  [[maybe_unused]] ssize_t n = write(exec_err, &e, sizeof e);  // the parent reads it as the cause
  _exit(kExitExec);
}

// Returns the errno of a failed exec, 0 once the program runs.
int Job::StartRank(int rank, const std::vector<std::string>& env) {
  int out[2], err[2], ex[2];
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0 || pipe2(ex, O_CLOEXEC) != 0)
    Die("pipe2() for a rank");
  pid_t pid = fork();
  if (pid < 0) Die("fork()");
  if (pid == 0) ExecRank(rank, env, out[1], err[1], ex[1]);
  close(out[1]);
  close(err[1]);
  close(ex[1]);
  Rank& r = ranks_[rank];
  r.pid = pid;
  r.running = true;
  ++running_;
  r.out = Stream{out[0], 1, {}};
  r.err = Stream{err[0], 2, {}};
  fcntl(out[0], F_SETFL, O_NONBLOCK);  // only our ends: the child's writes stay blocking
  fcntl(err[0], F_SETFL, O_NONBLOCK);
  // exec closes the write end (O_CLOEXEC), so this read lasts only as long as exec takes.
  int exec_errno = 0;
  ssize_t n;
  do n = read(ex[0], &exec_errno, sizeof exec_errno);
  while (n < 0 && errno == EINTR);
  close(ex[0]);
  return n == static_cast<ssize_t>(sizeof exec_errno) ? exec_errno : 0;
}

// Per rank, the CPU to bind it to: the CPUs chorus-run may use, dealt out in order (round-robin
// when the ranks are a multiple of them); empty when they do not divide evenly.
std::vector<int> CoresForRanks(int np) {
  cpu_set_t set;
  std::vector<int> cpus, out;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return out;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  const int n = int(cpus.size());
  if (n == 0 || (np > n && np % n != 0)) return out;
  for (int r = 0; r < np; ++r) out.push_back(cpus[r % n]);
  return out;
}

void Job::Start() {
  if (o_.bind) cpuOf_ = CoresForRanks(o_.np);
  int port = o_.port ? o_.port : FindFreePort();
  std::string secret = MakeSecret();
  std::string n = std::to_string(o_.np);
  for (int rank = 0; rank < o_.np; ++rank) {
    std::string r = std::to_string(rank);
    std::vector<std::string> env = {"CHORUS_RANK=" + r,
                                    "CHORUS_WORLD_SIZE=" + n,
                                    "CHORUS_LOCAL_RANK=" + r,
                                    "CHORUS_LOCAL_SIZE=" + n,
                                    "CHORUS_COMM_ID=127.0.0.1:" + std::to_string(port),
                                    "CHORUS_SECRET=" + secret};
    env.insert(env.end(), o_.env.begin(), o_.env.end());
    if (int e = StartRank(rank, env)) {
      Note("cannot execute '%s': %s (errno %d)%s", o_.argv[0], strerror(e), e,
           e == ENOENT ? "; check the name and PATH" : "");
      BeginStop(kExitExec);
      return;
    }
  }
  if (o_.timeout_s > 0)
    job_deadline_ = Clock::now() + milliseconds(static_cast<long long>(o_.timeout_s * 1000));
}

// ---- Stopping -----------------------------------------------------------------------------------

void Job::SendAll(int sig) {
  for (Rank& r : ranks_)
    if (r.running) kill(r.pid, sig);
}

void Job::BeginStop(int exit_code) {
  stopping_ = true;
  exit_code_ = exit_code;
  SendAll(SIGTERM);
  kill_deadline_ = Clock::now() + kGrace;
}

std::string Plural(int n) {
  return std::to_string(n) + (n == 1 ? " rank" : " ranks");
}

void Job::OnRankExit(int rank, int status) {
  ranks_[rank].running = false;
  --running_;
  std::string how;
  int code;
  if (WIFEXITED(status)) {
    code = WEXITSTATUS(status);
    how = "exited with status " + std::to_string(code);
  } else {
    int sig = WTERMSIG(status);
    code = 128 + sig;
    how = "was killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
  }
  if (code == 0 || stopping_) return;
  std::string rest = running_ ? "; stopping the other " + Plural(running_) : "";
  Note("rank %d (pid %d) %s%s", rank, static_cast<int>(ranks_[rank].pid), how.c_str(),
       rest.c_str());
  BeginStop(code);
}

void Job::Reap() {
  for (;;) {
    int status;
    pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid < 0 && errno == EINTR) continue;
    if (pid <= 0) return;
    for (int rank = 0; rank < o_.np; ++rank)
      if (ranks_[rank].running && ranks_[rank].pid == pid) OnRankExit(rank, status);
  }
}

// Signals are forwarded, not acted on: the ranks decide how to end. Only a second SIGINT, the
// user insisting, kills them outright.
void Job::HandleSignal(int sig) {
  if (sig == SIGCHLD) return;  // Reap() runs every turn of the loop
  if (sig == SIGINT && sigint_seen_) {
    Note("second SIGINT: killing %s", Plural(running_).c_str());
    SendAll(SIGKILL);
    return;
  }
  sigint_seen_ |= sig == SIGINT;
  Note("received %s; forwarding it to %s", SignalName(sig), Plural(running_).c_str());
  SendAll(sig);
  if (!stopping_) {
    stopping_ = true;
    exit_code_ = 128 + sig;
  }
}

void Job::CheckDeadlines(Clock::time_point now) {
  if (job_deadline_ && now >= *job_deadline_) {
    job_deadline_.reset();
    if (!stopping_) {
      Note("timeout of %g s reached; stopping all %s", o_.timeout_s, Plural(running_).c_str());
      BeginStop(kExitTimeout);
    }
  }
  if (kill_deadline_ && now >= *kill_deadline_) {
    kill_deadline_.reset();
    if (running_) {
      Note("%s still running %lld s after SIGTERM; sending SIGKILL", Plural(running_).c_str(),
           static_cast<long long>(kGrace.count()));
      SendAll(SIGKILL);
    }
  }
}

// ---- The loop -----------------------------------------------------------------------------------

void Job::PollOnce(Clock::time_point now) {
  Clock::time_point wake = now + kPollCap;
  for (const auto& d : {job_deadline_, kill_deadline_, drain_deadline_})
    if (d) wake = std::min(wake, *d);
  int timeout_ms =
      static_cast<int>(std::max<long long>(0, std::chrono::ceil<milliseconds>(wake - now).count()));

  std::vector<pollfd> fds = {{g_signal_pipe[0], POLLIN, 0}};
  std::vector<std::pair<int, Stream*>> owners = {{-1, nullptr}};
  for (int rank = 0; rank < o_.np; ++rank)
    for (Stream* s : {&ranks_[rank].out, &ranks_[rank].err})
      if (s->fd >= 0) {
        fds.push_back({s->fd, POLLIN, 0});
        owners.push_back({rank, s});
      }
  if (poll(fds.data(), fds.size(), timeout_ms) <= 0) return;  // timeout or EINTR: loop again

  for (size_t i = 1; i < fds.size(); ++i)
    if (fds[i].revents) ReadStream(owners[i].first, *owners[i].second);
  if (fds[0].revents & POLLIN) {
    unsigned char sigs[64];
    ssize_t n = read(g_signal_pipe[0], sigs, sizeof sigs);
    for (ssize_t i = 0; i < n; ++i) HandleSignal(sigs[i]);
  }
}

int Job::Run() {
  Start();
  for (;;) {
    Reap();
    Clock::time_point now = Clock::now();
    CheckDeadlines(now);
    if (running_ == 0) {
      if (!drain_deadline_) drain_deadline_ = now + kDrainLimit;
      if (OpenStreams() == 0 || now >= *drain_deadline_) break;
    }
    PollOnce(now);
  }
  for (int rank = 0; rank < o_.np; ++rank) {
    CloseStream(rank, ranks_[rank].out);
    CloseStream(rank, ranks_[rank].err);
  }
  return exit_code_;
}

}  // namespace

int main(int argc, char** argv) {
  Options options = ParseArgs(argc, argv);
  InstallSignalHandlers();
  Job job(options);
  return job.Run();
}
